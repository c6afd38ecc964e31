package kafkagen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// This file is the tests' oracle: it decodes what the generator wrote with
// franz-go's kmsg and the compression libraries, independently of the
// generator's encoders.

// fixturesDir is the shared directory of real broker data, relative to
// this package (module root/../shared/fixtures/real).
func fixturesDir(t *testing.T) string {
	t.Helper()
	return fixtures.Root(t)
}

// decodedBatch is what the oracle reads back from one log entry.
type decodedBatch struct {
	size                 int64
	magic                int8
	attrs                int16
	crc                  uint32
	baseOffset           int64
	lastOffset           int64
	lastOffsetDelta      int32
	baseTimestamp        int64
	maxTimestamp         int64
	producerID           int64
	producerEpoch        int16
	baseSequence         int32
	partitionLeaderEpoch int32
	count                int32
	rawSnappy            bool
	records              []RecordManifest
}

// entries splits a .log into whole entries (offset, length, then length
// bytes), failing on a torn tail.
func entries(b []byte) ([][2]int64, error) {
	var out [][2]int64
	for pos := int64(0); pos < int64(len(b)); {
		if int64(len(b))-pos < 17 {
			return nil, fmt.Errorf("torn entry header at %d", pos)
		}
		n := int64(int32(binary.BigEndian.Uint32(b[pos+8:])))
		if n < 14 || pos+12+n > int64(len(b)) {
			return nil, fmt.Errorf("bad entry length %d at %d", n, pos)
		}
		out = append(out, [2]int64{pos, 12 + n})
		pos += 12 + n
	}
	return out, nil
}

var oracleCastagnoli = crc32.MakeTable(crc32.Castagnoli)

func decompress(codec int8, magic int8, p []byte) (out []byte, rawSnappy bool, err error) {
	switch codec {
	case 0:
		return p, false, nil
	case 1:
		r, err := gzip.NewReader(bytes.NewReader(p))
		if err != nil {
			return nil, false, err
		}
		out, err = io.ReadAll(r)
		return out, false, err
	case 2:
		if bytes.HasPrefix(p, []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}) {
			out, err = xerial.Decode(p)
			return out, false, err
		}
		out, err = snappy.Decode(nil, p)
		return out, true, err
	case 3:
		if len(p) < 7 || !bytes.Equal(p[:6], []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}) {
			return nil, false, fmt.Errorf("lz4 frame header %x is not Kafka's", p[:min(len(p), 7)])
		}
		if magic == 0 {
			// Kafka's broken header checksum for magic 0: the reader
			// here checks the correct one, which for FLG 0x60 BD 0x40
			// is the constant 0x82 (seen in every real lz4 frame).
			if p[6] == 0x82 {
				return nil, false, fmt.Errorf("magic 0 lz4 frame has the correct header checksum")
			}
			p = append([]byte(nil), p...)
			p[6] = 0x82
		}
		out, err = io.ReadAll(lz4.NewReader(bytes.NewReader(p)))
		return out, false, err
	case 4:
		d, err := zstd.NewReader(nil)
		if err != nil {
			return nil, false, err
		}
		defer d.Close()
		out, err = d.DecodeAll(p, nil)
		return out, false, err
	}
	return nil, false, fmt.Errorf("codec %d", codec)
}

// decodeEntry decodes one whole log entry.
func decodeEntry(e []byte) (decodedBatch, error) {
	var d decodedBatch
	d.size = int64(len(e))
	d.magic = int8(e[16])
	if d.magic == 2 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(e); err != nil {
			return d, err
		}
		d.crc = uint32(rb.CRC)
		if c := crc32.Checksum(e[21:], oracleCastagnoli); c != d.crc {
			return d, fmt.Errorf("v2 crc %08x, computed %08x", d.crc, c)
		}
		d.attrs = rb.Attributes
		d.baseOffset, d.lastOffsetDelta = rb.FirstOffset, rb.LastOffsetDelta
		d.lastOffset = rb.FirstOffset + int64(rb.LastOffsetDelta)
		d.baseTimestamp, d.maxTimestamp = rb.FirstTimestamp, rb.MaxTimestamp
		d.producerID, d.producerEpoch, d.baseSequence = rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence
		d.partitionLeaderEpoch, d.count = rb.PartitionLeaderEpoch, rb.NumRecords
		raw, rawSnappy, err := decompress(int8(rb.Attributes&7), 2, rb.Records)
		if err != nil {
			return d, fmt.Errorf("decompress: %w", err)
		}
		d.rawSnappy = rawSnappy
		lat := rb.Attributes&0x08 != 0
		for i := int32(0); i < rb.NumRecords; i++ {
			l, n := binary.Varint(raw)
			if n <= 0 || int64(len(raw)-n) < l {
				return d, fmt.Errorf("record %d: bad length", i)
			}
			var r kmsg.Record
			if err := r.ReadFrom(raw[:n+int(l)]); err != nil {
				return d, fmt.Errorf("record %d: %w", i, err)
			}
			if got := int64(len(r.AppendTo(nil))); got != int64(n)+l {
				return d, fmt.Errorf("record %d: length %d but %d bytes decoded", i, l, got)
			}
			raw = raw[n+int(l):]
			ct := rb.FirstTimestamp + r.TimestampDelta64
			rm := RecordManifest{Offset: rb.FirstOffset + int64(r.OffsetDelta), Timestamp: ct, CreateTimestamp: ct, Key: r.Key, Value: r.Value}
			if lat {
				rm.Timestamp = rb.MaxTimestamp
			}
			for _, h := range r.Headers {
				rm.Headers = append(rm.Headers, RecordHeader{Key: h.Key, Value: h.Value})
			}
			d.records = append(d.records, rm)
		}
		if len(raw) != 0 {
			return d, fmt.Errorf("%d bytes left after %d records", len(raw), rb.NumRecords)
		}
		return d, nil
	}
	// Legacy.
	msg, err := decodeLegacy(e)
	if err != nil {
		return d, err
	}
	d.crc, d.attrs = msg.crc, int16(msg.attrs)
	d.lastOffset, d.maxTimestamp = msg.offset, msg.ts
	d.partitionLeaderEpoch, d.producerID, d.producerEpoch, d.baseSequence = -1, -1, -1, -1
	codec := msg.attrs & 7
	lat := d.magic == 1 && msg.attrs&0x08 != 0
	if codec == 0 {
		d.baseOffset, d.count = msg.offset, 1
		d.records = []RecordManifest{{Offset: msg.offset, Timestamp: msg.ts, CreateTimestamp: msg.ts, Key: msg.key, Value: msg.value}}
		return d, nil
	}
	inner, rawSnappy, err := decompress(codec, d.magic, msg.value)
	if err != nil {
		return d, fmt.Errorf("decompress wrapper: %w", err)
	}
	d.rawSnappy = rawSnappy
	ents, err := entries(inner)
	if err != nil {
		return d, fmt.Errorf("inner set: %w", err)
	}
	var inners []legacyMsg
	for _, ie := range ents {
		im, err := decodeLegacy(inner[ie[0] : ie[0]+ie[1]])
		if err != nil {
			return d, fmt.Errorf("inner message at %d: %w", ie[0], err)
		}
		if im.magic != d.magic || im.attrs&7 != 0 {
			return d, fmt.Errorf("inner message magic %d attributes %d", im.magic, im.attrs)
		}
		inners = append(inners, im)
	}
	if len(inners) == 0 {
		return d, fmt.Errorf("wrapper without inner messages")
	}
	lastRel := inners[len(inners)-1].offset
	for _, im := range inners {
		off := im.offset
		if d.magic == 1 {
			// AbstractLegacyRecordBatch.DeepRecordsIterator.
			off = msg.offset - lastRel + im.offset
		}
		ts := im.ts
		if lat {
			ts = msg.ts
		}
		d.records = append(d.records, RecordManifest{Offset: off, Timestamp: ts, CreateTimestamp: im.ts, Key: im.key, Value: im.value})
	}
	d.baseOffset, d.count = d.records[0].Offset, int32(len(d.records))
	return d, nil
}

type legacyMsg struct {
	offset     int64
	crc        uint32
	magic      int8
	attrs      int8
	ts         int64
	key, value []byte
}

func decodeLegacy(e []byte) (legacyMsg, error) {
	var m legacyMsg
	if c := crc32.ChecksumIEEE(e[16:]); c != binary.BigEndian.Uint32(e[12:]) {
		return m, fmt.Errorf("legacy crc %08x, computed %08x", binary.BigEndian.Uint32(e[12:]), c)
	}
	switch e[16] {
	case 0:
		var v kmsg.MessageV0
		if err := v.ReadFrom(e); err != nil {
			return m, err
		}
		if len(v.AppendTo(nil)) != len(e) {
			return m, fmt.Errorf("v0 message shorter than its entry")
		}
		return legacyMsg{v.Offset, uint32(v.CRC), v.Magic, v.Attributes, -1, v.Key, v.Value}, nil
	case 1:
		var v kmsg.MessageV1
		if err := v.ReadFrom(e); err != nil {
			return m, err
		}
		if len(v.AppendTo(nil)) != len(e) {
			return m, fmt.Errorf("v1 message shorter than its entry")
		}
		return legacyMsg{v.Offset, uint32(v.CRC), v.Magic, v.Attributes, v.Timestamp, v.Key, v.Value}, nil
	}
	return m, fmt.Errorf("magic %d", e[16])
}

// expectedIndexes recomputes a segment's indexes from its batches with the
// broker's recovery loop (LogSegment.recover), which KAFKA-806 made equal to
// the append path: an entry for a batch at position p when p minus the last
// indexed position exceeds the interval; the time index takes the running
// maximum, strictly greater only; the final entry on close.
func expectedIndexes(batches []BatchManifest, base int64, interval int, final bool) ([]OffsetEntry, []TimeEntry) {
	var (
		offs                []OffsetEntry
		times               []TimeEntry
		validBytes, lastIdx int64
		maxTs, maxTsOff     = int64(-1), base
		lastTs              = int64(-1)
	)
	maybeTime := func() {
		if maxTs > lastTs {
			times = append(times, TimeEntry{maxTs, maxTsOff})
			lastTs = maxTs
		}
	}
	for _, b := range batches {
		if b.MaxTimestamp > maxTs {
			maxTs, maxTsOff = b.MaxTimestamp, b.LastOffset
		}
		if validBytes-lastIdx > int64(interval) {
			offs = append(offs, OffsetEntry{b.LastOffset, int32(validBytes)})
			maybeTime()
			lastIdx = validBytes
		}
		validBytes += b.Size
	}
	if final {
		maybeTime()
	}
	return offs, times
}

func readOffsetIndex(b []byte, base int64) []OffsetEntry {
	var out []OffsetEntry
	for i := 0; i+8 <= len(b); i += 8 {
		out = append(out, OffsetEntry{base + int64(int32(binary.BigEndian.Uint32(b[i:]))), int32(binary.BigEndian.Uint32(b[i+4:]))})
	}
	return out
}

func readTimeIndex(b []byte, base int64) []TimeEntry {
	var out []TimeEntry
	for i := 0; i+12 <= len(b); i += 12 {
		out = append(out, TimeEntry{int64(binary.BigEndian.Uint64(b[i:])), base + int64(int32(binary.BigEndian.Uint32(b[i+8:])))})
	}
	return out
}

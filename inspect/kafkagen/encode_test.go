package kafkagen

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/internal/xxh32"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestVarint(t *testing.T) {
	// Examples of the format notes (section 2.6, ByteUtils).
	for _, c := range []struct {
		n    int64
		want []byte
	}{
		{0, []byte{0x00}}, {-1, []byte{0x01}}, {1, []byte{0x02}}, {4, []byte{0x08}},
		{6, []byte{0x0c}}, {64, []byte{0x80, 0x01}}, {-65, []byte{0x81, 0x01}},
		{math.MaxInt32, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{math.MinInt32, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
	} {
		if got := appendVarint(nil, c.n); !bytes.Equal(got, c.want) {
			t.Errorf("varint(%d) = %x, want %x", c.n, got, c.want)
		}
	}
	for _, n := range []int64{0, 1, -1, 63, 64, -64, -65, 8191, 8192, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, 1 << 40} {
		if got, want := varintSize(n), len(appendVarint(nil, n)); got != want {
			t.Errorf("varintSize(%d) = %d, encoded %d bytes", n, got, want)
		}
	}
}

func TestLZ4Header(t *testing.T) {
	z, _ := newCompressor(codecByName["lz4"])
	data := bytes.Repeat([]byte("kafka segment "), 20000) // > 64 KiB: several blocks
	for _, magic := range []int8{0, 1, 2} {
		f, err := z.compress(data, magic)
		if err != nil {
			t.Fatal(err)
		}
		// Every real lz4 frame in the fixtures (magic 2, Java producers)
		// starts 04 22 4d 18 60 40 82.
		want := byte(0x82)
		if magic == 0 {
			// Kafka's broken checksum over [0, 6): xxh32 of the magic
			// bytes and descriptor, second byte.
			want = byte(xxh32.Sum([]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40}, 0) >> 8)
			if want == 0x82 {
				t.Fatal("broken and correct header checksums coincide")
			}
		}
		if !bytes.Equal(f[:7], []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, want}) {
			t.Errorf("magic %d: frame header %x", magic, f[:7])
		}
		if !bytes.HasSuffix(f, []byte{0, 0, 0, 0}) {
			t.Errorf("magic %d: no end mark", magic)
		}
		got, _, err := decompress(codecLZ4, magic, f)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("magic %d: round trip failed: %v", magic, err)
		}
	}
	// Incompressible input is stored (size word bit 31).
	noise := make([]byte, 70000)
	for i := range noise {
		noise[i] = byte(xxh32.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16)}, 7))
	}
	f, _ := z.compress(noise, 2)
	if w := binary.LittleEndian.Uint32(f[7:]); w != 1<<31|65536 {
		t.Errorf("first block size word %08x, want stored 64 KiB", w)
	}
	if got, _, err := decompress(codecLZ4, 2, f); err != nil || !bytes.Equal(got, noise) {
		t.Errorf("stored blocks do not round trip: %v", err)
	}
}

func TestControlBatchBytes(t *testing.T) {
	b, crc := appendControlBatch(nil, 1234, 7, 1000, 3, controlAbort, 0x01020304, 1700000000000, 1700000000000, false, nil)
	if len(b) != 78 || binary.BigEndian.Uint32(b[8:]) != 66 {
		t.Fatalf("control batch of %d bytes, length field %d", len(b), binary.BigEndian.Uint32(b[8:]))
	}
	// The marker record of the format notes (section 2.9):
	// 20 00 00 00 08 | 00 00 00 TT | 0C | 00 00 EE EE EE EE | 00
	wantRec := []byte{0x20, 0, 0, 0, 0x08, 0, 0, 0, 0, 0x0c, 0, 0, 1, 2, 3, 4, 0}
	if !bytes.Equal(b[61:], wantRec) {
		t.Errorf("marker record %x, want %x", b[61:], wantRec)
	}
	if a := binary.BigEndian.Uint16(b[21:]); a != 0x30 {
		t.Errorf("attributes %#x", a)
	}
	if crc != crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)) || crc != binary.BigEndian.Uint32(b[17:]) {
		t.Error("crc")
	}
}

// Real v2 batches, re-encoded from their decoded fields, come out byte for
// byte: the header and CRC from the fields and the stored payload, the
// records section from the decoded records.
func TestReencodeRealV2Batches(t *testing.T) {
	root := fixturesDir(t)
	logs, _ := filepath.Glob(filepath.Join(root, "*", "*", "*.log"))
	var batches, records, controls, compressed int
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := entries(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, e := range ents {
			entry := data[e[0] : e[0]+e[1]]
			if entry[16] != 2 {
				continue
			}
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(entry); err != nil {
				t.Fatalf("%s@%d: %v", path, e[0], err)
			}
			h := v2Header{baseOffset: rb.FirstOffset, partitionLeaderEpoch: rb.PartitionLeaderEpoch, attributes: rb.Attributes,
				lastOffsetDelta: rb.LastOffsetDelta, baseTimestamp: rb.FirstTimestamp, maxTimestamp: rb.MaxTimestamp,
				producerID: rb.ProducerID, producerEpoch: rb.ProducerEpoch, baseSequence: rb.FirstSequence, recordsCount: rb.NumRecords}
			got, crc := appendV2Batch(nil, &h, rb.Records)
			if !bytes.Equal(got, entry) || crc != uint32(rb.CRC) {
				t.Fatalf("%s@%d: re-encoded batch differs", path, e[0])
			}
			batches++
			raw, _, err := decompress(int8(rb.Attributes&7), 2, rb.Records)
			if err != nil {
				t.Fatalf("%s@%d: %v", path, e[0], err)
			}
			if rb.Attributes&7 != 0 {
				compressed++
			}
			var enc []byte
			rest := raw
			for i := int32(0); i < rb.NumRecords; i++ {
				l, n := binary.Varint(rest)
				var r kmsg.Record
				if err := r.ReadFrom(rest[:n+int(l)]); err != nil {
					t.Fatalf("%s@%d: record %d: %v", path, e[0], i, err)
				}
				rest = rest[n+int(l):]
				var hs []RecordHeader
				for _, x := range r.Headers {
					hs = append(hs, RecordHeader{x.Key, x.Value})
				}
				enc = appendV2Record(enc, r.TimestampDelta64, r.OffsetDelta, r.Key, r.Value, hs)
				records++
			}
			if !bytes.Equal(enc, raw) {
				t.Fatalf("%s@%d: re-encoded records differ", path, e[0])
			}
			// End-transaction markers: rebuild the whole batch from its
			// meaning (producer, type, coordinator epoch, timestamps).
			if rb.Attributes&0x20 != 0 && rb.NumRecords == 1 && len(raw) == 17 {
				key := raw[5:9]
				typ := int16(binary.BigEndian.Uint16(key[2:]))
				if typ == controlAbort || typ == controlCommit {
					ce := int32(binary.BigEndian.Uint32(raw[12:]))
					got, _ := appendControlBatch(nil, rb.FirstOffset, rb.PartitionLeaderEpoch, rb.ProducerID, rb.ProducerEpoch,
						typ, ce, rb.FirstTimestamp, rb.MaxTimestamp, rb.Attributes&0x08 != 0, nil)
					if !bytes.Equal(got, entry) {
						t.Errorf("%s@%d: marker re-built as\n%x\nbroker\n%x", path, e[0], got, entry)
					}
					controls++
				}
			}
		}
	}
	t.Logf("%d v2 batches (%d compressed), %d records, %d transaction markers re-encoded identically", batches, compressed, records, controls)
	if batches == 0 || records == 0 || controls == 0 || compressed == 0 {
		t.Error("the fixtures did not exercise every case")
	}
}

// The magic 0 messages of an 0.8/0.9 broker, re-encoded: uncompressed
// messages byte for byte, compressed wrappers around their stored value,
// and their inner message sets after decompression.
func TestReencodeRealLegacyMessages(t *testing.T) {
	root := fixturesDir(t)
	var inner, wrappers int
	for _, dir := range []string{"hamlet-none-0", "hamlet-gzip-0", "hamlet-snappy-0"} {
		path := filepath.Join(root, "kafkalite-magic0-none-gzip-snappy", dir, "00000000000000000000.log")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := entries(data)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for _, e := range ents {
			m, err := decodeLegacy(data[e[0] : e[0]+e[1]])
			if err != nil {
				t.Fatalf("%s@%d: %v", dir, e[0], err)
			}
			out, _ = appendLegacyMessage(out, m.offset, m.magic, m.attrs, m.ts, m.key, m.value)
			if m.attrs&7 == 0 {
				continue
			}
			wrappers++
			set, _, err := decompress(m.attrs&7, 0, m.value)
			if err != nil {
				t.Fatal(err)
			}
			ies, err := entries(set)
			if err != nil {
				t.Fatal(err)
			}
			var re []byte
			for _, ie := range ies {
				im, err := decodeLegacy(set[ie[0] : ie[0]+ie[1]])
				if err != nil {
					t.Fatal(err)
				}
				re, _ = appendLegacyMessage(re, im.offset, im.magic, im.attrs, im.ts, im.key, im.value)
				inner++
			}
			if !bytes.Equal(re, set) {
				t.Fatalf("%s@%d: inner message set differs", dir, e[0])
			}
			if m.attrs&7 == codecGzip {
				// The generator writes Java's gzip header (MTIME 0, XFL 0, OS 0).
				z, _ := newCompressor(codecByName["gzip"])
				ours, _ := z.compress(set, 0)
				if !bytes.Equal(ours[:10], m.value[:10]) {
					t.Errorf("gzip header %x, broker %x", ours[:10], m.value[:10])
				}
			}
			if m.attrs&7 == codecSnappy {
				z, _ := newCompressor(codecByName["snappy"])
				ours, _ := z.compress(set, 0)
				if !bytes.Equal(ours[:16], m.value[:16]) {
					t.Errorf("xerial header %x, broker %x", ours[:16], m.value[:16])
				}
			}
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("%s: re-encoded log differs", dir)
		}
	}
	if wrappers != 44 || inner != 2*5382 {
		t.Errorf("%d wrappers, %d inner messages; the fixtures hold 44 and 10764", wrappers, inner)
	}
}

// Producer snapshots of real brokers, decoded and re-encoded.
func TestReencodeRealSnapshots(t *testing.T) {
	root := fixturesDir(t)
	snaps, _ := filepath.Glob(filepath.Join(root, "*", "*", "*.snapshot"))
	withEntries := 0
	for _, path := range snaps {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var es []snapshotEntry
		for p := 10; p+46 <= len(data); p += 46 {
			e := data[p:]
			es = append(es, snapshotEntry{
				int64(binary.BigEndian.Uint64(e)), int16(binary.BigEndian.Uint16(e[8:])), int32(binary.BigEndian.Uint32(e[10:])),
				int64(binary.BigEndian.Uint64(e[14:])), int32(binary.BigEndian.Uint32(e[22:])), int64(binary.BigEndian.Uint64(e[26:])),
				int32(binary.BigEndian.Uint32(e[34:])), int64(binary.BigEndian.Uint64(e[38:]))})
		}
		if len(es) > 0 {
			withEntries++
		}
		if got := encodeSnapshot(es); !bytes.Equal(got, data) {
			t.Errorf("%s: re-encoded snapshot\n%x\nbroker\n%x", path, got, data)
		}
	}
	if len(snaps) == 0 || withEntries == 0 {
		t.Errorf("%d snapshots, %d with producers", len(snaps), withEntries)
	}
}

// partition.metadata as brokers write it: "version: 0\ntopic_id: " and 22
// characters, no newline.
func TestPartitionMetadataFormat(t *testing.T) {
	root := fixturesDir(t)
	files, _ := filepath.Glob(filepath.Join(root, "*", "*", "partition.metadata"))
	if len(files) == 0 {
		t.Fatal("no partition.metadata in the fixtures")
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		id, ok := strings.CutPrefix(string(data), "version: 0\ntopic_id: ")
		if !ok || len(id) != 22 || strings.ContainsAny(id, "\n=+/") {
			t.Errorf("%s: %q does not have the layout the generator writes", f, data)
		}
	}
	if id := topicID(1, "demo"); len(id) != 22 || id == topicID(2, "demo") || id == topicID(1, "other") || id != topicID(1, "demo") {
		t.Errorf("topic ids %s %s %s", id, topicID(2, "demo"), topicID(1, "other"))
	}
}

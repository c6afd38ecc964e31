package kafkagen

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/sidefile"
)

// checkPartition reads back everything Generate wrote in m.Dir and checks
// it against the manifest with the oracle decoders and an independent
// recomputation of the index rules.
func checkPartition(t *testing.T, m *Manifest) {
	t.Helper()
	o := m.Options
	want := map[string]bool{"partition.metadata": true}
	if o.Magic == 2 {
		want["leader-epoch-checkpoint"] = true
	}
	for _, s := range m.Snapshots {
		want[SegmentName(s)+".snapshot"] = true
	}
	prevNext := o.StartOffset
	for i := range m.Segments {
		s := &m.Segments[i]
		name := SegmentName(s.BaseOffset)
		for _, suf := range []string{".log", ".index", ".timeindex"} {
			want[name+suf] = true
		}
		if s.TxnIndexWritten {
			want[name+".txnindex"] = true
		}
		if s.BaseOffset != prevNext {
			t.Errorf("segment %s: base offset %d, previous segment ended at %d", name, s.BaseOffset, prevNext)
		}
		if s.Active != (i == len(m.Segments)-1) {
			t.Errorf("segment %s: Active = %v", name, s.Active)
		}
		if fi, err := os.Stat(m.LogPath(s)); err != nil {
			t.Error(err)
		} else if fi.ModTime().UnixMilli() != s.LastModified {
			t.Errorf("segment %s: mtime %v, manifest %d", name, fi.ModTime(), s.LastModified)
		}
		checkSegmentLog(t, m, s)
		checkSegmentIndexes(t, m, s)
		prevNext = s.NextOffset
	}
	if m.LogEndOffset != prevNext {
		t.Errorf("LogEndOffset %d, last segment ends at %d", m.LogEndOffset, prevNext)
	}
	ents, err := os.ReadDir(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
		if !want[e.Name()] {
			t.Errorf("unexpected file %s", e.Name())
		}
	}
	if len(got) != len(want) {
		t.Errorf("files %v, want %d files (%v)", got, len(want), want)
	}
	checkTxnIndexes(t, m)
	checkSmallFiles(t, m)
}

func checkSegmentLog(t *testing.T, m *Manifest, s *SegmentManifest) {
	t.Helper()
	log, err := os.ReadFile(m.LogPath(s))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(log)) != s.LogSize {
		t.Fatalf("%s: %d bytes, manifest says %d", m.LogPath(s), len(log), s.LogSize)
	}
	ents, err := entries(log)
	if err != nil {
		t.Fatalf("%s: %v", m.LogPath(s), err)
	}
	if len(ents) != len(s.Batches) {
		t.Fatalf("%s: %d entries, manifest has %d batches", m.LogPath(s), len(ents), len(s.Batches))
	}
	lastOffset := s.BaseOffset - 1
	for i, e := range ents {
		b := &s.Batches[i]
		d, err := decodeEntry(log[e[0] : e[0]+e[1]])
		if err != nil {
			t.Fatalf("%s: entry at %d: %v", m.LogPath(s), e[0], err)
		}
		where := fmt.Sprintf("%s@%d", SegmentName(s.BaseOffset), e[0])
		if b.Position != e[0] || b.Size != e[1] {
			t.Errorf("%s: manifest position/size %d/%d, file %d/%d", where, b.Position, b.Size, e[0], e[1])
		}
		if d.magic != b.Magic || d.magic != m.Options.Magic {
			t.Errorf("%s: magic %d, manifest %d", where, d.magic, b.Magic)
		}
		if d.baseOffset != b.BaseOffset || d.lastOffset != b.LastOffset {
			t.Errorf("%s: offsets %d..%d, manifest %d..%d", where, d.baseOffset, d.lastOffset, b.BaseOffset, b.LastOffset)
		}
		if d.baseOffset <= lastOffset || d.baseOffset < s.BaseOffset {
			t.Errorf("%s: base offset %d not above the previous last offset %d / segment base", where, d.baseOffset, lastOffset)
		}
		if d.lastOffset-s.BaseOffset > 1<<31-1 {
			t.Errorf("%s: last offset %d not relative to %d", where, d.lastOffset, s.BaseOffset)
		}
		lastOffset = d.lastOffset
		if d.maxTimestamp != b.MaxTimestamp || d.attrs != b.Attributes || d.crc != b.CRC {
			t.Errorf("%s: maxTs/attrs/crc %d/%#x/%08x, manifest %d/%#x/%08x", where, d.maxTimestamp, d.attrs, d.crc, b.MaxTimestamp, b.Attributes, b.CRC)
		}
		if d.count != b.RecordCount || int(d.count) != len(d.records) {
			t.Errorf("%s: record count %d (%d decoded), manifest %d", where, d.count, len(d.records), b.RecordCount)
		}
		if d.producerID != b.ProducerID || d.producerEpoch != b.ProducerEpoch || d.baseSequence != b.BaseSequence || d.partitionLeaderEpoch != b.PartitionLeaderEpoch {
			t.Errorf("%s: producer fields differ from the manifest", where)
		}
		if d.rawSnappy != b.RawSnappy {
			t.Errorf("%s: raw snappy %v, manifest %v", where, d.rawSnappy, b.RawSnappy)
		}
		codec := int8(d.attrs & 7)
		if names := []string{"none", "gzip", "snappy", "lz4", "zstd"}; names[codec] != b.Compression {
			t.Errorf("%s: codec %d, manifest %s", where, codec, b.Compression)
		}
		if b.Control {
			checkControl(t, where, &d, b)
		} else if codec != codecByName[m.Options.Compression].id {
			t.Errorf("%s: codec %d, options %s", where, codec, m.Options.Compression)
		}
		if (d.attrs&0x08 != 0) != b.LogAppendTime || (d.magic == 2 && (d.attrs&0x10 != 0) != b.Transactional) {
			t.Errorf("%s: timestamp type / transactional bits differ from the manifest", where)
		}
		checkTimestamps(t, where, &d, b)
		if m.Options.OmitRecords {
			if len(b.Records) != 0 {
				t.Errorf("%s: OmitRecords but %d records in the manifest", where, len(b.Records))
			}
			continue
		}
		if !reflect.DeepEqual(d.records, b.Records) {
			t.Errorf("%s: records differ\nfile     %+v\nmanifest %+v", where, d.records, b.Records)
		}
	}
}

func checkTimestamps(t *testing.T, where string, d *decodedBatch, b *BatchManifest) {
	t.Helper()
	if d.magic == 0 {
		if d.maxTimestamp != -1 {
			t.Errorf("%s: magic 0 with timestamp %d", where, d.maxTimestamp)
		}
		return
	}
	var maxCreate int64 = -1
	for _, r := range d.records {
		maxCreate = max(maxCreate, r.CreateTimestamp)
		if r.Timestamp < 0 {
			t.Errorf("%s: negative timestamp %d", where, r.Timestamp)
		}
	}
	if d.magic == 2 && len(d.records) > 0 && d.baseTimestamp != d.records[0].CreateTimestamp {
		t.Errorf("%s: baseTimestamp %d, first record %d", where, d.baseTimestamp, d.records[0].CreateTimestamp)
	}
	if !b.LogAppendTime && d.maxTimestamp != maxCreate {
		t.Errorf("%s: CreateTime max timestamp %d, records' max %d", where, d.maxTimestamp, maxCreate)
	}
}

func checkControl(t *testing.T, where string, d *decodedBatch, b *BatchManifest) {
	t.Helper()
	if d.size != 78 || d.count != 1 || d.lastOffsetDelta != 0 || d.baseSequence != -1 || d.attrs&^0x08 != 0x30 {
		t.Errorf("%s: control batch size %d count %d attrs %#x", where, d.size, d.count, d.attrs)
	}
	r := d.records[0]
	if len(r.Key) != 4 || len(r.Value) != 6 || r.Offset != d.baseOffset {
		t.Fatalf("%s: control record key %x value %x", where, r.Key, r.Value)
	}
	if typ := int16(binary.BigEndian.Uint16(r.Key[2:])); typ != b.ControlType || (typ != 0 && typ != 1) {
		t.Errorf("%s: control type %d, manifest %d", where, typ, b.ControlType)
	}
	if ce := int32(binary.BigEndian.Uint32(r.Value[2:])); ce != b.CoordinatorEpoch {
		t.Errorf("%s: coordinator epoch %d, manifest %d", where, ce, b.CoordinatorEpoch)
	}
}

func checkSegmentIndexes(t *testing.T, m *Manifest, s *SegmentManifest) {
	t.Helper()
	o := m.Options
	running := s.Active && o.PreallocatedIndexBytes > 0
	wantOff, wantTime := expectedIndexes(s.Batches, s.BaseOffset, o.IndexIntervalBytes, !running)
	idx, err := os.ReadFile(m.IndexPath(s))
	if err != nil {
		t.Fatal(err)
	}
	tidx, err := os.ReadFile(m.TimeIndexPath(s))
	if err != nil {
		t.Fatal(err)
	}
	wantIdxSize, wantTimeSize := int64(8*len(wantOff)), int64(12*len(wantTime))
	if running {
		wantIdxSize = o.PreallocatedIndexBytes / 8 * 8
		wantTimeSize = o.PreallocatedIndexBytes / 12 * 12
	}
	if int64(len(idx)) != wantIdxSize || int64(len(tidx)) != wantTimeSize {
		t.Errorf("segment %d: index sizes %d/%d, want %d/%d", s.BaseOffset, len(idx), len(tidx), wantIdxSize, wantTimeSize)
	}
	if s.IndexFileSize != int64(len(idx)) || s.TimeIndexFileSize != int64(len(tidx)) {
		t.Errorf("segment %d: manifest file sizes %d/%d, files %d/%d", s.BaseOffset, s.IndexFileSize, s.TimeIndexFileSize, len(idx), len(tidx))
	}
	// Entries, then (preallocated) nothing but zeros.
	gotOff := readOffsetIndex(idx[:min(len(idx), 8*len(wantOff))], s.BaseOffset)
	gotTime := readTimeIndex(tidx[:min(len(tidx), 12*len(wantTime))], s.BaseOffset)
	if !reflect.DeepEqual(gotOff, wantOff) || !reflect.DeepEqual(s.OffsetIndex, wantOff) || s.IndexEntries != len(wantOff) {
		t.Errorf("segment %d: offset index\nfile     %v\nmanifest %v\nwant     %v", s.BaseOffset, gotOff, s.OffsetIndex, wantOff)
	}
	if !reflect.DeepEqual(gotTime, wantTime) || !reflect.DeepEqual(s.TimeIndex, wantTime) || s.TimeIndexEntries != len(wantTime) {
		t.Errorf("segment %d: time index\nfile     %v\nmanifest %v\nwant     %v", s.BaseOffset, gotTime, s.TimeIndex, wantTime)
	}
	if tail := idx[min(len(idx), 8*len(wantOff)):]; bytes.ContainsFunc(tail, func(r rune) bool { return r != 0 }) {
		t.Errorf("segment %d: offset index tail is not zero", s.BaseOffset)
	}
	if tail := tidx[min(len(tidx), 12*len(wantTime)):]; bytes.ContainsFunc(tail, func(r rune) bool { return r != 0 }) {
		t.Errorf("segment %d: time index tail is not zero", s.BaseOffset)
	}
	// Invariants a reader relies on: offsets strictly increase, each entry
	// names the last offset of the batch at its position; timestamps
	// strictly increase and offsets never decrease.
	byPos := map[int64]*BatchManifest{}
	for i := range s.Batches {
		byPos[s.Batches[i].Position] = &s.Batches[i]
	}
	for i, e := range gotOff {
		b := byPos[int64(e.Position)]
		if b == nil || b.LastOffset != e.Offset || e.Position == 0 {
			t.Errorf("segment %d: offset entry %v does not point at the start of its batch", s.BaseOffset, e)
		}
		if i > 0 && e.Offset <= gotOff[i-1].Offset {
			t.Errorf("segment %d: offset entries not increasing at %d", s.BaseOffset, i)
		}
	}
	for i, e := range gotTime {
		if i > 0 && (e.Timestamp <= gotTime[i-1].Timestamp || e.Offset < gotTime[i-1].Offset) {
			t.Errorf("segment %d: time entries not increasing at %d: %v", s.BaseOffset, i, gotTime)
		}
	}
	if o.Magic == 0 && len(gotTime) != 0 {
		t.Errorf("segment %d: magic 0 data has time index entries %v", s.BaseOffset, gotTime)
	}
	if !running && len(s.Batches) > 0 && s.MaxTimestamp >= 0 {
		if last := gotTime[len(gotTime)-1]; last.Timestamp != s.MaxTimestamp || last.Offset != s.OffsetOfMaxTimestamp {
			t.Errorf("segment %d: last time entry %v, max timestamp %d at %d", s.BaseOffset, last, s.MaxTimestamp, s.OffsetOfMaxTimestamp)
		}
	}
}

// checkTxnIndexes replays the transactions from the batches and checks each
// segment's .txnindex: one entry per ABORT marker, in the marker's segment,
// with the transaction's first offset and the last stable offset.
func checkTxnIndexes(t *testing.T, m *Manifest) {
	t.Helper()
	open := map[int64]int64{} // producer id -> first offset of its open transaction
	for i := range m.Segments {
		s := &m.Segments[i]
		var want []txnEntry
		for _, b := range s.Batches {
			switch {
			case b.Control:
				first, ok := open[b.ProducerID]
				if !ok {
					t.Errorf("marker at %d closes no transaction of producer %d", b.BaseOffset, b.ProducerID)
				}
				delete(open, b.ProducerID)
				if b.ControlType == 0 {
					lso := b.LastOffset + 1
					for _, f := range open {
						lso = min(lso, f)
					}
					want = append(want, txnEntry{b.ProducerID, first, b.LastOffset, lso})
				}
			case b.Transactional:
				if _, ok := open[b.ProducerID]; !ok {
					open[b.ProducerID] = b.BaseOffset
				}
			}
		}
		var got []txnEntry
		data, err := os.ReadFile(m.TxnIndexPath(s))
		switch {
		case err == nil:
			if !s.TxnIndexWritten || len(data)%34 != 0 {
				t.Errorf("segment %d: unexpected .txnindex of %d bytes", s.BaseOffset, len(data))
			}
			for p := 0; p+34 <= len(data); p += 34 {
				e := data[p:]
				if binary.BigEndian.Uint16(e) != 0 {
					t.Errorf("segment %d: txn entry version %d", s.BaseOffset, binary.BigEndian.Uint16(e))
				}
				got = append(got, txnEntry{int64(binary.BigEndian.Uint64(e[2:])), int64(binary.BigEndian.Uint64(e[10:])),
					int64(binary.BigEndian.Uint64(e[18:])), int64(binary.BigEndian.Uint64(e[26:]))})
			}
		case os.IsNotExist(err):
			if s.TxnIndexWritten {
				t.Errorf("segment %d: .txnindex missing", s.BaseOffset)
			}
		default:
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || s.TxnEntries != len(want) || len(s.AbortedTxns) != len(want) {
			t.Errorf("segment %d: txn index %v, want %v (manifest %v)", s.BaseOffset, got, want, s.AbortedTxns)
		}
		for j, a := range s.AbortedTxns {
			if j < len(want) && (txnEntry{a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset}) != want[j] {
				t.Errorf("segment %d: manifest aborted txn %v, want %v", s.BaseOffset, a, want[j])
			}
		}
	}
	if len(open) != 0 {
		t.Errorf("transactions left open at the end of the log: %v", open)
	}
}

type txnEntry struct{ pid, first, last, lso int64 }

// checkSmallFiles checks partition.metadata, leader-epoch-checkpoint and
// the producer snapshots.
func checkSmallFiles(t *testing.T, m *Manifest) {
	t.Helper()
	pm, err := os.ReadFile(filepath.Join(m.Dir, "partition.metadata"))
	if err != nil {
		t.Fatal(err)
	}
	id, ok := strings.CutPrefix(string(pm), "version: 0\ntopic_id: ")
	raw, derr := base64.RawURLEncoding.DecodeString(id)
	if !ok || derr != nil || len(raw) != 16 || bytes.Equal(raw, make([]byte, 16)) || id != m.TopicID {
		t.Errorf("partition.metadata %q", pm)
	}
	if m.Options.Magic == 2 {
		lec, err := os.ReadFile(filepath.Join(m.Dir, "leader-epoch-checkpoint"))
		if err != nil {
			t.Fatal(err)
		}
		// One epoch from the start offset, or one per segment; every batch
		// carries the epoch in force at its offset.
		var wantEpochs []EpochEntry
		for i, s := range m.Segments {
			e := m.Options.LeaderEpoch
			if m.Options.LeaderEpochBumps && e >= 0 {
				e += int32(i)
			}
			if e >= 0 && (i == 0 || m.Options.LeaderEpochBumps) {
				wantEpochs = append(wantEpochs, EpochEntry{e, s.BaseOffset})
			}
			for _, b := range s.Batches {
				if b.PartitionLeaderEpoch != e {
					t.Errorf("batch at %d: leader epoch %d, want %d", b.BaseOffset, b.PartitionLeaderEpoch, e)
				}
			}
		}
		text := fmt.Sprintf("0\n%d\n", len(wantEpochs))
		for _, e := range wantEpochs {
			text += fmt.Sprintf("%d %d\n", e.Epoch, e.StartOffset)
		}
		if string(lec) != text || !reflect.DeepEqual(m.LeaderEpochs, wantEpochs) {
			t.Errorf("leader-epoch-checkpoint %q (manifest %v), want %q", lec, m.LeaderEpochs, text)
		}
	}
	// Producer snapshots: replay the batches up to each snapshot's offset.
	for _, off := range m.Snapshots {
		data, err := os.ReadFile(filepath.Join(m.Dir, SegmentName(off)+".snapshot"))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 10 || binary.BigEndian.Uint16(data) != 1 ||
			binary.BigEndian.Uint32(data[2:]) != crc32.Checksum(data[6:], oracleCastagnoli) {
			t.Fatalf("snapshot %d: bad header %x", off, data[:min(len(data), 10)])
		}
		n := int(binary.BigEndian.Uint32(data[6:]))
		if len(data) != 10+46*n {
			t.Fatalf("snapshot %d: %d bytes for %d entries", off, len(data), n)
		}
		var got []sidefile.ProducerEntry
		for p := 10; p < len(data); p += 46 {
			e := data[p:]
			got = append(got, sidefile.ProducerEntry{
				ProducerID: int64(binary.BigEndian.Uint64(e)), ProducerEpoch: int16(binary.BigEndian.Uint16(e[8:])),
				LastSequence: int32(binary.BigEndian.Uint32(e[10:])), LastOffset: int64(binary.BigEndian.Uint64(e[14:])),
				OffsetDelta: int32(binary.BigEndian.Uint32(e[22:])), Timestamp: int64(binary.BigEndian.Uint64(e[26:])),
				CoordinatorEpoch: int32(binary.BigEndian.Uint32(e[34:])), CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
			})
		}
		if want := replayProducers(m, off); !reflect.DeepEqual(got, want) {
			t.Errorf("snapshot %d:\n got %+v\nwant %+v", off, got, want)
		}
	}
}

func replayProducers(m *Manifest, end int64) []sidefile.ProducerEntry {
	st := map[int64]*sidefile.ProducerEntry{}
	for _, b := range m.Batches() {
		if b.LastOffset >= end || b.ProducerID < 0 {
			continue
		}
		e := st[b.ProducerID]
		if e == nil {
			e = &sidefile.ProducerEntry{ProducerID: b.ProducerID, LastSequence: -1, LastOffset: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
			st[b.ProducerID] = e
		}
		e.ProducerEpoch, e.Timestamp = b.ProducerEpoch, b.MaxTimestamp
		if b.Control {
			e.CoordinatorEpoch, e.CurrentTxnFirstOffset = b.CoordinatorEpoch, -1
			continue
		}
		e.LastSequence = b.BaseSequence + b.LastOffsetDelta
		e.LastOffset, e.OffsetDelta = b.LastOffset, b.LastOffsetDelta
		if b.Transactional && e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = b.BaseOffset
		}
	}
	var out []sidefile.ProducerEntry
	for _, e := range st {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// dirHash hashes every file name and content under dir.
func dirHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func generate(t *testing.T, o Options) *Manifest {
	t.Helper()
	m, err := Generate(filepath.Join(t.TempDir(), "demo-0"), o)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return m
}

func TestDeterministic(t *testing.T) {
	o := Options{Seed: 42, Segments: 3, Batches: 30, Compression: "gzip", Transactions: true,
		CompactionGaps: true, LogAppendTime: 0.3, Timestamps: "jumping", IndexIntervalBytes: 512}
	a, b := generate(t, o), generate(t, o)
	ha := dirHash(t, a.Dir)
	if hb := dirHash(t, b.Dir); ha != hb {
		t.Fatalf("same seed, different bytes: %s vs %s", ha, hb)
	}
	a.Dir, b.Dir = "", ""
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different manifests")
	}
	// The manifest's detail does not change the bytes.
	oo := o
	oo.OmitRecords = true
	c := generate(t, oo)
	checkPartition(t, c)
	if dirHash(t, c.Dir) != ha {
		t.Fatal("OmitRecords changed the bytes")
	}
	o2 := o
	o2.Seed = 43
	if dirHash(t, generate(t, o2).Dir) == ha {
		t.Fatal("different seeds, same bytes")
	}
}

// TestOptionMatrix builds every valid combination of format, codec,
// timestamp pattern and feature flags, and reads each back with the oracle.
func TestOptionMatrix(t *testing.T) {
	codecs := []string{"none", "gzip", "snappy", "snappy-raw", "lz4", "zstd"}
	patterns := []string{"increasing", "jumping", "equal", "random"}
	n := 0
	for _, magic := range []int8{MagicV0, 1, 2} {
		for _, c := range codecs {
			if c == "zstd" && magic != 2 {
				continue
			}
			for pi, ts := range patterns {
				for flags := 0; flags < 8; flags++ {
					lat, gaps, txn := flags&1 != 0, flags&2 != 0, flags&4 != 0
					if (txn && magic != 2) || (lat && magic == MagicV0) {
						continue
					}
					n++
					o := Options{Seed: int64(n), Magic: magic, Compression: c, Timestamps: ts,
						Segments: 1 + n%2, Batches: 6 + n%5, RecordsPerBatch: 1 + n%6, ValueSize: 16 + n%40,
						CompactionGaps: gaps, Transactions: txn, StartOffset: int64(n % 4 * 1000),
						IndexIntervalBytes: []int{IndexEveryBatch, 100, 1000, 0}[n%4],
						EmptyActiveSegment: n%5 == 0, LeaderEpoch: int32(pi) - 1, LeaderEpochBumps: n%3 == 0}
					if lat {
						o.LogAppendTime = []float64{1, 0.5}[n%2]
					}
					if n%7 == 0 {
						o.PreallocatedIndexBytes = 4096 + int64(n%13)
					}
					name := fmt.Sprintf("m%d-%s-%s-f%d", o.Magic, c, ts, flags)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						m := generate(t, o)
						checkPartition(t, m)
						if len(m.Segments) != o.Segments+btoi(o.EmptyActiveSegment) {
							t.Errorf("%d segments", len(m.Segments))
						}
						for i := 0; i < o.Segments; i++ {
							if len(m.Segments[i].Batches) != o.Batches {
								t.Errorf("segment %d has %d batches, want %d", i, len(m.Segments[i].Batches), o.Batches)
							}
						}
					})
				}
			}
		}
	}
	t.Logf("%d combinations", n)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFeaturesShowUp checks that each option produces what it promises in
// a partition big enough for it to happen.
func TestFeaturesShowUp(t *testing.T) {
	t.Run("compaction gaps", func(t *testing.T) {
		m := generate(t, Options{Seed: 5, Segments: 3, Batches: 40, CompactionGaps: true})
		checkPartition(t, m)
		var between, inside, trailing int
		prev := int64(-1)
		for _, s := range m.Segments {
			if s.Batches[0].BaseOffset <= s.BaseOffset {
				t.Errorf("segment %d: first batch at its base offset", s.BaseOffset)
			}
			for _, b := range s.Batches {
				if prev >= 0 && b.BaseOffset > prev+1 {
					between++
				}
				prev = b.LastOffset
				for i, r := range b.Records {
					if i > 0 && r.Offset > b.Records[i-1].Offset+1 {
						inside++
					}
				}
				if int64(b.LastOffsetDelta) > int64(b.RecordCount)-1 && b.Records[len(b.Records)-1].Offset < b.LastOffset {
					trailing++
				}
			}
		}
		if between == 0 || inside == 0 || trailing == 0 {
			t.Errorf("gaps between batches %d, inside %d, trailing %d: want all > 0", between, inside, trailing)
		}
	})
	t.Run("legacy wrapper offsets", func(t *testing.T) {
		for _, magic := range []int8{MagicV0, 1} {
			m := generate(t, Options{Seed: 6, Magic: magic, Compression: "gzip", Batches: 20, RecordsPerBatch: 5, CompactionGaps: true})
			checkPartition(t, m)
			log, _ := os.ReadFile(m.LogPath(&m.Segments[0]))
			var relSeen bool
			for _, b := range m.Segments[0].Batches {
				if got := int64(binary.BigEndian.Uint64(log[b.Position:])); got != b.LastOffset {
					t.Errorf("wrapper offset %d, last inner offset %d", got, b.LastOffset)
				}
				// The first inner offset: absolute for v0, 0 for v1.
				e := log[b.Position : b.Position+b.Size]
				d, _ := decodeEntry(e)
				inner, _, err := decompress(codecGzip, int8(e[16]), legacyValue(e))
				if err != nil {
					t.Fatal(err)
				}
				first := int64(binary.BigEndian.Uint64(inner))
				switch {
				case e[16] == 0 && first != d.baseOffset:
					t.Errorf("v0 inner offset %d, want absolute %d", first, d.baseOffset)
				case e[16] == 1 && first != 0:
					t.Errorf("v1 first inner offset %d, want 0", first)
				case e[16] == 1 && b.LastOffset-b.BaseOffset > int64(b.RecordCount)-1:
					relSeen = true
				}
			}
			if magic == 1 && !relSeen {
				t.Error("no v1 wrapper with missing inner offsets")
			}
		}
	})
	t.Run("transactions", func(t *testing.T) {
		m := generate(t, Options{Seed: 7, Segments: 4, Batches: 25, Transactions: true})
		checkPartition(t, m)
		var commits, aborts, spanning int
		producers := map[int64]bool{}
		seg := map[int64]int{} // open txn -> segment index of its first batch
		for i, s := range m.Segments {
			for _, b := range s.Batches {
				switch {
				case b.Control:
					if b.ControlType == 0 {
						aborts++
					} else {
						commits++
					}
					if seg[b.ProducerID] != i {
						spanning++
					}
					delete(seg, b.ProducerID)
				case b.Transactional:
					producers[b.ProducerID] = true
					if _, ok := seg[b.ProducerID]; !ok {
						seg[b.ProducerID] = i
					}
				}
			}
		}
		if commits == 0 || aborts == 0 || spanning == 0 || len(producers) < 2 {
			t.Errorf("commits %d aborts %d spanning %d producers %d", commits, aborts, spanning, len(producers))
		}
	})
	t.Run("log append time", func(t *testing.T) {
		m := generate(t, Options{Seed: 8, Batches: 50, LogAppendTime: 0.5, Timestamps: "random"})
		checkPartition(t, m)
		var lat, ct int
		prev := int64(-1)
		for _, b := range m.Batches() {
			if !b.LogAppendTime {
				ct++
				continue
			}
			lat++
			if b.MaxTimestamp < prev {
				t.Errorf("append time went back: %d after %d", b.MaxTimestamp, prev)
			}
			prev = b.MaxTimestamp
			for _, r := range b.Records {
				if r.Timestamp != b.MaxTimestamp {
					t.Errorf("LogAppendTime record timestamp %d, batch %d", r.Timestamp, b.MaxTimestamp)
				}
			}
		}
		if lat == 0 || ct == 0 {
			t.Errorf("%d LogAppendTime and %d CreateTime batches", lat, ct)
		}
	})
	t.Run("timestamp patterns", func(t *testing.T) {
		count := func(p string) (back, within, equal int) {
			m := generate(t, Options{Seed: 9, Batches: 120, RecordsPerBatch: 5, Timestamps: p})
			prev := int64(-1)
			for _, b := range m.Batches() {
				for i, r := range b.Records {
					if i > 0 && r.Timestamp < b.Records[i-1].Timestamp {
						within++
					}
					if prev >= 0 && r.Timestamp < prev {
						back++
					}
					if r.Timestamp == DefaultStartTimestamp {
						equal++
					}
					prev = r.Timestamp
				}
			}
			return
		}
		if back, _, _ := count("increasing"); back != 0 {
			t.Errorf("increasing: %d steps back", back)
		}
		if back, within, _ := count("jumping"); back == 0 || within != 0 {
			t.Errorf("jumping: %d steps back, %d inside batches", back, within)
		}
		if back, within, _ := count("random"); back == 0 || within == 0 {
			t.Errorf("random: %d steps back, %d inside batches", back, within)
		}
		if back, _, equal := count("equal"); back != 0 || equal == 0 {
			t.Errorf("equal: %d back, %d at the start timestamp", back, equal)
		}
	})
}

func legacyValue(e []byte) []byte {
	p := 18
	if e[16] == 1 {
		p += 8
	}
	kl := int32(binary.BigEndian.Uint32(e[p:]))
	p += 4 + max(0, int(kl))
	return e[p+4:]
}

func TestPreallocatedAndEmptyActive(t *testing.T) {
	const pre = 10485760 + 5
	m := generate(t, Options{Seed: 11, Segments: 2, Batches: 60, IndexIntervalBytes: 300, PreallocatedIndexBytes: pre})
	checkPartition(t, m)
	act := &m.Segments[1]
	fi, _ := os.Stat(m.IndexPath(act))
	ti, _ := os.Stat(m.TimeIndexPath(act))
	if fi.Size() != 10485760 || ti.Size() != 10485756 {
		t.Errorf("preallocated sizes %d, %d; want 10485760, 10485756", fi.Size(), ti.Size())
	}
	if act.IndexEntries == 0 || act.TimeIndexEntries == 0 {
		t.Fatal("the active segment has no index entries to check")
	}
	// The last real time-index entry is not the segment's max timestamp
	// entry written at close: a running broker has not closed it yet.
	if fi, _ := os.Stat(m.IndexPath(&m.Segments[0])); fi.Size() != int64(8*m.Segments[0].IndexEntries) {
		t.Errorf("rolled segment index not trimmed: %d bytes", fi.Size())
	}
	for _, s := range m.Snapshots {
		if s == m.LogEndOffset {
			t.Errorf("snapshot at the log end offset %d although the broker is still running", s)
		}
	}

	e := generate(t, Options{Seed: 12, Segments: 2, Batches: 10, EmptyActiveSegment: true, PreallocatedIndexBytes: 1000})
	checkPartition(t, e)
	last := &e.Segments[2]
	if last.BaseOffset != e.Segments[1].NextOffset || last.LogSize != 0 || len(last.Batches) != 0 {
		t.Errorf("empty active segment %+v", last)
	}
	idx, _ := os.ReadFile(e.IndexPath(last))
	tidx, _ := os.ReadFile(e.TimeIndexPath(last))
	if len(idx) != 1000 || len(tidx) != 996 || bytes.ContainsFunc(idx, func(r rune) bool { return r != 0 }) || bytes.ContainsFunc(tidx, func(r rune) bool { return r != 0 }) {
		t.Errorf("empty active segment indexes: %d, %d bytes", len(idx), len(tidx))
	}

	c := generate(t, Options{Seed: 12, Segments: 2, Batches: 10, EmptyActiveSegment: true})
	checkPartition(t, c)
	last = &c.Segments[2]
	if fi, _ := os.Stat(c.IndexPath(last)); fi.Size() != 0 {
		t.Errorf("clean empty active segment index: %d bytes", fi.Size())
	}
	if c.Snapshots[len(c.Snapshots)-1] != c.LogEndOffset {
		t.Errorf("snapshots %v, log end %d", c.Snapshots, c.LogEndOffset)
	}
}

func TestSegmentBytes(t *testing.T) {
	m := generate(t, Options{Seed: 13, Segments: 3, SegmentBytes: 20000, Transactions: true, Compression: "lz4"})
	checkPartition(t, m)
	if len(m.Segments) != 3 {
		t.Fatalf("%d segments", len(m.Segments))
	}
	for i, s := range m.Segments {
		limit := int64(20000)
		if i == len(m.Segments)-1 {
			limit += 78 * numProducers // closing markers
		}
		next := int64(0)
		if i+1 < len(m.Segments) {
			next = m.Segments[i+1].Batches[0].Size
		}
		if s.LogSize > limit || (i+1 < len(m.Segments) && s.LogSize+next <= 20000) {
			t.Errorf("segment %d: %d bytes (next batch %d): rolled at the wrong place", i, s.LogSize, next)
		}
	}
}

func TestBenchOptionsSmall(t *testing.T) {
	o := BenchOptions(1, 2, 1<<18)
	m := generate(t, o)
	checkPartition(t, m)
	for _, s := range m.Segments {
		if s.LogSize > 1<<18 || s.LogSize < 1<<18-20000 {
			t.Errorf("segment of %d bytes, want about %d", s.LogSize, 1<<18)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, o := range []Options{
		{Magic: 1, Compression: "zstd"},
		{Magic: MagicV0, LogAppendTime: 0.5},
		{Magic: 1, Transactions: true},
		{Compression: "brotli"},
		{Timestamps: "sideways"},
		{Magic: 3},
		{LogAppendTime: 1.5},
		{IndexIntervalBytes: -2},
		{StartOffset: -1},
		{PreallocatedIndexBytes: 10, Batches: 200, IndexIntervalBytes: IndexEveryBatch},
	} {
		if _, err := Generate(filepath.Join(t.TempDir(), "x-0"), o); err == nil {
			t.Errorf("Generate(%+v) succeeded", o)
		}
	}
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "junk"), nil, 0o644)
	if _, err := Generate(d, Options{}); err == nil {
		t.Error("Generate into a non-empty directory succeeded")
	}
}

// BenchmarkGenerate writes 64 MiB segments (make bench; the same code
// writes 1 GiB segments with BenchOptions(seed, 1, 1<<30)).
func BenchmarkGenerate(b *testing.B) {
	o := BenchOptions(1, 1, 64<<20)
	b.SetBytes(64 << 20)
	for i := 0; b.Loop(); i++ {
		dir := filepath.Join(b.TempDir(), fmt.Sprintf("bench-%d", i))
		if _, err := Generate(dir, o); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
	}
}

// TestGivenRecords: Options.Records come back in offset order, null keys
// and values included, spread over every batch of every segment, with any
// compression; options they cannot serve are refused.
func TestGivenRecords(t *testing.T) {
	var recs []KeyValue
	for i := range 23 {
		kv := KeyValue{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		switch i % 5 {
		case 1:
			kv.Key = nil
		case 3:
			kv.Value = nil
		}
		recs = append(recs, kv)
	}
	for _, c := range []string{"none", "zstd"} {
		m, err := Generate(t.TempDir(), Options{Seed: 3, Segments: 3, RecordsPerBatch: 4, Compression: c, CompactionGaps: true, Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, m)
		var got []KeyValue
		for _, b := range m.Batches() {
			if len(b.Records) == 0 {
				t.Errorf("%s: batch at %d has no records", c, b.BaseOffset)
			}
			for _, r := range b.Records {
				got = append(got, KeyValue{r.Key, r.Value})
			}
		}
		if !reflect.DeepEqual(got, recs) {
			t.Errorf("%s: records\n got %q\nwant %q", c, got, recs)
		}
		if len(m.Segments) != 3 {
			t.Errorf("%s: %d segments, want 3", c, len(m.Segments))
		}
	}
	for _, o := range []Options{
		{Records: recs, Magic: 1},
		{Records: recs, Transactions: true},
		{Records: recs, Batches: 30},
	} {
		if _, err := Generate(t.TempDir(), o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

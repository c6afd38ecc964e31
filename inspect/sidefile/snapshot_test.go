package sidefile_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/sidefile"
)

// sideFixtures is the directory of real broker data directories, read in
// place; the test is skipped when it is absent.
func sideFixtures(t testing.TB) string {
	t.Helper()
	return fixtures.Root(t)
}

// TestProducerSnapshotGolden decodes a snapshot built byte by byte from the
// layout (not with the package's encoder).
func TestProducerSnapshotGolden(t *testing.T) {
	entry := "" +
		"00000000000003e8" + // producerId 1000
		"0003" + // epoch 3
		"00000009" + // lastSequence 9
		"0000000000000063" + // lastOffset 99
		"00000004" + // offsetDelta 4
		"0000018bcfe56800" + // timestamp 1700000000000
		"00000002" + // coordinatorEpoch 2
		"000000000000005a" // currentTxnFirstOffset 90
	body := "00000001" + entry // count 1
	raw, _ := hex.DecodeString("0001" + "00000000" + body)
	crc := crc32c(raw[6:])
	binary.BigEndian.PutUint32(raw[2:], crc)

	s, err := sidefile.ParseProducerSnapshot("x.snapshot", raw)
	if err != nil {
		t.Fatal(err)
	}
	want := sidefile.ProducerEntry{ProducerID: 1000, ProducerEpoch: 3, LastSequence: 9, LastOffset: 99, OffsetDelta: 4,
		Timestamp: 1700000000000, CoordinatorEpoch: 2, CurrentTxnFirstOffset: 90}
	if s.Version != 1 || s.Count != 1 || len(s.Entries) != 1 || s.Entries[0] != want || !s.CRCValid() || s.StoredCRC != crc || s.TrailingBytes != 0 {
		t.Fatalf("decoded %+v", s)
	}
	e := s.Entries[0]
	if !e.HasBatchMetadata() || !e.HasOpenTransaction() || e.FirstSequence() != 5 || e.FirstOffset() != 95 {
		t.Errorf("derived: batch %v open %v firstSeq %d firstOffset %d", e.HasBatchMetadata(), e.HasOpenTransaction(), e.FirstSequence(), e.FirstOffset())
	}
	if got := sidefile.AppendProducerSnapshot(nil, s.Entries); !reflect.DeepEqual(got, raw) {
		t.Errorf("re-encoded %x\nwant        %x", got, raw)
	}
	// The empty snapshot every real broker writes for a partition without
	// producers: version 1, count 0, CRC-32C of 00000000.
	empty := sidefile.AppendProducerSnapshot(nil, nil)
	if hex.EncodeToString(empty) != "000148674bc700000000" {
		t.Errorf("empty snapshot %x", empty)
	}
}

// TestProducerEntryFirstSequence follows BatchMetadata.firstSeq
// (DefaultRecordBatch.decrementSequence): below zero it wraps to
// Integer.MAX_VALUE.
func TestProducerEntryFirstSequence(t *testing.T) {
	for _, c := range []struct{ last, delta, want int32 }{
		{10, 0, 10}, {10, 10, 0}, {3, 5, math.MaxInt32 - 1}, {0, 1, math.MaxInt32}, {math.MaxInt32, 7, math.MaxInt32 - 7},
	} {
		e := sidefile.ProducerEntry{LastSequence: c.last, OffsetDelta: c.delta}
		if got := e.FirstSequence(); got != c.want {
			t.Errorf("lastSequence %d offsetDelta %d: first %d, want %d", c.last, c.delta, got, c.want)
		}
	}
}

func TestProducerSnapshotRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 50; n++ {
		entries := make([]sidefile.ProducerEntry, rng.IntN(20))
		for i := range entries {
			entries[i] = sidefile.ProducerEntry{
				ProducerID: rng.Int64(), ProducerEpoch: int16(rng.Uint32()), LastSequence: int32(rng.Uint32()),
				LastOffset: rng.Int64() - math.MaxInt64/2, OffsetDelta: int32(rng.Uint32()), Timestamp: rng.Int64(),
				CoordinatorEpoch: int32(rng.Uint32()), CurrentTxnFirstOffset: rng.Int64() - math.MaxInt64/2,
			}
		}
		b := sidefile.AppendProducerSnapshot([]byte("prefix"), entries)[len("prefix"):]
		if len(b) != sidefile.ProducerSnapshotHeaderSize+sidefile.ProducerSnapshotEntrySize*len(entries) {
			t.Fatalf("%d entries: %d bytes", len(entries), len(b))
		}
		s, err := sidefile.ParseProducerSnapshot("r.snapshot", b)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Entries) != len(entries) || (len(entries) > 0 && !reflect.DeepEqual(s.Entries, entries)) {
			t.Fatalf("round trip of %d entries differs", len(entries))
		}
	}
}

// TestProducerSnapshotCorrupt: each damage is refused the way
// ProducerStateManager.readSnapshot refuses it, with the byte position,
// and what can be decoded is still returned.
func TestProducerSnapshotCorrupt(t *testing.T) {
	two := []sidefile.ProducerEntry{{ProducerID: 1, LastOffset: -1, LastSequence: -1, CurrentTxnFirstOffset: -1}, {ProducerID: 2, LastOffset: 5, CurrentTxnFirstOffset: -1}}
	good := sidefile.AppendProducerSnapshot(nil, two)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, c := range []struct {
		name    string
		b       []byte
		pos     int64
		entries int
		msg     string
	}{
		{"empty file", nil, 0, 0, "too short"},
		{"one byte", []byte{0}, 0, 0, "too short"},
		{"version 0", mod(func(b []byte) []byte { b[1] = 0; return b }), 0, 0, "unknown file version 0"},
		{"version 2", mod(func(b []byte) []byte { b[1] = 2; return b }), 0, 0, "unknown file version 2"},
		{"header cut", good[:8], 8, 0, "too short for the 10-byte header"},
		{"flipped entry byte", mod(func(b []byte) []byte { b[20] ^= 1; return b }), 2, 2, "CRC is no longer valid"},
		{"flipped crc", mod(func(b []byte) []byte { b[3] ^= 0x80; return b }), 2, 2, "CRC is no longer valid"},
		{"entry cut", good[:len(good)-1], 56, 1, "2 producer entries declared, the file holds 1"},
		{"negative count", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[6:], 0xffffffff); return b }), 6, 2, "negative producer entry count -1"},
		{"huge count", mod(func(b []byte) []byte { binary.BigEndian.PutUint32(b[6:], 1<<30); return b }), 102, 2, "1073741824 producer entries declared"},
		{"stale trailing bytes", append(append([]byte(nil), good...), 1, 2, 3), 2, 2, "CRC is no longer valid"},
	} {
		s, err := sidefile.ParseProducerSnapshot("c.snapshot", c.b)
		var ce *fileio.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, sidefile.ErrCorruptSnapshot) {
			t.Errorf("%s: error %v, want a CorruptError of kind ErrCorruptSnapshot", c.name, err)
			continue
		}
		if ce.Position != c.pos || ce.File != "c.snapshot" || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (position %d), want position %d and %q", c.name, err, ce.Position, c.pos, c.msg)
		}
		if isCRC := strings.Contains(c.msg, "CRC"); errors.Is(err, sidefile.ErrSnapshotCRC) != isCRC {
			t.Errorf("%s: ErrSnapshotCRC %v, want %v", c.name, errors.Is(err, sidefile.ErrSnapshotCRC), isCRC)
		}
		if s == nil || len(s.Entries) != c.entries {
			t.Errorf("%s: %v entries decoded, want %d", c.name, s, c.entries)
		}
	}
	// Trailing bytes covered by the CRC: the broker loads the snapshot.
	tail := append(append([]byte(nil), good...), 9, 9)
	binary.BigEndian.PutUint32(tail[2:], crc32c(tail[6:]))
	s, err := sidefile.ParseProducerSnapshot("t.snapshot", tail)
	if err != nil || s.TrailingBytes != 2 || len(s.Entries) != 2 {
		t.Errorf("checksummed trailing bytes: %v, %+v", err, s)
	}
}

// TestProducerSnapshotsOfGeneratedPartitions replays the producers from the
// generator's manifest (ProducerAppendInfo: a data batch sets the batch
// metadata and opens a transaction, a marker closes it and sets the
// coordinator epoch) and compares every snapshot file with the state
// before its offset.
func TestProducerSnapshotsOfGeneratedPartitions(t *testing.T) {
	checked, open := 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		dir := filepath.Join(t.TempDir(), "txn-0")
		m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: seed, Transactions: true, Segments: 4, Batches: 40, OmitRecords: true})
		if err != nil {
			t.Fatal(err)
		}
		snaps, err := inspect.ListSnapshots(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) != len(m.Snapshots) {
			t.Fatalf("seed %d: listed %d snapshots, manifest has %d", seed, len(snaps), len(m.Snapshots))
		}
		batches := m.Batches()
		for i, sf := range snaps {
			if sf.Offset != m.Snapshots[i] || filepath.Base(sf.Path) != kafkagen.SegmentName(sf.Offset)+".snapshot" {
				t.Fatalf("snapshot %d: %+v, manifest offset %d", i, sf, m.Snapshots[i])
			}
			s, err := sidefile.ReadProducerSnapshot(sf.Path)
			if err != nil {
				t.Fatalf("%s: %v", sf.Path, err)
			}
			want := replayProducers(batches, sf.Offset)
			got := append([]sidefile.ProducerEntry(nil), s.Entries...)
			sort.Slice(got, func(i, j int) bool { return got[i].ProducerID < got[j].ProducerID })
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", sf.Path, got, want)
			}
			checked++
			open += len(s.OpenTransactions())
		}
	}
	if checked < 10 || open == 0 {
		t.Errorf("checked %d snapshots holding %d open transactions: the shapes do not exercise the snapshot", checked, open)
	}
}

// replayProducers is the producer state after every batch ending before
// offset, sorted by producer id.
func replayProducers(batches []kafkagen.BatchManifest, offset int64) []sidefile.ProducerEntry {
	byID := map[int64]*sidefile.ProducerEntry{}
	for _, b := range batches {
		if b.LastOffset >= offset || b.ProducerID < 0 {
			continue
		}
		e := byID[b.ProducerID]
		if e == nil {
			e = &sidefile.ProducerEntry{ProducerID: b.ProducerID, LastSequence: -1, LastOffset: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
			byID[b.ProducerID] = e
		}
		e.ProducerEpoch = b.ProducerEpoch
		e.Timestamp = b.MaxTimestamp
		if b.Control {
			e.CoordinatorEpoch = b.CoordinatorEpoch
			e.CurrentTxnFirstOffset = -1
			continue
		}
		seq := int64(b.BaseSequence) + int64(b.LastOffsetDelta)
		if seq > math.MaxInt32 {
			seq -= math.MaxInt32 + 1
		}
		e.LastSequence, e.LastOffset, e.OffsetDelta = int32(seq), b.LastOffset, b.LastOffsetDelta
		if b.Transactional && e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = b.BaseOffset
		}
	}
	out := []sidefile.ProducerEntry{}
	for _, e := range byID {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// TestProducerSnapshotsRealFixtures decodes every snapshot the real brokers
// wrote: all load, and the ones PROVENANCE.md describes hold what it says.
func TestProducerSnapshotsRealFixtures(t *testing.T) {
	root := sideFixtures(t)
	var paths []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".snapshot") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 20 {
		t.Fatalf("found %d snapshots in the fixtures", len(paths))
	}
	byName := map[string]*sidefile.ProducerSnapshot{}
	for _, p := range paths {
		s, err := sidefile.ReadProducerSnapshot(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		rel, _ := filepath.Rel(root, p)
		byName[filepath.ToSlash(rel)] = s
	}
	idem := byName["cp-kraft-snappy-small/wallet_event-0/00000000000000000007.snapshot"]
	if idem == nil || len(idem.Entries) != 2 {
		t.Fatalf("wallet_event-0 snapshot: %+v, want 2 producers", idem)
	}
	ids := []int64{idem.Entries[0].ProducerID, idem.Entries[1].ProducerID}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if ids[0] != 0 || ids[1] != 1000 {
		t.Errorf("wallet_event-0 producers %v, want 0 and 1000", ids)
	}
	for _, e := range idem.Entries {
		if e.ProducerEpoch != 0 || !e.HasBatchMetadata() || e.HasOpenTransaction() || e.LastOffset > 6 {
			t.Errorf("wallet_event-0 producer %+v", e)
		}
	}
	ksql := byName["cp-kraft-ksql-txn-committed/_confluent-ksql-default__command_topic-0/00000000000000000002.snapshot"]
	if ksql == nil || len(ksql.Entries) != 1 {
		t.Fatalf("ksql command topic snapshot: %+v, want 1 producer", ksql)
	}
	// The transactional batch at offset 0, committed by the marker at 1.
	if e := ksql.Entries[0]; e.ProducerID != 0 || e.ProducerEpoch != 0 || e.CurrentTxnFirstOffset != -1 || e.LastOffset != 0 || e.LastSequence != 0 || e.CoordinatorEpoch < 0 {
		t.Errorf("ksql producer %+v", e)
	}
	empty := byName["kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000005151.snapshot"]
	if empty == nil || len(empty.Entries) != 0 || empty.Count != 0 || !empty.CRCValid() {
		t.Errorf("empty snapshot: %+v", empty)
	}
}

// FuzzProducerSnapshot: any bytes decode without panicking, the entries
// never outnumber what the file holds, and a snapshot that parses cleanly
// re-encodes to the same bytes unless trailing bytes were checksummed.
func FuzzProducerSnapshot(f *testing.F) {
	f.Add(sidefile.AppendProducerSnapshot(nil, nil))
	f.Add(sidefile.AppendProducerSnapshot(nil, []sidefile.ProducerEntry{{ProducerID: 7, LastOffset: 3}}))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := sidefile.ParseProducerSnapshot("f.snapshot", b)
		if s == nil {
			t.Fatal("nil snapshot")
		}
		if max := (len(b) - sidefile.ProducerSnapshotHeaderSize) / sidefile.ProducerSnapshotEntrySize; len(s.Entries) > max && len(s.Entries) > 0 {
			t.Fatalf("%d entries from %d bytes", len(s.Entries), len(b))
		}
		if err == nil && s.TrailingBytes == 0 {
			if got := sidefile.AppendProducerSnapshot(nil, s.Entries); string(got) != string(b) {
				t.Fatalf("clean snapshot does not re-encode to its bytes")
			}
		}
	})
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

package recovery

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

type offEntry struct {
	offset   int64
	position int32
}

type timeEntry struct {
	ts, offset int64
}

func decodeIndex(b []byte, base int64) []offEntry {
	var out []offEntry
	for i := 0; i+8 <= len(b); i += 8 {
		out = append(out, offEntry{base + int64(int32(binary.BigEndian.Uint32(b[i:]))), int32(binary.BigEndian.Uint32(b[i+4:]))})
	}
	return out
}

func decodeTimeIndex(b []byte, base int64) []timeEntry {
	var out []timeEntry
	for i := 0; i+12 <= len(b); i += 12 {
		out = append(out, timeEntry{int64(binary.BigEndian.Uint64(b[i:])), base + int64(int32(binary.BigEndian.Uint32(b[i+8:])))})
	}
	return out
}

// TestPlanIndexPointsExample is kafka-on-disk.md section 9.1's example:
// batches at 0, 3000, 5000, 5500, 9500, 9600 with the default interval are
// indexed at 5000 and 9500 (strict '>' against the last indexed position).
func TestPlanIndexPointsExample(t *testing.T) {
	log := gentest.Concat(
		gentest.Sized(0, 0, 100, 3000),
		gentest.Sized(1, 1, 90, 2000),
		gentest.Sized(3, 0, 300, 500),
		gentest.Sized(4, 2, 200, 4000),
		gentest.Sized(7, 0, 300, 100),
		gentest.Sized(8, 0, 400, 100),
	)
	pl := planOne(t, log, Options{})
	wantIdx := []offEntry{{3, 5000}, {7, 9500}}
	if got := decodeIndex(pl.Index, 0); !slices.Equal(got, wantIdx) {
		t.Errorf("offset index %v, want %v", got, wantIdx)
	}
	// Running max: 100@0, 90 no, 300@3 (first reaching 300), 200 no, 300 no
	// (not strictly greater), 400@8. Index points add (300,3) at 5000 and
	// (300,3) again at 9500 (not strictly greater: skipped); close adds (400,8).
	wantTime := []timeEntry{{300, 3}, {400, 8}}
	if got := decodeTimeIndex(pl.TimeIndex, 0); !slices.Equal(got, wantTime) {
		t.Errorf("time index %v, want %v", got, wantTime)
	}
	if pl.IndexEntries != 2 || pl.TimeIndexEntries != 2 || pl.Batches != 6 || pl.ValidBytes != 9700 || pl.StopErr != nil {
		t.Errorf("plan %+v", pl)
	}
	// Interval exactly equal to a distance does not index (strict '>'):
	// 5000 - 0 > 5000 is false, 5500 - 0 > 5000 is true.
	pl = planOne(t, log, Options{IndexIntervalBytes: 5000})
	if got, want := decodeIndex(pl.Index, 0), []offEntry{{6, 5500}}; !slices.Equal(got, want) {
		t.Errorf("interval 5000: offset index %v, want %v", got, want)
	}
	// Interval 0: every batch but the first.
	pl = planOne(t, log, Options{IndexIntervalBytes: IndexEveryBatch})
	want := []offEntry{{2, 3000}, {3, 5000}, {6, 5500}, {7, 9500}, {8, 9600}}
	if got := decodeIndex(pl.Index, 0); !slices.Equal(got, want) {
		t.Errorf("interval 0: offset index %v, want %v", got, want)
	}
	if _, err := PlanPartition(&inspect.Partition{}, Options{IndexIntervalBytes: -2}); err == nil {
		t.Errorf("negative interval accepted")
	}
}

// TestPlanTimeIndexWithoutTimestamps: v0 data (timestamp -1) gives an empty
// time index; v1 messages are indexed by their timestamp; a segment whose
// timestamps never exceed -1 gets no final entry.
func TestPlanLegacy(t *testing.T) {
	v0 := gentest.Concat(gentest.LegacyMessage(0, 0, 0, make([]byte, 100)), gentest.LegacyMessage(1, 0, 0, make([]byte, 100)), gentest.LegacyMessage(2, 0, 0, []byte("x")))
	pl := planOne(t, v0, Options{IndexIntervalBytes: 100})
	if len(pl.TimeIndex) != 0 || pl.IndexEntries != 2 || pl.StopErr != nil {
		t.Errorf("v0: %d time index bytes, %d index entries, stop %v; want 0, 2, nil", len(pl.TimeIndex), pl.IndexEntries, pl.StopErr)
	}
	v1 := gentest.Concat(gentest.LegacyMessage(5, 1, 1000, []byte("a")), gentest.LegacyMessage(6, 1, 900, []byte("b")), gentest.LegacyMessage(7, 1, 2000, []byte("c")))
	pl = planOne(t, v1, Options{})
	if got, want := decodeTimeIndex(pl.TimeIndex, 0), []timeEntry{{2000, 7}}; !slices.Equal(got, want) {
		t.Errorf("v1: time index %v, want %v", got, want)
	}
	bad := bytes.Clone(v1)
	m2 := len(gentest.LegacyMessage(5, 1, 1000, []byte("a")))
	bad[m2+12] ^= 0x01 // CRC-32 field of the second message
	pl = planOne(t, bad, Options{})
	if !errors.Is(pl.StopErr, fileio.ErrCRC) || pl.ValidBytes != int64(m2) {
		t.Errorf("v1 bad CRC: valid %d stop %v; want %d, ErrCRC", pl.ValidBytes, pl.StopErr, m2)
	}
}

// corruptionBase is a log of 30 batches of varied sizes and timestamps.
func corruptionBase() (log []byte, positions []int64) {
	off := int64(0)
	for i := 0; i < 30; i++ {
		positions = append(positions, int64(len(log)))
		n := int32(1 + i%4)
		log = append(log, gentest.Sized(off, n-1, 1000+int64((i*37)%50), 80+(i*53)%300)...)
		off += int64(n)
	}
	return log, positions
}

// TestPlanCorruption damages a good log and checks where recovery stops and
// why, and (a differential) that the indexes equal those of the log cut at
// the valid prefix.
func TestPlanCorruption(t *testing.T) {
	base, pos := corruptionBase()
	end := int64(len(base))
	opts := Options{IndexIntervalBytes: 300}
	put32 := func(b []byte, at int64, v uint32) []byte {
		c := bytes.Clone(b)
		binary.BigEndian.PutUint32(c[at:], v)
		return c
	}
	flip := func(b []byte, at int64) []byte {
		c := bytes.Clone(b)
		c[at] ^= 0x40
		return c
	}
	cases := []struct {
		name    string
		log     []byte
		valid   int64
		kind    error // nil: no stop
		batches int
	}{
		{"clean", base, end, nil, 30},
		{"flipped stored CRC", flip(base, pos[11]+17), pos[11], fileio.ErrCRC, 11},
		{"flipped payload byte", flip(base, pos[20]+70), pos[20], fileio.ErrCRC, 20},
		{"flipped attributes", flip(base, pos[3]+22), pos[3], fileio.ErrCRC, 3},
		{"flipped leader epoch (not covered by the CRC)", flip(base, pos[7]+13), end, nil, 30},
		{"torn last batch", base[:pos[29]+40], pos[29], fileio.ErrTorn, 29},
		{"torn last header", base[:pos[29]+10], pos[29], fileio.ErrTorn, 29},
		{"huge length mid-file", put32(base, pos[15]+8, 0x7ffffff0), pos[15], fileio.ErrTorn, 15},
		{"length below 14", put32(base, pos[9]+8, 13), pos[9], fileio.ErrCorruptHeader, 9},
		{"v2 batch shorter than 61 bytes", put32(base, pos[9]+8, 30), pos[9], fileio.ErrCorruptHeader, 9},
		{"zero-filled tail", append(bytes.Clone(base), make([]byte, 4096)...), end, fileio.ErrCorruptHeader, 30},
		{"short zero tail", append(bytes.Clone(base), make([]byte, 17)...), end, fileio.ErrTorn, 30},
		{"first batch corrupt", flip(base, 30), 0, fileio.ErrCRC, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := planOne(t, c.log, opts)
			if pl.ValidBytes != c.valid || pl.TruncatedBytes != int64(len(c.log))-c.valid || pl.Batches != c.batches {
				t.Errorf("valid %d truncated %d batches %d; want %d, %d, %d", pl.ValidBytes, pl.TruncatedBytes, pl.Batches, c.valid, int64(len(c.log))-c.valid, c.batches)
			}
			if c.kind == nil {
				if pl.StopErr != nil {
					t.Errorf("stop %v, want none", pl.StopErr)
				}
			} else {
				var ce *fileio.CorruptError
				if !errors.As(pl.StopErr, &ce) || !errors.Is(pl.StopErr, c.kind) || ce.Position != c.valid || ce.File == "" {
					t.Errorf("stop %v, want a CorruptError of kind %v at %d", pl.StopErr, c.kind, c.valid)
				}
			}
			prefix := planOne(t, c.log[:c.valid], opts)
			if prefix.StopErr != nil || !bytes.Equal(prefix.Index, pl.Index) || !bytes.Equal(prefix.TimeIndex, pl.TimeIndex) {
				t.Errorf("indexes differ from those of the valid prefix alone")
			}
			if pl.Batches > 5 && pl.IndexEntries == 0 {
				t.Errorf("no index entries: the case does not exercise index points")
			}
		})
	}
}

// TestPlanInvalidOffsetEmptiesSegment: a non-increasing last offset at an
// index point makes OffsetIndex.append (or, at the end, TimeIndex.maybeAppend)
// throw InvalidOffsetException and LogLoader empties the segment.
func TestPlanInvalidOffsetEmptiesSegment(t *testing.T) {
	t.Run("offset index", func(t *testing.T) {
		log := gentest.Concat(gentest.Sized(0, 9, 1, 100), gentest.Sized(10, 90, 5, 100), gentest.Sized(101, 29, 6, 100), gentest.Sized(40, 0, 7, 100), gentest.Sized(200, 0, 8, 100))
		pl := planOne(t, log, Options{IndexIntervalBytes: IndexEveryBatch})
		checkEmptied(t, pl, int64(len(log)), 300)
		// Not at an index point, the broker does not notice.
		pl = planOne(t, log, Options{IndexIntervalBytes: 1 << 20})
		if pl.StopErr != nil || pl.ValidBytes != int64(len(log)) {
			t.Errorf("without an index point: stop %v valid %d", pl.StopErr, pl.ValidBytes)
		}
	})
	t.Run("final time index entry", func(t *testing.T) {
		// A at 100 is indexed (100 > 90) with time entry (5, 100); B at 180
		// is not (80 <= 90) and raises the max to (6, 50): the close-time
		// maybeAppend(6, 50) goes backwards in offset.
		log := gentest.Concat(gentest.Sized(0, 9, 1, 100), gentest.Sized(100, 0, 5, 80), gentest.Sized(50, 0, 6, 80))
		pl := planOne(t, log, Options{IndexIntervalBytes: 90})
		checkEmptied(t, pl, int64(len(log)), 180)
	})
	t.Run("producer state rolled back", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "t-0")
		seg0 := gentest.Concat(gentest.Sized(0, 9, 1, 100), gentest.TxnData(10, 1, 2, 5, true), gentest.Sized(100, 0, 3, 100), gentest.Sized(50, 0, 4, 100))
		seg1 := gentest.Concat(gentest.Marker(300, 5, 5, gentest.AbortType), gentest.TxnData(301, 1, 6, 6, true), gentest.Marker(302, 7, 6, gentest.AbortType))
		p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 300: seg1})
		plans, err := PlanPartition(p, Options{IndexIntervalBytes: IndexEveryBatch})
		if err != nil {
			t.Fatal(err)
		}
		checkEmptied(t, plans[0], int64(len(seg0)), int64(len(seg0)-100))
		// Producer 5's transaction was in the emptied segment: its ABORT
		// completes nothing. Producer 6's does.
		want := indexfmt.AppendTxnEntry(nil, indexfmt.AbortedTxn{ProducerID: 6, FirstOffset: 301, LastOffset: 302, LastStableOffset: 303})
		if !bytes.Equal(plans[1].TxnIndex, want) {
			t.Errorf("next segment's txn index %x, want %x", plans[1].TxnIndex, want)
		}
	})
}

func checkEmptied(t *testing.T, pl SegmentRecovery, size, at int64) {
	t.Helper()
	var ce *fileio.CorruptError
	if !errors.As(pl.StopErr, &ce) || !errors.Is(pl.StopErr, indexfmt.ErrInvalidOffset) || !errors.Is(pl.StopErr, fileio.ErrCorruptHeader) || ce.Position != at {
		t.Errorf("stop %v, want an InvalidOffset CorruptError at %d", pl.StopErr, at)
	}
	if pl.ValidBytes != 0 || pl.TruncatedBytes != size || len(pl.Index) != 0 || len(pl.TimeIndex) != 0 || pl.TxnIndex != nil ||
		pl.Index == nil || pl.TimeIndex == nil || pl.IndexEntries+pl.TimeIndexEntries+pl.TxnEntries+pl.Batches != 0 {
		t.Errorf("emptied segment planned as valid %d truncated %d, %d/%d index bytes, %d batches", pl.ValidBytes, pl.TruncatedBytes, len(pl.Index), len(pl.TimeIndex), pl.Batches)
	}
}

// TestPlanNegativeDelta: ParseBatch refuses a v2 batch with a negative
// lastOffsetDelta, but the broker's ensureValid accepts it when the CRC
// matches; recovery indexes it at base + delta.
func TestPlanNegativeDelta(t *testing.T) {
	neg := gentest.V2Batch(gentest.BatchSpec{Base: 30, LastDelta: -5, MaxTs: 50, PID: -1, Count: 1, Payload: make([]byte, 40)})
	log := gentest.Concat(gentest.Sized(0, 9, 10, 200), gentest.Sized(10, 9, 20, 200), neg, gentest.Sized(40, 9, 60, 200))
	pl := planOne(t, log, Options{IndexIntervalBytes: 100})
	want := []offEntry{{19, 200}, {25, 400}, {49, 501}}
	if got := decodeIndex(pl.Index, 0); pl.StopErr != nil || pl.Batches != 4 || !slices.Equal(got, want) {
		t.Errorf("stop %v, %d batches, index %v; want nil, 4, %v", pl.StopErr, pl.Batches, got, want)
	}
	bad := bytes.Clone(log)
	bad[400+70] ^= 1
	pl = planOne(t, bad, Options{IndexIntervalBytes: 100})
	if !errors.Is(pl.StopErr, fileio.ErrCRC) || pl.ValidBytes != 400 {
		t.Errorf("negative delta with a bad CRC: stop %v valid %d; want ErrCRC at 400", pl.StopErr, pl.ValidBytes)
	}
	// Below the segment's base offset: LogSegmentOffsetOverflowException.
	p := gentest.WriteLogs(t, filepath.Join(t.TempDir(), "t-0"), map[int64][]byte{28: gentest.V2Batch(gentest.BatchSpec{Base: 30, LastDelta: -5, MaxTs: 1, PID: -1, Count: 0})})
	_, err := PlanPartition(p, Options{})
	var ce *fileio.CorruptError
	if !errors.Is(err, ErrUnrecoverable) || !errors.As(err, &ce) || ce.Position != 0 {
		t.Errorf("last offset below base: %v, want ErrUnrecoverable at 0", err)
	}
}

// TestPlanOffsetOverflow: a last offset not representable relative to the
// base offset is LogSegmentOffsetOverflowException, which recovery does not
// catch.
func TestPlanOffsetOverflow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: gentest.Concat(gentest.Data(0, 3, 1), gentest.Data(1<<31-10, 20, 2))})
	plans, err := PlanPartition(p, Options{})
	var ce *fileio.CorruptError
	if !errors.Is(err, ErrUnrecoverable) || !errors.Is(err, indexfmt.ErrOffsetOverflow) || !errors.As(err, &ce) || ce.Position != int64(len(gentest.Data(0, 3, 1))) || len(plans) != 0 {
		t.Errorf("PlanPartition: %d plans, %v; want ErrUnrecoverable naming position %d", len(plans), err, len(gentest.Data(0, 3, 1)))
	}
}

func txnEntries(ts ...indexfmt.AbortedTxn) []byte {
	var b []byte
	for _, t := range ts {
		b = indexfmt.AppendTxnEntry(b, t)
	}
	return b
}

// TestPlanTransactions replays producers by hand with the last stable
// offsets worked out from ProducerStateManager.lastStableOffset.
func TestPlanTransactions(t *testing.T) {
	seg0 := gentest.Concat(
		gentest.TxnData(0, 3, 1, 1, true),           // A opens at 0
		gentest.TxnData(3, 2, 2, 2, true),           // B opens at 3
		gentest.TxnData(5, 1, 3, 3, false),          // C idempotent, no transaction
		gentest.Marker(6, 4, 1, gentest.AbortType),  // A aborts: LSO = B's first offset 3
		gentest.TxnData(7, 1, 5, 2, true),           // B continues
		gentest.Marker(8, 6, 2, gentest.CommitType), // B commits: no entry
		gentest.TxnData(9, 2, 7, 1, true),           // A opens at 9, open across the roll
		gentest.Data(11, 1, 8),                      // no producer id
		gentest.Marker(12, 9, 4, gentest.AbortType), // producer 4 has nothing open: nothing
	)
	seg1 := gentest.Concat(
		gentest.TxnData(20, 1, 10, 2, true),                                                    // B opens at 20
		gentest.Marker(21, 11, 1, gentest.AbortType),                                           // A aborts: LSO = 20 (B), first offset 9 in the previous segment
		gentest.V2Batch(gentest.BatchSpec{Base: 22, MaxTs: 12, PID: 2, Attrs: 0x30, Count: 0}), // empty marker (cleaned): nothing
		gentest.Marker(23, 13, 2, gentest.AbortType),                                           // B aborts: nothing else open, LSO 24
	)
	dir := filepath.Join(t.TempDir(), "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 20: seg1})
	plans, err := PlanPartition(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want0 := txnEntries(indexfmt.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 6, LastStableOffset: 3})
	want1 := txnEntries(
		indexfmt.AbortedTxn{ProducerID: 1, FirstOffset: 9, LastOffset: 21, LastStableOffset: 20},
		indexfmt.AbortedTxn{ProducerID: 2, FirstOffset: 20, LastOffset: 23, LastStableOffset: 24},
	)
	if !bytes.Equal(plans[0].TxnIndex, want0) || plans[0].TxnEntries != 1 {
		t.Errorf("segment 0: %x, want %x", plans[0].TxnIndex, want0)
	}
	if !bytes.Equal(plans[1].TxnIndex, want1) || plans[1].TxnEntries != 2 {
		t.Errorf("segment 1: %x, want %x", plans[1].TxnIndex, want1)
	}

	// Naming only the second segment: A's transaction started before it,
	// so its ABORT completes nothing; B's still does.
	target, err := inspect.Resolve(filepath.Join(dir, inspect.SegmentName(20)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	only, err := PlanPartition(target.Partitions[0], Options{})
	if err != nil || len(only) != 1 {
		t.Fatalf("single segment: %d plans, %v", len(only), err)
	}
	wantOnly := txnEntries(indexfmt.AbortedTxn{ProducerID: 2, FirstOffset: 20, LastOffset: 23, LastStableOffset: 24})
	if !bytes.Equal(only[0].TxnIndex, wantOnly) {
		t.Errorf("single segment: %x, want %x", only[0].TxnIndex, wantOnly)
	}

	// No abort at all: TxnIndex stays nil.
	pl := planOne(t, gentest.Concat(gentest.TxnData(0, 1, 1, 1, true), gentest.Marker(1, 2, 1, gentest.CommitType)), Options{})
	if pl.TxnIndex != nil {
		t.Errorf("committed only: txn index %x, want nil", pl.TxnIndex)
	}
}

// TestPlanControlRecords: only the first record of a control batch with a
// producer id is read; InvalidRecordException cuts the log after the batch,
// the exceptions recovery does not catch are errors.
func TestPlanControlRecords(t *testing.T) {
	head := gentest.TxnData(0, 2, 1, 1, true)
	ctl := func(pid int64, count int32, payload []byte) []byte {
		return gentest.V2Batch(gentest.BatchSpec{Base: 2, MaxTs: 2, PID: pid, Attrs: 0x30, Count: count, Payload: payload})
	}
	tail := gentest.Data(3, 1, 3)
	rec := func(key, value []byte) []byte { return gentest.V2Record(0, key, value) }
	good := rec(gentest.ControlKey(gentest.AbortType), gentest.MarkerValue(1))
	cases := []struct {
		name  string
		batch []byte
		kind  error // stop kind, cut after the batch
		fail  bool  // PlanPartition error
		txn   bool  // an aborted txn entry is planned
	}{
		{"abort marker", ctl(1, 1, good), nil, false, true},
		{"count 2, one record: only the first is read", ctl(1, 2, good), nil, false, true},
		{"count 1, bytes after the record", ctl(1, 1, append(bytes.Clone(good), 0)), fileio.ErrCorruptRecords, false, false},
		{"key shorter than 4 bytes", ctl(1, 1, rec([]byte{0, 0}, gentest.MarkerValue(1))), fileio.ErrCorruptRecords, false, false},
		{"negative key version", ctl(1, 1, rec([]byte{0xff, 0xff, 0, 0}, gentest.MarkerValue(1))), fileio.ErrCorruptRecords, false, false},
		{"value shorter than 6 bytes", ctl(1, 1, rec(gentest.ControlKey(gentest.AbortType), []byte{0, 0, 0})), fileio.ErrCorruptRecords, false, false},
		{"record runs past the batch", ctl(1, 1, good[:len(good)-3]), fileio.ErrCorruptRecords, false, false},
		{"negative record count", ctl(1, -1, good), fileio.ErrCorruptRecords, false, false},
		{"garbage, no producer id: not read", ctl(-1, 1, []byte{1, 2, 3}), nil, false, false},
		{"leader change with a producer id", ctl(1, 1, rec(gentest.ControlKey(2), []byte{0, 0, 0, 0})), nil, true, false},
		{"null key", ctl(1, 1, rec(nil, gentest.MarkerValue(1))), nil, true, false},
		{"null value", ctl(1, 1, rec(gentest.ControlKey(gentest.AbortType), nil)), nil, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log := gentest.Concat(head, c.batch, tail)
			p := gentest.WriteLogs(t, filepath.Join(t.TempDir(), "t-0"), map[int64][]byte{0: log})
			plans, err := PlanPartition(p, Options{IndexIntervalBytes: IndexEveryBatch})
			if c.fail {
				var ce *fileio.CorruptError
				if !errors.Is(err, ErrUnrecoverable) || !errors.As(err, &ce) || ce.Position != int64(len(head)) {
					t.Errorf("got %v, want ErrUnrecoverable at %d", err, len(head))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pl := plans[0]
			cut := int64(len(head) + len(c.batch))
			if c.kind == nil {
				if pl.StopErr != nil || pl.ValidBytes != int64(len(log)) {
					t.Errorf("stop %v valid %d, want the whole log", pl.StopErr, pl.ValidBytes)
				}
			} else {
				var ce *fileio.CorruptError
				if !errors.Is(pl.StopErr, c.kind) || !errors.As(pl.StopErr, &ce) || ce.Position != int64(len(head)) || pl.ValidBytes != cut || pl.Batches != 2 {
					t.Errorf("stop %v valid %d batches %d; want %v at %d, cut after it at %d", pl.StopErr, pl.ValidBytes, pl.Batches, c.kind, len(head), cut)
				}
				// The batch was counted, and indexed (interval 0).
				if got := decodeIndex(pl.Index, 0); len(got) != 1 || got[0].position != int32(len(head)) {
					t.Errorf("index %v, want the control batch's entry", got)
				}
			}
			if (pl.TxnIndex != nil) != c.txn {
				t.Errorf("txn index %x, want an entry: %v", pl.TxnIndex, c.txn)
			}
		})
	}
}

// TestPlanTransactionFailures: producer-state replays the broker cannot do.
func TestPlanTransactionFailures(t *testing.T) {
	cases := map[string][]byte{
		"non-transactional batch inside a transaction": gentest.Concat(gentest.TxnData(0, 1, 1, 1, true), gentest.TxnData(1, 1, 2, 1, false)),
		"aborts out of offset order":                   gentest.Concat(gentest.TxnData(0, 1, 1, 1, true), gentest.TxnData(1, 1, 1, 2, true), gentest.Marker(9, 2, 1, gentest.AbortType), gentest.Marker(5, 3, 2, gentest.AbortType)),
		"two transactions starting at one offset":      gentest.Concat(gentest.TxnData(0, 1, 1, 1, true), gentest.TxnData(0, 1, 1, 2, true), gentest.Marker(3, 2, 1, gentest.CommitType), gentest.Marker(4, 3, 2, gentest.CommitType)),
	}
	for name, log := range cases {
		t.Run(name, func(t *testing.T) {
			p := gentest.WriteLogs(t, filepath.Join(t.TempDir(), "t-0"), map[int64][]byte{0: log})
			if _, err := PlanPartition(p, Options{}); !errors.Is(err, ErrUnrecoverable) {
				t.Errorf("got %v, want ErrUnrecoverable", err)
			}
		})
	}
}

func TestPlanEmptyAndMissingLog(t *testing.T) {
	pl := planOne(t, nil, Options{})
	if pl.ValidBytes != 0 || pl.TruncatedBytes != 0 || pl.StopErr != nil || len(pl.Index)+len(pl.TimeIndex) != 0 || pl.TxnIndex != nil {
		t.Errorf("empty log: %+v", pl)
	}
	p := &inspect.Partition{Segments: []inspect.SegmentFiles{{BaseOffset: 5, Index: "x.index"}}}
	if _, err := PlanPartition(p, Options{}); !errors.Is(err, fileio.ErrNotKafka) {
		t.Errorf("no .log: %v", err)
	}
}

// TestPlanAllocations: memory does not grow with the number of batches
// (nothing is allocated per batch; only the index bytes grow).
func TestPlanAllocations(t *testing.T) {
	mk := func(n int) *inspect.Partition {
		var log []byte
		for i := 0; i < n; i++ {
			log = append(log, gentest.TxnData(int64(i), 1, int64(i), 7, false)...)
		}
		return gentest.WriteLogs(t, filepath.Join(t.TempDir(), "t-0"), map[int64][]byte{0: log})
	}
	small, large := mk(50), mk(3000)
	allocs := func(p *inspect.Partition) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, err := PlanPartition(p, Options{IndexIntervalBytes: 1 << 30}); err != nil {
				t.Fatal(err)
			}
		})
	}
	if a, b := allocs(small), allocs(large); b > a+2 {
		t.Errorf("%v allocations for 50 batches, %v for 3000: something is allocated per batch", a, b)
	}
}

func TestPlanOverlap(t *testing.T) {
	seg0, seg15, cutAt := gentest.OverlapLogs()
	dir := filepath.Join(t.TempDir(), "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 15: seg15})
	opts := Options{IndexIntervalBytes: IndexEveryBatch}

	// Recovery alone keeps the batches, and the plan reports the first.
	plans, err := PlanPartition(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ce *fileio.CorruptError
	pl := plans[0]
	if pl.StopErr != nil || pl.ValidBytes != int64(len(seg0)) || !errors.Is(pl.Overlap, ErrOverlap) ||
		!errors.As(pl.Overlap, &ce) || ce.Position != cutAt || ce.Offset != 19 || ce.File != p.Segments[0].Log {
		t.Fatalf("without CutOverlap: stop %v, valid %d, overlap %v", pl.StopErr, pl.ValidBytes, pl.Overlap)
	}
	if pl.IndexEntries != 3 {
		t.Errorf("recovery indexes every batch after the first: %d entries, want 3", pl.IndexEntries)
	}
	if plans[1].Overlap != nil {
		t.Errorf("the last segment reaches no next segment: %v", plans[1].Overlap)
	}

	// With CutOverlap the plan is recovery's over the log cut before that
	// batch: the same bytes as planning the prefix alone.
	opts.CutOverlap = true
	cut, err := PlanPartition(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	pl = cut[0]
	if pl.StopErr != pl.Overlap || !errors.Is(pl.StopErr, ErrOverlap) || pl.ValidBytes != cutAt || pl.TruncatedBytes != int64(len(seg0))-cutAt || pl.Batches != 1 {
		t.Fatalf("with CutOverlap: stop %v, valid %d, truncated %d, %d batches", pl.StopErr, pl.ValidBytes, pl.TruncatedBytes, pl.Batches)
	}
	alone := planOne(t, seg0[:cutAt], Options{IndexIntervalBytes: IndexEveryBatch})
	if !bytes.Equal(pl.Index, alone.Index) || !bytes.Equal(pl.TimeIndex, alone.TimeIndex) {
		t.Errorf("cut plan's indexes %x %x, want the prefix's %x %x", pl.Index, pl.TimeIndex, alone.Index, alone.TimeIndex)
	}
	if ts, off := lastTimeEntry(t, pl.TimeIndex, 0); ts != 1000 || off != 9 {
		t.Errorf("time index ends at (%d, %d), want the prefix's maximum (1000, 9)", ts, off)
	}
	if cut[1].StopErr != nil || cut[1].ValidBytes != int64(len(seg15)) {
		t.Errorf("segment 15: %+v", cut[1])
	}
}

// lastTimeEntry decodes the last entry of a time index (timestamp,
// absolute offset).
func lastTimeEntry(t *testing.T, b []byte, base int64) (int64, int64) {
	t.Helper()
	n := len(b) / indexfmt.TimeEntrySize
	if n == 0 {
		t.Fatal("empty time index")
	}
	e := b[(n-1)*indexfmt.TimeEntrySize:]
	return int64(binary.BigEndian.Uint64(e)), base + int64(int32(binary.BigEndian.Uint32(e[8:])))
}

// TestPlanOverlapEdges: a segment whose first batch already reaches
// the next segment's base offset is cut whole; one that stops earlier for
// damage keeps recovery's stop.
func TestPlanOverlapEdges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	seg0 := gentest.Concat(gentest.Data(20, 5, 1), gentest.Data(25, 5, 2))
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 22: gentest.Data(22, 10, 3)})
	plans, err := PlanPartition(p, Options{CutOverlap: true})
	if err != nil {
		t.Fatal(err)
	}
	if pl := plans[0]; pl.ValidBytes != 0 || pl.Batches != 0 || !errors.Is(pl.StopErr, ErrOverlap) || len(pl.Index) != 0 || len(pl.TimeIndex) != 0 {
		t.Errorf("first batch reaching: valid %d, %d batches, stop %v, index %x, time index %x", pl.ValidBytes, pl.Batches, pl.StopErr, pl.Index, pl.TimeIndex)
	}

	// Damage before the overlap: recovery's stop comes first, and the
	// overlapping batch, past it, is not looked at.
	seg0, seg15, cutAt := gentest.OverlapLogs()
	seg0[cutAt-3] ^= 0xff // in the first batch's last record
	dir = filepath.Join(t.TempDir(), "t-0")
	p = gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 15: seg15})
	plans, err = PlanPartition(p, Options{CutOverlap: true})
	if err != nil {
		t.Fatal(err)
	}
	if pl := plans[0]; pl.ValidBytes != 0 || !errors.Is(pl.StopErr, fileio.ErrCRC) || pl.Overlap != nil {
		t.Errorf("damage first: valid %d, stop %v, overlap %v", pl.ValidBytes, pl.StopErr, pl.Overlap)
	}
}

// TestPlanOverlapTransactions: the cut batches are not replayed, so a
// transaction whose ABORT marker was cut stays open into the next segment,
// whose own ABORT then records it there, as a broker recovering the cut
// partition would.
func TestPlanOverlapTransactions(t *testing.T) {
	seg0 := gentest.Concat(gentest.TxnData(0, 5, 1, 7, true), gentest.Marker(5, 2, 7, gentest.CommitType), gentest.TxnData(6, 4, 3, 7, true), gentest.Marker(12, 4, 7, gentest.AbortType))
	seg10 := gentest.Concat(gentest.Data(10, 5, 5), gentest.Marker(15, 6, 7, gentest.AbortType))
	dir := filepath.Join(t.TempDir(), "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 10: seg10})
	plain, err := PlanPartition(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].TxnEntries != 1 || plain[1].TxnEntries != 0 {
		t.Fatalf("recovery: %d and %d aborted transactions, want 1 and 0", plain[0].TxnEntries, plain[1].TxnEntries)
	}
	cut, err := PlanPartition(p, Options{CutOverlap: true})
	if err != nil {
		t.Fatal(err)
	}
	if cut[0].TxnEntries != 0 || cut[1].TxnEntries != 1 {
		t.Fatalf("cut: %d and %d aborted transactions, want 0 and 1", cut[0].TxnEntries, cut[1].TxnEntries)
	}
	txn := indexfmt.DecodeTxnEntry(cut[1].TxnIndex)
	if txn.ProducerID != 7 || txn.FirstOffset != 6 || txn.LastOffset != 15 {
		t.Errorf("aborted transaction %+v, want producer 7, offsets 6..15", txn)
	}
}

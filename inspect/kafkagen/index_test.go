package kafkagen

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

type testBatch struct{ lastOffset, maxTimestamp, size int64 }

func runIndexer(t *testing.T, base int64, interval int, batches []testBatch, close bool) *segmentIndexer {
	t.Helper()
	s := newSegmentIndexer(base, interval)
	for _, b := range batches {
		if err := s.appendBatch(b.lastOffset, b.maxTimestamp, b.size); err != nil {
			t.Fatal(err)
		}
	}
	if close {
		if err := s.closeSegment(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// The example of the format notes (recovery, section 9.1): batches at
// positions 0, 3000, 5000, 5500, 9500, 9600 with index.interval.bytes 4096
// get entries at 5000 and 9500 only.
func TestIndexIntervalExample(t *testing.T) {
	batches := []testBatch{
		{lastOffset: 104, maxTimestamp: 1000, size: 3000}, // at 0
		{lastOffset: 109, maxTimestamp: 1010, size: 2000}, // at 3000
		{lastOffset: 112, maxTimestamp: 1005, size: 500},  // at 5000: 5000 > 4096
		{lastOffset: 120, maxTimestamp: 1020, size: 4000}, // at 5500
		{lastOffset: 121, maxTimestamp: 1030, size: 100},  // at 9500: 9500-5000 = 4500 > 4096
		{lastOffset: 130, maxTimestamp: 1025, size: 50},   // at 9600
	}
	s := runIndexer(t, 100, 4096, batches, true)
	wantOff := []OffsetEntry{{112, 5000}, {121, 9500}}
	if !reflect.DeepEqual(s.offsetEntries, wantOff) {
		t.Errorf("offset index %v, want %v", s.offsetEntries, wantOff)
	}
	// Time entries use the running maximum including the indexed batch:
	// at 5000 the max is 1010 (batch 109), at 9500 it is 1030 (batch 121);
	// the final entry (1030) equals the last one and is skipped.
	wantTime := []TimeEntry{{1010, 109}, {1030, 121}}
	if !reflect.DeepEqual(s.timeEntries, wantTime) {
		t.Errorf("time index %v, want %v", s.timeEntries, wantTime)
	}
	// The bytes, through indexfmt's encoders.
	wantBytes := []byte{0, 0, 0, 12, 0, 0, 0x13, 0x88, 0, 0, 0, 21, 0, 0, 0x25, 0x1c}
	if string(s.offsetIndex) != string(wantBytes) {
		t.Errorf("offset index bytes %x, want %x", s.offsetIndex, wantBytes)
	}
	if got := readTimeIndex(s.timeIndex, 100); !reflect.DeepEqual(got, wantTime) {
		t.Errorf("time index bytes decode to %v", got)
	}

	// One byte more of interval: 5000-0 > 4999 still, 9500-5000 > 4999 no.
	s = runIndexer(t, 100, 4999, batches, true)
	if want := []OffsetEntry{{112, 5000}}; !reflect.DeepEqual(s.offsetEntries, want) {
		t.Errorf("interval 4999: %v, want %v", s.offsetEntries, want)
	}
	// The strict '>': an interval equal to the distance gives no entry at
	// 5000; the next batch, at 5500, is the first beyond it.
	s = runIndexer(t, 100, 5000, batches, true)
	if want := []OffsetEntry{{120, 5500}}; !reflect.DeepEqual(s.offsetEntries, want) {
		t.Errorf("interval 5000: %v, want %v", s.offsetEntries, want)
	}
	// The final entry is written at close when the max rose after the last
	// indexed batch.
	batches[5].maxTimestamp = 1040
	s = runIndexer(t, 100, 4096, batches, true)
	if want := []TimeEntry{{1010, 109}, {1030, 121}, {1040, 130}}; !reflect.DeepEqual(s.timeEntries, want) {
		t.Errorf("final entry: %v, want %v", s.timeEntries, want)
	}
}

func TestIndexEveryBatch(t *testing.T) {
	// index.interval.bytes 0: every batch but the first of the segment.
	batches := []testBatch{{0, 50, 100}, {3, 40, 80}, {4, 60, 70}, {9, 60, 90}, {10, 55, 61}}
	s := runIndexer(t, 0, 0, batches, true)
	wantOff := []OffsetEntry{{3, 100}, {4, 180}, {9, 250}, {10, 340}}
	// Max so far: 50@0, 50@0, 60@4, 60@4 (equal: not strictly greater, the
	// first batch keeps it), 60@4.
	wantTime := []TimeEntry{{50, 0}, {60, 4}}
	if !reflect.DeepEqual(s.offsetEntries, wantOff) || !reflect.DeepEqual(s.timeEntries, wantTime) {
		t.Errorf("got %v %v, want %v %v", s.offsetEntries, s.timeEntries, wantOff, wantTime)
	}
}

func TestTimeIndexWithoutTimestamps(t *testing.T) {
	// Magic 0: every batch has timestamp -1; the empty time index's last
	// entry is (-1, base), so nothing is ever strictly greater.
	batches := []testBatch{{5, -1, 100}, {6, -1, 100}, {9, -1, 100}}
	s := runIndexer(t, 5, 0, batches, true)
	if len(s.timeEntries) != 0 || len(s.offsetEntries) != 2 {
		t.Errorf("time %v offsets %v", s.timeEntries, s.offsetEntries)
	}
	if s.maxTimestampSoFar != -1 || s.offsetOfMaxTimestamp != 5 {
		t.Errorf("max so far %d at %d", s.maxTimestampSoFar, s.offsetOfMaxTimestamp)
	}
	// Timestamp 0 is >= 0 and does get an entry.
	s = runIndexer(t, 5, 0, []testBatch{{5, 0, 100}}, true)
	if want := []TimeEntry{{0, 5}}; !reflect.DeepEqual(s.timeEntries, want) {
		t.Errorf("timestamp 0: %v", s.timeEntries)
	}
}

func TestIndexerRejects(t *testing.T) {
	s := newSegmentIndexer(100, 0)
	if err := s.appendBatch(99, 1, 100); err == nil {
		t.Error("offset below the base accepted")
	}
	s = newSegmentIndexer(0, 0)
	if err := s.appendBatch(1<<31, 1, 100); err == nil {
		t.Error("offset beyond base + MaxInt32 accepted")
	}
	s = newSegmentIndexer(0, 0)
	_ = s.appendBatch(5, 1, 100)  // first batch: never indexed
	_ = s.appendBatch(10, 1, 100) // indexed: entry 10
	if err := s.appendBatch(10, 2, 100); err == nil {
		t.Error("non-increasing offset at an index point accepted (OffsetIndex.append)")
	}
}

// The per-batch append path against the recovery loop of the format notes,
// on random batch sequences.
func TestIndexerMatchesRecovery(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		base := rng.Int64N(1000)
		interval := []int{0, 1, 100, 4096}[rng.IntN(4)]
		var bs []BatchManifest
		var tbs []testBatch
		off := base + rng.Int64N(3)
		for n := rng.IntN(60); n > 0; n-- {
			off += rng.Int64N(4)
			b := BatchManifest{LastOffset: off, MaxTimestamp: rng.Int64N(50) - 2, Size: 61 + rng.Int64N(400)}
			bs = append(bs, b)
			tbs = append(tbs, testBatch{b.LastOffset, b.MaxTimestamp, b.Size})
			off++
		}
		final := rng.IntN(2) == 0
		s := runIndexer(t, base, interval, tbs, final)
		wantOff, wantTime := expectedIndexes(bs, base, interval, final)
		if !reflect.DeepEqual(s.offsetEntries, nilIfEmptyO(wantOff)) || !reflect.DeepEqual(s.timeEntries, nilIfEmptyT(wantTime)) {
			t.Fatalf("iteration %d: append path %v %v, recovery %v %v", iter, s.offsetEntries, s.timeEntries, wantOff, wantTime)
		}
	}
}

func nilIfEmptyO(e []OffsetEntry) []OffsetEntry {
	if len(e) == 0 {
		return nil
	}
	return e
}

func nilIfEmptyT(e []TimeEntry) []TimeEntry {
	if len(e) == 0 {
		return nil
	}
	return e
}

// realSegments lists the segments of real broker data whose index files
// were written by a broker that indexes per batch on append (Kafka 4.1+,
// or 4.0 leaders, which append one batch per produce request) and trimmed
// at a clean shutdown.
func realSegments(t *testing.T) []string {
	root := fixturesDir(t)
	var out []string
	for _, fx := range []string{"cp-kraft-multiseg-compacted", "cp-kraft-snappy-small", "kafka40-kraft-snappy-retention", "kraft-metadata-tiny"} {
		logs, _ := filepath.Glob(filepath.Join(root, fx, "*", "*.log"))
		out = append(out, logs...)
	}
	sort.Strings(out)
	if len(out) == 0 {
		t.Fatal("no fixture segments found")
	}
	return out
}

// Feeding the batch headers of real broker segments through the indexer
// gives the broker's own index files, byte for byte.
//
// Some of these segments were appended across broker restarts: each clean
// close added a final time-index entry and the restart reset the byte
// count between offset-index entries (bytesSinceLastIndexEntry lives only
// in memory). One append run gives at most one time-index entry more than
// offset-index entries (the final one), so a segment with more was
// restarted; for those only the part before the first restart must match.
func TestIndexerMatchesRealBroker(t *testing.T) {
	whole, prefix := 0, 0
	for _, logPath := range realSegments(t) {
		log, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		base := mustBase(t, logPath)
		ents, err := entries(log)
		if err != nil {
			t.Fatalf("%s: %v", logPath, err)
		}
		s := newSegmentIndexer(base, DefaultIndexIntervalBytes)
		for _, e := range ents {
			h := log[e[0]:]
			last := int64(binary.BigEndian.Uint64(h)) + int64(int32(binary.BigEndian.Uint32(h[23:])))
			maxTs := int64(binary.BigEndian.Uint64(h[35:]))
			if err := s.appendBatch(last, maxTs, e[1]); err != nil {
				t.Fatalf("%s: %v", logPath, err)
			}
		}
		if err := s.closeSegment(); err != nil {
			t.Fatal(err)
		}
		stem := strings.TrimSuffix(logPath, ".log")
		idx, err1 := os.ReadFile(stem + ".index")
		tidx, err2 := os.ReadFile(stem + ".timeindex")
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", logPath, err1, err2)
		}
		name := filepath.Base(filepath.Dir(logPath)) + "/" + filepath.Base(logPath)
		brokerOff, brokerTime := readOffsetIndex(idx, base), readTimeIndex(tidx, base)
		if len(brokerTime) <= len(brokerOff)+1 {
			whole++
			if string(idx) != string(s.offsetIndex) {
				t.Errorf("%s: offset index differs: broker %v, generator %v", name, brokerOff, s.offsetEntries)
			}
			if string(tidx) != string(s.timeIndex) {
				t.Errorf("%s: time index differs: broker %v, generator %v", name, brokerTime, s.timeEntries)
			}
			t.Logf("%s: %d batches, %d offset and %d time entries identical", name, len(ents), len(s.offsetEntries), len(s.timeEntries))
			continue
		}
		// Restarted: the first broker time entry the single run lacks is
		// the close entry of the first restart, at offset r.
		k := 0
		for k < len(brokerTime) && k < len(s.timeEntries) && brokerTime[k] == s.timeEntries[k] {
			k++
		}
		if k == len(brokerTime) {
			t.Errorf("%s: restarted segment but every time entry matches", name)
			continue
		}
		r := brokerTime[k].Offset
		upTo := func(e []OffsetEntry) []OffsetEntry {
			var out []OffsetEntry
			for _, x := range e {
				if x.Offset <= r {
					out = append(out, x)
				}
			}
			return out
		}
		if got, want := upTo(s.offsetEntries), upTo(brokerOff); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: offset entries up to the restart after %d differ: broker %v, generator %v", name, r, want, got)
		}
		prefix++
		t.Logf("%s: restarted after offset %d; %d time entries and the offset entries before it match", name, r, k)
	}
	if whole < 5 {
		t.Errorf("only %d segments compared whole", whole)
	}
	t.Logf("%d segments compared whole, %d up to their first restart", whole, prefix)
}
func mustBase(t *testing.T, path string) int64 {
	t.Helper()
	var base int64
	for _, c := range strings.TrimSuffix(filepath.Base(path), ".log") {
		base = base*10 + int64(c-'0')
	}
	return base
}

package find_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/find"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// onePartition generates one partition directory and returns it with its
// manifest and its data records as the brute force reads them.
func onePartition(t *testing.T, dir string, o kafkagen.Options) (*inspect.Partition, *kafkagen.Manifest, []oracleRecord) {
	t.Helper()
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p, m, oracleRecords(p.Name(), m)
}

// searchMisled is a search by f: its matches and the misleading entries
// it reported.
func searchMisled(t *testing.T, parts []*inspect.Partition, f find.Filter) ([]string, []string) {
	t.Helper()
	got, misled, _ := collect(t, parts, find.Options{Filter: f})
	return got, misled
}

// TestFindThroughAnOffsetIndexThatPointsPast is issue 27's first case: an
// .index whose entries point past their batches (each at the batch two
// further on, the last ones past the end of the log). find --from-offset
// 30 --to-offset 99 must print all 70 records in range and name the entry
// that misled it. (Before the rule for misleading entries it printed 68,
// and no event.)
func TestFindThroughAnOffsetIndexThatPointsPast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	p, m, all := onePartition(t, dir, kafkagen.Options{Seed: 3, Batches: 60, RecordsPerBatch: 4, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	seg := &m.Segments[0]
	gentest.EditOffsetIndex(t, m.IndexPath(seg), func(slot int, rel, pos *int32) {
		next := slot + 3 // entry k stands for batch k+1
		if next < len(seg.Batches) {
			*pos = int32(seg.Batches[next].Position)
		} else {
			*pos = int32(seg.LogSize + 100)
		}
	})
	f := find.Filter{FromOffset: p64(30), ToOffset: p64(99)}
	got, misled := searchMisled(t, []*inspect.Partition{p}, f)
	want := bruteForce(all, f, 0)
	if len(want) != 70 {
		t.Fatalf("the generated log holds %d records in 30..99, want 70 for this test", len(want))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("found %d records, want the %d the log holds", len(got), len(want))
	}
	if len(misled) == 0 || !strings.Contains(misled[0], "00000000000000000000.index: slot ") {
		t.Fatalf("the misleading entry is not reported: %q", misled)
	}
}

// TestFindThroughATimeIndexTooLow is issue 27's second case: a
// .timeindex whose timestamps are too low. find --from-time T must print
// every record with a timestamp >= T, for every T, and say which entry
// misled it. (Before, records were missing for most T: 210 of 222 for the
// first.)
func TestFindThroughATimeIndexTooLow(t *testing.T) {
	root := t.TempDir()
	for i, o := range []kafkagen.Options{
		{Batches: 80, RecordsPerBatch: 5, IndexIntervalBytes: kafkagen.IndexEveryBatch},
		{Batches: 80, RecordsPerBatch: 5, Timestamps: "random", Segments: 2},
		{Batches: 80, Magic: 1, Compression: "gzip", Timestamps: "jumping"},
	} {
		o.Seed = int64(10 + i)
		p, m, all := onePartition(t, filepath.Join(root, fmt.Sprintf("orders-%d", i)), o)
		for si := range m.Segments {
			gentest.EditTimeIndex(t, m.TimeIndexPath(&m.Segments[si]), func(slot int, ts *int64, rel *int32) {
				if *ts > 0 {
					*ts -= 40
				}
			})
		}
		missed, reported := 0, 0
		for k := 0; k < len(all); k += 7 {
			from := all[k].rec.Timestamp
			f := find.Filter{FromTime: p64(from)}
			got, misled := searchMisled(t, []*inspect.Partition{p}, f)
			want := bruteForce(all, f, 0)
			if !slices.Equal(got, want) {
				t.Errorf("%s --from-time %d: %d records, want %d", p.Name(), from, len(got), len(want))
				missed++
			}
			if len(misled) > 0 {
				reported++
			}
		}
		if missed == 0 && reported == 0 {
			t.Errorf("%s: no search reported a misleading entry", p.Name())
		}
	}
}

// TestFindWithDamagedIndexesMatchesBruteForce is the differential test of
// the rule for misleading entries: over many partitions whose .index and
// .timeindex were damaged at random (gentest.DamageIndexes), searches bounded by
// offsets and times find exactly the records the generator wrote in range
// (a brute force over its record list, that is a full scan of the log),
// whatever the indexes say. The log itself is intact, so no damage is
// reported either.
func TestFindWithDamagedIndexesMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	root := t.TempDir()
	trials, misledTotal := 0, 0
	for trial := range 48 {
		o := shapes[trial%len(shapes)].o
		o.Seed = int64(100 + trial)
		o.Segments = 2
		o.Batches = 30
		o.RecordsPerBatch = 5
		o.ValueSize = 40
		p, m, all := onePartition(t, filepath.Join(root, fmt.Sprintf("t-%d", trial)), o)
		did := gentest.DamageIndexes(t, rng, m)
		if did == "" || len(all) == 0 {
			continue
		}
		trials++
		pick := func() kafkagen.RecordManifest { return all[rng.IntN(len(all))].rec }
		for range 12 {
			var f find.Filter
			a, b := pick(), pick()
			switch rng.IntN(5) {
			case 0:
				f.FromOffset = p64(a.Offset + int64(rng.IntN(3)) - 1)
			case 1:
				f.FromOffset, f.ToOffset = p64(min(a.Offset, b.Offset)), p64(max(a.Offset, b.Offset))
			case 2:
				f.FromTime = p64(a.Timestamp + int64(rng.IntN(3)) - 1)
			case 3:
				f.FromTime, f.ToTime = p64(min(a.Timestamp, b.Timestamp)), p64(max(a.Timestamp, b.Timestamp))
			case 4:
				f.FromTime, f.FromOffset = p64(a.Timestamp), p64(b.Offset)
			}
			got, misled := searchMisled(t, []*inspect.Partition{p}, f)
			misledTotal += len(misled)
			if want := bruteForce(all, f, 0); !slices.Equal(got, want) {
				t.Errorf("trial %d (%s; damage: %s), %s: %d records, want %d; misleading entries reported: %q",
					trial, shapes[trial%len(shapes)].dir, did, describe(f), len(got), len(want), misled)
			}
		}
	}
	if trials < 30 || misledTotal == 0 {
		t.Fatalf("%d damaged partitions, %d misleading entries reported: the test exercises too little", trials, misledTotal)
	}
}

// TestFindThroughDamageWhereAnEntryPoints: when the batch an index entry
// points at is damaged (its length field), the entry is right and the log
// is wrong: the search reports the damage at that position, as before,
// and calls no entry misleading.
func TestFindThroughDamageWhereAnEntryPoints(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	p, m, _ := onePartition(t, dir, kafkagen.Options{Seed: 4, Batches: 40, RecordsPerBatch: 3, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	seg := &m.Segments[0]
	bad := seg.Batches[20]
	f, err := os.OpenFile(m.LogPath(seg), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0, 0, 0, 1}, bad.Position+8); err != nil { // a length of 1: no batch
		t.Fatal(err)
	}
	f.Close()
	var damage, misled []string
	_, err = find.Search([]*inspect.Partition{p}, find.Options{Filter: find.Filter{FromOffset: p64(bad.LastOffset)}}, func(e find.Event) error {
		switch {
		case e.Damage != nil:
			damage = append(damage, fmt.Sprintf("%d", e.Damage.Position))
		case e.Misleading != nil:
			misled = append(misled, e.Misleading.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(misled) != 0 || len(damage) != 1 || damage[0] != fmt.Sprint(bad.Position) {
		t.Fatalf("damage at %v (want %d), misleading entries %q (want none)", damage, bad.Position, misled)
	}
}

package inspect_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/record"
)

// realFixtures is the directory of partition directories written by real
// brokers, read in place.
func realFixtures(t testing.TB) string {
	t.Helper()
	return fixtures.Root(t)
}

// realPartitions resolves every data directory under the fixtures.
func realPartitions(t testing.TB) []*inspect.Partition {
	t.Helper()
	var ps []*inspect.Partition
	for _, dir := range fixtures.Dirs(t) {
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dir), err)
		}
		if tg.Kind != "data_dir" {
			t.Fatalf("%s: resolved as %s, want data_dir", filepath.Base(dir), tg.Kind)
		}
		ps = append(ps, tg.Partitions...)
	}
	if len(ps) < 10 {
		t.Fatalf("found only %d partitions in the real fixtures", len(ps))
	}
	return ps
}

// bruteBatch is a batch seen by a plain scan of every segment from position 0.
type bruteBatch struct {
	segment int
	b       record.Batch
}

func allBatches(t testing.TB, p *inspect.Partition) []bruteBatch {
	t.Helper()
	var out []bruteBatch
	for i, sf := range p.Segments {
		seg, err := inspect.OpenSegment(sf, inspect.SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc := seg.Batches(0)
		for sc.Next() {
			out = append(out, bruteBatch{i, *sc.Batch()})
		}
		if err := sc.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
			t.Fatalf("%s: %v", sf.Log, err)
		}
		seg.Close()
	}
	return out
}

// bruteLookup: the first batch, in segment then file order, among segments
// with base offset <= ... whose last offset >= target, starting at the
// floor segment; what LookupOffset must return on a consistent partition.
func bruteLookup(p *inspect.Partition, all []bruteBatch, target int64) (bruteBatch, bool) {
	floor := -1
	for i, s := range p.Segments {
		if s.BaseOffset <= target {
			floor = i
		}
	}
	if floor < 0 {
		return bruteBatch{}, false
	}
	for _, bb := range all {
		if bb.segment >= floor && bb.b.LastOffset >= target {
			return bb, true
		}
	}
	return bruteBatch{}, false
}

func TestLookupOffsetRealFixturesMatchBruteForce(t *testing.T) {
	for _, p := range realPartitions(t) {
		t.Run(filepath.Base(filepath.Dir(p.Dir))+"/"+p.Name(), func(t *testing.T) {
			all := allBatches(t, p)
			lo := p.Segments[0].BaseOffset - 2
			hi := int64(lo + 10)
			if n := len(all); n > 0 {
				hi = all[n-1].b.LastOffset + 3
			}
			// Every offset in small partitions; about 500 spread over the
			// large ones (a lookup without an index scans from position 0),
			// 100 under -short.
			spread := int64(500)
			if testing.Short() {
				spread = 100
			}
			step := max(1, (hi-lo)/spread)
			for target := lo; target <= hi; target += step {
				got, err := p.LookupOffset(target, inspect.LookupOptions{})
				if err != nil {
					t.Fatalf("offset %d: %v", target, err)
				}
				want, ok := bruteLookup(p, all, target)
				if got.Found != ok {
					t.Fatalf("offset %d: found=%v, brute force found=%v (%s)", target, got.Found, ok, got.Reason)
				}
				if !ok {
					continue
				}
				if got.Batch.Position != want.b.Position || got.SegmentBaseOffset != p.Segments[want.segment].BaseOffset || got.Batch.LastOffset != want.b.LastOffset {
					t.Fatalf("offset %d: got batch at %s:%d (last %d), want %s:%d (last %d)", target,
						got.Segment, got.Batch.Position, got.Batch.LastOffset,
						p.Segments[want.segment].Name(), want.b.Position, want.b.LastOffset)
				}
			}
		})
	}
}

func TestLookupTraceRecordsProbes(t *testing.T) {
	var big *inspect.Partition
	for _, p := range realPartitions(t) {
		if p.Name() == "__cluster_metadata-0" && p.Segments[0].BaseOffset == 32026 {
			big = p
		}
	}
	if big == nil {
		t.Skip("cp-kraft-multiseg-compacted metadata log not present")
	}
	got, err := big.LookupOffset(60000, inspect.LookupOptions{Trace: true})
	if err != nil || !got.Found {
		t.Fatalf("lookup: %v %+v", err, got)
	}
	var probes, batches, segments int
	for _, s := range got.Trace {
		switch s.Step {
		case "probe":
			probes++
		case "batch":
			batches++
		case "segment":
			segments++
		}
	}
	// 822 index entries: one warm check (slot 822-1-1024 < 0 -> 0 ... ) then a
	// binary search of ~10 probes; one batch per scanned batch; one segment.
	if probes < 5 || probes > 12 || segments != 1 || batches != got.ScannedBatches {
		t.Fatalf("trace has %d probes, %d segments, %d batches (scanned %d): %+v", probes, segments, batches, got.ScannedBatches, got.Trace)
	}
	if got.IndexEntry == nil || got.IndexEntry.Offset > 60000 || got.Batch.LastOffset < 60000 {
		t.Fatalf("index entry %+v / batch %+v do not bracket 60000", got.IndexEntry, got.Batch)
	}
}

// TestOpenSegmentUnmappedReadsTheSame: a segment opened unmapped answers
// every offset and timestamp lookup and NextOffset as the mapped one does,
// on every real segment, and (where /proc/self/maps shows it) maps none
// of its files while OpenSegment maps its indexes.
func TestOpenSegmentUnmappedReadsTheSame(t *testing.T) {
	// The kernel names a mapped file by its resolved path, which need not
	// be the path opened (a symbolic link or ".." on the way to the
	// fixtures): a mapping is path's when it is the same file.
	mapped := func(path string) (bool, bool) {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			return false, false
		}
		fi, err := os.Stat(path)
		if err != nil {
			return false, true
		}
		for _, line := range strings.Split(string(b), "\n") {
			// address perms offset dev inode path
			if f := strings.Fields(line); len(f) >= 6 && filepath.Base(f[5]) == fi.Name() {
				if mi, err := os.Stat(strings.Join(f[5:], " ")); err == nil && os.SameFile(fi, mi) {
					return true, true
				}
			}
		}
		return false, true
	}
	n := 0
	for _, p := range realPartitions(t) {
		for _, sf := range p.Segments {
			b, err := inspect.OpenSegment(sf, inspect.SegmentOptions{Unmapped: true})
			if err != nil {
				t.Fatal(err)
			}
			bm, ok := mapped(sf.Index)
			a, err := inspect.OpenSegment(sf, inspect.SegmentOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if am, _ := mapped(sf.Index); ok && sf.Index != "" && a.Index.Size() > 0 && (bm || !am) {
				t.Errorf("%s: mapped after opening Unmapped %v, after opening mapped %v", sf.Index, bm, am)
			}
			an, aerr := a.NextOffset()
			bn, berr := b.NextOffset()
			if an != bn || (aerr == nil) != (berr == nil) {
				t.Errorf("%s: NextOffset %d %v unmapped, %d %v mapped", sf.Log, bn, berr, an, aerr)
			}
			step := max(1, (an-sf.BaseOffset)/150) // about 150 offsets a segment, ends included
			for off := sf.BaseOffset - 1; off <= an; off += step {
				ab, ah, af, aerr := a.LookupOffset(off)
				bb, bh, bf, berr := b.LookupOffset(off)
				if ab != bb || ah != bh || af != bf || (aerr == nil) != (berr == nil) {
					t.Fatalf("%s: LookupOffset(%d) differs unmapped", sf.Log, off)
				}
				if n%5 == 0 {
					ta, aerr := a.LookupTimestamp(ab.MaxTimestamp, sf.BaseOffset)
					tb, berr := b.LookupTimestamp(ab.MaxTimestamp, sf.BaseOffset)
					if ta != tb || (aerr == nil) != (berr == nil) {
						t.Fatalf("%s: LookupTimestamp(%d) differs unmapped", sf.Log, ab.MaxTimestamp)
					}
				}
				n++
			}
			a.Close()
			b.Close()
		}
	}
	if n == 0 {
		t.Fatal("no lookups compared")
	}
}

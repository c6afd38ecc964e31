package verify

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// withAhead checks every log with the read-ahead (64 KiB chunks, so
// that the small logs here span many), and without it.
var (
	withAhead    = Options{Window: 64 << 10, readAheadMin: 1}
	withoutAhead = Options{Window: 64 << 10, readAheadMin: -1}
)

// sameWithReadAhead verifies path with and without the read-ahead (and
// with its default window) and requires the same findings, in the same
// order, and the same summary.
func sameWithReadAhead(t *testing.T, name, path string, o Options) {
	t.Helper()
	on, off := withAhead, withoutAhead
	on.Records, off.Records = o.Records, o.Records
	on.Jobs, off.Jobs = o.Jobs, o.Jobs
	on.SideFiles, off.SideFiles = true, true
	want, wsum := verifyPath(t, path, off)
	got, gsum := verifyPath(t, path, on)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gsum, wsum) {
		t.Fatalf("%s (%+v): with the read-ahead:%s\n%+v\nwithout:%s\n%+v", name, o, describe(got), gsum, describe(want), wsum)
	}
	on.Window = 0
	if got, _ := verifyPath(t, path, on); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s (%+v): with the read-ahead and the default window:%s\nwithout:%s", name, o, describe(got), describe(want))
	}
}

// TestReadAheadMatchesSequential: on every case of the damage matrix, on
// partitions of many small batches and on the real brokers' data, verify
// reports exactly the same with the read-ahead as without, with and
// without --records, with -j 1 and -j 2 (-short: the damage cases take
// the two in turn).
func TestReadAheadMatchesSequential(t *testing.T) {
	for i, tc := range damageCases {
		dir := tc.damaged(t)
		for j, o := range []Options{{Jobs: 1}, {Jobs: 2, Records: true}} {
			if !testing.Short() || i%2 == j {
				sameWithReadAhead(t, tc.name, dir, o)
			}
		}
	}
	for _, shape := range []kafkagen.Options{
		{Seed: 3, Segments: 2, Batches: 3000, RecordsPerBatch: 2, ValueSize: 150},
		{Seed: 4, Segments: 1, Batches: 40, RecordsPerBatch: 100, ValueSize: 1024, Compression: "lz4"},
		{Seed: 5, Segments: 2, Batches: 2000, Transactions: true},
	} {
		m := generate(t, shape)
		sameWithReadAhead(t, "clean", m.Dir, Options{Jobs: 1})
	}
	for _, dir := range fixtures.Dirs(t) {
		sameWithReadAhead(t, filepath.Base(dir), dir, Options{Jobs: 1, Records: true})
	}
}

// TestWholeIndexMatchesFile: verify reports exactly the same when each
// index is read once into memory (wholeIndexBytes) as when its slots are
// read from the file, on every case of the damage matrix (torn, padded,
// out-of-order, out-of-range indexes among them) and on the real brokers'
// data.
func TestWholeIndexMatchesFile(t *testing.T) {
	same := func(name, path string) {
		t.Helper()
		o := Options{Jobs: 1, SideFiles: true}
		want, wsum := verifyPath(t, path, o)
		defer func(n int64) { wholeIndexBytes = n }(wholeIndexBytes)
		wholeIndexBytes = -1 // every index from its file
		got, gsum := verifyPath(t, path, o)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gsum, wsum) {
			t.Fatalf("%s: from the files:%s\n%+v\nin memory:%s\n%+v", name, describe(got), gsum, describe(want), wsum)
		}
	}
	for _, tc := range damageCases {
		same(tc.name, tc.damaged(t))
	}
	for _, dir := range fixtures.Dirs(t) {
		same(filepath.Base(dir), dir)
	}
}

// TestSegmentEndMatchesReopened: the side checks take the last segment's
// end (partitionEnds) from its checks, while its files are open; the
// findings must be those of opening the segment again, on the damage
// matrix and the real fixtures, with -j 1 (always taken from the checks)
// and -j 2 (whichever finished first); -short takes the two in turn.
func TestSegmentEndMatchesReopened(t *testing.T) {
	n := 0
	same := func(name, path string) {
		t.Helper()
		n++
		for _, jobs := range []int{1, 2} {
			if testing.Short() && n%2 != jobs-1 {
				continue
			}
			o := Options{Jobs: jobs, SideFiles: true}
			want, wsum := verifyPath(t, path, o)
			got, gsum := func() ([]Finding, Summary) {
				reuseSegmentEnd = false
				defer func() { reuseSegmentEnd = true }()
				return verifyPath(t, path, o)
			}()
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gsum, wsum) {
				t.Fatalf("%s -j %d: reopened:%s\n%+v\nfrom the checks:%s\n%+v", name, jobs, describe(got), gsum, describe(want), wsum)
			}
		}
	}
	for _, tc := range damageCases {
		same(tc.name, tc.damaged(t))
	}
	for _, dir := range fixtures.Dirs(t) {
		same(filepath.Base(dir), dir)
	}
}

package inspect_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// countingReader counts the reads made through it.
type countingReader struct {
	r     *bytes.Reader
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// headerWalk iterates the log headers-only from start and returns the
// batches' positions and last offsets, the reads made and the stop error.
func headerWalk(t *testing.T, log []byte, start int64) (got [][2]int64, reads int, err error) {
	t.Helper()
	r := &countingReader{r: bytes.NewReader(log)}
	it := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
	it.ResetReader(r, "x.log", int64(len(log)), start)
	for it.Next() {
		got = append(got, [2]int64{it.Batch().Position, it.Batch().LastOffset})
	}
	return got, r.reads, it.Err()
}

// windowWalk is the same walk through the read window (whole entries).
func windowWalk(t *testing.T, log []byte, start int64) (got [][2]int64, err error) {
	t.Helper()
	it := inspect.NewLogIterator(inspect.IterOptions{Window: 64 << 10})
	it.ResetReader(bytes.NewReader(log), "x.log", int64(len(log)), start)
	for it.Next() {
		got = append(got, [2]int64{it.Batch().Position, it.Batch().LastOffset})
	}
	return got, it.Err()
}

// TestHeadersOnlyReadsSmallBatchesInGroups: a headers-only walk yields the
// batches and the stop a walk through the window does, on small batches
// (read a group of headers at a time: at most one read per four batches),
// on large ones (one read per header, as the broker's FileLogInputStream
// reads them), on a torn tail and a damaged header inside a group, and on
// every real fixture's logs.
func TestHeadersOnlyReadsSmallBatchesInGroups(t *testing.T) {
	same := func(name string, log []byte, start int64) int {
		t.Helper()
		got, reads, gerr := headerWalk(t, log, start)
		want, werr := windowWalk(t, log, start)
		if len(got) != len(want) || (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("%s from %d: headers only %d batches (%v), through the window %d (%v)", name, start, len(got), gerr, len(want), werr)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: batch %d: headers only %v, window %v", name, i, got[i], want[i])
			}
		}
		return reads
	}
	_, small := generate(t, "small", kafkagen.Options{Batches: 2000, RecordsPerBatch: 1, ValueSize: 40})
	_, large := generate(t, "large", kafkagen.Options{Batches: 200, RecordsPerBatch: 4, ValueSize: 1000})
	for _, tc := range []struct {
		name    string
		m       *kafkagen.Manifest
		maxRead func(batches int) int
	}{
		{"small", small, func(n int) int { return n/4 + 1 }},
		{"large", large, func(n int) int { return n }},
	} {
		s := tc.m.Segments[0]
		log, err := os.ReadFile(tc.m.Dir + "/" + inspect.SegmentName(s.BaseOffset) + ".log")
		if err != nil {
			t.Fatal(err)
		}
		for _, start := range []int64{0, s.Batches[len(s.Batches)/3].Position} {
			if reads := same(tc.name, log, start); reads > tc.maxRead(len(s.Batches)) {
				t.Errorf("%s from %d: %d reads for %d batches, want at most %d", tc.name, start, reads, len(s.Batches), tc.maxRead(len(s.Batches)))
			}
		}
		// A torn tail, and a length field below the minimum in the middle.
		same(tc.name+" torn", log[:len(log)-7], 0)
		bad := bytes.Clone(log)
		mid := s.Batches[len(s.Batches)/2].Position
		copy(bad[mid+8:], []byte{0, 0, 0, 5})
		same(tc.name+" damaged", bad, 0)
	}
	for _, p := range realPartitions(t) {
		for _, sf := range p.Segments {
			log, err := os.ReadFile(sf.Log)
			if err != nil {
				t.Fatal(err)
			}
			same(sf.Log, log, 0)
		}
	}
}

package verify

import (
	"encoding/binary"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestScrambledIndexCostsFewPasses: an offset index whose entries all go
// back (positions reversed: a scrambled or foreign .index) is judged entry
// by entry from the nearest checkpoint, so its cost stays a few passes
// over the log's headers. With checkpoints every 32 batches (the bound
// before) this index took 16 header reads per entry, and a 256 MiB
// segment of small batches 35 s instead of 0.2.
func TestScrambledIndexCostsFewPasses(t *testing.T) {
	m := generate(t, kafkagen.Options{Batches: 20000, RecordsPerBatch: 1, ValueSize: 20, IndexIntervalBytes: 256})
	s, _, idx, _ := segFiles(m, 0)
	b := readFile(t, idx)
	n := s.IndexEntries
	if n < 2000 {
		t.Fatalf("%d index entries; the test wants thousands", n)
	}
	for i := range n / 2 {
		j := n - 1 - i
		pi, pj := binary.BigEndian.Uint32(b[i*8+4:]), binary.BigEndian.Uint32(b[j*8+4:])
		binary.BigEndian.PutUint32(b[i*8+4:], pj)
		binary.BigEndian.PutUint32(b[j*8+4:], pi)
	}
	writeFile(t, idx, b)

	got, sum := verifyPath(t, m.Dir, Options{})
	mismatches := 0
	for _, f := range got {
		if f.Check == IndexMismatch {
			mismatches++
		}
	}
	if mismatches == 0 {
		t.Fatalf("no %s for a reversed index:%s", IndexMismatch, describe(got))
	}
	batches := int64(len(s.Batches))
	if sum.rescanned == 0 || sum.rescanned > 3*batches {
		t.Errorf("%d entries behind the merge read %d batch headers again, want some and at most 3 x %d batches", n/2, sum.rescanned, batches)
	}
}

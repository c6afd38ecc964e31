package inspect

import (
	"io"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/internal/scan"
)

// WithFastReaders runs fn over the readers Segment.LookupOffset and
// LookupTimestamp use, under their one fault guard, so that benchmarks can
// time a lookup's steps as the lookup itself runs them. It reports whether
// a mapped file faulted.
func (s *Segment) WithFastReaders(fn func(log io.ReaderAt, idx *indexfmt.OffsetIndex, tidx *indexfmt.TimeIndex)) bool {
	return s.unguarded(func(r readers) { fn(r.log, r.idx, r.tidx) })
}

// ReadAheadSums is how many checksums its read-ahead handed out to its
// scan since it was made.
func ReadAheadSums(it *LogIterator) int64 {
	return it.s.ReadAheadSums()
}

// The read sizes of headers-only reading (scan.Scanner).
const (
	HeaderGroupBytes = scan.HeaderGroupBytes
	SmallEntryBytes  = scan.SmallEntryBytes
)

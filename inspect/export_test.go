package inspect

import (
	"io"

	"github.com/kseg/kseg/indexfmt"
)

// WithFastReaders runs fn over the readers Segment.LookupOffset and
// LookupTimestamp use, under their one fault guard, so that benchmarks can
// time a lookup's steps as the lookup itself runs them. It reports whether
// a mapped file faulted.
func (s *Segment) WithFastReaders(fn func(log io.ReaderAt, idx *indexfmt.OffsetIndex, tidx *indexfmt.TimeIndex)) bool {
	return s.unguarded(func(r readers) { fn(r.log, r.idx, r.tidx) })
}

package verify

import (
	"math"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestLastOffsetWrapsPastInt64: a v2 batch whose base offset plus last
// offset delta goes past 2^63-1 has a last offset that wraps to a negative
// number. Every check that subtracts offsets (relative to the base, order)
// computes in the same wrapping arithmetic as the broker and can find
// nothing wrong; it is a log.offset-range error at that batch.
func TestLastOffsetWrapsPastInt64(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 91, Batches: 6, StartOffset: math.MaxInt64 - 1000, IndexIntervalBytes: 1 << 30})
	s := &m.Segments[0]
	b := s.Batches[len(s.Batches)-1]
	path := m.LogPath(s)
	// A delta that passes 2^63-1 but stays within 2^31-1 of the segment base:
	// relative to the base it looks fine.
	putU32(t, path, b.Position+23, 2000) // lastOffsetDelta
	fixCRC(t, path, b)
	got, _ := verifyPath(t, m.Dir, Options{Jobs: 1, IndexIntervalBytes: 1 << 30})
	expect(t, got, want{LogOffsetRange, kafkagen.SegmentName(s.BaseOffset) + ".log", b.Position})
}

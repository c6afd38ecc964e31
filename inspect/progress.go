package inspect

import "os"

// progressChunk is how many bytes of .log pass between two progress calls
// (LogRange.Progress), at most.
const progressChunk = 4 << 20

// progressMeter turns bytes read into LogRange.Progress calls: at most one
// per progressChunk, and a last one with done == total. A nil meter does
// nothing.
type progressMeter struct {
	fn          func(done, total int64)
	done, total int64
	last        int64 // done at the last call
	segment     int64 // bytes of the current segment counted in done
}

// newProgressMeter sizes a walk over segs starting at byte from of the
// first one, as the files are now (growth meanwhile is clamped).
func newProgressMeter(fn func(done, total int64), segs []SegmentFiles, from int64) *progressMeter {
	if fn == nil {
		return nil
	}
	m := &progressMeter{fn: fn}
	for i, s := range segs {
		if s.Log == "" {
			continue
		}
		if fi, err := os.Stat(s.Log); err == nil {
			n := fi.Size()
			if i == 0 {
				n = max(0, n-from)
			}
			m.total += n
		}
	}
	return m
}

// advance reports that the current segment's read reached n bytes (from
// where it started), once that is progressChunk past what was counted.
func (m *progressMeter) advance(n int64) {
	if m == nil || n-m.segment < progressChunk {
		return
	}
	m.add(n - m.segment)
	m.segment = n
}

// segmentDone counts the rest of a segment that was read from its start
// up to size bytes, and starts the next segment's count.
func (m *progressMeter) segmentDone(size int64) {
	if m == nil {
		return
	}
	m.add(size - m.segment)
	m.segment = 0
}

func (m *progressMeter) add(n int64) {
	if n <= 0 {
		return
	}
	m.done += n
	if m.done-m.last >= progressChunk {
		m.last = m.done
		m.fn(min(m.done, m.total), m.total)
	}
}

// finish makes the last call, done == total, unless the last call said
// so already.
func (m *progressMeter) finish() {
	if m != nil && m.last != m.total {
		m.last = m.total
		m.fn(m.total, m.total)
	}
}

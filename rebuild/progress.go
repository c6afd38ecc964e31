package rebuild

import (
	"os"

	"github.com/kseg/kseg/inspect"
)

// meterChunk is how many bytes of .log pass between two Options.Progress
// calls, at most.
const meterChunk = 4 << 20

// meter turns the bytes of .log read by recovery into Options.Progress
// calls: at most one per meterChunk, and a last one with done == total
// when the planning (PlanPartition, or Run over all its partitions)
// completes. A nil *meter does nothing. Not safe for concurrent use
// (planning is sequential).
type meter struct {
	fn          func(done, total int64)
	done, total int64
	last        int64 // done at the last call
}

// newMeter sizes the work as the .log files of the partitions add up now
// (a file that grows meanwhile is clamped to that total).
func newMeter(fn func(done, total int64), parts []*inspect.Partition) *meter {
	if fn == nil {
		return nil
	}
	m := &meter{fn: fn}
	for _, p := range parts {
		for _, s := range p.Segments {
			if s.Log == "" {
				continue
			}
			if fi, err := os.Stat(s.Log); err == nil {
				m.total += fi.Size()
			}
		}
	}
	return m
}

// advance reports that the scan of the current segment reached pos, once
// it is at least meterChunk past what was reported (*reported).
func (m *meter) advance(reported *int64, pos int64) {
	if m == nil || pos-*reported < meterChunk {
		return
	}
	m.add(pos - *reported)
	*reported = pos
}

// segmentDone reports the rest of a segment of size bytes and starts the
// next segment's count at 0.
func (m *meter) segmentDone(reported *int64, size int64) {
	if m == nil {
		return
	}
	m.add(size - *reported)
	*reported = 0
}

func (m *meter) add(n int64) {
	if n <= 0 {
		return
	}
	m.done += n
	if m.done-m.last >= meterChunk {
		m.last = m.done
		m.fn(min(m.done, m.total), m.total)
	}
}

// finish makes the last call, done == total, unless the last call said
// so already.
func (m *meter) finish() {
	if m != nil && m.last != m.total {
		m.last = m.total
		m.fn(m.total, m.total)
	}
}

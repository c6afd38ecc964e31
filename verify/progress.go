package verify

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/kseg/kseg/inspect"
)

// meterChunk is how far a segment's scan goes between two reports to the
// meter, and so roughly the bytes between two Options.Progress calls.
const meterChunk = 4 << 20

// meter turns the bytes of .log checked by the workers into calls of
// Options.Progress: one call at a time, at most one per meterChunk bytes,
// and a last one with done == total when Run finishes. A nil *meter (no
// Progress) does nothing.
type meter struct {
	fn    func(done, total int64)
	total int64
	done  atomic.Int64
	mu    sync.Mutex
	last  int64 // done at the last call; guarded by mu
}

// newMeter sizes the work as the .log files of t add up now (a file that
// grows while it is checked is clamped to that total).
func newMeter(fn func(done, total int64), t *inspect.Target) *meter {
	if fn == nil {
		return nil
	}
	m := &meter{fn: fn}
	for _, p := range t.Partitions {
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

// advance reports that a segment's scan reached byte pos, once it is at
// least meterChunk past what was reported for that segment (*reported).
func (m *meter) advance(reported *int64, pos int64) {
	if m == nil || pos-*reported < meterChunk {
		return
	}
	m.add(pos - *reported)
	*reported = pos
}

// segmentDone reports the rest of a finished segment.
func (m *meter) segmentDone(j *segmentJob) {
	if m == nil || j.res == nil {
		return
	}
	m.add(j.res.bytes - j.reported)
	j.reported = j.res.bytes
}

func (m *meter) add(n int64) {
	if n <= 0 {
		return
	}
	d := m.done.Add(n)
	m.mu.Lock()
	defer m.mu.Unlock()
	if d-m.last >= meterChunk {
		m.last = d
		m.fn(min(d, m.total), m.total)
	}
}

// finish makes the last call, done == total, unless the last call said
// so already.
func (m *meter) finish() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != m.total {
		m.last = m.total
		m.fn(m.total, m.total)
	}
}

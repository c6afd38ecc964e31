package inspect

import (
	"os"
	"sync"
	"sync/atomic"
)

// MeterChunk is how many bytes pass between two progress calls, at most:
// a reader reports to the meter once per chunk, and the meter calls its
// function once per chunk of the total.
const MeterChunk = 4 << 20

// Meter turns bytes of .log read into progress calls fn(done, total): one
// call at a time, at most one per MeterChunk, and a last one with done ==
// total at Finish. Every command that reads logs for long reports through
// one (the walk, summaries, verify's workers, rebuild's planner); cmd draws
// it. A nil *Meter does nothing and costs nothing. Safe for concurrent use:
// each reader keeps its own count of what it reported (Advance, Done).
type Meter struct {
	fn    func(done, total int64)
	total int64
	done  atomic.Int64
	mu    sync.Mutex
	last  int64 // done at the last call; guarded by mu
}

// NewMeter meters total() bytes (a file that grows meanwhile is clamped
// to it); nil when fn is nil, and total is then not called: adding up
// the sizes of thousands of logs costs a stat each, for nobody.
func NewMeter(fn func(done, total int64), total func() int64) *Meter {
	if fn == nil {
		return nil
	}
	return &Meter{fn: fn, total: total()}
}

// LogBytes adds up the sizes of the .log files of segs as they are now,
// the first one from byte from on. Missing files count 0.
func LogBytes(segs []SegmentFiles, from int64) int64 {
	var total int64
	for i, s := range segs {
		if s.Log == "" {
			continue
		}
		if fi, err := os.Stat(s.Log); err == nil {
			n := fi.Size()
			if i == 0 {
				n = max(0, n-from)
			}
			total += n
		}
	}
	return total
}

// LogBytes adds up the sizes of the .log files of every partition of t as
// they are now.
func (t *Target) LogBytes() int64 {
	var n int64
	for _, p := range t.Partitions {
		n += LogBytes(p.Segments, 0)
		for _, ms := range p.MetadataSnapshots {
			n += LogBytes([]SegmentFiles{ms.Segment()}, 0)
		}
	}
	return n
}

// Advance reports that a reader of one file reached pos bytes (from where
// it started reading), once that is at least MeterChunk past *counted, the
// bytes of that file it counted so far.
func (m *Meter) Advance(counted *int64, pos int64) {
	if m == nil || pos-*counted < MeterChunk {
		return
	}
	m.add(pos - *counted)
	*counted = pos
}

// Done counts the rest of a file a reader finished at end bytes, and sets
// *counted to 0 for its next file.
func (m *Meter) Done(counted *int64, end int64) {
	if m == nil {
		return
	}
	m.add(end - *counted)
	*counted = 0
}

func (m *Meter) add(n int64) {
	if n <= 0 {
		return
	}
	d := m.done.Add(n)
	m.mu.Lock()
	defer m.mu.Unlock()
	if d-m.last >= MeterChunk {
		m.last = d
		m.fn(min(d, m.total), m.total)
	}
}

// Finish makes the last call, done == total, unless the last call said
// so already.
func (m *Meter) Finish() {
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

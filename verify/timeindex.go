package verify

import (
	"fmt"
	"io"
	"math"

	"github.com/kseg/kseg/indexfmt"
)

// timeIndexCheck checks a .timeindex against the log as the log pass
// delivers regions (a merge on offset). An entry (T, O) says: the largest
// timestamp written before the entry is T, first reached by the batch
// holding offset O. A broker's timestamp lookup starts at the entry's
// offset, so it answers correctly when the batch holding O has max
// timestamp T and every batch before it a smaller one.
//
// Two meanings of O are accepted (kafka-on-disk.md 6.7): the last offset
// of that batch (recovery, followers, the cleaner; every writer from 3.8
// on, KAFKA-16310), and the offset of a record inside it (leaders up to
// 3.7 writing uncompressed batches).
type timeIndexCheck struct {
	c      *segChecker
	x      *indexfmt.TimeIndex
	name   string
	n      int
	hasLog bool

	next    int
	prev    indexfmt.TimeEntry // last entry accepted by the order check
	hasPrev bool

	cur     indexfmt.TimeEntry
	curSlot int
	hasCur  bool

	maxTs     int64 // largest max timestamp of the trusted batches before the merge position
	maxTsPos  int64
	prevLast  int64 // last offset of the previous trusted batch
	hasPrevB  bool
	untrusted bool // damage or an outlier since the previous trusted batch

	batchLevel, recordLevel int
}

func newTimeIndexCheck(c *segChecker, x *indexfmt.TimeIndex, r io.ReaderAt, name string, hasLog bool) (*timeIndexCheck, error) {
	n, err := c.indexShape(x, r, name, indexKind{
		entrySize: indexfmt.TimeEntrySize, sizeCheck: TimeIndexSize, paddingCheck: TimeIndexPadding, class: "TimeIndex",
		padWarning: " (timestamp 0, offset %d): the segment's largest timestamp reads as 0 and time retention can delete it early, and an active segment whose index looks full rolls and then writes past its mapping (KAFKA-19200)",
	})
	if err != nil {
		return nil, err
	}
	t := &timeIndexCheck{c: c, x: x, name: name, n: n, hasLog: hasLog, maxTs: math.MinInt64, maxTsPos: -1}
	return t, nil
}

// load reads the next entry, checking order on the way
// (TimeIndex.maybeAppend: timestamps strictly increase, offsets never
// decrease; both are what the broker's binary search relies on).
func (t *timeIndexCheck) load() bool {
	for t.next < t.n {
		slot := t.next
		t.next++
		e, err := t.x.Entry(slot)
		if err != nil {
			t.c.fail(err)
			return false
		}
		at := int64(slot) * indexfmt.TimeEntrySize
		if e.RelativeOffset < 0 {
			t.c.add(TimeIndexOrder, t.name, ptr(at), ptr(e.Offset),
				"slot %d: relative offset %d puts offset %d below the segment's base offset %d (the broker's sanity check rejects it)",
				slot, e.RelativeOffset, e.Offset, t.c.base)
			continue
		}
		if t.hasPrev && (e.Timestamp <= t.prev.Timestamp || e.Offset < t.prev.Offset) {
			what := fmt.Sprintf("timestamp %d is not greater than the previous entry's %d", e.Timestamp, t.prev.Timestamp)
			if e.Offset < t.prev.Offset {
				what = fmt.Sprintf("offset %d is below the previous entry's %d", e.Offset, t.prev.Offset)
			}
			t.c.add(TimeIndexOrder, t.name, ptr(at), ptr(e.Offset),
				"slot %d: %s: TimeIndex.maybeAppend only appends a strictly greater timestamp at a non-decreasing offset, and the broker's binary search relies on it",
				slot, what)
			if slot+1 < t.n {
				if e2, err := t.x.Entry(slot + 1); err == nil && (e2.Timestamp <= t.prev.Timestamp || e2.Offset < t.prev.Offset) {
					t.prev = e // the previous entry was the odd one out
				}
			}
			continue
		}
		t.prev, t.hasPrev = e, true
		if !t.hasLog {
			continue
		}
		t.cur, t.curSlot, t.hasCur = e, slot, true
		return true
	}
	return false
}

func (t *timeIndexCheck) mismatch(slot int, e indexfmt.TimeEntry, format string, args ...any) {
	t.c.add(TimeIndexMismatch, t.name, ptr(int64(slot)*indexfmt.TimeEntrySize), ptr(e.Offset),
		"slot %d: entry (timestamp %d, offset %d): %s", slot, e.Timestamp, e.Offset, fmt.Sprintf(format, args...))
}

// region judges the entries whose offset the batch r holds, or which fall
// in the gap before it.
func (t *timeIndexCheck) region(r *region) {
	if !r.trusted() {
		t.untrusted = true
		return
	}
	lower := r.base
	if lower < 0 {
		lower = t.c.base
		if t.hasPrevB {
			lower = t.prevLast + 1
		}
	}
	for t.hasCur || t.load() {
		e := t.cur
		if e.Offset > r.last {
			break
		}
		t.hasCur = false
		switch {
		case e.Offset < lower:
			if !t.untrusted {
				t.mismatch(t.curSlot, e, "no batch holds offset %d (the batch at position %d starts at offset %d)", e.Offset, r.pos, lower)
			}
		case r.maxTs != e.Timestamp:
			t.mismatch(t.curSlot, e, "the batch at position %d, which holds offset %d, has max timestamp %d: a timestamp lookup can start past records it should return, or name the wrong offset", r.pos, e.Offset, r.maxTs)
		case t.maxTs >= e.Timestamp:
			t.mismatch(t.curSlot, e, "the earlier batch at position %d has max timestamp %d: a timestamp lookup for %d..%d starts after it and misses its records", t.maxTsPos, t.maxTs, e.Timestamp, t.maxTs)
		case e.Offset == r.last:
			t.batchLevel++
		default:
			t.recordLevel++
		}
	}
	if r.maxTs > t.maxTs {
		t.maxTs, t.maxTsPos = r.maxTs, r.pos
	}
	t.prevLast, t.hasPrevB, t.untrusted = r.last, true, false
}

// finish judges the entries beyond the last batch.
func (t *timeIndexCheck) finish() {
	for t.hasCur || t.load() {
		t.hasCur = false
		if t.untrusted {
			continue // the log ends in damage: its finding covers these
		}
		if !t.hasPrevB {
			t.mismatch(t.curSlot, t.cur, "the log holds no batch")
			continue
		}
		t.mismatch(t.curSlot, t.cur, "the offset is beyond the segment's last batch (last offset %d)", t.prevLast)
	}
}

// meaning says which meaning of the entry offset the file follows.
func (t *timeIndexCheck) meaning() string {
	switch {
	case t.recordLevel > 0:
		return fmt.Sprintf("%d of %d entries name a record inside the batch with the max timestamp, as leaders up to 3.7 wrote them (before KAFKA-16310); recovery names the batch's last offset", t.recordLevel, t.recordLevel+t.batchLevel)
	case t.batchLevel > 0:
		return "entries name the last offset of the batch with the max timestamp (as 3.8+ leaders, followers and recovery write them); a broker also appends the max timestamp so far at every clean shutdown (LogSegment.close) and restarts its index spacing after a restart, so a segment appended across restarts differs from a rebuild"
	}
	return ""
}

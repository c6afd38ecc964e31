package verify

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/recovery"
)

// recoveryEmu feeds the batches the log pass delivers to the broker's
// index-point rule (indexfmt.RecoveryIndexer, the one rebuild's planner
// drives) and compares the entries recovery would write with the files on
// disk, one entry at a time, so memory does not grow with the segment.
// Recovery stops at the first invalid batch, so the comparison is only
// meaningful for a log without damage; verify reports *.stale only then.
type recoveryEmu struct {
	idx    *indexfmt.RecoveryIndexer
	pt     indexfmt.RecoveryPoint // what the last region appended (kept, not copied per batch)
	broken bool                   // a region recovery would not pass, or an append it fails

	off  *indexCompare[indexfmt.OffsetEntry]
	time *indexCompare[indexfmt.TimeEntry]
}

// indexCompare counts where the entries a rebuild writes differ from an
// index file's, slot by slot (recovery.PlanPartition then describes them).
type indexCompare[E comparable] struct {
	entry func(int) (E, error)
	have  int // entries in the file (before padding)
	want  int // entries the rebuild wrote so far
	diffs int
	err   error
}

func (ic *indexCompare[E]) add(want E) {
	k := ic.want
	ic.want++
	if k < ic.have {
		e, err := ic.entry(k)
		if err != nil {
			ic.err = err
			return
		}
		if e == want {
			return
		}
	}
	ic.diffs++
}

// finish counts the file's entries beyond what the rebuild wrote.
func (ic *indexCompare[E]) finish() {
	if ic.have > ic.want {
		ic.diffs += ic.have - ic.want
	}
}

func newRecoveryEmu(base int64, interval int64) *recoveryEmu {
	return &recoveryEmu{idx: indexfmt.NewRecoveryIndexer(base, interval)}
}

func (m *recoveryEmu) region(r *region) {
	if m.broken {
		return
	}
	if r.damaged || !r.crcOK || r.outlier {
		m.broken = true
		return
	}
	pt := &m.pt
	if err := m.idx.BatchTo(pt, r.pos, r.end-r.pos, r.last, r.maxTs); err != nil {
		// An append the broker's index refuses: InvalidOffsetException
		// empties the segment (the log check reports the offsets), the
		// others make recovery fail. Nothing to compare with.
		m.broken = true
		return
	}
	if pt.HasOffset && m.off != nil {
		m.off.add(pt.Offset)
	}
	if pt.HasTime && m.time != nil {
		m.time.add(pt.Time)
	}
}

func (m *recoveryEmu) finish() {
	if m.broken {
		return
	}
	t, ok, err := m.idx.Close()
	if err != nil {
		m.broken = true
		return
	}
	if ok && m.time != nil {
		m.time.add(t)
	}
	if m.off != nil {
		m.off.finish()
	}
	if m.time != nil {
		m.time.finish()
	}
}

// stale reports index.stale and timeindex.stale: an index without errors
// or padding that differs from what broker recovery would rebuild from an
// undamaged log. The streaming emulation above says cheaply whether a file
// differs; recovery.PlanPartition, the project's recovery emulation, then
// confirms it and gives the bytes the message describes.
func (c *segChecker) stale() error {
	m := c.emu
	if m.broken || c.logDamaged {
		return nil
	}
	o, t := c.oidx, c.tidx
	if err := c.closingEntry(); err != nil {
		return err
	}
	offStale := o != nil && m.off != nil && m.off.err == nil && m.off.diffs > 0 &&
		!c.sink.hasError(o.name) && !c.sink.has(o.name, IndexPadding)
	timeStale := t != nil && m.time != nil && m.time.err == nil && m.time.diffs > 0 &&
		!c.sink.hasError(t.name) && !c.sink.has(t.name, TimeIndexPadding)
	if !offStale && !timeStale {
		return nil
	}
	interval := int64(c.opts.IndexIntervalBytes)
	ropts := recovery.Options{IndexIntervalBytes: interval}
	if interval == 0 {
		ropts.IndexIntervalBytes = recovery.IndexEveryBatch
	}
	one := &inspect.Partition{Dir: c.job.dir, Segments: []inspect.SegmentFiles{c.job.files}, SingleSegment: true}
	plans, err := recovery.PlanPartition(one, ropts)
	if err != nil {
		if errors.Is(err, recovery.ErrUnrecoverable) {
			return nil // recovery itself fails: nothing to compare with
		}
		return err
	}
	if len(plans) != 1 || plans[0].StopErr != nil {
		return nil
	}
	plan := &plans[0]
	what := fmt.Sprintf("valid, but differs from what broker recovery would rebuild (index.interval.bytes %d)", interval)
	if offStale {
		d, err := diffIndex(o.x.Entry, o.n, indexfmt.NewOffsetIndex(plan.Index, c.base).Entry, plan.IndexEntries)
		if err != nil {
			return err
		}
		if d.diffs > 0 {
			msg := fmt.Sprintf("%s: %d entries here, %d rebuilt, %d slots differ; first at slot %d: %s here, %s rebuilt",
				what, d.have, d.want, d.diffs, d.first, offEntryText(d.firstHave), offEntryText(d.firstWant))
			if s := o.meaning(); s != "" {
				msg += "; " + s
			}
			c.add(IndexStale, o.name, ptr(int64(d.first)*indexfmt.OffsetEntrySize), d.offset(func(e indexfmt.OffsetEntry) int64 { return e.Offset }), "%s", msg)
		}
	}
	if timeStale {
		d, err := diffIndex(t.x.Entry, t.n, indexfmt.NewTimeIndex(plan.TimeIndex, c.base).Entry, plan.TimeIndexEntries)
		if err != nil {
			return err
		}
		if d.diffs > 0 {
			if d.diffs == 1 && d.firstHave == nil && d.first == d.want-1 && d.firstWant.Timestamp == m.maxTs() {
				// Only the last entry, the segment's largest timestamp, is
				// missing: timeindex.closing-entry reported it.
				return nil
			}
			msg := fmt.Sprintf("%s: %d entries here, %d rebuilt, %d slots differ; first at slot %d: %s here, %s rebuilt",
				what, d.have, d.want, d.diffs, d.first, timeEntryText(d.firstHave), timeEntryText(d.firstWant))
			if s := t.meaning(); s != "" {
				msg += "; " + s
			}
			c.add(TimeIndexStale, t.name, ptr(int64(d.first)*indexfmt.TimeEntrySize), d.offset(func(e indexfmt.TimeEntry) int64 { return e.Offset }), "%s", msg)
		}
	}
	return nil
}

// closingEntry reports timeindex.closing-entry: the time index's last
// entry (before any padding) is older than the segment's largest
// timestamp, i.e. the entry a broker appends at roll and at clean close
// (LogSegment.onBecomeInactiveSegment, LogSegment.close:
// timeIndex.maybeAppend(maxTimestampSoFar, ..., skipFullCheck = true)) is
// missing. A broker that loads the segment takes its largest timestamp
// from that last entry (LogSegment.maxTimestampSoFar, lazily
// timeIndex.lastEntry), or the .log's modification time when the index is
// empty (LogSegment.largestTimestamp): time retention and the choice of
// segment for a timestamp lookup then use an older time. That changes the
// broker's behaviour only for a rolled segment its next start does not
// recover (recovery appends the entry): a warning there, info elsewhere
// (every running broker's active segment lacks it).
func (c *segChecker) closingEntry() error {
	m, t := c.emu, c.tidx
	if t == nil || m.broken || c.logDamaged || m.maxTs() < 0 || c.sink.hasError(t.name) || c.sink.has(t.name, TimeIndexPadding) {
		return nil
	}
	last := "it has no entry, so the .log's modification time is used"
	lastTs := int64(-1)
	if t.n > 0 {
		e, err := t.x.Entry(t.n - 1)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		lastTs = e.Timestamp
		last = fmt.Sprintf("its last entry says %d", e.Timestamp)
	}
	if m.maxTs() <= lastTs {
		return nil
	}
	sev, state := SeverityInfo, "the active segment: a running broker keeps its largest timestamp in memory and appends the entry when it rolls or closes the segment"
	switch {
	case c.job.recovered && !c.job.active:
		state = "the broker's next start recovers this segment and appends it"
	case !c.job.active:
		sev, state = SeverityWarning, "a rolled segment the broker's next start does not recover ("+c.job.kept+"): a broker loading it reads the largest timestamp from the last entry ("+last+"), so time retention deletes the segment earlier than its records' timestamps say, and timestamp lookups may pass it over; kseg rebuild writes the entry"
	}
	c.addAs(sev, TimeIndexClosingEntry, t.name, ptr(int64(t.n)*indexfmt.TimeEntrySize), ptr(m.maxOff()),
		"the closing entry (timestamp %d, offset %d) a broker appends at roll and at clean close is missing; %s", m.maxTs(), m.maxOff(), state)
	return nil
}

// indexDiff compares an index file's entries with rebuilt ones.
type indexDiff[E comparable] struct {
	have, want, diffs, first int
	firstHave, firstWant     *E
}

func (d *indexDiff[E]) offset(of func(E) int64) *int64 {
	switch {
	case d.firstHave != nil:
		return ptr(of(*d.firstHave))
	case d.firstWant != nil:
		return ptr(of(*d.firstWant))
	}
	return nil
}

func diffIndex[E comparable](have func(int) (E, error), nHave int, want func(int) (E, error), nWant int) (indexDiff[E], error) {
	d := indexDiff[E]{have: nHave, want: nWant}
	for k := 0; k < max(nHave, nWant); k++ {
		var h, w *E
		if k < nHave {
			e, err := have(k)
			if err != nil {
				return d, err
			}
			h = &e
		}
		if k < nWant {
			e, err := want(k)
			if err != nil {
				return d, err
			}
			w = &e
		}
		if h != nil && w != nil && *h == *w {
			continue
		}
		if d.diffs == 0 {
			d.first, d.firstHave, d.firstWant = k, h, w
		}
		d.diffs++
	}
	return d, nil
}

func offEntryText(e *indexfmt.OffsetEntry) string {
	if e == nil {
		return "no entry"
	}
	return fmt.Sprintf("(offset %d, position %d)", e.Offset, e.Position)
}

func timeEntryText(e *indexfmt.TimeEntry) string {
	if e == nil {
		return "no entry"
	}
	return fmt.Sprintf("(timestamp %d, offset %d)", e.Timestamp, e.Offset)
}

// maxTs and maxOff are recovery's running maximum (maxTimestampSoFar and
// its offset): the closing entry a broker appends at roll and clean close.
func (m *recoveryEmu) maxTs() int64 {
	ts, _, _ := m.idx.MaxTimestamp()
	return ts
}

func (m *recoveryEmu) maxOff() int64 {
	_, off, _ := m.idx.MaxTimestamp()
	return off
}

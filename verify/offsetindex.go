package verify

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
)

// entriesBeforePadding counts the slots before the zero-filled tail of an
// index: the longest run of all-zero slots at the end of the file, from a
// slot i > 0, or from slot 0 when every one of two or more slots is zero
// (a preallocated file never written). A broker counts those slots as
// entries (AbstractIndex: entries = floor(size / entry size)); only
// DumpLogSegments stops at them (the first slot i > 0 whose relative
// offset is 0). Unlike DumpLogSegments this requires the slots to be zero
// to the end: a zero slot followed by written ones is an entry out of
// order, not padding.
func entriesBeforePadding(r io.ReaderAt, slots int, entrySize int, buf []byte) (int, error) {
	chunk := len(buf) / entrySize * entrySize
	end := int64(slots) * int64(entrySize) // bytes of whole slots
	for end > 0 {
		n := min(int64(chunk), end)
		at := end - n
		p := buf[:n]
		k, err := r.ReadAt(p, at)
		if int64(k) < n {
			return 0, readError("index", at, err)
		}
		for i := n - 1; i >= 0; i-- {
			if p[i] != 0 {
				last := (at + i) / int64(entrySize) // slot holding the last non-zero byte
				return int(last) + 1, nil
			}
		}
		end = at
	}
	if slots == 1 {
		return 1, nil // one zero slot: (base offset, 0), which DumpLogSegments lists
	}
	return 0, nil
}

// indexKind is what differs between the offset and the time index in
// the checks of their files' shape (segChecker.indexShape).
type indexKind struct {
	entrySize               int
	sizeCheck, paddingCheck string
	class                   string // the broker's class, whose sanityCheck rejects trailing bytes
	padWarning              string // what padding does to a segment the next start loads as it is (the base offset is its %d)
}

// indexFile is an offset or time index: its size in whole slots and bytes
// past them.
type indexFile interface {
	Size() int64
	Slots() int
	TrailingBytes() int
}

// indexShape reports the bytes after the last whole entry of index x (read
// through r) and its zero-filled tail, and returns the number of entries
// before the padding.
func (c *segChecker) indexShape(x indexFile, r io.ReaderAt, name string, k indexKind) (int, error) {
	n, err := entriesBeforePadding(r, x.Slots(), k.entrySize, c.scan)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if t := x.TrailingBytes(); t != 0 {
		at := x.Size() - int64(t)
		c.add(k.sizeCheck, name, ptr(at), nil,
			"%d bytes after the last whole entry (size %d is not a multiple of %d): a broker ignores them for lookups, and its sanity check rejects the file (%s.sanityCheck)",
			t, x.Size(), k.entrySize, k.class)
	}
	if slots := x.Slots(); n < slots {
		sev, what := c.paddingSeverity()
		if sev == SeverityWarning {
			what += fmt.Sprintf(k.padWarning, c.base)
		}
		size := int64(k.entrySize)
		c.addAs(sev, k.paddingCheck, name, ptr(int64(n)*size), nil,
			"zero-filled tail: slots %d..%d (%d of %d, %d bytes) are preallocated space never written (the active segment of a running broker, or of one that stopped without a clean shutdown); %s",
			n, slots-1, slots-n, slots, int64(slots-n)*size, what)
	}
	return n, nil
}

// checkpoint remembers, at a batch boundary, what the offset-index check
// needs there, so that an entry whose position goes back can be judged by
// rescanning a few batch headers instead of the whole log.
type checkpoint struct {
	pos        int64
	maxLast    int64
	maxLastPos int64
}

// maxCheckpoints bounds the checkpoints kept (24 bytes each): a segment of
// B batches keeps one every stride batches, B/maxCheckpoints <= stride <
// 2B/maxCheckpoints, and a rescan reads at most the headers of one stride.
// An index whose entries all go back (a scrambled or foreign .index) costs
// one rescan per entry, so the stride is what keeps such a file from
// making the check quadratic in the segment's size: 1 GiB of ~0.3 KiB
// batches is 3.3 million batches, a stride of at most 512 (about 160 KiB of
// log read per rescan).
const maxCheckpoints = 16384

// rescanWindow is the read size of rescans: a few dozen small batches'
// headers with one read, where reading header by header cost a system
// call per batch.
const rescanWindow = 16 << 10

// offsetIndexCheck checks a .index against the log, entry by entry, as the
// log pass delivers regions (a merge on position: entries normally point
// at increasing positions). An entry (O, P) is harmless to every broker
// lookup (OffsetIndex.lookup, then a scan from P to the first batch whose
// last offset >= target) exactly when P is a batch boundary and every
// batch before P has a last offset < O; so per-append entries of 2.0-4.0
// brokers, whose position is the start of a multi-batch append and whose
// offset its last offset, are fine, and so are first-offset entries of
// brokers <= 1.1 (kafka-on-disk.md 5.8, Appendix A).
type offsetIndexCheck struct {
	c       *segChecker
	x       *indexfmt.OffsetIndex
	name    string
	n       int // entries before the zero padding
	hasLog  bool
	logSize int64

	next    int
	prevOff int64
	hasPrev bool

	cur     indexfmt.OffsetEntry
	curSlot int
	hasCur  bool
	lastPos int64 // position of the last entry judged in the merge

	maxLast    int64 // largest last offset of trusted batches before the merge position
	maxLastPos int64

	cps      []checkpoint
	stride   int64 // a power of two: a checkpoint every stride batches
	nBatches int64
	rescans  *inspect.LogIterator // made by the first rescan
	// rescanned counts the batch headers rescans read (tests bound it).
	rescanned int64

	// How entries at a batch boundary relate to that batch (index.stale's
	// message): at its last offset (recovery, 4.1+), beyond it (2.0-4.0
	// per-append), at its first offset (<= 1.1), or elsewhere inside.
	atLast, beyond, atFirst, inside int
}

func newOffsetIndexCheck(c *segChecker, x *indexfmt.OffsetIndex, r io.ReaderAt, name string, hasLog bool) (*offsetIndexCheck, error) {
	n, err := c.indexShape(x, r, name, indexKind{
		entrySize: indexfmt.OffsetEntrySize, sizeCheck: IndexSize, paddingCheck: IndexPadding, class: "OffsetIndex",
		padWarning: " (base offset %d, position 0): lookups stay correct but scan from the segment start, and an active segment rolls at once because its index looks full",
	})
	if err != nil {
		return nil, err
	}
	o := &offsetIndexCheck{c: c, x: x, name: name, n: n, hasLog: hasLog, logSize: c.logSize,
		maxLast: math.MinInt64, maxLastPos: -1, stride: 1, cps: c.bufs.cps[:0]}
	o.cps = append(o.cps, checkpoint{pos: 0, maxLast: math.MinInt64, maxLastPos: -1})
	return o, nil
}

// load reads the next entry the merge needs, checking order on the way
// and judging at once the entries that need no log position.
func (o *offsetIndexCheck) load() bool {
	for o.next < o.n {
		slot := o.next
		o.next++
		e, err := o.x.Entry(slot)
		if err != nil {
			o.c.fail(err)
			return false
		}
		at := int64(slot) * indexfmt.OffsetEntrySize
		if e.RelativeOffset < 0 {
			o.c.add(IndexOrder, o.name, ptr(at), ptr(e.Offset),
				"slot %d: relative offset %d puts offset %d below the segment's base offset %d (AbstractIndex.relativeOffset; the broker's sanity check rejects it)",
				slot, e.RelativeOffset, e.Offset, o.c.base)
			continue
		}
		if o.hasPrev && e.Offset <= o.prevOff {
			o.c.add(IndexOrder, o.name, ptr(at), ptr(e.Offset),
				"slot %d: offset %d is not greater than the previous entry's offset %d: OffsetIndex.append requires strictly increasing offsets, and the broker's binary search relies on them",
				slot, e.Offset, o.prevOff)
			// Keep the previous offset as the reference unless it is the
			// odd one out (the entry after this one is not above it).
			if slot+1 < o.n {
				if e2, err := o.x.Entry(slot + 1); err == nil && e2.Offset <= o.prevOff {
					o.prevOff = e.Offset
				}
			}
			continue
		}
		o.prevOff, o.hasPrev = e.Offset, true
		if !o.hasLog {
			continue
		}
		if e.Position < 0 || int64(e.Position) > o.logSize {
			o.c.add(IndexPosition, o.name, ptr(at), ptr(e.Offset),
				"slot %d: position %d is past the end of the log (%d bytes): a lookup for offsets from %d on finds nothing in this segment",
				slot, e.Position, o.logSize, e.Offset)
			continue
		}
		if int64(e.Position) < o.lastPos {
			o.rescan(e, slot)
			continue
		}
		o.cur, o.curSlot, o.hasCur = e, slot, true
		return true
	}
	return false
}

// region judges the entries whose position lies in r.
func (o *offsetIndexCheck) region(r *region) {
	for o.hasCur || o.load() {
		p := int64(o.cur.Position)
		if p >= r.end {
			break
		}
		o.hasCur = false
		if p < r.pos {
			o.rescan(o.cur, o.curSlot)
			continue
		}
		o.lastPos = p
		if r.damaged {
			continue // the log's finding covers entries into damaged bytes
		}
		if p != r.pos {
			o.insideBatch(o.cur, o.curSlot, r.pos, r.end)
			continue
		}
		o.judge(o.cur, o.curSlot, o.maxLast, o.maxLastPos, r)
	}
	if r.trusted() && r.last > o.maxLast {
		o.maxLast, o.maxLastPos = r.last, r.pos
	}
	if !r.damaged {
		o.nBatches++
		if o.nBatches&(o.stride-1) == 0 { // % stride, without a division per batch
			o.cps = append(o.cps, checkpoint{pos: r.end, maxLast: o.maxLast, maxLastPos: o.maxLastPos})
			if len(o.cps) == maxCheckpoints {
				k := 0
				for i := 0; i < len(o.cps); i += 2 {
					o.cps[k] = o.cps[i]
					k++
				}
				o.cps = o.cps[:k]
				o.stride *= 2
			}
		}
	}
}

func (o *offsetIndexCheck) insideBatch(e indexfmt.OffsetEntry, slot int, pos, end int64) {
	o.c.add(IndexPosition, o.name, ptr(int64(slot)*indexfmt.OffsetEntrySize), ptr(e.Offset),
		"slot %d: position %d is not at a batch boundary but inside the batch at position %d (%d bytes): a lookup would parse bytes from the middle of a batch",
		slot, e.Position, pos, end-pos)
}

// judge decides about an entry at a batch boundary (r nil: the end of the
// log), given the largest last offset of the batches before it.
func (o *offsetIndexCheck) judge(e indexfmt.OffsetEntry, slot int, maxLast, maxLastPos int64, r *region) {
	if maxLast >= e.Offset {
		o.c.add(IndexMismatch, o.name, ptr(int64(slot)*indexfmt.OffsetEntrySize), ptr(e.Offset),
			"slot %d: entry (offset %d, position %d) points past the batch at position %d, which holds offsets up to %d: a lookup for offsets %d..%d starts at %d and skips that batch (an entry's position must not be beyond the batch holding its offset)",
			slot, e.Offset, e.Position, maxLastPos, maxLast, e.Offset, maxLast, e.Position)
		return
	}
	if r == nil || !r.trusted() {
		return
	}
	switch {
	case e.Offset == r.last:
		o.atLast++
	case e.Offset > r.last:
		o.beyond++
	case e.Offset == r.base:
		o.atFirst++
	default:
		o.inside++
	}
}

// rescan judges an entry whose position is behind the merge, by scanning
// batch headers from the nearest checkpoint before it.
func (o *offsetIndexCheck) rescan(e indexfmt.OffsetEntry, slot int) {
	p := int64(e.Position)
	i := sort.Search(len(o.cps), func(i int) bool { return o.cps[i].pos > p }) - 1
	if i < 0 {
		return
	}
	cp := o.cps[i]
	maxLast, maxLastPos := cp.maxLast, cp.maxLastPos
	if o.rescans == nil {
		o.rescans = inspect.NewLogIterator(inspect.IterOptions{Window: rescanWindow})
	}
	sc := o.rescans
	sc.ResetReader(o.c.log, o.c.logName, o.logSize, cp.pos)
	prev, prevEnd := int64(-1), int64(-1)
	for sc.Next() {
		o.rescanned++
		b := sc.Batch()
		if b.Position == p {
			r := region{pos: b.Position, end: b.End(), base: b.BaseOffset, last: b.LastOffset}
			o.judge(e, slot, maxLast, maxLastPos, &r)
			return
		}
		if b.Position > p {
			break
		}
		if b.LastOffset > maxLast {
			maxLast, maxLastPos = b.LastOffset, b.Position
		}
		prev, prevEnd = b.Position, b.End()
	}
	if prev >= 0 && p > prev && p < prevEnd {
		o.insideBatch(e, slot, prev, prevEnd)
		return
	}
	if p == o.logSize && sc.Err() == nil {
		o.judge(e, slot, maxLast, maxLastPos, nil)
	}
	// Otherwise the position is in damaged bytes, which the log's findings
	// cover.
}

// finish judges the entries left after the last region: those pointing at
// the very end of the log, and those behind it that waited for one of them.
func (o *offsetIndexCheck) finish() {
	for o.hasCur || o.load() {
		o.hasCur = false
		if int64(o.cur.Position) == o.logSize {
			o.judge(o.cur, o.curSlot, o.maxLast, o.maxLastPos, nil)
			o.lastPos = o.logSize
			continue
		}
		o.rescan(o.cur, o.curSlot)
	}
}

// meaning describes the entries for index.stale's message.
func (o *offsetIndexCheck) meaning() string {
	total := o.atLast + o.beyond + o.atFirst + o.inside
	if total == 0 {
		return ""
	}
	switch {
	case o.beyond > 0:
		return fmt.Sprintf("%d of %d entries name the last offset of a multi-batch append at the position of its first batch (broker appends of 2.0-4.0, before KAFKA-806; follower fetches, the log cleaner)", o.beyond, total)
	case o.atFirst > 0:
		return fmt.Sprintf("%d of %d entries name the first offset of their batch (brokers up to 1.1)", o.atFirst, total)
	case o.inside > 0:
		return fmt.Sprintf("%d of %d entries name an offset inside their batch", o.inside, total)
	}
	return "every entry names the last offset of the batch it points at, as recovery writes them, but the spacing differs: a broker restarts it after every restart or truncation (bytesSinceLastIndexEntry is not persisted), or the topic uses another index.interval.bytes"
}

func readError(name string, pos int64, err error) error {
	var ce *fileio.CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: reading at byte position %d: %w", name, pos, err)
}

package inspect

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// The rule for an index entry a reader is led by, in one place: the
// lookups (lookup, lookup-time), the walks that start where they land
// (find's and dump-log's bounds) and the timeline's fetches judge every
// entry they follow with it. The broker follows an entry blindly
// (OffsetIndex.lookup, then FileRecords.searchForOffsetWithSize from its
// position; TimeIndex.lookup, then searchForTimestamp); on a healthy
// index that is right, and a reader answering as the broker does still
// does so. An entry that contradicts the batch it leads to makes the
// broker's scan start past records it should see: a reader that must not
// miss them (a search, a dump) scans the segment instead, and every
// reader names the entry.

// MisleadingEntry is an index entry a reader was led by that contradicts
// the batch it leads to.
type MisleadingEntry struct {
	File      string // the index file, as the segment names it
	Index     string // "offset" or "time"
	Slot      int
	Offset    int64 // the entry's offset
	Position  int64 // an offset index entry's position (-1 for a time index entry)
	Timestamp int64 // a time index entry's timestamp (-1 for an offset index entry)
	Problem   string
}

// String names the file, the entry and what is wrong with it.
func (m *MisleadingEntry) String() string {
	switch {
	case m.Slot < 0:
		return fmt.Sprintf("%s: %s", m.File, m.Problem)
	case m.Index == "time":
		return fmt.Sprintf("%s: slot %d (timestamp %d, offset %d): %s", m.File, m.Slot, m.Timestamp, m.Offset, m.Problem)
	}
	return fmt.Sprintf("%s: slot %d (offset %d, position %d): %s", m.File, m.Slot, m.Offset, m.Position, m.Problem)
}

// MisledError is a lookup that failed on damage after misleading index
// entries led it there: the broker's read fails on those bytes as well
// (FileLogInputStream: CorruptRecordException), and the lookup returns
// that failure, Err, as it does without an index to blame. Misleading
// are the entries, and ByScanOffset (an offset lookup) or ByScanTime (a
// timestamp lookup) the answer with their segments read from their
// batches instead.
type MisledError struct {
	Err          error
	Misleading   []MisleadingEntry
	ByScanOffset *OffsetLookup
	ByScanTime   *TimeLookup
}

func (e *MisledError) Error() string { return e.Err.Error() }
func (e *MisledError) Unwrap() error { return e.Err }

func (s *Segment) offsetMisleads(hit IndexHit, problem string) *MisleadingEntry {
	return &MisleadingEntry{File: s.IndexName, Index: "offset", Slot: hit.Slot, Offset: hit.Offset, Position: hit.Position, Timestamp: -1, Problem: problem}
}

func (s *Segment) timeMisleads(hit TimeHit, problem string) *MisleadingEntry {
	return &MisleadingEntry{File: s.TimeIndexName, Index: "time", Slot: hit.Slot, Offset: hit.Offset, Position: -1, Timestamp: hit.Timestamp, Problem: problem}
}

// checkOffsetEntry judges offset index entry hit (offset O, position P),
// which a lookup for key (>= O) scans from. It leads the lookup right when
// a batch starts at P and that batch's first offset is at most key: the
// log's offsets increase, so every batch before P then ends below key
// (the condition verify's index.position and index.mismatch check over
// the whole index). The batch's first offset may be below O (entries of
// 2.0-4.0 brokers name the last offset of a multi-batch append at the
// position of its first batch, kafka-on-disk.md 5.8); a legacy
// compressed wrapper's first offset is read from its first inner message.
// With crc the batch's checksum is computed too, which is what tells a
// batch boundary from bytes inside a batch that happen to parse as a
// header. nil: the entry leads right (or hit is no entry).
func (s *Segment) checkOffsetEntry(r readers, hit IndexHit, key int64, crc bool) (*MisleadingEntry, error) {
	if hit.Slot < 0 {
		return nil, nil
	}
	p := hit.Position
	switch {
	case p < 0 || p > s.LogSize:
		return s.offsetMisleads(hit, fmt.Sprintf("position %d is past the end of the log (%d bytes)", p, s.LogSize)), nil
	case p == s.LogSize:
		return s.offsetMisleads(hit, fmt.Sprintf("position %d is the end of the log, where no batch starts", p)), nil
	}
	// unreadable: no batch can be read at p. That is the entry's fault
	// unless p is a boundary of the chain of batches from position 0: then
	// the log is damaged there, which its readers report.
	unreadable := func(problem string) (*MisleadingEntry, error) {
		boundary, err := s.chainBoundary(r, p)
		if boundary || err != nil {
			return nil, err
		}
		return s.offsetMisleads(hit, problem), nil
	}
	it := s.batches(r.log, p)
	if !it.Next() {
		err := it.Err()
		if err != nil && !fileio.IsCorrupt(err) {
			return nil, err
		}
		return unreadable(fmt.Sprintf("no batch starts at position %d (%s)", p, damageWords(err)))
	}
	b := it.Batch()
	if why := record.HeaderProblem(b); why != "" {
		return unreadable(s.offsetBatchProblem(b, -1, key))
	}
	if crc {
		entry, err := s.ReadEntry(b, s.buf)
		if err != nil {
			return nil, err
		}
		s.buf = entry[:0]
		if computed := record.ComputeCRC(b.Magic, entry); computed != b.CRC {
			return unreadable(fmt.Sprintf("no batch starts at position %d: the bytes there read as a batch header whose CRC does not match (stored %d, computed %d)", p, b.CRC, computed))
		}
	}
	first, err := s.firstOffset(r, b)
	if err != nil {
		return nil, err
	}
	if problem := s.offsetBatchProblem(b, first, key); problem != "" {
		return s.offsetMisleads(hit, problem), nil
	}
	return nil, nil
}

// offsetBatchProblem is checkOffsetEntry's judgement of the batch b found
// at the entry's position, whose first offset is first (-1: unknown), for
// a lookup of key: "" when it leads right.
func (s *Segment) offsetBatchProblem(b *record.Batch, first, key int64) string {
	switch {
	case record.HeaderProblem(b) != "":
		return fmt.Sprintf("no batch starts at position %d: %s", b.Position, record.HeaderProblem(b))
	case b.LastOffset < s.BaseOffset || (first >= 0 && first < s.BaseOffset):
		return fmt.Sprintf("the batch at position %d holds offsets below the segment's base offset %d (last offset %d): the position is not that of a batch of this segment", b.Position, s.BaseOffset, b.LastOffset)
	case first > key:
		return fmt.Sprintf("the batch at position %d starts at offset %d, after offset %d: a scan from there skips the batches before it, which hold offsets up to %d", b.Position, first, key, first-1)
	}
	return ""
}

// chainBoundary reports whether a batch of the chain from position 0 (the
// batches a scan from the start of the log yields) starts at p. It reads
// headers up to p, so it is asked only when no batch can be read there.
func (s *Segment) chainBoundary(r readers, p int64) (bool, error) {
	if p == 0 {
		return true, nil
	}
	it := s.batches(r.log, 0)
	for it.Next() {
		if e := it.Batch().End(); e >= p {
			return e == p, nil
		}
	}
	if err := it.Err(); err != nil && !fileio.IsCorrupt(err) {
		return false, err
	}
	return false, nil
}

// maxPredecessorBatches bounds the headers checkTimeEntry reads before the
// position it starts from (the batches since the previous offset index
// entry: at the default index.interval.bytes, 67 of the smallest batches).
const maxPredecessorBatches = 4096

// checkTimeEntry judges time index entry hit (timestamp T, offset O),
// which a timestamp lookup for a target >= T starts from, given pos, the
// position the offset index gives for O (checked with checkOffsetEntry),
// and before, the position of the offset index entry before that one (0
// for the first; -1 when pos is not an entry's). The entry says that T is
// the largest timestamp up to the batch holding O and first reached
// there (TimeIndex.maybeAppend from LogSegment.append, kafka-on-disk.md
// 6.1): so the broker's scan from it can skip everything before. It leads
// right when a batch holds O, that batch's max timestamp is T, and the
// batches before it that the check reads (from before to that batch) all
// have smaller ones, as verify's timeindex.mismatch requires of every
// entry. It returns nil when the entry leads right, and the position of
// the batch holding O.
func (s *Segment) checkTimeEntry(r readers, hit TimeHit, pos, before int64) (*MisleadingEntry, int64, error) {
	t, o := hit.Timestamp, hit.Offset
	earlier := func(b *record.Batch) *MisleadingEntry {
		return s.timeMisleads(hit, fmt.Sprintf("the batch at position %d, before the one holding offset %d, has max timestamp %d: a timestamp lookup for %d..%d starts after it and misses its records", b.Position, o, b.MaxTimestamp, t, b.MaxTimestamp))
	}
	if before >= 0 && before < pos {
		// The batches between the previous offset index entry and pos, if
		// that entry is a boundary of the same chain: the batch just before
		// the one holding O is among them.
		var bad *MisleadingEntry
		it := s.batches(r.log, before)
		landed := false
		for n := 0; n < maxPredecessorBatches && it.Next(); n++ {
			b := it.Batch()
			if b.Position >= pos {
				landed = b.Position == pos
				break
			}
			if bad == nil && b.LastOffset < o && b.MaxTimestamp >= t {
				bad = earlier(b)
			}
		}
		if err := it.Err(); err != nil && !fileio.IsCorrupt(err) {
			return nil, 0, err
		}
		if landed && bad != nil {
			return bad, 0, nil
		}
	}
	it := s.batches(r.log, pos)
	for it.Next() {
		b := it.Batch()
		if b.LastOffset < o {
			if b.MaxTimestamp >= t {
				return earlier(b), 0, nil
			}
			continue
		}
		first, err := s.firstOffset(r, b)
		if err != nil {
			return nil, 0, err
		}
		if problem := timeBatchProblem(hit, b, first); problem != "" {
			return s.timeMisleads(hit, problem), 0, nil
		}
		return nil, b.Position, nil
	}
	err := it.Err()
	if err != nil && !fileio.IsCorrupt(err) {
		return nil, 0, err
	}
	if err != nil && !errors.Is(err, fileio.ErrTorn) {
		return s.timeMisleads(hit, fmt.Sprintf("a scan from position %d for the batch holding offset %d stops at damage (%s)", pos, o, damageWords(err))), 0, nil
	}
	return s.timeMisleads(hit, fmt.Sprintf("offset %d is past the segment's last batch", o)), 0, nil
}

// timeBatchProblem is checkTimeEntry's judgement of b, the first batch
// whose last offset reaches the entry's offset, whose first offset is
// first (-1: unknown): "" when it holds the offset and carries the entry's
// timestamp as its max.
func timeBatchProblem(hit TimeHit, b *record.Batch, first int64) string {
	switch {
	case first > hit.Offset:
		return fmt.Sprintf("no batch holds offset %d: the batch at position %d starts at offset %d", hit.Offset, b.Position, first)
	case b.MaxTimestamp != hit.Timestamp:
		return fmt.Sprintf("the batch at position %d, which holds offset %d, has max timestamp %d, not %d", b.Position, hit.Offset, b.MaxTimestamp, hit.Timestamp)
	}
	return ""
}

// checkLastTimeEntry judges the time index entry a segment's largest
// timestamp is taken from (its last: TimeIndex.lastEntry, which a broker
// loading a segment it does not recover takes as maxTimestampSoFar): as
// an entry (checkTimeHit), and as the segment's largest timestamp: no
// batch after the one holding its offset may exceed it, as one does when
// the closing entry written at roll and close
// (LogSegment.onBecomeInactiveSegment) is missing or was cut off. With
// increasing timestamps that batch is the last, and the check reads a
// header or two.
func (s *Segment) checkLastTimeEntry(r readers, hit TimeHit) (*MisleadingEntry, error) {
	m, from, err := s.checkTimeHit(r, &hit, hit.Offset)
	if m != nil || err != nil {
		return m, err
	}
	it := s.batches(r.log, from)
	for it.Next() {
		if b := it.Batch(); b.MaxTimestamp > hit.Timestamp {
			return s.timeMisleads(hit, fmt.Sprintf("as the last entry it stands for the segment's largest timestamp, but the batch at position %d has max timestamp %d (the entry a broker appends at roll and close is missing): a timestamp search passes the segment over", b.Position, b.MaxTimestamp)), nil
		}
	}
	if err := it.Err(); err != nil && !fileio.IsCorrupt(err) {
		return nil, err
	}
	return nil, nil
}

// firstOffset is batch b's first offset (record.BatchCount): a legacy
// compressed wrapper's is its first inner message's, read by decoding it
// as the broker does (LegacyFileChannelRecordBatch.baseOffset); -1 when
// its records do not decode.
func (s *Segment) firstOffset(r readers, b *record.Batch) (int64, error) {
	c := record.HeaderCount(b)
	if !c.FromRecords() {
		return c.FirstOffset, nil
	}
	var err error
	s.buf, err = s.dec.RecordsAt(s.LogName, r.log, b, s.buf, func(rec *record.Record) error {
		c.Record(rec)
		return errStopRecords
	})
	if err != nil && err != errStopRecords && !fileio.IsCorrupt(err) {
		return 0, err
	}
	return c.FirstOffset, nil
}

// damageWords is what a scan's stop says, without the file name the
// entry's message already gives.
func damageWords(err error) string {
	var ce *fileio.CorruptError
	switch {
	case err == nil:
		return "the end of the log"
	case errors.As(err, &ce):
		return ce.Err.Error()
	}
	return err.Error()
}

package replica

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Replica is one copy of a partition and what the broker would load with
// it: log start and end offsets, leader epochs, high watermark.
type Replica struct {
	Partition *inspect.Partition
	// LogStartOffset is the broker's (inspect.BrokerState.LogStart: the
	// larger of the first segment's base offset and the data directory's
	// log-start-offset-checkpoint entry, LogLoader).
	LogStartOffset int64
	// LogEndOffset is the offset after the last batch (ListOffsets latest).
	LogEndOffset int64
	Epochs       EpochCache
	// EpochSource says where Epochs come from: "checkpoint"
	// (leader-epoch-checkpoint), "batches" (the partition leader epochs of
	// the batches, the file being absent or unloadable) or "none".
	EpochSource string
	// EpochMismatches counts the runs of batches the
	// leader-epoch-checkpoint contradicts (inspect.EpochMatcher; a
	// warning says where the first is): the truncation follows the
	// checkpoint all the same, as the broker answers from it.
	EpochMismatches int
	// HighWatermark is the replication-offset-checkpoint entry, when any,
	// bounded by the log start and end offsets.
	HighWatermark *int64
	// Warnings are problems with side files that were worked around.
	Warnings []string
}

// Open reads what a comparison needs of p besides its records.
func Open(p *inspect.Partition) (*Replica, error) {
	r := &Replica{Partition: p}
	if len(p.Segments) == 0 {
		return nil, fmt.Errorf("%s: no segments", p.Dir)
	}
	latest, err := p.LookupTime(inspect.TimestampLatest, inspect.LookupOptions{})
	if err != nil {
		return nil, err
	}
	r.LogEndOffset = latest.Offset
	st, err := p.ReadBrokerState()
	if err != nil {
		return nil, err
	}
	r.LogStartOffset = min(st.LogStart, r.LogEndOffset)
	if p.DataDir != "" {
		// Bounded by the log start and end offsets as the broker loads
		// it (inspect.HighWatermark: a checkpointed -1 or 2^63-1 is no
		// truncation point of this log); without an entry, none.
		dd := &sidefile.DataDirFiles{Dir: p.DataDir, HighWatermarks: sidefile.ReadOffsetCheckpoint(filepath.Join(p.DataDir, sidefile.ReplicationCheckpointFile))}
		if hw, src := inspect.HighWatermark(dd, p.Topic, p.Partition, r.LogStartOffset, r.LogEndOffset); src == inspect.HighWatermarkFromCheckpoint {
			r.HighWatermark = &hw
		}
	}
	f := p.LeaderEpochCheckpoint()
	if f.Present() && f.Err == nil {
		cache, err := f.Value.Cache()
		if err == nil {
			r.Epochs, r.EpochSource = EpochCache(cache), "checkpoint"
			if err := r.matchEpochs(f.Path, f.Value); err != nil {
				return nil, err
			}
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %v: epochs taken from the batches", f.Path, err))
		}
	} else if f.Present() {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %v: epochs taken from the batches", f.Path, f.Err))
	}
	if r.EpochSource == "" {
		c, err := CacheFromBatches(p)
		if err != nil && !fileio.IsCorrupt(err) {
			return nil, err
		}
		r.Epochs, r.EpochSource = c, "batches"
	}
	// The broker trims the cache to the log at load (LogLoader:
	// truncateFromEnd(nextOffset)).
	r.Epochs = r.Epochs.TruncateFromEnd(r.LogEndOffset)
	if len(r.Epochs) == 0 {
		r.EpochSource = "none"
	}
	return r, nil
}

// matchEpochs compares the leader-epoch-checkpoint cp (read from path)
// with the batches' partition leader epochs, reading batch headers only,
// and says where it contradicts them (as verify's leader-epoch.mismatch).
// Damage ends a segment's comparison: it is the comparison's to report.
func (r *Replica) matchEpochs(path string, cp *sidefile.LeaderEpochCheckpoint) error {
	m := inspect.NewEpochMatcher(cp, r.LogStartOffset)
	if m == nil {
		return nil
	}
	var first *inspect.EpochMismatch
	var firstLog string
	note := func(x *inspect.EpochMismatch, log string) {
		if x == nil {
			return
		}
		r.EpochMismatches++
		if first == nil {
			first, firstLog = x, log
		}
	}
	for _, sf := range r.Partition.Segments {
		if sf.Log == "" {
			continue
		}
		seg, err := inspect.OpenSegment(sf, inspect.SegmentOptions{})
		if err != nil {
			return err
		}
		it := seg.Batches(0)
		for it.Next() {
			note(m.Batch(it.Batch()), sf.Log)
		}
		note(m.Flush(), sf.Log)
		err = it.Err()
		it.Close()
		seg.Close()
		if err != nil && !fileio.IsCorrupt(err) {
			return err
		}
	}
	if first != nil {
		times := "once"
		if r.EpochMismatches > 1 {
			times = fmt.Sprintf("%d times, first", r.EpochMismatches)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s contradicts the batches %s: offsets %d..%d (bytes %d..%d of %s) were written in leader epoch %d, but the checkpoint puts offset %d in epoch %d (its entry from offset %d); the truncation follows the checkpoint, as the broker's answers do (kseg verify lists each as leader-epoch.mismatch)",
			path, times, first.FirstOffset, first.LastOffset, first.FirstPosition, first.EndPosition-1, firstLog, first.BatchEpoch, first.FirstOffset, first.Entry.Epoch, first.Entry.StartOffset))
	}
	return nil
}

// Side is the replica as the truncation protocol sees it.
func (r *Replica) Side() Side {
	return Side{Epochs: r.Epochs, LogEndOffset: r.LogEndOffset, HighWatermark: r.HighWatermark}
}

// Record is one record of a replica with where it is.
type Record struct {
	Segment *inspect.SegmentFiles
	Batch   record.Batch
	Record  record.Record // its byte slices are its own
}

// Kinds of Difference.
const (
	OnlyLeft  = "only_left"
	OnlyRight = "only_right"
	Conflict  = "conflict"
)

// Difference is an offset where the replicas do not hold the same record.
type Difference struct {
	Kind   string
	Offset int64
	// Left and Right are the records (nil on the side that lacks it).
	Left, Right *Record
	// RemovedByCompaction: the side lacking the record has the offset
	// inside the offset range of one of its batches (a v2 batch keeps its
	// base and last offsets when the cleaner removes records from it), so
	// the record was there and the cleaner removed it. Not a difference
	// between the replicas. A whole batch missing is a difference.
	RemovedByCompaction bool
}

// Divergence sums up a comparison.
type Divergence struct {
	LeftLogEndOffset, RightLogEndOffset int64
	// ComparedFrom is max(log start offsets), ComparedTo the smaller log
	// end offset (exclusive).
	ComparedFrom, ComparedTo int64
	// FirstDifference is the first offset in [ComparedFrom, ComparedTo)
	// where the records differ (nil: none).
	FirstDifference *int64
	// Truncation is where LEFT truncates as a follower of RIGHT (nil when
	// the protocol gives none), after Rounds.
	Truncation *int64
	Rounds     []Round
	// LeftRecordsPastTruncation counts LEFT's records at or after
	// Truncation.
	LeftRecordsPastTruncation int64
	// Counts of differences by kind (compaction gaps apart).
	OnlyLeft, OnlyRight, Conflicts, RemovedByCompaction int64
	// Damage met while reading either replica without Options.Salvage:
	// the records after it in that segment were not compared.
	Damage []error
	// Skipped are the damaged ranges a salvaging comparison read past
	// (the first MaxListedDamage of each replica, in file order), and
	// SkippedRanges and SkippedBytes count all of them. The records in
	// them are not compared: the other replica's show as on its side
	// only.
	Skipped                     []inspect.Damage
	SkippedRanges, SkippedBytes int64
}

// Options tune a comparison.
type Options struct {
	// Salvage reads each replica past damage as dump-log --salvage does
	// (inspect.Partition.WalkSalvage): a batch whose CRC does not match
	// or whose records do not decode is skipped, an unreadable stretch is
	// skipped up to the next valid batch, and the records after them are
	// compared. Without it, damage ends the reading of its segment.
	Salvage bool
}

// MaxListedDamage is how many skipped ranges of each replica a
// salvaging comparison lists (Divergence.Skipped); the rest are counted.
const MaxListedDamage = 100

// Agree reports whether the replicas hold the same records over the
// compared range and end at the same offset.
func (d *Divergence) Agree() bool {
	return d.FirstDifference == nil && d.LeftLogEndOffset == d.RightLogEndOffset
}

// Compare compares left and right record by record from max(log start
// offsets): fn is called for each difference in offset order (records at
// or past the smaller log end offset are only on the longer side). A
// batch that fails its CRC is damage, never a difference: its records are
// not what was written.
func Compare(left, right *Replica, opts Options, fn func(Difference) error) (*Divergence, error) {
	d := &Divergence{
		LeftLogEndOffset:  left.LogEndOffset,
		RightLogEndOffset: right.LogEndOffset,
		ComparedFrom:      max(left.LogStartOffset, right.LogStartOffset),
		ComparedTo:        min(left.LogEndOffset, right.LogEndOffset),
	}
	d.ComparedTo = max(d.ComparedTo, d.ComparedFrom)
	// Without epochs on either side the protocol says nothing (a high
	// watermark alone is not an answer about these two logs).
	if len(left.Epochs) > 0 || len(right.Epochs) > 0 {
		if x, rounds, ok := Truncation(left.Side(), right.Side()); ok {
			d.Truncation, d.Rounds = &x, rounds
		} else {
			d.Rounds = rounds
		}
	}
	// Left is read from the truncation point when it is earlier, to count
	// the records a follower would discard.
	leftFrom := d.ComparedFrom
	if d.Truncation != nil {
		leftFrom = min(leftFrom, *d.Truncation)
	}
	lc := stream(left.Partition, leftFrom, left.LogStartOffset, opts.Salvage)
	// A truncation to the log end offset discards nothing (the record at
	// 2^63-1 of a log ending there included: its log end offset is
	// 2^63-1 too, record.OffsetAfter).
	lc.counting = d.Truncation != nil && *d.Truncation < left.LogEndOffset
	if lc.counting {
		lc.countFrom = *d.Truncation
	}
	rc := stream(right.Partition, d.ComparedFrom, right.LogStartOffset, opts.Salvage)
	defer lc.stop()
	defer rc.stop()
	a, b := lc.next(), rc.next()
	for a != nil || b != nil {
		var diff Difference
		switch {
		case a != nil && b != nil && a.Record.Offset == b.Record.Offset:
			off := a.Record.Offset
			if !sameRecord(&a.Record, &b.Record) {
				diff = Difference{Kind: Conflict, Offset: off, Left: a, Right: b}
			}
			a, b = lc.next(), rc.next()
		case a != nil && (b == nil || a.Record.Offset < b.Record.Offset):
			if a.Record.Offset >= d.ComparedFrom {
				diff = Difference{Kind: OnlyLeft, Offset: a.Record.Offset, Left: a, RemovedByCompaction: rc.covers(a.Record.Offset)}
			}
			a = lc.next()
		default:
			diff = Difference{Kind: OnlyRight, Offset: b.Record.Offset, Right: b, RemovedByCompaction: b.Record.Offset >= d.ComparedFrom && lc.covers(b.Record.Offset)}
			b = rc.next()
		}
		if diff.Kind == "" {
			continue
		}
		d.count(diff)
		if err := fn(diff); err != nil {
			return d, err
		}
	}
	for _, c := range []*cursor{lc, rc} {
		if c.err != nil {
			if !fileio.IsCorrupt(c.err) {
				return d, c.err
			}
			d.Damage = append(d.Damage, c.err)
		}
		d.Damage = append(d.Damage, c.res.damage...)
		d.Skipped = append(d.Skipped, c.res.skipped...)
		d.SkippedRanges += c.res.skippedRanges
		d.SkippedBytes += c.res.skippedBytes
	}
	d.LeftRecordsPastTruncation = lc.counted
	return d, nil
}

func (d *Divergence) count(diff Difference) {
	switch {
	case diff.RemovedByCompaction:
		d.RemovedByCompaction++
		return
	case diff.Kind == OnlyLeft:
		d.OnlyLeft++
	case diff.Kind == OnlyRight:
		d.OnlyRight++
	default:
		d.Conflicts++
	}
	if d.compared(diff.Offset) && d.FirstDifference == nil {
		o := diff.Offset
		d.FirstDifference = &o
	}
}

// compared reports whether offset o (at or above ComparedFrom) is in the
// compared range, below ComparedTo; a ComparedTo of 2^63-1 is a log end
// offset that holds the record at 2^63-1 (record.OffsetAfter), which is
// compared too.
func (d *Divergence) compared(o int64) bool {
	return o < d.ComparedTo || o == math.MaxInt64 && d.ComparedTo == math.MaxInt64
}

// sameRecord: equal timestamp, key, value and headers (a null key or value
// is not an empty one). Batch framing, compression and leader epochs may
// differ between replicas.
func sameRecord(a, b *record.Record) bool {
	return a.Timestamp == b.Timestamp && sameBytes(a.Key, b.Key) && sameBytes(a.Value, b.Value) && a.HeadersEqual(b)
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// cursor reads one replica's records from an offset on, in offset order,
// in a goroutine (Partition.Walk and RecordDecoder), a batch at a time.
type cursor struct {
	ch   chan batchRecords
	quit chan struct{}
	buf  []*Record
	err  error
	errc chan error
	// res is the reading goroutine's account of damage, complete once
	// errc has been received from.
	res streamDamage
	// ranges are the offset ranges of the batches read to reach the
	// current record, its own included: [first, last] each.
	ranges [][2]int64
	// counted is how many records at or after countFrom were handed out
	// (while counting).
	counting           bool
	countFrom, counted int64
}

// streamDamage is what a cursor's walk met: without salvage, the damage
// that ended the reading of a segment inside a batch the walk handed out
// (a CRC mismatch, records that do not decode); with it, the ranges it
// skipped.
type streamDamage struct {
	damage                      []error
	skipped                     []inspect.Damage
	skippedRanges, skippedBytes int64
}

func (s *streamDamage) skip(d inspect.Damage) {
	s.skippedRanges++
	s.skippedBytes += d.End - d.Position
	if len(s.skipped) < MaxListedDamage {
		s.skipped = append(s.skipped, d)
	}
}

func stream(p *inspect.Partition, from, logStart int64, salvage bool) *cursor {
	// The walk starts through the offset index, as a fetch does; below the
	// log start offset a fetch is refused (OffsetOutOfRange), so records
	// still on disk there are read from the start of the log.
	var rng inspect.LogRange
	if from >= logStart {
		rng.FromOffset = &from
	}
	c := &cursor{ch: make(chan batchRecords, 4), quit: make(chan struct{}), errc: make(chan error, 1)}
	go func() {
		defer close(c.ch)
		var dec record.RecordDecoder
		var damaged *inspect.SegmentFiles // without salvage: the rest of this segment is not read
		// damage takes batch damage d: skipped when salvaging, else the
		// end of its segment's reading.
		damage := func(d inspect.Damage) {
			if salvage {
				c.res.skip(d)
				return
			}
			c.res.damage = append(c.res.damage, d.Err)
			damaged = d.Segment
		}
		fn := func(w inspect.WalkBatch) error {
			if w.Segment == damaged {
				return nil
			}
			if !w.CRCValid {
				damage(w.CRCDamage())
				return nil
			}
			br := batchRecords{first: w.Batch.LastOffset, last: w.Batch.LastOffset}
			if w.Batch.Magic >= 2 {
				br.first = w.Batch.BaseOffset // kept by the cleaner (MemoryRecords.filterTo)
			}
			b := *w.Batch
			d, err := w.Records(&dec, func(r *record.Record) error {
				br.first = min(br.first, r.Offset)
				if r.Offset >= from {
					br.recs = append(br.recs, &Record{Segment: w.Segment, Batch: b, Record: r.Clone()})
				}
				return nil
			})
			switch {
			case err != nil:
				return err
			case d != nil:
				damage(*d)
				return nil
			}
			if br.last >= from {
				select {
				case c.ch <- br:
				case <-c.quit:
					return errStopped
				}
			}
			return nil
		}
		var err error
		if salvage {
			err = p.WalkSalvage(rng, fn, func(d inspect.Damage) error {
				c.res.skip(d)
				return nil
			})
		} else {
			err = p.Walk(rng, fn)
		}
		if errors.Is(err, errStopped) {
			err = nil
		}
		c.errc <- err
	}()
	return c
}

var errStopped = errors.New("stopped")

// batchRecords is one batch as a cursor reads it: its offset range (a v2
// batch's base and last offsets, which compaction keeps; a legacy
// wrapper's first and last inner offsets) and its records from the
// cursor's start on (none when compaction emptied it).
type batchRecords struct {
	first, last int64
	recs        []*Record
}

// covers reports whether offset o lies inside the range of a batch the
// cursor read since its previous record, its current record's included:
// a record missing there is a gap compaction left inside a batch.
func (c *cursor) covers(o int64) bool {
	for _, r := range c.ranges {
		if r[0] <= o && o <= r[1] {
			return true
		}
	}
	return false
}

// next returns the next record, or nil at the end (c.err then says why
// the stream ended early, if it did).
func (c *cursor) next() *Record {
	// Keep the previous record's batch: an offset after that record may
	// still be inside its range.
	if n := len(c.ranges); n > 0 {
		c.ranges = append(c.ranges[:0], c.ranges[n-1])
	}
	for len(c.buf) == 0 {
		br, ok := <-c.ch
		if !ok {
			if c.errc != nil {
				c.err = <-c.errc
				c.errc = nil
			}
			return nil
		}
		c.buf = br.recs
		c.ranges = append(c.ranges, [2]int64{br.first, br.last})
	}
	r := c.buf[0]
	c.buf = c.buf[1:]
	if c.counting && r.Record.Offset >= c.countFrom {
		c.counted++
	}
	return r
}

// stop ends the reading goroutine.
func (c *cursor) stop() {
	select {
	case <-c.quit:
	default:
		close(c.quit)
	}
	for range c.ch {
	}
	if c.errc != nil {
		<-c.errc
		c.errc = nil
	}
}

package inspect

import (
	"errors"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// LogRange bounds a walk over a partition's batches. Nil bounds are open.
// Offsets are inclusive; a batch is in range when it overlaps
// [FromOffset, ToOffset]. FromTime starts the walk where the broker's
// timestamp search for it lands (earlier batches cannot hold a record with
// a timestamp >= FromTime on a consistent partition); batches whose max
// timestamp is below FromTime are skipped. ToTime does not stop the walk
// (timestamps need not increase); callers filter records by it.
type LogRange struct {
	FromOffset, ToOffset *int64
	FromTime, ToTime     *int64
	MaxBatches           int // 0: no limit
	// Progress, when set, is called with the bytes of .log read so far and
	// the bytes the walk may read (from its start to the end of the last
	// segment in range): every few MiB at most, and last with done ==
	// total when the walk completes (also when it stops early at ToOffset
	// or MaxBatches, or at damage). Nil costs nothing.
	Progress func(done, total int64)
	// Misleading, when set, is told of each index entry the lookups for
	// FromOffset and FromTime followed that contradicts the batch it leads
	// to (MisleadingEntry). The walk then starts where the log's batches
	// place the bound, not where the entry does, so that it misses no
	// batch in range either way.
	Misleading func(MisleadingEntry)
}

// Contains reports whether a record is inside the range's offsets and
// times (bounds included; MaxBatches and Progress do not apply). A walk
// hands out whole batches that overlap the range; a reader of their
// records keeps those it contains.
func (r LogRange) Contains(rec *record.Record) bool {
	if r.FromOffset != nil && rec.Offset < *r.FromOffset {
		return false
	}
	if r.ToOffset != nil && rec.Offset > *r.ToOffset {
		return false
	}
	if r.FromTime != nil && rec.Timestamp < *r.FromTime {
		return false
	}
	if r.ToTime != nil && rec.Timestamp > *r.ToTime {
		return false
	}
	return true
}

// walkStart is where a walk from a lookup's answer starts: the batch
// found, or, when a scan instead of a misleading entry stopped at damage
// (Stopped), the start of that segment, so that the walk meets the damage
// and reports it; ok false when there is nothing to walk.
func walkStart(p *Partition, found, stopped bool, segBase int64, b *record.Batch) (seg int, pos int64, ok bool) {
	switch {
	case found:
		return floorSegment(p.Segments, segBase), b.Position, true
	case stopped:
		return floorSegment(p.Segments, segBase), 0, true
	}
	return 0, 0, false
}

func (r LogRange) misled(ms []MisleadingEntry) {
	if r.Misleading != nil {
		for _, m := range ms {
			r.Misleading(m)
		}
	}
}

// WalkBatch is what Walk hands its callback: the batch, its complete
// entry bytes (a view valid during the call) and whether its CRC matches.
type WalkBatch struct {
	Segment  *SegmentFiles
	Batch    *record.Batch
	Entry    []byte
	CRCValid bool
}

// CRCDamage is the damage a batch handed out with CRCValid false is: its
// bytes are not what was written, so a consumer's CRC check refuses it
// (DefaultRecordBatch.ensureValid) and broker recovery truncates the
// segment there. Readers that answer from records (find, diff) take it as
// damage, never as records.
func (w WalkBatch) CRCDamage() Damage {
	b := w.Batch
	return Damage{Segment: w.Segment, Position: b.Position, End: b.End(),
		Err: fileio.Corruptf(w.Segment.Log, b.Position, fileio.ErrCRC, "stored crc %d does not match the computed %d", b.CRC, record.ComputeCRC(b.Magic, w.Entry))}
}

// Records decodes the batch's records with dec, calling fn for each. A
// batch whose records do not decode is damage, as a batch whose bytes
// cannot be read is: it is returned as the Damage of the whole batch (its
// Err the *CorruptError naming the file and position), after fn saw the
// records before the failure. Any other error (from fn, or reading) is
// returned as it is. Every reader of records (dump-log, find, diff) takes
// undecodable records this way.
func (w WalkBatch) Records(dec *record.RecordDecoder, fn func(*record.Record) error) (*Damage, error) {
	err := dec.Records(w.Segment.Log, w.Entry, w.Batch, fn)
	if err == nil || !fileio.IsCorrupt(err) {
		return nil, err
	}
	b := w.Batch
	return &Damage{Segment: w.Segment, Position: b.Position, End: b.End(), Err: err}, nil
}

// Walk reads the batches of p in offset order within r, opening each
// segment's .log for sequential reading (pread through one window) and
// using the indexes only to find where to start, so only the bytes in range
// are read. It stops at the end of each segment's valid entries; a damaged
// tail is returned as the error after the callback has seen every batch
// before it (as a *CorruptError naming the file and position).
func (p *Partition) Walk(r LogRange, fn func(WalkBatch) error) error {
	return p.walk(r, fn, nil)
}

// WalkSalvage is Walk that does not stop at damage. Where a segment's
// entries stop being readable (a header that cannot be a batch, an entry
// running past the end of the file, an entry too large to hand out) it
// calls damage with the damaged range, resynchronises on the next position
// where a valid batch starts (Resyncer) and goes on from there. A batch
// whose CRC does not match is handed to fn (CRCValid false) when its
// length is credible: it ends the file, or a plausible header starts where
// it ends; otherwise, when a valid batch follows, its length field is
// likely damaged too and [its position, that batch) is reported as damage
// (kind ErrCRC). Damage is never returned as an error; an error from fn or
// damage stops the walk and is returned. Batches are handed out in file
// order, so after damage their offsets need not follow the previous ones.
func (p *Partition) WalkSalvage(r LogRange, fn func(WalkBatch) error, damage func(Damage) error) error {
	return p.walk(r, fn, damage)
}

func (p *Partition) walk(r LogRange, fn func(WalkBatch) error, damage func(Damage) error) error {
	startSeg, startPos := 0, int64(0)
	var minTS int64 = -1 << 63
	if r.FromTime != nil {
		minTS = *r.FromTime
		tl, err := p.LookupTime(*r.FromTime, LookupOptions{CheckPassedOver: true})
		var me *MisledError
		switch {
		case errors.As(err, &me):
			r.misled(me.Misleading)
			tl = me.ByScanTime
		case err != nil:
			return err
		case tl.ByScan != nil:
			r.misled(tl.Misleading)
			tl = tl.ByScan
		}
		seg, pos, ok := walkStart(p, tl.Found, tl.Stopped, tl.SegmentBaseOffset, tl.Batch)
		if !ok {
			return nil
		}
		startSeg, startPos = seg, pos
	}
	if r.FromOffset != nil {
		ol, err := p.LookupOffset(*r.FromOffset, LookupOptions{})
		var me *MisledError
		switch {
		case errors.As(err, &me):
			r.misled(me.Misleading)
			ol = me.ByScanOffset
		case err != nil:
			return err
		case ol.ByScan != nil:
			r.misled(ol.Misleading)
			ol = ol.ByScan
		}
		i, pos, ok := walkStart(p, ol.Found, ol.Stopped, ol.SegmentBaseOffset, &ol.Batch)
		if !ok {
			return nil
		}
		if i > startSeg || (i == startSeg && pos > startPos) {
			startSeg, startPos = i, pos
		}
	}
	seen := 0
	var firstErr error
	it := NewLogIterator(IterOptions{Salvage: damage != nil})
	var m *Meter
	var counted int64 // bytes of the current segment counted by m
	if r.Progress != nil {
		end := len(p.Segments)
		if r.ToOffset != nil {
			end = max(startSeg, floorSegment(p.Segments, *r.ToOffset)+1)
		}
		m = NewMeter(r.Progress, func() int64 { return LogBytes(p.Segments[startSeg:end], startPos) })
	}
	for i := startSeg; i < len(p.Segments); i++ {
		sf := &p.Segments[i]
		if r.ToOffset != nil && sf.BaseOffset > *r.ToOffset {
			break
		}
		if sf.Log == "" {
			continue
		}
		f, err := fileio.Open(sf.Log, fileio.Options{CacheNeutral: true})
		if err != nil {
			return err
		}
		from := int64(0)
		if i == startSeg {
			from = startPos
		}
		it.Reset(f, sf, from)
		stop, err := walkSegment(it, from, r, minTS, &seen, fn, damage, m, &counted)
		m.Done(&counted, f.Size()-from)
		f.Close()
		if err != nil {
			if !fileio.IsCorrupt(err) {
				return err
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		if stop {
			break
		}
	}
	m.Finish()
	return firstErr
}

// walkSegment walks one segment from position from through it. damage is
// nil for Walk: the scan then stops at the first damage, returned as the
// error.
func walkSegment(it *LogIterator, from int64, r LogRange, minTS int64, seen *int, fn func(WalkBatch) error, damage func(Damage) error, m *Meter, counted *int64) (bool, error) {
	start := from
	prevLast := int64(-1 << 63)
	for it.Next() {
		if d := it.Damage(); d != nil {
			if err := damage(*d); err != nil {
				return true, err
			}
			continue
		}
		b := it.Batch()
		if r.ToOffset != nil && b.Magic >= 2 && b.BaseOffset > *r.ToOffset {
			return true, nil
		}
		if r.ToOffset != nil && prevLast >= *r.ToOffset {
			// Offsets increase: this batch starts after ToOffset (a legacy
			// wrapper's first offset is not in its header).
			return true, nil
		}
		crcOK := false
		if damage != nil {
			// Salvaging: judge the framing of every batch, in range or
			// not, so that the walk follows the same path through
			// damage whatever the range.
			var err error
			if crcOK, err = it.Judge(); err != nil {
				return true, err
			}
			if d := it.Damage(); d != nil {
				if err := damage(*d); err != nil {
					return true, err
				}
				continue
			}
		}
		if r.FromOffset != nil && b.LastOffset < *r.FromOffset {
			continue
		}
		prevLast = b.LastOffset
		if b.MaxTimestamp < minTS {
			continue
		}
		if r.MaxBatches > 0 && *seen >= r.MaxBatches {
			return true, nil
		}
		entry, err := it.Entry()
		if err != nil {
			return false, err
		}
		if d := it.Damage(); d != nil {
			// Too large to hand out, and its length credible (Judge):
			// skipped whole.
			if err := damage(*d); err != nil {
				return true, err
			}
			continue
		}
		*seen++
		if damage == nil {
			crcOK = record.ComputeCRC(b.Magic, entry) == b.CRC
		}
		if err := fn(WalkBatch{Segment: it.sf, Batch: b, Entry: entry, CRCValid: crcOK}); err != nil {
			return true, err
		}
		m.Advance(counted, b.End()-start)
	}
	if err := it.Err(); err != nil {
		return it.hard, err
	}
	return false, nil
}

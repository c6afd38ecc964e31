package inspect

import "errors"

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
}

// WalkBatch is what Walk hands its callback: the batch, its complete
// entry bytes (a view valid during the call) and whether its CRC matches.
type WalkBatch struct {
	Segment  *SegmentFiles
	Batch    *Batch
	Entry    []byte
	CRCValid bool
}

// Walk reads the batches of p in offset order within r, opening each
// segment's .log for sequential reading (pread through one window) and
// using the indexes only to find where to start, so only the bytes in range
// are read. It stops at the end of each segment's valid entries; a damaged
// tail is returned as the error after the callback has seen every batch
// before it (as a *CorruptError naming the file and position).
func (p *Partition) Walk(r LogRange, fn func(WalkBatch) error) error {
	startSeg, startPos := 0, int64(0)
	var minTS int64 = -1 << 63
	if r.FromTime != nil {
		minTS = *r.FromTime
		tl, err := p.LookupTime(*r.FromTime, LookupOptions{})
		if err != nil {
			return err
		}
		if !tl.Found {
			return nil
		}
		startSeg = floorSegment(p.Segments, tl.SegmentBaseOffset)
		startPos = tl.Batch.Position
	}
	if r.FromOffset != nil {
		ol, err := p.LookupOffset(*r.FromOffset, LookupOptions{})
		if err != nil {
			return err
		}
		if !ol.Found {
			return nil
		}
		i := floorSegment(p.Segments, ol.SegmentBaseOffset)
		if i > startSeg || (i == startSeg && ol.Batch.Position > startPos) {
			startSeg, startPos = i, ol.Batch.Position
		}
	}
	seen := 0
	var firstErr error
	for i := startSeg; i < len(p.Segments); i++ {
		sf := &p.Segments[i]
		if r.ToOffset != nil && sf.BaseOffset > *r.ToOffset {
			break
		}
		if sf.Log == "" {
			continue
		}
		f, err := OpenPread(sf.Log)
		if err != nil {
			return err
		}
		from := int64(0)
		if i == startSeg {
			from = startPos
		}
		stop, err := walkSegment(f, sf, from, r, minTS, &seen, fn)
		f.Close()
		if err != nil {
			if !isDamage(err) {
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
	return firstErr
}

func walkSegment(f *File, sf *SegmentFiles, from int64, r LogRange, minTS int64, seen *int, fn func(WalkBatch) error) (bool, error) {
	s := NewEntryScanner(f, f.Name, f.Size(), from, 0)
	prevLast := int64(-1 << 63)
	for s.Next() {
		b := s.Batch()
		if r.FromOffset != nil && b.LastOffset < *r.FromOffset {
			continue
		}
		if r.ToOffset != nil && b.Magic >= 2 && b.BaseOffset > *r.ToOffset {
			return true, nil
		}
		if r.ToOffset != nil && prevLast >= *r.ToOffset {
			// Offsets increase: this batch starts after ToOffset (a legacy
			// wrapper's first offset is not in its header).
			return true, nil
		}
		prevLast = b.LastOffset
		if b.MaxTimestamp < minTS {
			continue
		}
		if r.MaxBatches > 0 && *seen >= r.MaxBatches {
			return true, nil
		}
		*seen++
		entry, err := s.Entry()
		if err != nil {
			return false, err
		}
		crc := ComputeCRC(b.Magic, entry)
		if err := fn(WalkBatch{Segment: sf, Batch: b, Entry: entry, CRCValid: crc == b.CRC}); err != nil {
			return true, err
		}
	}
	if err := s.Err(); err != nil {
		return false, err
	}
	return false, nil
}

// isDamage reports a *CorruptError: bad data, as opposed to an I/O failure.
func isDamage(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce)
}

package inspect

import (
	"errors"
	"math"
	"strings"
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
}

// WalkBatch is what Walk hands its callback: the batch, its complete
// entry bytes (a view valid during the call) and whether its CRC matches.
type WalkBatch struct {
	Segment  *SegmentFiles
	Batch    *Batch
	Entry    []byte
	CRCValid bool
}

// Damage is a stretch of a .log that a salvaging walk (WalkSalvage)
// skipped: the bytes [Position, End) hold no batch it could read. End is
// where the next valid batch starts, or the file size when none does.
type Damage struct {
	Segment       *SegmentFiles
	Position, End int64
	// Err says what is wrong at Position: a *CorruptError (ErrTorn,
	// ErrCorruptHeader, ErrCRC, ErrTooLarge) naming the file and position.
	Err error
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
	var sv *salvager
	if damage != nil {
		sv = &salvager{report: damage}
	}
	var m *progressMeter
	if r.Progress != nil {
		end := len(p.Segments)
		if r.ToOffset != nil {
			end = max(startSeg, floorSegment(p.Segments, *r.ToOffset)+1)
		}
		m = newProgressMeter(r.Progress, p.Segments[startSeg:end], startPos)
	}
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
		stop, err := walkSegment(f, sf, from, r, minTS, &seen, fn, sv, m)
		m.segmentDone(f.Size() - from)
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
	m.finish()
	return firstErr
}

// walkSegment walks one segment from position from. sv is nil for Walk:
// the scan then stops at the first damage, returned as the error.
func walkSegment(f *File, sf *SegmentFiles, from int64, r LogRange, minTS int64, seen *int, fn func(WalkBatch) error, sv *salvager, m *progressMeter) (bool, error) {
	start := from
	if sv != nil {
		sv.reset(f, sf)
	}
	prevLast := int64(-1 << 63)
	size := min(f.Size(), MaxSegmentBytes)
	s := NewEntryScanner(f, f.Name, size, from, 0)
	for {
		s.Reset(from) // past damage: one scanner and window per segment
		resume := int64(-1)
		for s.Next() {
			b := s.Batch()
			if r.ToOffset != nil && b.Magic >= 2 && b.BaseOffset > *r.ToOffset {
				return true, nil
			}
			if r.ToOffset != nil && prevLast >= *r.ToOffset {
				// Offsets increase: this batch starts after ToOffset (a legacy
				// wrapper's first offset is not in its header).
				return true, nil
			}
			crcOK := false
			if sv != nil {
				// Salvaging: judge the framing of every batch, in range or
				// not, so that the walk follows the same path through
				// damage whatever the range.
				var skipTo int64
				var err error
				crcOK, skipTo, err = sv.check(s, b)
				if err != nil {
					return true, err
				}
				if skipTo >= 0 {
					resume = skipTo
					break
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
			entry, err := s.Entry()
			if err != nil {
				if sv != nil && isDamage(err) {
					// Too large to hand out, and its length credible
					// (check): skip it whole.
					if err := sv.report(Damage{Segment: sf, Position: b.Position, End: b.End(), Err: err}); err != nil {
						return true, err
					}
					resume = b.End()
					break
				}
				return false, err
			}
			*seen++
			if sv == nil {
				crcOK = ComputeCRC(b.Magic, entry) == b.CRC
			}
			if err := fn(WalkBatch{Segment: sf, Batch: b, Entry: entry, CRCValid: crcOK}); err != nil {
				return true, err
			}
			m.advance(b.End() - start)
		}
		if resume >= 0 {
			from = resume
			continue
		}
		err := s.Err()
		if err == nil {
			return false, tooLarge(f, sf, sv)
		}
		if sv == nil || !isDamage(err) {
			return false, err
		}
		next, ok, err := sv.skip(s.Position(), err)
		if err != nil {
			return true, err
		}
		if !ok {
			return false, tooLarge(f, sf, sv)
		}
		from = next
	}
}

// salvager is WalkSalvage's state in one segment.
type salvager struct {
	report func(Damage) error
	rs     *Resyncer
	sf     *SegmentFiles
	size   int64
	name   string
}

func (sv *salvager) reset(f *File, sf *SegmentFiles) {
	size := min(f.Size(), MaxSegmentBytes)
	if sv.rs == nil {
		sv.rs = NewResyncer(f, f.Name, size)
	} else {
		sv.rs.Reset(f, f.Name, size)
	}
	sv.sf, sv.size, sv.name = sf, size, f.Name
}

// MaxSegmentBytes is the most bytes of a .log anything reads: no broker
// writes or opens a larger segment (segment.bytes is an int, and
// FileRecords keeps sizes and positions as ints), so what lies past it (a
// sparse file, say) is reported, not scanned.
const MaxSegmentBytes = math.MaxInt32

// SegmentTooLarge is the error for a log of size bytes past
// MaxSegmentBytes, nil when it is not.
func SegmentTooLarge(file string, size int64) error {
	if size <= MaxSegmentBytes {
		return nil
	}
	return corruptf(file, MaxSegmentBytes, ErrSegmentTooLarge, "the log is %d bytes; no broker opens a segment over %d bytes (segment.bytes is an int, FileRecords positions are 32-bit): the %d bytes past it are not read",
		size, int64(MaxSegmentBytes), size-MaxSegmentBytes)
}

// tooLarge ends a walk of a log past MaxSegmentBytes: the rest is one
// damaged range when salvaging, else the error.
func tooLarge(f *File, sf *SegmentFiles, sv *salvager) error {
	err := SegmentTooLarge(f.Name, f.Size())
	if err == nil || sv == nil {
		return err
	}
	return sv.report(Damage{Segment: sf, Position: MaxSegmentBytes, End: f.Size(), Err: err})
}

// skip reports the damage that starts at pos (why: the scanner's error)
// and returns where the next valid batch starts (ok false: none does). An
// entry running past the end of the file is a torn write only when no
// valid batch follows; otherwise its length field is damaged.
func (sv *salvager) skip(pos int64, why error) (next int64, ok bool, err error) {
	next, ok, err = sv.rs.Next(pos + 1)
	if err != nil {
		return 0, false, err
	}
	var ce *CorruptError
	if ok && errors.Is(why, ErrTorn) && errors.As(why, &ce) {
		detail := strings.TrimPrefix(ce.Err.Error(), ErrTorn.Error()+": ")
		why = corruptf(sv.name, pos, ErrCorruptHeader, "%s, yet a valid batch follows at position %d: the length field is damaged", detail, next)
	}
	if err := sv.report(Damage{Segment: sv.sf, Position: pos, End: next, Err: why}); err != nil {
		return 0, false, err
	}
	return next, ok, nil
}

// check computes b's CRC (streaming large entries). When it does not match
// and b's length is not credible (b does not end the file and no plausible
// header starts where it ends) while a valid batch follows, the range up to
// that batch is reported as damage and skipTo is where to resume (verify
// judges such a batch the same way); otherwise skipTo is -1 and b is handed
// out.
func (sv *salvager) check(s *EntryScanner, b *Batch) (crcOK bool, skipTo int64, err error) {
	computed, ok, err := s.CheckCRC()
	if err != nil || ok {
		return ok, -1, err
	}
	end := b.End()
	if end >= sv.size {
		return false, -1, nil
	}
	if _, plausible, err := sv.rs.header(end); err != nil || plausible {
		return false, -1, err
	}
	next, found, err := sv.rs.Next(b.Position + 1)
	if err != nil || !found {
		return false, -1, err
	}
	why := corruptf(sv.name, b.Position, ErrCRC, "stored crc %d does not match the computed %d, and no batch starts where its length field says it ends (position %d)", b.CRC, computed, end)
	if err := sv.report(Damage{Segment: sv.sf, Position: b.Position, End: next, Err: why}); err != nil {
		return false, -1, err
	}
	return false, next, nil
}

// isDamage reports a *CorruptError: bad data, as opposed to an I/O failure.
func isDamage(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce)
}

// Package find searches the records of partitions for those matching a
// filter (key, key prefix, value substring, header, time and offset
// bounds): the library behind `kseg find`.
//
// It walks each partition with inspect's log walk (Partition.Walk, or
// WalkSalvage past damage) and decodes records with record.RecordDecoder;
// it has no log loop of its own. Offset and time bounds are resolved
// through the indexes, segment by segment: a segment whose offsets lie
// outside the range is not opened, and inside a segment the walk starts
// where the offset index (for FromOffset) or the time index (for FromTime,
// the broker's timestamp search) lands, so only the bytes in range are
// read; where an index entry contradicts the batch it leads to, the walk
// starts where the batches place the bound instead, and the search says so
// (Event.Misleading), so that it never finds fewer records than the log
// holds. Partitions are searched in parallel; events come out partition by
// partition in the order given, in offset order within a partition.
package find

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// HeaderFilter matches a record having a header Name; with HasValue, the
// header's value must equal Value (a nil Value with HasValue matches a
// null header value only).
type HeaderFilter struct {
	Name     string
	Value    []byte
	HasValue bool
}

// Filter is what a record must satisfy: every set field must hold. Nil
// byte slices and pointers are unset; a set empty key is []byte{}.
type Filter struct {
	Key           []byte         // the key equals these bytes
	KeyPrefix     []byte         // the key starts with these bytes
	ValueContains []byte         // the value contains these bytes
	Headers       []HeaderFilter // each must be present
	// Offsets are inclusive; timestamps are the records' effective
	// timestamps (the batch's for LogAppendTime), inclusive.
	FromOffset, ToOffset *int64
	FromTime, ToTime     *int64
}

// Match reports whether r (a data record; control records never match)
// passes f.
func (f *Filter) Match(r *record.Record) bool {
	bounds := inspect.LogRange{FromOffset: f.FromOffset, ToOffset: f.ToOffset, FromTime: f.FromTime, ToTime: f.ToTime}
	if !bounds.Contains(r) {
		return false
	}
	if f.Key != nil && (r.Key == nil || !bytes.Equal(r.Key, f.Key)) {
		return false
	}
	if f.KeyPrefix != nil && (r.Key == nil || !bytes.HasPrefix(r.Key, f.KeyPrefix)) {
		return false
	}
	if f.ValueContains != nil && (r.Value == nil || !bytes.Contains(r.Value, f.ValueContains)) {
		return false
	}
	for i := range f.Headers {
		h := &f.Headers[i]
		found := false
		_ = r.EachHeader(func(x record.Header) error {
			if string(x.Key) == h.Name && (!h.HasValue || (x.Value == nil) == (h.Value == nil) && bytes.Equal(x.Value, h.Value)) {
				found = true
				return errFound
			}
			return nil
		})
		if !found {
			return false
		}
	}
	return true
}

// errFound stops a walk over a record's headers at the first match.
var errFound = errors.New("found")

// Options tune a search.
type Options struct {
	Filter Filter
	// Salvage goes on past damage inside a segment (WalkSalvage: resume at
	// the next valid batch); without it the rest of a damaged segment is
	// not searched.
	Salvage bool
	// Max stops the search after this many matches (0: no limit).
	Max int
	// Workers is how many partitions are searched at once (0: GOMAXPROCS).
	Workers int
	// Progress, when set, is called with the bytes of .log read so far
	// over all partitions and the size of every .log searched (bounds make
	// the search read less): from the workers' goroutines, so it must be
	// safe for concurrent use; last with done == total.
	Progress func(done, total int64)
}

// Match is one record that matched. Its byte slices are its own.
type Match struct {
	Partition *inspect.Partition
	Segment   *inspect.SegmentFiles
	// Batch is the header of the batch holding the record. BatchBaseOffset
	// is its first offset as record.BatchCount works it out: the v2
	// header's base offset, or for a legacy (magic 0/1) wrapper the offset
	// of its first inner message (the header holds the last).
	Batch           record.Batch
	BatchBaseOffset int64
	Record          record.Record
}

// Event is what Search hands its callback: a match or a damaged range.
type Event struct {
	Partition *inspect.Partition
	Match     *Match
	// Damage is a stretch of a segment that could not be searched: without
	// Salvage, from Position to the end of that segment (End is then -1);
	// with it, the bytes [Position, End) skipped. Its Err names the file and
	// byte position.
	Damage *inspect.Damage
	// Misleading is an index entry the bounds were resolved through that
	// contradicts the batch it leads to: its segment is searched from
	// where its batches place the bound instead (inspect.LogRange), so no
	// match is missed; the event says so.
	Misleading *inspect.MisleadingEntry
}

// Result sums up a search.
type Result struct {
	Matches    int
	Damaged    int  // damage events
	Partitions int  // partitions searched (to the end or to Max)
	Stopped    bool // Max was reached
}

var errStop = errors.New("search stopped")

// Search searches parts and calls fn with each event, in order: partition
// by partition as given, in file (offset) order within a partition. fn is
// called from the caller's goroutine. An error from fn, or an error that
// is not damage (an unreadable file), stops the search and is returned.
func Search(parts []*inspect.Partition, opts Options, fn func(Event) error) (Result, error) {
	var res Result
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(parts)))
	type job struct {
		events chan Event
		err    error // set before events is closed
	}
	jobs := make([]*job, len(parts))
	for i := range jobs {
		jobs[i] = &job{events: make(chan Event, 64)}
	}
	var stop atomic.Bool
	meter := inspect.NewMeter(opts.Progress, func() int64 {
		var total int64
		for _, p := range parts {
			total += inspect.LogBytes(p.Segments, 0)
		}
		return total
	})
	defer meter.Finish()
	done := make(chan struct{})
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	// Partitions start in order, so the one the caller waits for has
	// always started: a worker blocked on a full channel of a later
	// partition never holds up an earlier one.
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for i, p := range parts {
			select {
			case sem <- struct{}{}:
			case <-done:
				for _, j := range jobs[i:] {
					close(j.events)
				}
				return
			}
			wg.Add(1)
			go func(j *job, p *inspect.Partition) {
				defer wg.Done()
				defer func() { <-sem }()
				send := func(e Event) error {
					if stop.Load() {
						return errStop
					}
					select {
					case j.events <- e:
						return nil
					case <-done:
						return errStop
					}
				}
				if err := searchPartition(p, &opts, send, meter); err != nil && !errors.Is(err, errStop) {
					j.err = err
				}
				close(j.events)
			}(jobs[i], p)
		}
	}()
	finish := func(err error) (Result, error) {
		stop.Store(true)
		close(done)
		<-fed
		wg.Wait()
		return res, err
	}
	for _, j := range jobs {
		for e := range j.events {
			if e.Damage != nil {
				res.Damaged++
			}
			if e.Match != nil {
				res.Matches++
			}
			if err := fn(e); err != nil {
				return finish(err)
			}
			if opts.Max > 0 && res.Matches >= opts.Max {
				res.Stopped = true
				res.Partitions++
				return finish(nil)
			}
		}
		if j.err != nil {
			return finish(j.err)
		}
		res.Partitions++
	}
	return finish(nil)
}

// searchPartition walks p segment by segment, so that damage in one
// segment is reported and the search goes on with the next (the broker's
// recovery, too, judges each segment on its own).
func searchPartition(p *inspect.Partition, opts *Options, send func(Event) error, meter *inspect.Meter) error {
	f := &opts.Filter
	var dec record.RecordDecoder
	var pending []Match
	// The indexes serve bounded walks as they serve fetches, which the
	// broker refuses below the log start offset; a segment holding
	// offsets below it is walked whole, so that the records still on disk
	// there are searched as an unbounded search would.
	logStart := int64(math.MinInt64)
	if f.FromOffset != nil || f.FromTime != nil {
		st, err := p.ReadBrokerState()
		if err != nil {
			return err
		}
		logStart = st.LogStart
	}
	for i := range p.Segments {
		sf := &p.Segments[i]
		if sf.Log == "" {
			continue
		}
		// Offsets in segment i are in [base_i, base_{i+1}).
		if f.ToOffset != nil && sf.BaseOffset > *f.ToOffset {
			break
		}
		if f.FromOffset != nil && i+1 < len(p.Segments) && p.Segments[i+1].BaseOffset <= *f.FromOffset {
			continue
		}
		one := *p
		one.Segments = p.Segments[i : i+1]
		rng := inspect.LogRange{ToOffset: f.ToOffset}
		indexed := sf.BaseOffset >= logStart
		var counted, read int64 // of this segment: reported to meter, read
		if meter != nil {
			rng.Progress = func(done, _ int64) {
				read = done
				meter.Advance(&counted, done)
			}
		}
		if f.FromTime != nil && *f.FromTime >= 0 && indexed {
			// The broker's timestamp search takes no negative target; every
			// record's timestamp is >= -1 anyway.
			rng.FromTime = f.FromTime
		}
		if f.FromOffset != nil && *f.FromOffset > sf.BaseOffset && indexed {
			rng.FromOffset = f.FromOffset
		}
		var sendErr error
		rng.Misleading = func(m inspect.MisleadingEntry) {
			if sendErr == nil {
				sendErr = send(Event{Partition: p, Misleading: &m})
			}
		}
		damaged := false
		// damage reports d: with Salvage the search goes on past it, else
		// the rest of the segment is not searched.
		damage := func(d inspect.Damage) error {
			damaged = true
			if !opts.Salvage {
				d.End = -1 // the rest of the segment is not searched
			}
			if err := send(Event{Partition: p, Damage: &d}); err != nil {
				return err
			}
			if opts.Salvage {
				return nil
			}
			return errSkipSegment
		}
		visit := func(w inspect.WalkBatch) error {
			b := w.Batch
			if b.IsControl() {
				return nil // control records never match
			}
			pending = nil // sent matches belong to the receiver
			if !w.CRCValid {
				return damage(w.CRCDamage())
			}
			count := record.HeaderCount(b)
			d, err := w.Records(&dec, func(r *record.Record) error {
				count.Record(r)
				if f.Match(r) {
					pending = append(pending, Match{Partition: p, Segment: sf, Batch: *b, Record: r.Clone()})
				}
				return nil
			})
			switch {
			case err != nil:
				return err
			case d != nil:
				return damage(*d)
			}
			for k := range pending {
				pending[k].BatchBaseOffset = count.FirstOffset
				if err := send(Event{Partition: p, Match: &pending[k]}); err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		if opts.Salvage {
			err = one.WalkSalvage(rng, visit, func(d inspect.Damage) error {
				return send(Event{Partition: p, Damage: &d})
			})
		} else {
			err = one.Walk(rng, visit)
		}
		meter.Done(&counted, read)
		if sendErr != nil {
			return sendErr
		}
		switch {
		case err == nil, errors.Is(err, errSkipSegment):
		case fileio.IsCorrupt(err) && !damaged:
			d := inspect.Damage{Segment: sf, Position: damagePosition(err), End: -1, Err: err}
			if err := send(Event{Partition: p, Damage: &d}); err != nil {
				return err
			}
		case fileio.IsCorrupt(err):
		default:
			return err
		}
	}
	return nil
}

var errSkipSegment = errors.New("skip the rest of the segment")

func damagePosition(err error) int64 {
	var ce *fileio.CorruptError
	if errors.As(err, &ce) {
		return ce.Position
	}
	return -1
}

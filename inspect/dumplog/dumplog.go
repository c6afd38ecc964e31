// Package dumplog lists a partition's batches, and their records, in file
// order: the library behind `kseg dump-log`. It walks the partition with
// inspect's log walk (Partition.Walk, or WalkSalvage past damage), works
// out a legacy wrapper's first offset and record count from its inner
// messages (the header holds only the last offset), keeps the records
// inside the range, and under salvage takes a batch whose records do not
// decode as damage (inspect.WalkBatch.Records), as every record reader
// does. Which decoder renders the records' keys and values
// (decoder.go: an internal topic's, a schema registry's) is chosen here
// too, for dump-log and for find.
package dumplog

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
)

// Options say what Dump lists.
type Options struct {
	// Range bounds the walk (and keeps the records it contains); its
	// Progress and Misleading callbacks are the walk's.
	Range inspect.LogRange
	// Records lists each batch's records after it (decompressing).
	Records bool
	// Salvage goes on past damage (WalkSalvage): a damaged byte range, or
	// a batch whose records do not decode, is an Event.Damage.
	Salvage bool
}

// Batch is a batch as dump-log lists it: what the walk handed out, and its
// first offset and record count (a legacy wrapper's from its inner
// messages, a v2 batch's from its header).
type Batch struct {
	inspect.WalkBatch
	FirstOffset int64
	RecordCount int64
}

// Event is one line of the listing: a batch, one of its records in range
// (Record, after its Batch), or a damaged range (with Salvage).
type Event struct {
	// Batch is valid during the call only.
	Batch *Batch
	// Record is valid during the call only, except in a legacy batch,
	// whose records are decoded before the batch is listed.
	Record *record.Record
	Damage *inspect.Damage
}

// Result counts what was listed.
type Result struct {
	Batches       int
	DamagedRanges int   // Event.Damage events
	DamagedBytes  int64 // the bytes in them
}

// Dump walks p within opts.Range and calls fn for each event, in file
// order. Without Salvage the first damage ends the walk of its segment and
// is returned (a *fileio.CorruptError naming the file and position) after
// fn has seen everything before it; an error from fn stops the walk and is
// returned.
func Dump(p *inspect.Partition, opts Options, fn func(Event) error) (Result, error) {
	var res Result
	var dec record.RecordDecoder
	damage := func(d inspect.Damage) error {
		res.DamagedRanges++
		res.DamagedBytes += d.End - d.Position
		return fn(Event{Damage: &d})
	}
	// records calls each for every record of w in the range.
	records := func(w inspect.WalkBatch, each func(*record.Record) error) (*inspect.Damage, error) {
		return w.Records(&dec, func(r *record.Record) error {
			if !opts.Range.Contains(r) {
				return nil
			}
			return each(r)
		})
	}
	b := new(Batch) // one for the walk: an Event's Batch is valid during the call only
	visit := func(w inspect.WalkBatch) error {
		res.Batches++
		*b = Batch{WalkBatch: w, FirstOffset: w.Batch.BaseOffset, RecordCount: int64(w.Batch.RecordCount)}
		var d *inspect.Damage
		var err error
		if w.Batch.Magic < 2 {
			// A legacy wrapper's first offset and count are inside it:
			// its records are read before it is listed.
			count := record.RecordsCount()
			var recs []record.Record
			d, err = w.Records(&dec, func(r *record.Record) error {
				count.Record(r)
				if opts.Records && opts.Range.Contains(r) {
					recs = append(recs, r.Clone())
				}
				return nil
			})
			if (err != nil || d != nil) && !opts.Salvage {
				return firstOf(err, d)
			}
			b.FirstOffset, b.RecordCount = count.FirstOffset, count.RecordCount
			if err := fn(Event{Batch: b}); err != nil {
				return err
			}
			for i := range recs {
				if err := fn(Event{Batch: b, Record: &recs[i]}); err != nil {
					return err
				}
			}
		} else {
			if err := fn(Event{Batch: b}); err != nil {
				return err
			}
			if opts.Records {
				d, err = records(w, func(r *record.Record) error { return fn(Event{Batch: b, Record: r}) })
				if (err != nil || d != nil) && !opts.Salvage {
					return firstOf(err, d)
				}
			}
		}
		if err != nil {
			return err
		}
		if d != nil {
			return damage(*d)
		}
		return nil
	}
	if opts.Salvage {
		return res, p.WalkSalvage(opts.Range, visit, damage)
	}
	return res, p.Walk(opts.Range, visit)
}

// firstOf is err, or the damage's error.
func firstOf(err error, d *inspect.Damage) error {
	if err != nil {
		return err
	}
	return d.Err
}

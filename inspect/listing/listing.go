// Package listing is the library behind `kseg ls`: what is under each
// target, partition by partition in the order every command lists them
// (inspect.SortPartitions), each partition's segments summarised
// (Partition.Summarize) and, when partitions are listed, summed into one
// line with the offsets its data directory's checkpoints hold for it.
package listing

import (
	"path/filepath"
	"runtime"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Options say what List reads.
type Options struct {
	// Segments lists segments (and KRaft metadata snapshots) instead of
	// partitions.
	Segments bool
	// Deep reads every batch header (counting batches and records), one
	// partition at a time; otherwise a few KiB per segment are read, on
	// every core.
	Deep bool
	// Progress, when set, is told the bytes read (Deep) and the name of
	// each partition as it is read.
	Progress  func(done, total int64)
	Partition func(name string)
}

// Entry is one partition as List hands it out, in order: its segments'
// summaries (with Segments: then its metadata snapshots'), or its line
// (Partition set; without Segments). A data directory's bootstrap
// checkpoint comes after its partitions, as an Entry of Segments only.
type Entry struct {
	Partition *inspect.Partition
	Segments  []inspect.SegmentSummary
	Line      *PartitionLine
}

// Shutdown is how a broker's data directory says its broker last stopped.
type Shutdown struct {
	Dir   string
	Clean bool // .kafka_cleanshutdown is present
}

// Result is what List found besides the entries.
type Result struct {
	// Newest is the largest last timestamp listed (-1: none), in the
	// partition NewestIn.
	Newest   int64
	NewestIn string
	// Uncounted: some batch and record counts were not read (not Deep).
	Uncounted bool
	// Shutdowns are the targets' data directories that are a broker's
	// (meta.properties or a checkpoint is there), in target order.
	Shutdowns []Shutdown
}

// read is what List reads of one partition.
type read struct {
	sums, snaps []inspect.SegmentSummary
	side        *side
	err         error
}

// List reads the targets' partitions, and calls fn with each in order. An
// error from reading a partition, or from fn, stops it.
func List(targets []*inspect.Target, opts Options, fn func(Entry) error) (Result, error) {
	res := Result{Newest: -1}
	meter := inspect.NewMeter(opts.Progress, func() int64 {
		var total int64
		for _, t := range targets {
			total += t.LogBytes()
		}
		return total
	})
	if !opts.Deep {
		meter = nil
	}
	sopts := inspect.SummaryOptions{Deep: opts.Deep, Meter: meter}
	for _, t := range targets {
		var dd *sidefile.DataDirFiles
		if t.Kind != "segment" && t.DataDir != "" {
			dd = sidefile.ReadDataDirFiles(t.DataDir)
			if s, ok := shutdown(dd); ok {
				res.Shutdowns = append(res.Shutdowns, s)
			}
		}
		if err := res.target(t, dd, opts, sopts, fn); err != nil {
			return res, err
		}
		if opts.Segments && t.Bootstrap != nil {
			b := t.Bootstrap.Partition()
			sums, err := b.Summarize(sopts)
			if err != nil {
				return res, err
			}
			if err := fn(Entry{Partition: b, Segments: sums}); err != nil {
				return res, err
			}
		}
	}
	meter.Finish()
	return res, nil
}

// target lists t's partitions: a shallow listing reads on every core, at
// most 4 partitions per core ahead of the entries, which stay in order;
// Deep reads whole logs one partition at a time.
func (res *Result) target(t *inspect.Target, dd *sidefile.DataDirFiles, opts Options, sopts inspect.SummaryOptions, fn func(Entry) error) error {
	ps := append([]*inspect.Partition(nil), t.Partitions...)
	inspect.SortPartitions(ps)
	withSide := !opts.Segments && t.Kind != "segment"
	workers := runtime.GOMAXPROCS(0)
	if opts.Deep {
		workers = 1
	}
	reads := make([]read, len(ps))
	var err error
	inspect.InOrder(len(ps), workers, 4*workers, func(_, i int) {
		p, r := ps[i], &reads[i]
		if opts.Partition != nil {
			opts.Partition(p.Name())
		}
		r.sums, r.err = p.Summarize(sopts)
		if r.err == nil && opts.Segments {
			r.snaps, r.err = p.SummarizeMetadataSnapshots(sopts)
		}
		if r.err == nil && withSide {
			r.side = readSide(p)
		}
	}, func(i int) bool {
		p, r := ps[i], reads[i]
		reads[i] = read{} // listed: its summaries can go
		if err = r.err; err != nil {
			return false
		}
		res.saw(p, r.sums)
		e := Entry{Partition: p}
		if opts.Segments {
			e.Segments = append(r.sums, r.snaps...)
		} else {
			e.Line = line(p, r.sums, dd, r.side)
		}
		err = fn(e)
		return err == nil
	})
	return err
}

// saw notes the newest timestamp and whether counts were read.
func (res *Result) saw(p *inspect.Partition, sums []inspect.SegmentSummary) {
	for j := range sums {
		s := &sums[j]
		res.Uncounted = res.Uncounted || !s.Counted
		if ts := s.LastTimestamp; ts >= 0 && (res.Newest < 0 || ts > res.Newest) {
			res.Newest, res.NewestIn = ts, p.Name()
		}
	}
}

// shutdown is how dd's broker last stopped, when dd is a broker's (it
// holds meta.properties or a checkpoint).
func shutdown(dd *sidefile.DataDirFiles) (Shutdown, bool) {
	if !dd.Meta.Present() && !dd.RecoveryPoints.Present() && !dd.LogStarts.Present() && !dd.HighWatermarks.Present() {
		return Shutdown{}, false
	}
	return Shutdown{Dir: filepath.Clean(dd.Dir), Clean: dd.CleanShutdown.Present()}, true
}

package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Defaults of Options.
const (
	// DefaultIndexIntervalBytes is the broker's index.interval.bytes
	// default (ServerLogConfigs.LOG_INDEX_INTERVAL_BYTES_DEFAULT).
	DefaultIndexIntervalBytes = 4096
	// IndexEveryBatch selects index.interval.bytes = 0 in
	// Options.IndexIntervalBytes (0 there means the default).
	IndexEveryBatch = -1
	// DefaultMaxFindingsPerCheck bounds the findings of one check in one
	// file (Options.MaxFindingsPerCheck).
	DefaultMaxFindingsPerCheck = 100
)

// Options say how to verify. The zero value is the usual choice.
type Options struct {
	// Jobs is how many segments (of one or several partitions) are checked
	// at once; <= 0 means runtime.NumCPU(). Findings come out in the same
	// order whatever the value.
	Jobs int
	// IndexIntervalBytes is the index.interval.bytes the *.stale checks
	// assume when they rebuild indexes as broker recovery would: 0 means
	// DefaultIndexIntervalBytes, IndexEveryBatch means 0.
	IndexIntervalBytes int
	// MaxFindingsPerCheck bounds the findings of one check in one file:
	// past it they are counted in one closing finding. 0 means
	// DefaultMaxFindingsPerCheck; < 0 means no limit.
	MaxFindingsPerCheck int
	// Records decodes every record of every batch (decompressing), checking
	// that the records agree with the header: count, offsets inside the
	// batch and increasing, a legacy wrapper's last inner offset. Without
	// it only the first record of control batches is decoded, as broker
	// recovery does.
	Records bool
	// Window is the read size for .log files; 0 means inspect.DefaultWindow.
	Window int
	// Progress, when set, is called with the bytes of .log files checked
	// so far and their total: every few MiB at most, one call at a time
	// (from any goroutine), and last with done == total when the run
	// completes. Nil costs nothing.
	Progress func(done, total int64)
	// StartPartition, when set, is called with a partition's name as the
	// first of its segments starts being checked (from a worker
	// goroutine, one call at a time): for a progress display.
	StartPartition func(name string)

	meter *inspect.Meter // Run's, from Progress
	// readAheadMin: 0 reads logs of inspect.ReadAheadMinBytes and more on
	// two goroutines (inspect.IterOptions.ReadAhead) when a core would
	// otherwise be idle (lendCores), < 0 every log on one, > 0 every log
	// of that many bytes and more on two (tests compare the two ways).
	readAheadMin int64
	// SideFiles also checks the files beside the segments (producer
	// snapshots, checkpoints, leader epochs) and each .txnindex against the
	// ABORT markers in the log (sidefiles.go).
	SideFiles bool
}

func (o Options) resolved() Options {
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	switch o.IndexIntervalBytes {
	case 0:
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	case IndexEveryBatch:
		o.IndexIntervalBytes = 0
	}
	if o.IndexIntervalBytes < 0 {
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if o.MaxFindingsPerCheck == 0 {
		o.MaxFindingsPerCheck = DefaultMaxFindingsPerCheck
	}
	if o.Window <= 0 {
		o.Window = inspect.DefaultWindow
	}
	o.Window = max(o.Window, inspect.ResyncWindow)
	return o
}

// Run checks every segment of every partition of t and calls emit for each
// finding, in a stable order: partition by partition as t lists them,
// within a partition segment by segment (leftover files among them by base
// offset), within a segment the .log, .index, .timeindex and .txnindex
// findings, each by byte position. The order does not depend on
// Options.Jobs. emit is called from Run's goroutine only.
//
// Damage is never an error: it is a finding. Run returns an error only
// when it cannot do the job (a file that cannot be opened or read, or
// that shrank while it was read); the findings emitted before it stand.
func Run(t *inspect.Target, opts Options, emit func(Finding)) (Summary, error) {
	var sum Summary
	if t == nil {
		return sum, errors.New("verify: no target")
	}
	o := opts.resolved()
	o.meter = inspect.NewMeter(opts.Progress, t.LogBytes)
	var jobs []*segmentJob
	side := newSideChecker(t, &o)
	dd := side.dataDir
	if dd == nil && t.DataDir != "" {
		dd = sidefile.ReadDataDirFiles(t.DataDir)
	}
	for pi, p := range t.Partitions {
		if len(p.Segments) == 1 && p.Segments[0].Snapshot != nil {
			// One metadata snapshot file: its batches and framing.
			jobs = append(jobs, &segmentJob{part: pi, files: p.Segments[0], dir: p.Dir, first: true})
			continue
		}
		active, recovered, kept := segmentStates(p, dd)
		var ps *partitionSide // read by the partition's first job that needs it
		if o.SideFiles && !p.SingleSegment {
			ps = &partitionSide{p: p, dd: side.dataDir}
		}
		for si := range p.Segments {
			j := &segmentJob{part: pi, files: p.Segments[si], dir: p.Dir, epochs: ps,
				active: active[si], recovered: recovered[si], kept: kept, first: si == 0}
			if si+1 < len(p.Segments) && !p.SingleSegment {
				j.hasNext, j.next = true, p.Segments[si+1]
			}
			jobs = append(jobs, j)
			sum.Segments++
		}
		var lastSeg *segmentJob
		if len(p.Segments) > 0 {
			lastSeg = jobs[len(jobs)-1]
		}
		// The KRaft snapshots of __cluster_metadata-0, after its segments.
		for _, ms := range p.MetadataSnapshots {
			jobs = append(jobs, &segmentJob{part: pi, files: ms.Segment(), dir: p.Dir})
		}
		// The partition's side files are a job of their own, after its
		// segments: the workers check them while later partitions' segments
		// are checked (the .txnindex comparison replays the whole log).
		if o.SideFiles && len(p.Segments) > 0 {
			jobs = append(jobs, &segmentJob{part: pi, side: true, dir: p.Dir, lastSeg: lastSeg, epochs: ps})
		}
	}
	sum.Partitions = len(t.Partitions)
	workers := min(o.Jobs, max(len(jobs), 1))
	lendCores(jobs, workers, o.readAheadMin)
	if workers == 1 {
		// The side job runs after its partition's last segment was checked:
		// that check finds the partition's end while it has the files open
		// (segmentJob.end). With more workers the side job may start first,
		// and opens the segment itself.
		for _, j := range jobs {
			if j.side && !t.Partitions[j.part].SingleSegment {
				j.lastSeg.last = true
			}
		}
	}

	var named sync.Mutex              // StartPartition one call at a time
	bufs := make([]*buffers, workers) // a worker's, made on its first job
	// check is worker w's job: it fills j.res.
	check := func(w int, j *segmentJob) {
		switch {
		case j.side:
			j.res = side.run(t.Partitions[j.part], j.lastSeg.end(), j.epochs)
		default:
			if bufs[w] == nil {
				bufs[w] = &buffers{scan: make([]byte, scanBuffer), it: inspect.NewLogIterator(inspect.IterOptions{Salvage: true, Window: o.Window, ReadAhead: o.readAheadMin >= 0, ReadAheadMin: o.readAheadMin})}
			}
			if j.first && o.StartPartition != nil {
				named.Lock()
				o.StartPartition(t.Partitions[j.part].Name())
				named.Unlock()
			}
			j.res = runJob(&o, j, bufs[w]) // never nil
			if j.snapshot() && j.res.err == nil {
				finishSnapshot(j, j.res)
			}
			o.meter.Done(&j.reported, j.res.bytes)
		}
	}

	var err error
	count := func(f Finding) {
		switch f.Severity {
		case SeverityError:
			sum.Errors++
		case SeverityInfo:
			sum.Infos++
		default:
			sum.Warnings++
		}
		emit(f)
	}
	part := -1
	var left []Finding // leftover files of the current partition, by base offset
	var carried []Finding
	var epochs capped // the current partition's leader-epoch.mismatch findings, from its segments
	// report emits a checked job's findings, jobs in order; false after
	// an error, which stops the run.
	report := func(j *segmentJob) bool {
		if j.res.err != nil {
			err = j.res.err
			return false
		}
		if j.part != part {
			for _, f := range left {
				count(f)
			}
			part = j.part
			left, carried = leftovers(t.Partitions[part]), nil
			epochs = capped{max: o.MaxFindingsPerCheck}
		}
		if j.side {
			// After the partition's last segment: its leftover files not
			// yet reported, then its side files, the checkpoint's
			// contradictions with the segments' batches first.
			for _, f := range left {
				count(f)
			}
			for _, f := range append(epochs.findings(), j.res.findings...) {
				count(f)
			}
			left = nil
			return true
		}
		epochs.merge(&j.res.epochs)
		for len(left) > 0 && !j.snapshot() && left[0].SegmentBaseOffset != nil && *left[0].SegmentBaseOffset < j.files.BaseOffset {
			count(left[0])
			left = left[1:]
		}
		fs := append(carried, j.res.findings...)
		sortFindings(fs)
		for _, f := range fs {
			count(f)
		}
		carried = j.res.next
		sum.Batches += j.res.batches
		sum.rescanned += j.res.rescanned
		sum.Bytes += j.res.bytes
		return true
	}
	// Side files (snapshots, checkpoints, transaction index against the
	// log): the data directory's first, each partition's after its segments.
	if fs, serr := side.dataDirFindings(); serr != nil {
		err = serr
	} else {
		for _, f := range fs {
			count(f)
		}
		if bfs, berr := bootstrapFindings(t, &o); berr != nil {
			err = berr
		} else {
			for _, f := range bfs {
				count(f)
			}
		}
	}
	if err == nil {
		// At most 2*Jobs results wait to be emitted: memory stays bounded
		// when an early segment is slow.
		inspect.InOrder(len(jobs), workers, 2*o.Jobs, func(w, i int) { check(w, jobs[i]) }, func(i int) bool { return report(jobs[i]) })
	}
	if err == nil {
		for _, f := range left {
			count(f)
		}
	}
	if err == nil {
		o.meter.Finish()
	}
	return sum, err
}

// lendCores says which jobs read their log with a read-ahead, a second
// goroutine inside the segment (inspect.IterOptions.ReadAhead, for logs of
// at least inspect.ReadAheadMinBytes): only the last workers-1 segments,
// which start when fewer segments than workers are left, so that the
// read-ahead takes a core no other job would use. One worker (-j 1) keeps
// to one core. readAheadMin is Options.readAheadMin: < 0 never, > 0
// (tests) every segment.
func lendCores(jobs []*segmentJob, workers int, readAheadMin int64) {
	lend := workers - 1
	if readAheadMin > 0 {
		lend = len(jobs)
	} else if readAheadMin < 0 {
		lend = 0
	}
	for i := len(jobs) - 1; i >= 0 && lend > 0; i-- {
		if !jobs[i].side {
			jobs[i].ahead = true
			lend--
		}
	}
}

// segmentStates says, for each segment of p, whether it is the active
// segment and whether the broker's next start recovers it, and why it
// does not recover those it keeps. A partition
// named by one segment file is looked up in its whole directory; when that
// cannot be listed, the segment counts as active and recovered (nothing is
// claimed about a broker's behaviour that cannot be known).
func segmentStates(p *inspect.Partition, dd *sidefile.DataDirFiles) (active, recovered []bool, kept string) {
	active, recovered = make([]bool, len(p.Segments)), make([]bool, len(p.Segments))
	all := p.Segments
	if p.SingleSegment {
		full, err := inspect.ReadPartition(p.Dir)
		if err != nil {
			for i := range p.Segments {
				active[i], recovered[i] = true, true
			}
			return active, recovered, ""
		}
		all = full.Segments
	}
	rs := inspect.StartOfRecovery(all, p.Topic, p.Partition, dd)
	kept = rs.KeptBecause()
	if !rs.Clean {
		kept += " (KAFKA-10207)"
	}
	for i, sf := range p.Segments {
		k := sort.Search(len(all), func(k int) bool { return all[k].BaseOffset >= sf.BaseOffset })
		if k == len(all) || all[k].BaseOffset != sf.BaseOffset {
			active[i], recovered[i] = true, true
			continue
		}
		active[i] = k == len(all)-1
		recovered[i] = rs.Recovers(k)
	}
	return active, recovered, kept
}

// segmentJob is one segment to check and, when it has one, the segment
// after it in the partition.
type segmentJob struct {
	part    int
	files   inspect.SegmentFiles
	dir     string
	hasNext bool
	next    inspect.SegmentFiles
	side    bool // the partition's side files, not a segment
	ahead   bool // its log is read with a read-ahead (inspect.IterOptions.ReadAhead)
	// active: the partition's last segment, which a running broker
	// appends to. recovered: the broker's next start rebuilds its indexes
	// from the log (it is at or after the recovery point, and the data
	// directory was not shut down cleanly).
	active, recovered bool
	kept              string // why the next start does not recover it
	first             bool   // the partition's first segment
	// epochs: the partition's side files, shared by its jobs (nil without
	// side-file checks).
	epochs *partitionSide
	// last: the partition's last segment, whose check also finds its end
	// for the side files' checks (segmentResult.segEnd; with one worker
	// only, see Run). lastSeg: a side job's partition's last segment
	// (segmentJob.end).
	last    bool
	lastSeg *segmentJob

	// Filled by the worker.
	res      *segmentResult
	reported int64 // bytes of the .log reported to the meter
}

type segmentResult struct {
	findings []Finding
	next     []Finding // findings about the next segment
	epochs   capped    // leader-epoch.mismatch findings (the checkpoint's, reported with the side files)
	batches  int64
	bytes    int64
	err      error
	segEnd   *segmentEnd // segmentJob.last: lastBatchOf over the files as checked
	// rescanned counts the batch headers the offset index check read
	// again for entries behind its merge (offsetIndexCheck.rescan).
	rescanned int64
}

// reuseSegmentEnd lets the side checks take a segment's end from its
// checks (a variable for the tests, which compare with reopening it).
var reuseSegmentEnd = true

// end is what lastBatchOf found in j's segment while it was checked
// (segmentJob.last: with one worker, whose side job runs after it on the
// same goroutine); nil otherwise, and the side checks open the segment
// again. Either way they compare against the same answer from the same
// files.
func (j *segmentJob) end() *segmentEnd {
	if !reuseSegmentEnd || !j.last || j.res == nil {
		return nil
	}
	return j.res.segEnd
}

// scanBuffer is the size of the buffer index checks scan padding with.
const scanBuffer = 64 << 10

// buffers are a worker's reusable log iterator (its read window and
// resynchroniser), read buffer and record decoder.
type buffers struct {
	it   *inspect.LogIterator
	scan []byte
	dec  record.RecordDecoder

	// Index slot readers, reset onto each segment's index files too large
	// to read whole (2k for index k's check, 2k+1 for its recovery
	// comparison; k 0 the offset index, 1 the time index), the buffers
	// the smaller ones are read whole into, and the offset index check's
	// checkpoints: a worker allocates their buffers once, not per segment.
	slots [4]fileio.IndexSlots
	index [2][]byte
	cps   []checkpoint
}

// wholeIndexBytes is the largest index a worker reads whole into memory
// (an index of a segment of up to about 128 MiB at the default
// index.interval.bytes).
var wholeIndexBytes int64 = 256 << 10 // a variable for the tests, which read every index from its file too

// runJob checks one segment, turning a panic (a bug, never an answer) into
// an error naming the segment.
func runJob(o *Options, j *segmentJob, b *buffers) (res *segmentResult) {
	defer func() {
		if r := recover(); r != nil {
			res = &segmentResult{err: fmt.Errorf("internal error checking segment %s in %s: %v", inspect.SegmentName(j.files.BaseOffset), j.dir, r)}
		}
	}()
	return checkSegment(o, j, b)
}

func checkSegment(o *Options, j *segmentJob, b *buffers) *segmentResult {
	sf := j.files
	base := sf.BaseOffset
	c := &segChecker{
		opts: o, job: j, base: base,
		sink:    newSink(o.MaxFindingsPerCheck),
		scan:    b.scan,
		it:      b.it,
		bufs:    b,
		lastOff: math.MinInt64, maxTs: -1, maxTsOff: base,
		emu:   newRecoveryEmu(base, int64(o.IndexIntervalBytes)),
		track: offsetTracker{base: base, limit: math.MaxInt64},

		matcher:       j.epochs.matcher(),
		epochFindings: capped{max: o.MaxFindingsPerCheck},
	}
	res := &segmentResult{}
	var closers []io.Closer
	defer func() {
		for _, f := range closers {
			f.Close()
		}
	}()
	defer b.it.Close() // before the .log is closed: a read-ahead may still read it
	b.it.SetReadAhead(j.ahead)
	if j.hasNext {
		c.track.limit = j.next.BaseOffset
	}
	hasLog := sf.Log != ""
	var logFile *fileio.File
	var offsetIndex *indexfmt.OffsetIndex // for lastBatchOf
	if hasLog {
		f, err := fileio.Open(sf.Log, fileio.Options{CacheNeutral: true})
		if err != nil {
			res.err = err
			return res
		}
		logFile = f
		closers = append(closers, f)
		// Never past what a broker could open (a sparse 100 GiB file is
		// one finding, not a scan of 100 GiB of zeros).
		c.logName, c.logSize = sf.Log, min(f.Size(), inspect.MaxSegmentBytes)
		if err := inspect.SegmentTooLarge(sf.Log, f.Size()); err != nil {
			c.logFinding(LogSize, inspect.MaxSegmentBytes, nil, "%s", detail(err))
		}
		c.log = f
		c.it.Reset(f, &sf, 0)
		res.bytes = f.Size()
	} else {
		c.logName = c.segFile(inspect.LogSuffix)
		c.log = emptyReader{}
		for _, f := range []string{sf.Index, sf.TimeIndex, sf.TxnIndex} {
			if f != "" {
				c.add(SegmentLeftover, f, nil, nil, "index file without its .log (orphaned): the broker deletes it at load (LogLoader)")
			}
		}
	}

	open := func(path string) (*fileio.File, error) {
		// The checks read an index whole and in order, so it is read
		// with pread, not mapped as a lookup maps it: unmapping a mapping
		// that was touched flushes the TLB of every core running this
		// process, interrupting the other workers (4-7% of -j 2's
		// cycles on partitions of small segments, docs/performance.md).
		// Cache-neutral, so that verifying beside a live broker leaves
		// its page cache as it was.
		f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
		if err != nil {
			return nil, err
		}
		closers = append(closers, f)
		return f, nil
	}
	// openIndex opens index k (0 the offset index, 1 the time index) and
	// returns what its shape check reads and the slot readers of its check
	// and of the recovery comparison, which read the slots in order, each
	// at its own pace. An index of at most wholeIndexBytes is read once,
	// whole, and all three read it in memory, not from the file three
	// times over; a larger one is read from the file, the two slot
	// readers each keeping its own reads chunked.
	openIndex := func(path string, k int) (r io.ReaderAt, check, compare indexfmt.SlotReader, err error) {
		f, err := open(path)
		if err != nil {
			return nil, nil, nil, err
		}
		whole, err := fileio.ReadWhole(f, b.index[k], wholeIndexBytes)
		if err != nil {
			return nil, nil, nil, err
		}
		if whole != nil {
			b.index[k] = whole // the grown buffer, for the worker's next segment
			s := indexfmt.SlotsInMemory(whole)
			return bytes.NewReader(whole), s, s, nil
		}
		return f, b.slots[2*k].Reset(f, f.Size()), b.slots[2*k+1].Reset(f, f.Size()), nil
	}
	if sf.Index != "" {
		r, check, compare, err := openIndex(sf.Index, 0)
		if err != nil {
			res.err = err
			return res
		}
		x := indexfmt.NewOffsetIndexFrom(check, base)
		if c.oidx, err = newOffsetIndexCheck(c, x, r, sf.Index, hasLog); err != nil {
			res.err = err
			return res
		}
		offsetIndex = x
		c.emu.off = &indexCompare[indexfmt.OffsetEntry]{entry: indexfmt.NewOffsetIndexFrom(compare, base).Entry, have: c.oidx.n}
	} else if hasLog && !j.snapshot() {
		c.add(IndexMissing, c.segFile(inspect.IndexSuffix), nil, nil,
			"no offset index: a broker rebuilds it from the log at load (LogSegment.sanityCheck: NoSuchFileException, then recoverSegment)")
	}
	if sf.TimeIndex != "" {
		r, check, compare, err := openIndex(sf.TimeIndex, 1)
		if err != nil {
			res.err = err
			return res
		}
		x := indexfmt.NewTimeIndexFrom(check, base)
		if c.tidx, err = newTimeIndexCheck(c, x, r, sf.TimeIndex, hasLog); err != nil {
			res.err = err
			return res
		}
		c.emu.time = &indexCompare[indexfmt.TimeEntry]{entry: indexfmt.NewTimeIndexFrom(compare, base).Entry, have: c.tidx.n}
	}
	missingTime := sf.TimeIndex == "" && hasLog && !j.snapshot() // a snapshot has no indexes

	if hasLog {
		if err := c.checkLog(); err != nil {
			res.err = err
			return res
		}
		c.track.finish(c)
	}
	if missingTime {
		// Without a time index a broker takes the segment's largest
		// timestamp from the .log's modification time
		// (LogSegment.largestTimestamp). A log whose batches carry no
		// timestamp (magic 0, or every one -1) gets the same answer from
		// an index: that changes nothing, so it is only info.
		msg := "no time index: a broker creates an empty one at load and does not rebuild it (unless the segment is recovered), so the segment's largest timestamp falls back to the .log's modification time (time retention, timestamp lookups)"
		sev := SeverityWarning
		if !c.emu.broken && !c.logDamaged && c.emu.maxTs() < 0 {
			sev = SeverityInfo
			msg = "no time index, and no batch of the log carries a timestamp (magic 0, or every timestamp -1): a broker takes the segment's largest timestamp from the .log's modification time either way"
		}
		c.addAs(sev, TimeIndexMissing, c.segFile(inspect.TimeIndexSuffix), nil, nil, "%s", msg)
	}
	if c.oidx != nil {
		c.oidx.finish()
		b.cps = c.oidx.cps[:0] // the grown buffer, for the worker's next segment
	}
	if c.tidx != nil {
		c.tidx.finish()
	}
	if hasLog {
		c.emu.finish()
		if err := c.stale(); err != nil {
			res.err = err
			return res
		}
	}
	if sf.TxnIndex != "" {
		f, err := open(sf.TxnIndex)
		if err != nil {
			res.err = err
			return res
		}
		c.checkTxnIndex(indexfmt.NewTxnIndexFrom(fileio.NewIndexSlots(f, f.Size())), f.Size(), sf.TxnIndex, hasLog)
	}
	if c.err != nil {
		res.err = c.err
		return res
	}
	res.findings, res.next, res.batches, res.epochs = c.sink.findings(), c.sink.next, c.batches, c.epochFindings
	if c.oidx != nil {
		res.rescanned = c.oidx.rescanned
	}
	if j.last && hasLog {
		// The side checks' log end (partitionEnds), while the files are
		// open: opening them again costs a small segment's checks a tenth.
		e := lastBatchOf(logFile, sf.Log, logFile.Size(), base, offsetIndex)
		res.segEnd = &e
	}
	return res
}

type emptyReader struct{}

func (emptyReader) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }

// leftovers turns the files discovery set aside in a partition directory
// into segment.leftover findings, ordered by base offset (files without
// one last).
func leftovers(p *inspect.Partition) []Finding {
	var out []Finding
	for _, s := range p.Skipped {
		name := filepath.Base(s.Path)
		if strings.HasSuffix(name, ".checkpoint.deleted") {
			// A KRaft snapshot scheduled for deletion: not a segment file,
			// and LogLoader leaves it to the raft layer.
			continue
		}
		f := Finding{Severity: SeverityWarning, Check: SegmentLeftover, File: s.Path, Message: leftoverMessage(name, s.Reason)}
		if b, err := inspect.ParseBaseOffset(name); err == nil {
			f.SegmentBaseOffset = ptr(b)
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].SegmentBaseOffset, out[j].SegmentBaseOffset
		switch {
		case a == nil || b == nil:
			return a != nil && b == nil
		case *a != *b:
			return *a < *b
		}
		return out[i].File < out[j].File
	})
	return out
}

func leftoverMessage(name, reason string) string {
	if m := inspect.LeftoverAtLoad(name); m != "" {
		return m
	}
	return reason + ": the broker deletes such files at load, or fails on a name it cannot parse"
}

// fail records the first I/O error met by a check.
func (c *segChecker) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

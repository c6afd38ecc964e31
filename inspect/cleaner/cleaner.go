// Package cleaner answers "why does compaction not run?" offline: what the
// log cleaner sees of every partition whose topic compacts
// (LogCleanerManager.cleanableOffsets, calculateCleanableBytes,
// maxCompactionDelay and grabFilthiestCompactedLog, LogToClean in
// LogCleaner.scala), with the cleaner-offset-checkpoint of the data
// directory and the last stable offset as the partition's leader loads it.
package cleaner

import (
	"fmt"
	"math"
	"os"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/producerstate"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

// Checkpoint resets (cleanableOffsets).
const (
	ResetBelowLogStart = "below_log_start"
	ResetBeyondLogEnd  = "beyond_log_end"
)

// Bounds of the cleanable range (uncleanable_because).
const (
	BoundLastStableOffset = "last_stable_offset"
	BoundActiveSegment    = "active_segment"
	BoundMinCompactionLag = "min_compaction_lag"
)

// Why the cleaner would not pick a partition (why_not).
const (
	WhyBelowMinRatio    = "below_min_cleanable_ratio"
	WhyNothingCleanable = "nothing_cleanable"
	WhyEmpty            = "empty"
	WhyCleanerDisabled  = "cleaner_disabled"
)

// ConfigKeys are the configuration keys cleaner reads.
var ConfigKeys = []string{topicconfig.CleanupPolicy, topicconfig.MinCleanableRatio, topicconfig.MinCompactionLagMs, topicconfig.MaxCompactionLagMs, topicconfig.CleanerEnable}

// Options say how to analyse.
type Options struct {
	Now      int64
	Configs  *topicconfig.Resolver // nil: Kafka's defaults
	Progress func(done, total int64)
}

// Segment is what the cleaner reads of a segment: its base offset, size,
// largest timestamp (LogSegment.largestTimestamp) and, for a dirty
// non-active one, its first batch's max timestamp (getFirstBatchTimestamp:
// MaxInt64 when it has none).
type Segment struct {
	BaseOffset          int64
	Size                int64
	LargestTimestamp    int64
	FirstBatchTimestamp int64
}

// Input is one partition as the cleaner's rules take it.
type Input struct {
	Segments         []Segment // by base offset, the last the active one
	LogStartOffset   int64
	LogEndOffset     int64
	LastStableOffset int64
	Checkpoint       *int64 // the cleaner-offset-checkpoint entry
	Config           *topicconfig.Config
	Now              int64
}

// Compaction is the cleaner's view of one partition.
type Compaction struct {
	FirstDirtyOffset int64
	CheckpointOffset *int64
	CheckpointReset  string // "" when the checkpoint was used (or absent)
	// FirstUncleanableOffset is LogToClean's: the base offset of the
	// segment holding the smallest bound (of the active segment when the
	// bound is in it or beyond); UncleanableBecause names that bound.
	FirstUncleanableOffset int64
	UncleanableBecause     string
	// UncleanableOffset is cleanableOffsets' own answer: max(first dirty,
	// the smallest bound).
	UncleanableOffset    int64
	CleanBytes           int64
	CleanableBytes       int64
	CleanableRatio       float64 // NaN when total bytes are 0
	MaxCompactionDelayMs int64
	WouldClean           bool
	WhyNot               string
}

// Partition is one partition's answer.
type Partition struct {
	Partition *inspect.Partition
	Config    *topicconfig.Config
	Loaded    *producerstate.Loaded
	Input     Input
	Compaction
	// LSOHeldBy is the open (or not yet replicated) transaction that holds
	// the last stable offset, when that bound is the one that stops the
	// cleaner.
	LSOHeldBy *producerstate.Txn
	Notes     []string
	Err       error
}

// Report is the answer for the compacted partitions.
type Report struct {
	Partitions []Partition
	// Skipped counts the partitions whose topic does not compact.
	Skipped int
}

// Analyze reads every partition of targets whose topic compacts.
func Analyze(targets []*inspect.Target, opts Options) (*Report, error) {
	opts.Configs = topicconfig.OrDefaults(opts.Configs)
	all, dds := inspect.LogManagerPartitions(targets)
	rep := &Report{}
	var parts []*inspect.Partition
	var cfgs []*topicconfig.Config
	for _, p := range all {
		cfg, err := opts.Configs.Topic(p.Topic)
		if err != nil {
			return nil, err
		}
		if !cfg.Compact {
			rep.Skipped++
			continue
		}
		parts, cfgs = append(parts, p), append(cfgs, cfg)
	}
	rep.Partitions = make([]Partition, len(parts))
	err := inspect.EachPartition(len(parts), func(i int) error {
		rep.Partitions[i] = analyzePartition(parts[i], cfgs[i], dds[parts[i].DataDir], opts.Now)
		return nil
	}, opts.Progress)
	return rep, err
}

func analyzePartition(p *inspect.Partition, cfg *topicconfig.Config, dd *sidefile.DataDirFiles, now int64) Partition {
	out := Partition{Partition: p, Config: cfg}
	l, err := producerstate.Load(p, producerstate.LoadOptions{Now: now, ProducerIDExpirationMs: cfg.ProducerIDExpirationMs, DataDir: dd})
	if err != nil {
		out.Err = fmt.Errorf("%s: %w", p.Dir, err)
		return out
	}
	out.Loaded = l
	if p.SingleSegment {
		full, err := inspect.ReadPartition(p.Dir)
		if err != nil {
			out.Err = err
			return out
		}
		p = full
	}
	bs := inspect.BrokerStateFrom(p, dd)
	activeEnd := func(i int) *inspect.SegmentEnd {
		if i == len(p.Segments)-1 {
			return &l.End
		}
		return nil
	}
	in := Input{LogStartOffset: l.LogStartOffset, LogEndOffset: l.LogEndOffset, LastStableOffset: l.LastStableOffset, Config: cfg, Now: now}
	if dd != nil {
		if dd.CleanerOffsets.Present() && !dd.CleanerOffsets.OK() {
			out.Notes = append(out.Notes, fmt.Sprintf("%s does not read (%v): taken as having no entry", dd.CleanerOffsets.Path, dd.CleanerOffsets.Err))
		}
		if c, ok := sidefile.CheckpointedOffset(&dd.CleanerOffsets, p.Topic, p.Partition); ok {
			in.Checkpoint = &c
		}
	}
	for i, sf := range p.Segments {
		s := Segment{BaseOffset: sf.BaseOffset, FirstBatchTimestamp: math.MaxInt64}
		if fi, err := os.Stat(sf.Log); err == nil {
			s.Size = fi.Size()
		}
		if s.LargestTimestamp, _, err = inspect.LargestTimestamp(sf, bs, activeEnd(i)); err != nil {
			out.Err = fmt.Errorf("%s: %w", sf.Log, err)
			return out
		}
		in.Segments = append(in.Segments, s)
	}
	// getFirstBatchTimestamp, for the dirty non-active segments only.
	dirty := firstDirty(in)
	for i := range nonActiveFrom(in.Segments, dirty) {
		ts, err := firstBatchTimestamp(p.Segments[i])
		if err != nil {
			out.Err = err
			return out
		}
		in.Segments[i].FirstBatchTimestamp = ts
	}
	out.Input = in
	out.Compaction = Clean(in)
	if out.UncleanableBecause == BoundLastStableOffset {
		if t, ok := holder(l); ok {
			out.LSOHeldBy = &t
		}
	}
	return out
}

// holder is the transaction at the first unstable offset.
func holder(l *producerstate.Loaded) (producerstate.Txn, bool) {
	var best producerstate.Txn
	found := false
	for _, t := range append(l.State.Ongoing(), l.State.Unreplicated()...) {
		if !found || t.FirstOffset < best.FirstOffset {
			best, found = t, true
		}
	}
	return best, found
}

// firstBatchTimestamp is LogSegment.getFirstBatchTimestamp: the first
// batch's max timestamp, MaxInt64 when it is negative or there is none.
func firstBatchTimestamp(sf inspect.SegmentFiles) (int64, error) {
	f, err := fileio.Open(sf.Log, fileio.Options{})
	if err != nil {
		return 0, err
	}
	defer f.Close()
	it := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
	it.ResetReader(f, f.Name, f.Size(), 0)
	defer it.Close()
	if it.Next() && it.Batch().MaxTimestamp >= 0 {
		return it.Batch().MaxTimestamp, nil
	}
	return math.MaxInt64, nil
}

// firstDirty is cleanableOffsets' first dirty offset: the checkpoint,
// reset to the log start offset when below it or beyond the log end.
func firstDirty(in Input) int64 {
	d, _ := firstDirtyReset(in)
	return d
}

func firstDirtyReset(in Input) (int64, string) {
	if in.Checkpoint == nil {
		return in.LogStartOffset, ""
	}
	switch c := *in.Checkpoint; {
	case c < in.LogStartOffset:
		return in.LogStartOffset, ResetBelowLogStart
	case c > in.LogEndOffset:
		return in.LogStartOffset, ResetBeyondLogEnd
	default:
		return c, ""
	}
}

// values is LogSegments.values(from, to): from the floor segment of from
// (the first segment when none) to the last with base offset < to, as
// indexes into segs.
func values(segs []Segment, from, to int64) map[int]Segment {
	out := map[int]Segment{}
	if from == to {
		return out
	}
	start := 0
	for i, s := range segs {
		if s.BaseOffset <= from {
			start = i
		}
	}
	for i := start; i < len(segs) && segs[i].BaseOffset < to; i++ {
		out[i] = segs[i]
	}
	return out
}

// nonActiveFrom is LogSegments.nonActiveLogSegmentsFrom.
func nonActiveFrom(segs []Segment, from int64) map[int]Segment {
	active := segs[len(segs)-1].BaseOffset
	if from > active {
		return map[int]Segment{}
	}
	return values(segs, from, active)
}

// Clean applies the cleaner's rules to one partition.
func Clean(in Input) Compaction {
	var c Compaction
	segs := in.Segments
	active := segs[len(segs)-1].BaseOffset
	c.FirstDirtyOffset, c.CheckpointReset = firstDirtyReset(in)
	c.CheckpointOffset = in.Checkpoint
	// The bounds (cleanableOffsets): the LSO, the active segment, and the
	// first dirty non-active segment whose largest timestamp is within
	// min.compaction.lag.ms of now (strict >).
	bound, because := in.LastStableOffset, BoundLastStableOffset
	if active <= bound {
		bound, because = active, BoundActiveSegment
	}
	if lag := max(in.Config.MinCompactionLagMs, 0); lag > 0 {
		dirty := nonActiveFrom(segs, c.FirstDirtyOffset)
		for i := range segs {
			s, ok := dirty[i]
			if ok && s.LargestTimestamp > in.Now-lag {
				if s.BaseOffset <= bound {
					bound, because = s.BaseOffset, BoundMinCompactionLag
				}
				break
			}
		}
	}
	c.UncleanableOffset = max(c.FirstDirtyOffset, bound)
	c.UncleanableBecause = because
	// calculateCleanableBytes: the segment holding the uncleanable offset
	// (the active one when it is at or beyond it).
	c.FirstUncleanableOffset = active
	head := nonActiveFrom(segs, c.UncleanableOffset)
	for i := range segs {
		if s, ok := head[i]; ok {
			c.FirstUncleanableOffset = s.BaseOffset
			break
		}
	}
	for _, s := range values(segs, min(c.FirstDirtyOffset, c.FirstUncleanableOffset), c.FirstUncleanableOffset) {
		c.CleanableBytes += s.Size
	}
	// LogToClean.cleanBytes: logSegments(-1, firstDirtyOffset).
	for _, s := range values(segs, -1, c.FirstDirtyOffset) {
		c.CleanBytes += s.Size
	}
	total := c.CleanBytes + c.CleanableBytes
	c.CleanableRatio = float64(c.CleanableBytes) / float64(total)
	if total == 0 {
		c.CleanableRatio = math.NaN()
	}
	// maxCompactionDelay: the earliest first-batch timestamp (> 0) of the
	// dirty non-active segments, against now - max.compaction.lag.ms.
	earliest := int64(math.MaxInt64)
	for _, s := range nonActiveFrom(segs, c.FirstDirtyOffset) {
		if s.FirstBatchTimestamp > 0 && s.FirstBatchTimestamp < earliest {
			earliest = s.FirstBatchTimestamp
		}
	}
	cleanUntil := in.Now - max(in.Config.MaxCompactionLagMs, 0)
	if earliest < cleanUntil {
		c.MaxCompactionDelayMs = cleanUntil - earliest
	}
	// grabFilthiestCompactedLog: not empty, and compaction is due with
	// something cleanable, or the ratio is above min.cleanable.dirty.ratio.
	switch {
	case total == 0:
		c.WhyNot = WhyEmpty
	case c.MaxCompactionDelayMs > 0 && c.CleanableBytes > 0 || c.CleanableRatio > in.Config.MinCleanableRatio:
		c.WouldClean = true
	case c.CleanableBytes == 0:
		c.WhyNot = WhyNothingCleanable
	default:
		c.WhyNot = WhyBelowMinRatio
	}
	if c.WouldClean && !in.Config.CleanerEnable {
		c.WouldClean, c.WhyNot = false, WhyCleanerDisabled
	}
	return c
}

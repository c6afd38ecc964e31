package verify

import (
	"fmt"
	"math"
	"sync"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
)

// LeaderEpochMismatch (warning): leader-epoch-checkpoint contradicts the
// batches: batches at or after the log start offset written in a leader
// epoch other than the checkpoint's entry covering them
// (inspect.EpochMatcher). The broker answers OffsetsForLeaderEpoch from
// the checkpoint, so a follower of this replica truncates where the
// batches say otherwise (keeping records the leader does not have, or
// discarding ones it has).
const LeaderEpochMismatch = "leader-epoch.mismatch"

func init() { severityOf[LeaderEpochMismatch] = SeverityWarning }

// partitionSide is a partition's side files, read once by whichever of
// its jobs needs them first: its segments' checks compare their batches
// with the leader-epoch-checkpoint as they read them (no second pass over
// the log), its side job checks the files. Read-only once made, so jobs
// on other workers share it.
type partitionSide struct {
	once  sync.Once
	p     *inspect.Partition
	dd    *sidefile.DataDirFiles
	side  *inspect.PartitionSideFiles
	epoch *sidefile.LeaderEpochCheckpoint // nil: absent or unreadable
	start int64                           // the log start offset
}

func (s *partitionSide) load() *partitionSide {
	s.once.Do(func() {
		s.side = s.p.SideFiles()
		if f := &s.side.LeaderEpochs; f.OK() && f.Value.LoadErr() == nil { // loaded here: shared read-only after
			s.epoch = f.Value
		}
		s.start, _ = inspect.LogStartOffset(s.p.Segments, s.p.Topic, s.p.Partition, s.dd)
	})
	return s
}

// matcher is a segment job's own comparison of its batches with the
// checkpoint (nil without one).
func (s *partitionSide) matcher() *inspect.EpochMatcher {
	if s == nil {
		return nil
	}
	s.load()
	return inspect.NewEpochMatcher(s.epoch, s.start)
}

// epochMismatch turns a run of batches the checkpoint contradicts into a
// finding about the checkpoint.
func (c *segChecker) epochMismatch(r *inspect.EpochMismatch) {
	if r == nil {
		return
	}
	what := fmt.Sprintf("the checkpoint puts offset %d in epoch %d (its entry from offset %d", r.FirstOffset, r.Entry.Epoch, r.Entry.StartOffset)
	if r.EntryEnd != math.MaxInt64 {
		what += fmt.Sprintf(" up to %d", r.EntryEnd)
	}
	f := Finding{Severity: Severity(LeaderEpochMismatch), Check: LeaderEpochMismatch, File: c.job.epochs.side.LeaderEpochs.Path, Offset: ptr(r.FirstOffset),
		Message: fmt.Sprintf("offsets %d..%d (%d batches, bytes %d..%d of %s) were written in leader epoch %d, but %s: the broker answers OffsetsForLeaderEpoch from the checkpoint, so a follower truncates where the batches say otherwise",
			r.FirstOffset, r.LastOffset, r.Batches, r.FirstPosition, r.EndPosition-1, c.logName, r.BatchEpoch, what+")")}
	c.epochFindings.add(f)
}

// capped keeps the first max findings of one check about one file and
// counts the rest, as sink does, across the jobs of a partition (max < 0:
// no limit).
type capped struct {
	max   int
	list  []Finding
	more  int
	first Finding // the first left out
}

func (c *capped) add(f Finding) {
	if c.max < 0 || len(c.list) < c.max {
		c.list = append(c.list, f)
		return
	}
	if c.more == 0 {
		c.first = f
	}
	c.more++
}

// merge adds o's findings after c's.
func (c *capped) merge(o *capped) {
	for _, f := range o.list {
		c.add(f)
	}
	if o.more > 0 {
		if c.more == 0 {
			c.first = o.first
		}
		c.more += o.more
	}
}

// findings are the kept findings, then one saying how many more there
// were.
func (c *capped) findings() []Finding {
	out := c.list
	if c.more > 0 {
		f := c.first
		f.Message = overflowMessage(c.more, f.Check, c.max, f.Message)
		out = append(out, f)
	}
	return out
}

package inspect

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/kseg/kseg/inspect/sidefile"
)

// RecoveryStart is where a broker's next start begins recovering a
// partition (LogLoader.recoverLog).
type RecoveryStart struct {
	Point  int64  // the recovery point: the checkpoint's entry, else 0
	Source string // "checkpoint", "absent" or "unreadable"
	// Clean: the data directory holds .kafka_cleanshutdown, so the next
	// start recovers nothing from the recovery point on.
	Clean bool
	// First is the index, in the segments given, of the first segment
	// recovered after an unclean shutdown, and FromBase its base offset.
	First    int
	FromBase int64
}

// StartOfRecovery reads the partition's recovery point from the data
// directory's files (dd may be nil) as LogManager.loadLogs does (an
// unreadable file counts as empty: the point is 0), and finds the first
// segment recovery reads: segments.values(recoveryPoint, +inf) starts at
// the floor segment of the recovery point, the first segment when the
// point is below its base offset (LogLoader.recoverLog).
func StartOfRecovery(segs []SegmentFiles, topic string, partition int32, dd *sidefile.DataDirFiles) RecoveryStart {
	r := RecoveryStart{Source: "absent"}
	if dd != nil {
		r.Clean = dd.CleanShutdown.Present()
		switch {
		case dd.RecoveryPoints.Present() && !dd.RecoveryPoints.OK():
			r.Source = "unreadable"
		case topic != "":
			if rp, ok := sidefile.CheckpointedOffset(&dd.RecoveryPoints, topic, partition); ok {
				r.Point, r.Source = rp, "checkpoint"
			}
		}
	}
	for i, sf := range segs {
		if sf.BaseOffset <= r.Point {
			r.First = i
		}
	}
	if len(segs) > 0 {
		r.FromBase = segs[r.First].BaseOffset
	}
	return r
}

// Recovers reports whether the broker's next start rebuilds the indexes
// of segment i (of the segments StartOfRecovery was given) from its log:
// unless the data directory says the shutdown was clean, every segment
// from the first one on.
func (r RecoveryStart) Recovers(i int) bool { return !r.Clean && i >= r.First }

// KeptBecause says why the next start does not recover a segment (the
// Recovers test failed).
func (r RecoveryStart) KeptBecause() string {
	if r.Clean {
		return "the data directory holds .kafka_cleanshutdown"
	}
	return fmt.Sprintf("it is below the recovery point %d", r.Point)
}

// BrokerState is what a broker knows about a partition from the files
// beside its segments that changes a lookup's answer or the way it is
// searched: the recovery point (which segments its next start recovers)
// and the log start offset.
type BrokerState struct {
	Recovery RecoveryStart
	// LogStart is the log start offset as the broker sets it at load:
	// max(log-start-offset-checkpoint entry, first segment's base offset)
	// (LogLoader, UnifiedLog.logStartOffset). LogStartSource says where it
	// came from.
	LogStart       int64
	LogStartSource string
	// all are the partition's segments (the whole directory's, also when
	// a lookup was given one segment file).
	all []SegmentFiles
}

// Log start offset sources.
const (
	LogStartFromCheckpoint   = "log-start-offset-checkpoint"
	LogStartFromFirstSegment = "first segment's base offset"
)

// ReadBrokerState reads the data directory's recovery point and log start
// offset checkpoints and clean shutdown marker for p. Without a data
// directory (p.DataDir empty) the recovery point counts as absent (every
// segment recovered) and the log start offset is the first segment's base
// offset.
func (p *Partition) ReadBrokerState() (*BrokerState, error) {
	all := p.Segments
	if p.snapshotFile() {
		// A metadata snapshot is no segment of the log: no checkpoint
		// speaks of it, and nothing recovers it.
		return &BrokerState{all: all, LogStartSource: LogStartFromFirstSegment, Recovery: StartOfRecovery(all, "", -1, nil)}, nil
	}
	if p.SingleSegment {
		full, err := ReadPartition(p.Dir)
		if err != nil {
			return nil, err
		}
		all = full.Segments
	}
	var dd *sidefile.DataDirFiles
	if p.DataDir != "" {
		j := func(name string) string { return filepath.Join(p.DataDir, name) }
		dd = &sidefile.DataDirFiles{
			Dir:            p.DataDir,
			RecoveryPoints: sidefile.ReadOffsetCheckpoint(j(sidefile.RecoveryPointCheckpointFile)),
			LogStarts:      sidefile.ReadOffsetCheckpoint(j(sidefile.LogStartOffsetCheckpointFile)),
			CleanShutdown:  sidefile.ReadCleanShutdown(j(sidefile.CleanShutdownFile)),
		}
	}
	return brokerStateOf(p, all, dd), nil
}

// BrokerStateFrom is ReadBrokerState over data directory files already
// read (dd may be nil), for commands that go through many partitions of
// one data directory. p must not be a single segment (Only).
func BrokerStateFrom(p *Partition, dd *sidefile.DataDirFiles) *BrokerState {
	return brokerStateOf(p, p.Segments, dd)
}

func brokerStateOf(p *Partition, all []SegmentFiles, dd *sidefile.DataDirFiles) *BrokerState {
	st := &BrokerState{all: all}
	st.Recovery = StartOfRecovery(all, p.Topic, p.Partition, dd)
	st.LogStart, st.LogStartSource = LogStartOffset(all, p.Topic, p.Partition, dd)
	return st
}

// LogStartOffset is the log start offset a broker sets at load for the
// partition topic-partition of segments segs (BrokerState.LogStart) from
// the data directory's files dd (nil: none), and where it came from.
func LogStartOffset(segs []SegmentFiles, topic string, partition int32, dd *sidefile.DataDirFiles) (int64, string) {
	start, source := int64(0), LogStartFromFirstSegment
	if len(segs) > 0 {
		start = segs[0].BaseOffset
	}
	if dd != nil && topic != "" {
		if ls, ok := sidefile.CheckpointedOffset(&dd.LogStarts, topic, partition); ok && ls > start {
			start, source = ls, LogStartFromCheckpoint
		}
	}
	return start, source
}

// High watermark sources.
const (
	HighWatermarkFromCheckpoint = "replication-offset-checkpoint"
	HighWatermarkAbsent         = "absent"     // no entry: the log start offset
	HighWatermarkUnreadable     = "unreadable" // the file did not parse: taken as absent
)

// HighWatermark is the high watermark a restarting broker gives a
// partition: its replication-offset-checkpoint entry (0 without one:
// Partition.createLog), clamped to [logStart, logEnd] as
// UnifiedLog.updateHighWatermark does. dd may be nil.
func HighWatermark(dd *sidefile.DataDirFiles, topic string, partition int32, logStart, logEnd int64) (hw int64, source string) {
	source = HighWatermarkAbsent
	if dd != nil {
		switch {
		case dd.HighWatermarks.Present() && !dd.HighWatermarks.OK():
			source = HighWatermarkUnreadable
		case topic != "":
			if v, ok := sidefile.CheckpointedOffset(&dd.HighWatermarks, topic, partition); ok {
				hw, source = v, HighWatermarkFromCheckpoint
			}
		}
	}
	switch {
	case hw < logStart:
		hw = logStart
	case hw >= logEnd:
		hw = logEnd
	}
	return hw, source
}

// kept says why the broker's next start would not recover the segment
// with the given base offset, "" when it would.
func (st *BrokerState) kept(base int64) string {
	if st == nil {
		return ""
	}
	if !st.Recovery.Clean && base >= st.Recovery.FromBase {
		return ""
	}
	return st.Recovery.KeptBecause()
}

// logStartOrFirst is the log start offset, the first segment's base offset
// without a state.
func (st *BrokerState) logStartOrFirst(segs []SegmentFiles) (int64, string) {
	if st != nil {
		return st.LogStart, st.LogStartSource
	}
	if len(segs) == 0 {
		return math.MinInt64, LogStartFromFirstSegment
	}
	return segs[0].BaseOffset, LogStartFromFirstSegment
}

// LogEndOffset is the partition's log end offset at load: its last
// segment's next offset (LogSegment.readNextOffset; LogLoader.recoverLog).
func (p *Partition) LogEndOffset() (int64, error) {
	end, err := p.LogEnd()
	return end.Next, err
}

// LogEnd is what readNextOffset's scan of the last segment finds (from
// its offset index's last entry to the end of the log): the log end
// offset, and the largest timestamp of the batches it read.
func (p *Partition) LogEnd() (SegmentEnd, error) {
	if len(p.Segments) == 0 {
		return SegmentEnd{}, fmt.Errorf("%s: no segments", p.Dir)
	}
	seg, err := OpenSegment(p.Segments[len(p.Segments)-1], SegmentOptions{})
	if err != nil {
		return SegmentEnd{}, err
	}
	defer seg.Close()
	end, _, err := ReadNextOffset(seg.batches(seg.Log, 0), seg.Log, seg.LogName, seg.LogSize, seg.BaseOffset, seg.Index)
	return end, err
}

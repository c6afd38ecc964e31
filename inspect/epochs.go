package inspect

import (
	"math"

	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// A leader-epoch-checkpoint against the batches it describes. The broker
// loads the checkpoint as it is (LeaderEpochFileCache) and answers
// OffsetsForLeaderEpoch from it, while each v2 batch carries the epoch it
// was written in. On a healthy replica every batch at or after the log
// start offset lies in the checkpoint's entry of its own epoch: a leader
// assigns (its epoch, its log end offset) when elected and stamps its
// batches with that epoch (UnifiedLog.maybeAssignEpochStartOffset,
// appendAsLeader), a follower assigns each batch's epoch at the batch's
// base offset (appendAsFollower), and truncation from the start or the
// end moves the entries with the log (truncateFromStart, truncateFromEnd).
// Batches written in an epoch newer than the checkpoint's latest are the
// checkpoint lagging the log (a crash before its write, which recovery
// re-adds from the batches): not a contradiction (verify reports the last
// batch's as leader-epoch.range). Nor are batches below the checkpoint's
// first entry: the cache was truncated from the start at a log start
// offset this replica's files may not show (a KRaft metadata log's
// earliest snapshot, KafkaMetadataLog; tiered storage's local log start),
// and the batches there are still on disk.

// EpochMismatch is a run of consecutive batches that the checkpoint
// contradicts the same way: written in BatchEpoch, while the checkpoint's
// entry covering FirstOffset is Entry, whose epoch lasts up to EntryEnd
// (exclusive: the next entry's start, math.MaxInt64 after the latest).
type EpochMismatch struct {
	BatchEpoch                 int32
	Entry                      sidefile.EpochEntry
	EntryEnd                   int64
	FirstOffset, LastOffset    int64 // the batches' (FirstOffset at or above the log start offset)
	FirstPosition, EndPosition int64 // their bytes in the .log
	Batches                    int
}

// EpochMatcher compares batches, in log order, with a checkpoint and
// hands out the runs of batches that contradict it. The checkpoint is
// searched once per entry the batches pass, not per batch.
type EpochMatcher struct {
	cp       *sidefile.LeaderEpochCheckpoint
	logStart int64
	latest   int32
	// The entry found last and the offsets it covers, [lo, end).
	entry   sidefile.EpochEntry
	lo, end int64
	has     bool
	run     EpochMismatch
	inRun   bool
}

// NewEpochMatcher returns a matcher of cp for a partition whose log start
// offset is logStart (batches ending below it are not compared: the
// broker's cache was truncated there), or nil when cp does not load or
// holds no entry (nothing to contradict).
func NewEpochMatcher(cp *sidefile.LeaderEpochCheckpoint, logStart int64) *EpochMatcher {
	if cp == nil {
		return nil
	}
	latest, ok := cp.Latest()
	if !ok {
		return nil
	}
	return &EpochMatcher{cp: cp, logStart: logStart, latest: latest.Epoch, lo: 0, end: -1}
}

// Batch compares the next batch (a nil matcher compares nothing). It
// returns the run of contradicting batches that ended before b, if one
// did.
func (m *EpochMatcher) Batch(b *record.Batch) *EpochMismatch {
	if m == nil {
		return nil
	}
	epoch := b.PartitionLeaderEpoch
	if b.Magic < 2 || epoch < 0 || b.LastOffset < m.logStart || epoch > m.latest {
		return m.Flush()
	}
	off := max(b.BaseOffset, m.logStart)
	if off < m.lo || off >= m.end {
		m.entry, m.end, m.has = m.cp.EpochRange(off)
		m.lo = math.MinInt64
		if m.has {
			m.lo = m.entry.StartOffset
		}
	}
	if !m.has || m.entry.Epoch == epoch {
		return m.Flush()
	}
	if m.inRun && m.run.BatchEpoch == epoch && m.run.Entry == m.entry {
		m.run.LastOffset, m.run.EndPosition = b.LastOffset, b.End()
		m.run.Batches++
		return nil
	}
	done := m.Flush()
	m.run = EpochMismatch{BatchEpoch: epoch, Entry: m.entry, EntryEnd: m.end, FirstOffset: off, LastOffset: b.LastOffset,
		FirstPosition: b.Position, EndPosition: b.End(), Batches: 1}
	m.inRun = true
	return done
}

// Flush returns the run in progress, if any, and ends it (at the end of a
// segment: runs are of one segment's batches).
func (m *EpochMatcher) Flush() *EpochMismatch {
	if m == nil || !m.inRun {
		return nil
	}
	m.inRun = false
	r := m.run
	return &r
}

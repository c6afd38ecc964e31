package listing

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
)

// PartitionLine is a partition's segments summed up, as ls lists it. The
// pointers are nil when there is no such value: no batch (LastOffset,
// timestamps), counts not read (Batches, Records), no checkpoint entry
// or leader epoch.
type PartitionLine struct {
	Segments                      int
	BaseOffset, NextOffset        int64
	LastOffset                    *int64
	FirstTimestamp, LastTimestamp *int64
	Batches, Records              *int64
	LogBytes                      int64
	IndexEntries                  int64
	TimeIndexEntries              int64
	Status                        inspect.StatusSet
	// From the data directory's checkpoints.
	LogStartOffset, RecoveryPoint, HighWatermark *int64
	LeaderEpoch                                  *int32
	ProducerSnapshots                            int
	MetadataSnapshots                            int
}

// side is what a partition line shows of the partition's side files: the
// latest leader epoch and the number of producer snapshots. Only the
// leader-epoch checkpoint is read; the snapshots are those discovery
// listed (Partition.Snapshots), so a listing of thousands of partitions
// reads each directory once and no file it does not show.
type side struct {
	leaderEpochs sidefile.SideFile[sidefile.LeaderEpochCheckpoint]
	snapshots    int
}

func readSide(p *inspect.Partition) *side {
	return &side{
		leaderEpochs: p.LeaderEpochCheckpoint(),
		snapshots:    len(p.Snapshots),
	}
}

func ptr[T any](v T) *T { return &v }

// orNil is &v, or nil when v is -1 (Kafka's "none").
func orNil(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// Sum sums p's segment summaries up, as ls's partition line does,
// without the side files (no checkpointed offsets, leader epoch or
// producer snapshots): kseg report's partition rows.
func Sum(p *inspect.Partition, sums []inspect.SegmentSummary) *PartitionLine {
	return line(p, sums, nil, nil)
}

// line sums p's segment summaries up, with the checkpointed offsets of dd
// (nil: none read) and, when p's side files were read, its latest leader
// epoch and producer snapshots.
func line(p *inspect.Partition, sums []inspect.SegmentSummary, dd *sidefile.DataDirFiles, sd *side) *PartitionLine {
	out := &PartitionLine{Segments: len(sums), Batches: ptr(int64(0)), Records: ptr(int64(0))}
	for i := range sums {
		s := &sums[i]
		if i == 0 {
			out.BaseOffset, out.NextOffset = s.Files.BaseOffset, s.NextOffset
		}
		out.NextOffset = max(out.NextOffset, s.NextOffset)
		if s.LastOffset >= 0 {
			out.LastOffset, out.LastTimestamp = ptr(s.LastOffset), orNil(s.LastTimestamp)
		}
		if out.FirstTimestamp == nil && s.FirstTimestamp >= 0 {
			out.FirstTimestamp = ptr(s.FirstTimestamp)
		}
		if s.Counted && out.Batches != nil {
			*out.Batches += s.Batches
			*out.Records += s.Records
		} else {
			out.Batches, out.Records = nil, nil
		}
		out.LogBytes += s.LogBytes
		out.IndexEntries += int64(s.Index.Entries)
		out.TimeIndexEntries += int64(s.TimeIndex.Entries)
	}
	out.Status = inspect.PartitionStatus(p, sums)
	if dd != nil && p.Topic != "" {
		if v, ok := sidefile.CheckpointedOffset(&dd.LogStarts, p.Topic, p.Partition); ok {
			out.LogStartOffset = ptr(v)
		}
		if v, ok := sidefile.CheckpointedOffset(&dd.RecoveryPoints, p.Topic, p.Partition); ok {
			out.RecoveryPoint = ptr(v)
		}
		if v, ok := sidefile.CheckpointedOffset(&dd.HighWatermarks, p.Topic, p.Partition); ok {
			out.HighWatermark = ptr(v)
		}
	}
	if sd != nil {
		if sd.leaderEpochs.OK() {
			if e, ok := sd.leaderEpochs.Value.Latest(); ok {
				out.LeaderEpoch = ptr(e.Epoch)
			}
		}
		out.ProducerSnapshots = sd.snapshots
	}
	out.MetadataSnapshots = len(p.MetadataSnapshots)
	return out
}

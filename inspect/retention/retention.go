// Package retention answers "why does the disk fill though retention is
// set?" offline: what the broker's next retention pass
// (UnifiedLog.deleteOldSegments) deletes of each partition, segment by
// segment, and why it keeps the others. It reads only the indexes'
// last entries, the logs' sizes and the checkpoints.
package retention

import (
	"fmt"
	"math"
	"os"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

// Deletion rules (deleted_by), in the order the pass applies them.
const (
	ByLogStartOffset = "log_start_offset"
	ByRetentionBytes = "retention_bytes"
	ByRetentionMs    = "retention_ms"
)

// Reasons a segment is kept (kept_because).
const (
	WithinRetentionMs    = "within_retention_ms"
	FutureTimestamp      = "future_timestamp"
	WithinRetentionBytes = "within_retention_bytes"
	BeyondHighWatermark  = "beyond_high_watermark"
	EmptyLastSegment     = "empty_last_segment"
	NotReached           = "not_reached"
	CompactOnly          = "compact_only"
	RemoteStorage        = "remote_storage"
)

// Largest timestamp sources.
const (
	SourceTimeIndex = "timeindex" // maxTimestampSoFar: the time index (or, where the broker rebuilds it, the batches)
	SourceModTime   = "mtime"     // no timestamp: the .log's modification time
)

// ConfigKeys are the configuration keys retention reads.
var ConfigKeys = []string{topicconfig.CleanupPolicy, topicconfig.RetentionMs, topicconfig.RetentionBytes, topicconfig.RemoteStorageEnable}

// Options say how to analyse.
type Options struct {
	Now      int64
	Configs  *topicconfig.Resolver // nil: Kafka's defaults
	Progress func(done, total int64)
}

// Segment is one segment's fate in the next pass.
type Segment struct {
	Files                  inspect.SegmentFiles
	Size                   int64
	LargestTimestamp       int64
	LargestTimestampSource string
	// DeletedBy is the rule that deletes it ("" when kept), KeptBecause
	// why it stays ("" when deleted).
	DeletedBy   string
	KeptBecause string
	// EligibleAt is when the time rule first allows its deletion: largest
	// timestamp + retention.ms + 1 (nil: the topic does not delete by time,
	// or the sum overflows).
	EligibleAt *int64
}

// Blocked names the kept segment that holds back older data.
type Blocked struct {
	Segment          string
	Reason           string
	LargestTimestamp int64
	EligibleAt       *int64
	// Waiting counts the later segments older than retention.ms on their
	// own, and WaitingBytes their size.
	Waiting      int
	WaitingBytes int64
}

// Partition is one partition's answer.
type Partition struct {
	Partition      *inspect.Partition
	Config         *topicconfig.Config
	LogStartOffset int64
	LogEndOffset   int64
	HighWatermark  int64
	// HighWatermarkSource is where the high watermark came from
	// (inspect.HighWatermarkFromCheckpoint, ...Absent, ...Unreadable).
	HighWatermarkSource string
	Segments            []Segment
	Deletable           int
	BytesFreed          int64
	BlockedBy           *Blocked
	// Notes say what the answer assumed.
	Notes []string
	Err   error
}

// Report is the answer for all partitions.
type Report struct {
	Partitions []Partition
}

// Analyze runs the next retention pass over every partition of targets
// (inspect.LogManagerPartitions: the KRaft metadata log is the Raft
// layer's to trim).
func Analyze(targets []*inspect.Target, opts Options) (*Report, error) {
	opts.Configs = topicconfig.OrDefaults(opts.Configs)
	parts, dds := inspect.LogManagerPartitions(targets)
	rep := &Report{Partitions: make([]Partition, len(parts))}
	err := inspect.EachPartition(len(parts), func(i int) error {
		cfg, err := opts.Configs.Topic(parts[i].Topic)
		if err == nil {
			rep.Partitions[i] = analyzePartition(parts[i], cfg, dds[parts[i].DataDir], opts.Now)
		}
		return err
	}, opts.Progress)
	return rep, err
}

func analyzePartition(p *inspect.Partition, cfg *topicconfig.Config, dd *sidefile.DataDirFiles, now int64) Partition {
	out := Partition{Partition: p, Config: cfg}
	if p.SingleSegment {
		full, err := inspect.ReadPartition(p.Dir)
		if err != nil {
			out.Err = err
			return out
		}
		full.DataDir = p.DataDir
		p = full
	}
	bs := inspect.BrokerStateFrom(p, dd)
	end, err := p.LogEnd()
	if err != nil {
		out.Err = fmt.Errorf("%s: %w", p.Dir, err)
		return out
	}
	leo := end.Next
	activeEnd := func(i int) *inspect.SegmentEnd {
		if i == len(p.Segments)-1 {
			return &end
		}
		return nil
	}
	out.LogStartOffset, out.LogEndOffset = bs.LogStart, leo
	out.HighWatermark, out.HighWatermarkSource = inspect.HighWatermark(dd, p.Topic, p.Partition, bs.LogStart, leo)
	segs := make([]Segment, len(p.Segments))
	for i, sf := range p.Segments {
		s := Segment{Files: sf, LargestTimestampSource: SourceTimeIndex}
		if fi, err := os.Stat(sf.Log); err == nil {
			s.Size = fi.Size()
		}
		ts, mtime, err := inspect.LargestTimestamp(sf, bs, activeEnd(i))
		if err != nil {
			out.Err = fmt.Errorf("%s: %w", sf.Log, err)
			return out
		}
		s.LargestTimestamp = ts
		if mtime {
			s.LargestTimestampSource = SourceModTime
		}
		segs[i] = s
	}
	out.Segments = segs
	Pass(&out, now)
	return out
}

// Pass runs UnifiedLog.deleteOldSegments over out.Segments (sizes and
// largest timestamps set) with out's offsets and configuration, and fills
// in each segment's fate and the partition's totals. Each rule walks from
// the oldest segment left and stops at the first it keeps
// (deletableSegments): a segment whose upper bound (the next segment's
// base offset, or the log end offset) is above the high watermark, or an
// empty last segment, is never deleted.
func Pass(out *Partition, now int64) {
	cfg, segs := out.Config, out.Segments
	for i := range segs {
		segs[i].DeletedBy, segs[i].KeptBecause, segs[i].EligibleAt = "", NotReached, nil
		if cfg.Delete && cfg.RetentionMs >= 0 && segs[i].LargestTimestamp <= math.MaxInt64-cfg.RetentionMs-1 {
			at := segs[i].LargestTimestamp + cfg.RetentionMs + 1
			segs[i].EligibleAt = &at
		}
	}
	if len(segs) == 0 {
		return
	}
	if cfg.RemoteStorage {
		// Local retention of a tiered topic waits for the remote copy
		// (isSegmentEligibleForDeletion, highestOffsetInRemoteStorage),
		// which no file here records.
		segs[0].KeptBecause = RemoteStorage
		out.Notes = append(out.Notes, "tiered topic (remote.storage.enable): local segments are deleted once copied to remote storage, which the data directory does not record; nothing is predicted")
		return
	}
	first := 0 // the oldest segment left
	var reason string
	// run is deleteOldSegments(predicate): it deletes from first while
	// the high watermark, the rule and the empty-last-segment test allow.
	run := func(rule string, keep func(s *Segment) string) {
		for first < len(segs) {
			s := &segs[first]
			last := first == len(segs)-1
			upper := out.LogEndOffset
			if !last {
				upper = segs[first+1].Files.BaseOffset
			}
			// highWatermark >= upperBoundOffset && predicate(...): the
			// rule is asked only below the high watermark.
			if out.HighWatermark < upper {
				reason = BeyondHighWatermark
				return
			}
			if r := keep(s); r != "" {
				reason = r
				return
			}
			if last && s.Size == 0 {
				reason = EmptyLastSegment
				return
			}
			s.DeletedBy, s.KeptBecause = rule, ""
			first++
		}
	}
	// deleteLogStartOffsetBreachedSegments: the next segment starts at or
	// below the log start offset.
	run(ByLogStartOffset, func(s *Segment) string {
		i := first
		if i+1 < len(segs) && segs[i+1].Files.BaseOffset <= out.LogStartOffset {
			return ""
		}
		switch {
		case !cfg.Delete:
			return CompactOnly
		case cfg.RetentionBytes >= 0:
			return WithinRetentionBytes
		}
		return WithinRetentionMs
	})
	if cfg.Delete {
		// deleteRetentionSizeBreachedSegments: from the oldest, while the
		// log stays at or above retention.bytes without the segment.
		var size int64
		for _, s := range segs[first:] {
			size += s.Size
		}
		if cfg.RetentionBytes >= 0 && size >= cfg.RetentionBytes {
			diff := size - cfg.RetentionBytes
			run(ByRetentionBytes, func(s *Segment) string {
				if diff-s.Size >= 0 {
					diff -= s.Size
					return ""
				}
				return WithinRetentionBytes
			})
		}
		// deleteRetentionMsBreachedSegments: now - largestTimestamp >
		// retention.ms.
		if cfg.RetentionMs >= 0 {
			run(ByRetentionMs, func(s *Segment) string {
				if now-s.LargestTimestamp > cfg.RetentionMs {
					return ""
				}
				if s.LargestTimestamp > now {
					return FutureTimestamp
				}
				return WithinRetentionMs
			})
		}
	}
	for i := range segs {
		if segs[i].DeletedBy != "" {
			out.Deletable++
			out.BytesFreed += segs[i].Size
		}
	}
	if first >= len(segs) {
		return
	}
	segs[first].KeptBecause = reason
	if !cfg.Delete || cfg.RetentionMs < 0 {
		return
	}
	var b *Blocked
	for _, s := range segs[first+1:] {
		if now-s.LargestTimestamp > cfg.RetentionMs {
			if b == nil {
				k := segs[first]
				b = &Blocked{Segment: k.Files.Name(), Reason: reason, LargestTimestamp: k.LargestTimestamp, EligibleAt: k.EligibleAt}
			}
			b.Waiting++
			b.WaitingBytes += s.Size
		}
	}
	out.BlockedBy = b
}

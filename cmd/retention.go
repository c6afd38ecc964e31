package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/retention"
	"github.com/kseg/kseg/inspect/topicconfig"
)

func newRetentionCommand(ios *IOStreams) *cobra.Command {
	return newAnalysisCommand(ios, &cobra.Command{
		Use:   "retention PATH...",
		Short: "What the broker's next retention pass deletes, segment by segment, and why the rest stays",
		Long: `Run the broker's next retention pass (UnifiedLog.deleteOldSegments) over every
partition under each PATH, offline, and say for each segment whether it is
deleted and by which rule, or why it stays. The rules run in the broker's
order, each walking from the oldest segment left and stopping at the first
it keeps: the log start offset (a segment whose next segment starts at or
below it), then retention.bytes (while the log without the segment stays at
or above it), then retention.ms (now - the segment's largest timestamp >
retention.ms); a compact-only topic deletes by the log start offset alone.
A segment whose upper bound (the next segment's base offset, or the log end
offset) is above the high watermark, or a last segment that is empty, is
never deleted; the active segment can be (the broker rolls a new one first).

A segment's largest timestamp is its time index's last entry (for a segment
the broker's next start recovers, or whose time index is missing or
zero-padded, the max timestamp of its batches, as recovery computes it),
else the .log's modification time (LogSegment.largestTimestamp). The high
watermark and log start offset are those txns takes: the
replication-offset-checkpoint entry clamped to [log start, log end], and
max(log-start-offset-checkpoint, first base offset).

kept_because: within_retention_ms, future_timestamp (the largest timestamp
is after now: nothing behind it ages out by time until then),
within_retention_bytes, beyond_high_watermark, empty_last_segment,
not_reached (an older segment was kept first), compact_only, remote_storage
(tiered topics: kseg cannot see what was copied, and predicts nothing). The
first kept segment's reason is why the last rule that ran stopped there.
blocked_by names it when a later segment is older than retention.ms on its
own. eligible_at is largest timestamp + retention.ms + 1.

Configuration, the later winning: Kafka's defaults, --server-properties FILE
(log.retention.ms|minutes|hours, log.retention.bytes, log.cleanup.policy),
the metadata image, --config KEY=VALUE. "Now" is --at, else the wall clock.

Fields (-o json): kind ("segment") partition_dir segment base_offset size
largest_timestamp largest_timestamp_source (timeindex|mtime) deleted_by
kept_because eligible_at; kind ("partition") partition_dir segments
deletable bytes_freed blocked_by (null, or segment reason largest_timestamp
eligible_at segments_waiting bytes_waiting) log_start_offset log_end_offset
high_watermark config config_source.

Exit 0, or 2 when a PATH or a partition could not be read or a setting is
invalid.`,
		Example: `  kseg retention /var/lib/kafka/data
  kseg retention --server-properties /etc/kafka/server.properties -o json data | jq -c 'select(.kind=="partition" and .blocked_by != null)'
  kseg retention --at 2024-05-01 --config retention.ms=86400000 data/orders-3`,
	}, runRetention)
}

// retentionSegmentJSON is the contract's segment line.
type retentionSegmentJSON struct {
	Kind                   string  `json:"kind"`
	PartitionDir           string  `json:"partition_dir"`
	Segment                string  `json:"segment"`
	BaseOffset             int64   `json:"base_offset"`
	Size                   int64   `json:"size"`
	LargestTimestamp       int64   `json:"largest_timestamp"`
	LargestTimestampSource string  `json:"largest_timestamp_source"`
	DeletedBy              *string `json:"deleted_by"`
	KeptBecause            *string `json:"kept_because"`
	EligibleAt             *int64  `json:"eligible_at"`
}

type blockedJSON struct {
	Segment          string `json:"segment"`
	Reason           string `json:"reason"`
	LargestTimestamp int64  `json:"largest_timestamp"`
	EligibleAt       *int64 `json:"eligible_at"`
	SegmentsWaiting  int    `json:"segments_waiting"`
	BytesWaiting     int64  `json:"bytes_waiting"`
}

// retentionPartitionJSON is the contract's partition line of retention.
type retentionPartitionJSON struct {
	Kind           string            `json:"kind"`
	PartitionDir   string            `json:"partition_dir"`
	Segments       int               `json:"segments"`
	Deletable      int               `json:"deletable"`
	BytesFreed     int64             `json:"bytes_freed"`
	BlockedBy      *blockedJSON      `json:"blocked_by"`
	LogStartOffset int64             `json:"log_start_offset"`
	LogEndOffset   int64             `json:"log_end_offset"`
	HighWatermark  int64             `json:"high_watermark"`
	Config         map[string]string `json:"config"`
	ConfigSource   map[string]string `json:"config_source"`
}

type retentionLine struct {
	seg  *retentionSegmentJSON
	part *retentionPartitionJSON
}

func (l retentionLine) MarshalJSON() ([]byte, error) { return marshalEither(l.seg, l.part) }

var (
	segCell     = partCell(func(l retentionLine) *retentionSegmentJSON { return l.seg })
	retPartCell = partCell(func(l retentionLine) *retentionPartitionJSON { return l.part })
)

func strText(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var retentionColumns = []column[retentionLine]{
	textColumn("kind", func(l retentionLine) string {
		return map[bool]string{true: "segment", false: "partition"}[l.seg != nil]
	}),
	withFit(textColumn("partition_dir", func(l retentionLine) string {
		if l.seg != nil {
			return l.seg.PartitionDir
		}
		return l.part.PartitionDir
	}), fitElide),
	textColumn("segment", segCell(func(s *retentionSegmentJSON) string { return s.Segment })),
	wideOnly(column[retentionLine]{name: "base_offset", right: true, cell: segCell(func(s *retentionSegmentJSON) string { return fmt.Sprint(s.BaseOffset) })}),
	{name: "size", right: true, cell: segCell(func(s *retentionSegmentJSON) string { return fmt.Sprint(s.Size) }),
		display: func(l retentionLine, _ *IOStreams) string {
			if l.seg == nil {
				return ""
			}
			return humanSize(l.seg.Size)
		}},
	{name: "largest_timestamp", right: true, cell: segCell(func(s *retentionSegmentJSON) string { return fmt.Sprint(s.LargestTimestamp) }),
		display: func(l retentionLine, ios *IOStreams) string {
			if l.seg == nil {
				return ""
			}
			return ios.timeText(l.seg.LargestTimestamp)
		}},
	wideOnly(textColumn("largest_timestamp_source", segCell(func(s *retentionSegmentJSON) string { return s.LargestTimestampSource }))),
	textColumn("deleted_by", segCell(func(s *retentionSegmentJSON) string { return strText(s.DeletedBy) })),
	textColumn("kept_because", segCell(func(s *retentionSegmentJSON) string { return strText(s.KeptBecause) })),
	{name: "eligible_at", right: true, cell: segCell(func(s *retentionSegmentJSON) string { return intText(s.EligibleAt) }),
		display: func(l retentionLine, ios *IOStreams) string {
			if l.seg == nil || l.seg.EligibleAt == nil {
				return ""
			}
			return ios.timeText(*l.seg.EligibleAt)
		}},
	wideOnly(column[retentionLine]{name: "segments", right: true, cell: retPartCell(func(p *retentionPartitionJSON) string { return fmt.Sprint(p.Segments) })}),
	{name: "deletable", right: true, cell: retPartCell(func(p *retentionPartitionJSON) string { return fmt.Sprint(p.Deletable) })},
	{name: "bytes_freed", right: true, cell: retPartCell(func(p *retentionPartitionJSON) string { return fmt.Sprint(p.BytesFreed) }),
		display: func(l retentionLine, _ *IOStreams) string {
			if l.part == nil {
				return ""
			}
			return humanSize(l.part.BytesFreed)
		}},
	tableOnly(omitIfEmpty(textColumn("blocked_by", retPartCell(func(p *retentionPartitionJSON) string {
		if p.BlockedBy == nil {
			return ""
		}
		return fmt.Sprintf("%s, %d waiting", p.BlockedBy.Reason, p.BlockedBy.SegmentsWaiting)
	})))),
	wideOnly(textColumn("blocked_by", retPartCell(func(p *retentionPartitionJSON) string {
		if p.BlockedBy == nil {
			return ""
		}
		b := p.BlockedBy
		return fmt.Sprintf("%s:%s:%d:%s:%d:%d", b.Segment, b.Reason, b.LargestTimestamp, intText(b.EligibleAt), b.SegmentsWaiting, b.BytesWaiting)
	}))),
	wideOnly(column[retentionLine]{name: "log_start_offset", right: true, cell: retPartCell(func(p *retentionPartitionJSON) string { return fmt.Sprint(p.LogStartOffset) })}),
	wideOnly(column[retentionLine]{name: "log_end_offset", right: true, cell: retPartCell(func(p *retentionPartitionJSON) string { return fmt.Sprint(p.LogEndOffset) })}),
	wideOnly(column[retentionLine]{name: "high_watermark", right: true, cell: retPartCell(func(p *retentionPartitionJSON) string { return fmt.Sprint(p.HighWatermark) })}),
	wideOnly(textColumn("config", retPartCell(func(p *retentionPartitionJSON) string { return configSourceText(p.Config, retention.ConfigKeys) }))),
	wideOnly(textColumn("config_source", retPartCell(func(p *retentionPartitionJSON) string { return configSourceText(p.ConfigSource, retention.ConfigKeys) }))),
}

func retentionLines(rep *retention.Report) []retentionLine {
	var out []retentionLine
	for _, pt := range rep.Partitions {
		if pt.Err != nil {
			continue
		}
		dir := pt.Partition.Name()
		for _, s := range pt.Segments {
			j := &retentionSegmentJSON{Kind: "segment", PartitionDir: dir, Segment: s.Files.Name(), BaseOffset: s.Files.BaseOffset, Size: s.Size,
				LargestTimestamp: s.LargestTimestamp, LargestTimestampSource: s.LargestTimestampSource, EligibleAt: s.EligibleAt}
			if s.DeletedBy != "" {
				j.DeletedBy = ptr(s.DeletedBy)
			} else {
				j.KeptBecause = ptr(s.KeptBecause)
			}
			out = append(out, retentionLine{seg: j})
		}
		p := &retentionPartitionJSON{Kind: "partition", PartitionDir: dir, Segments: len(pt.Segments), Deletable: pt.Deletable, BytesFreed: pt.BytesFreed,
			LogStartOffset: pt.LogStartOffset, LogEndOffset: pt.LogEndOffset, HighWatermark: pt.HighWatermark,
			Config: configValues(pt.Config, retention.ConfigKeys), ConfigSource: pt.Config.SourcesOf(retention.ConfigKeys...)}
		if b := pt.BlockedBy; b != nil {
			p.BlockedBy = &blockedJSON{Segment: b.Segment, Reason: b.Reason, LargestTimestamp: b.LargestTimestamp, EligibleAt: b.EligibleAt, SegmentsWaiting: b.Waiting, BytesWaiting: b.WaitingBytes}
		}
		out = append(out, retentionLine{part: p})
	}
	return out
}

// configValues are the effective values of keys, as text.
func configValues(c *topicconfig.Config, keys []string) map[string]string {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = c.Raw[k]
	}
	return m
}

func runRetention(ios *IOStreams, opts analysisOptions, paths []string) error {
	rep, err := runAnalysis(ios, opts, paths, "retention", func(targets []*inspect.Target, configs *topicconfig.Resolver, now int64, progress func(done, total int64)) (*retention.Report, error) {
		return retention.Analyze(targets, retention.Options{Now: now, Configs: configs, Progress: progress})
	})
	if err != nil {
		return err
	}
	failed, deletable, blocked := 0, 0, 0
	var freed int64
	var hw []string
	for _, pt := range rep.Partitions {
		if pt.Err != nil {
			ios.Warnf("%v", pt.Err)
			failed++
			continue
		}
		hw = append(hw, pt.HighWatermarkSource)
		for _, n := range pt.Notes {
			ios.Warnf("%s: %s", pt.Partition.Name(), n)
		}
		deletable, freed = deletable+pt.Deletable, freed+pt.BytesFreed
		if pt.BlockedBy != nil {
			blocked++
		}
	}
	warnHighWatermarks(ios, hw)
	l := newLister(ios, retentionColumns)
	for _, line := range retentionLines(rep) {
		l.Add(line)
	}
	l.Footer("%s: %s deletable (%s), %s blocked", count(len(rep.Partitions)-failed, "partition"), count(deletable, "segment"), humanSize(freed), count(blocked, "partition"))
	if err := l.Close(); err != nil {
		return err
	}
	if failed > 0 {
		return withHint(fmt.Errorf("%s could not be read", count(failed, "partition")), "kseg verify names the damage")
	}
	return nil
}

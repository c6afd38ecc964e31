package cmd

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/cleaner"
	"github.com/kseg/kseg/inspect/topicconfig"
)

func newCleanerCommand(ios *IOStreams) *cobra.Command {
	return newAnalysisCommand(ios, &cobra.Command{
		Use:   "cleaner PATH...",
		Short: "What the log cleaner sees of every compacted partition, and whether it would clean it",
		Long: `Show, for every partition under each PATH whose topic compacts (cleanup.policy
contains compact), what the log cleaner sees (LogCleanerManager.cleanableOffsets,
calculateCleanableBytes, maxCompactionDelay, grabFilthiestCompactedLog; LogToClean):

- the first dirty offset: the data directory's cleaner-offset-checkpoint
  entry, else the log start offset; a checkpoint below the log start offset
  or beyond the log end offset is reset to the log start offset
  (checkpoint_reset);
- the first uncleanable offset and which bound set it: the last stable
  offset (as txns computes it; an open transaction holding it is named in
  lso_held_by), the active segment's base offset, or the first dirty
  non-active segment whose largest timestamp is within min.compaction.lag.ms
  of now (strict >); the cleaner stops at the base offset of the segment
  holding the smallest bound (a tie names the active segment, then the lag,
  then the LSO);
- clean_bytes and cleanable_bytes as LogToClean counts them (a segment
  holding the first dirty offset in its middle counts in both), their ratio
  (null when both are 0) against min.cleanable.dirty.ratio;
- max_compaction_delay_ms: how far the earliest first-batch timestamp of the
  dirty non-active segments is past max.compaction.lag.ms;
- would_clean, or why_not: below_min_cleanable_ratio, nothing_cleanable,
  empty (grabFilthiestCompactedLog skips it), cleaner_disabled
  (log.cleaner.enable=false).

Configuration, the later winning: Kafka's defaults (__consumer_offsets and
__transaction_state compact), --server-properties FILE (log.cleanup.policy,
log.cleaner.*), the metadata image, --config KEY=VALUE. "Now" is --at, else
the wall clock.

Fields (-o json): kind ("compaction") partition_dir first_dirty_offset
checkpoint_offset checkpoint_reset first_uncleanable_offset
uncleanable_because clean_bytes cleanable_bytes cleanable_ratio
min_cleanable_ratio max_compaction_delay_ms would_clean why_not
log_start_offset log_end_offset last_stable_offset lso_held_by (null, or
producer_id first_offset last_offset) config config_source.

Exit 0, or 2 when a PATH or a partition could not be read or a setting is
invalid.`,
		Example: `  kseg cleaner /var/lib/kafka/data
  kseg cleaner -o json data | jq -c 'select(.would_clean == false)'
  kseg cleaner --config cleanup.policy=compact --config min.compaction.lag.ms=3600000 data/orders-3`,
	}, runCleaner)
}

type lsoHolderJSON struct {
	ProducerID  int64 `json:"producer_id"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
}

// compactionJSON is the contract's compaction line.
type compactionJSON struct {
	Kind                   string            `json:"kind"`
	PartitionDir           string            `json:"partition_dir"`
	FirstDirtyOffset       int64             `json:"first_dirty_offset"`
	CheckpointOffset       *int64            `json:"checkpoint_offset"`
	CheckpointReset        *string           `json:"checkpoint_reset"`
	FirstUncleanableOffset int64             `json:"first_uncleanable_offset"`
	UncleanableBecause     string            `json:"uncleanable_because"`
	CleanBytes             int64             `json:"clean_bytes"`
	CleanableBytes         int64             `json:"cleanable_bytes"`
	CleanableRatio         *float64          `json:"cleanable_ratio"`
	MinCleanableRatio      float64           `json:"min_cleanable_ratio"`
	MaxCompactionDelayMs   int64             `json:"max_compaction_delay_ms"`
	WouldClean             bool              `json:"would_clean"`
	WhyNot                 *string           `json:"why_not"`
	LogStartOffset         int64             `json:"log_start_offset"`
	LogEndOffset           int64             `json:"log_end_offset"`
	LastStableOffset       int64             `json:"last_stable_offset"`
	LSOHeldBy              *lsoHolderJSON    `json:"lso_held_by"`
	Config                 map[string]string `json:"config"`
	ConfigSource           map[string]string `json:"config_source"`
}

func ratioText(r *float64) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("%.4f", *r)
}

// cleanerColumns: the default table shows where cleaning starts and
// stops and why, the ratio and the verdict; -o wide and CSV every field.
var cleanerColumns = []column[compactionJSON]{
	withFit(textColumn("partition_dir", func(c compactionJSON) string { return c.PartitionDir }), fitElide),
	intColumn("first_dirty_offset", func(c compactionJSON) int64 { return c.FirstDirtyOffset }),
	wideOnly(nullableIntColumn("checkpoint_offset", func(c compactionJSON) *int64 { return c.CheckpointOffset })),
	tableOnly(omitIfEmpty(textColumn("checkpoint_reset", func(c compactionJSON) string { return strText(c.CheckpointReset) }))),
	wideOnly(textColumn("checkpoint_reset", func(c compactionJSON) string { return strText(c.CheckpointReset) })),
	intColumn("first_uncleanable_offset", func(c compactionJSON) int64 { return c.FirstUncleanableOffset }),
	textColumn("uncleanable_because", func(c compactionJSON) string { return c.UncleanableBecause }),
	tableOnly(omitIfEmpty(textColumn("held_by", func(c compactionJSON) string {
		if c.LSOHeldBy == nil {
			return ""
		}
		return fmt.Sprintf("producer %d since %d", c.LSOHeldBy.ProducerID, c.LSOHeldBy.FirstOffset)
	}))),
	wideOnly(withDisplay(intColumn("clean_bytes", func(c compactionJSON) int64 { return c.CleanBytes }), func(c compactionJSON, _ *IOStreams) string { return humanSize(c.CleanBytes) })),
	wideOnly(withDisplay(intColumn("cleanable_bytes", func(c compactionJSON) int64 { return c.CleanableBytes }), func(c compactionJSON, _ *IOStreams) string { return humanSize(c.CleanableBytes) })),
	{name: "cleanable_ratio", right: true, cell: func(c compactionJSON) string { return ratioText(c.CleanableRatio) }},
	wideOnly(column[compactionJSON]{name: "min_cleanable_ratio", right: true, cell: func(c compactionJSON) string { return fmt.Sprint(c.MinCleanableRatio) }}),
	wideOnly(intColumn("max_compaction_delay_ms", func(c compactionJSON) int64 { return c.MaxCompactionDelayMs })),
	boolColumn("would_clean", func(c compactionJSON) bool { return c.WouldClean }),
	tableOnly(omitIfEmpty(textColumn("why_not", func(c compactionJSON) string { return strText(c.WhyNot) }))),
	wideOnly(textColumn("why_not", func(c compactionJSON) string { return strText(c.WhyNot) })),
	wideOnly(intColumn("log_start_offset", func(c compactionJSON) int64 { return c.LogStartOffset })),
	wideOnly(intColumn("log_end_offset", func(c compactionJSON) int64 { return c.LogEndOffset })),
	wideOnly(intColumn("last_stable_offset", func(c compactionJSON) int64 { return c.LastStableOffset })),
	wideOnly(textColumn("lso_held_by", func(c compactionJSON) string {
		if c.LSOHeldBy == nil {
			return ""
		}
		return fmt.Sprintf("%d:%d:%d", c.LSOHeldBy.ProducerID, c.LSOHeldBy.FirstOffset, c.LSOHeldBy.LastOffset)
	})),
	wideOnly(textColumn("config", func(c compactionJSON) string { return configSourceText(c.Config, cleaner.ConfigKeys) })),
	wideOnly(textColumn("config_source", func(c compactionJSON) string { return configSourceText(c.ConfigSource, cleaner.ConfigKeys) })),
}

func compactionLine(pt *cleaner.Partition) compactionJSON {
	c := compactionJSON{Kind: "compaction", PartitionDir: pt.Partition.Name(), FirstDirtyOffset: pt.FirstDirtyOffset, CheckpointOffset: pt.CheckpointOffset,
		FirstUncleanableOffset: pt.FirstUncleanableOffset, UncleanableBecause: pt.UncleanableBecause, CleanBytes: pt.CleanBytes,
		CleanableBytes: pt.CleanableBytes, MinCleanableRatio: pt.Config.MinCleanableRatio, MaxCompactionDelayMs: pt.MaxCompactionDelayMs,
		WouldClean: pt.WouldClean, LogStartOffset: pt.Input.LogStartOffset, LogEndOffset: pt.Input.LogEndOffset,
		LastStableOffset: pt.Input.LastStableOffset, Config: configValues(pt.Config, cleaner.ConfigKeys), ConfigSource: pt.Config.SourcesOf(cleaner.ConfigKeys...)}
	if pt.CheckpointReset != "" {
		c.CheckpointReset = ptr(pt.CheckpointReset)
	}
	if !math.IsNaN(pt.CleanableRatio) {
		c.CleanableRatio = ptr(pt.CleanableRatio)
	}
	if pt.WhyNot != "" {
		c.WhyNot = ptr(pt.WhyNot)
	}
	if h := pt.LSOHeldBy; h != nil {
		c.LSOHeldBy = &lsoHolderJSON{ProducerID: h.ProducerID, FirstOffset: h.FirstOffset, LastOffset: h.LastOffset}
	}
	return c
}

func runCleaner(ios *IOStreams, opts analysisOptions, paths []string) error {
	rep, err := runAnalysis(ios, opts, paths, "cleaner", func(targets []*inspect.Target, configs *topicconfig.Resolver, now int64, progress func(done, total int64)) (*cleaner.Report, error) {
		return cleaner.Analyze(targets, cleaner.Options{Now: now, Configs: configs, Progress: progress})
	})
	if err != nil {
		return err
	}
	l := newLister(ios, cleanerColumns)
	failed, clean := 0, 0
	var hw []string
	for i := range rep.Partitions {
		pt := &rep.Partitions[i]
		if pt.Err != nil {
			ios.Warnf("%v", pt.Err)
			failed++
			continue
		}
		hw = append(hw, pt.Loaded.HighWatermarkSource)
		for _, n := range pt.Notes {
			ios.Warnf("%s: %s", pt.Partition.Name(), n)
		}
		if pt.CheckpointReset != "" {
			ios.Warnf("%s: cleaner checkpoint %d is %s: the cleaner resets it to the log start offset %d and cleans the whole log", pt.Partition.Name(), *pt.CheckpointOffset, pt.CheckpointReset, pt.FirstDirtyOffset)
		}
		if pt.WouldClean {
			clean++
		}
		l.Add(compactionLine(pt))
	}
	warnHighWatermarks(ios, hw)
	l.Empty(fmt.Sprintf("no compacted partition (%s whose topic does not compact; --config cleanup.policy=compact treats them as compacted)", count(rep.Skipped, "partition")))
	l.Footer("%s, %d the cleaner would clean; %s of topics that do not compact", count(len(rep.Partitions)-failed, "compacted partition"), clean, count(rep.Skipped, "partition"))
	if err := l.Close(); err != nil {
		return err
	}
	if failed > 0 {
		return withHint(fmt.Errorf("%s could not be read", count(failed, "partition")), "kseg verify names the damage")
	}
	return nil
}

package report

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/cleaner"
	"github.com/kseg/kseg/inspect/groups"
	"github.com/kseg/kseg/inspect/metadata"
	"github.com/kseg/kseg/inspect/retention"
	"github.com/kseg/kseg/inspect/txns"
)

// traffic sums the partitions' traffic (read with the partitions, as kseg
// timeline reads it) into buckets common to every chart: one per topic,
// one per partition. The bucket width is timeline's automatic width for
// about opts.Buckets buckets over the whole span, so that kseg timeline
// --bucket W reproduces each chart's numbers.
func (b *builder) traffic() {
	from, to := int64(-1), int64(-1)
	for _, segs := range b.traffics {
		f, t := inspect.TimeSpan(segs)
		if f >= 0 && (from < 0 || f < from) {
			from = f
		}
		to = max(to, t)
	}
	cmd := b.command("timeline", "--per-partition")
	if from < 0 {
		b.absent(SectionTraffic, "Traffic", cmd, "no batch under the paths has a timestamp")
		return
	}
	width := inspect.AutoBucket(to-from, b.opts.Buckets)
	cmd = b.command("timeline", "--per-partition", "--bucket", bucketFlag(width))
	var topics []string
	byTopic := map[string]*TrafficLine{}
	var parts []Line
	for i, p := range b.parts {
		buckets := inspect.NewBuckets(from, to, width)
		inspect.AddTraffic(buckets, width, b.traffics[i])
		line := &TrafficLine{Kind: "traffic", Scope: "partition", Name: p.Name(), Dir: p.Dir, Start: buckets[0].Start, BucketMs: width,
			Records: make([]int64, len(buckets)), Bytes: make([]int64, len(buckets))}
		for j, bk := range buckets {
			line.Records[j], line.Bytes[j] = bk.Records, bk.Bytes
		}
		parts = append(parts, line)
		topic := p.Topic
		if topic == "" {
			topic = p.Name()
		}
		t, ok := byTopic[topic]
		if !ok {
			t = &TrafficLine{Kind: "traffic", Scope: "topic", Name: topic, Start: line.Start, BucketMs: width,
				Records: make([]int64, len(buckets)), Bytes: make([]int64, len(buckets))}
			byTopic[topic] = t
			topics = append(topics, topic)
		}
		for j := range buckets {
			t.Records[j] = inspect.CappedSum(t.Records[j], line.Records[j])
			t.Bytes[j] = inspect.CappedSum(t.Bytes[j], line.Bytes[j])
		}
	}
	var lines []Line
	for _, name := range topics {
		lines = append(lines, byTopic[name])
	}
	lines = append(lines, parts...)
	b.section(&SectionLine{Kind: "section", ID: SectionTraffic, Title: "Traffic", Present: true, Command: cmd, Rows: len(lines)}, lines...)
}

// bucketFlag is a width in ms as a Go duration for --bucket.
func bucketFlag(ms int64) string {
	for _, u := range []struct {
		ms   int64
		unit string
	}{{3600e3, "h"}, {60e3, "m"}, {1e3, "s"}} {
		if ms%u.ms == 0 {
			return fmt.Sprintf("%d%s", ms/u.ms, u.unit)
		}
	}
	return fmt.Sprintf("%dms", ms)
}

// groups replays the __consumer_offsets partitions of each data directory
// as kseg groups does (groups.Groups), with each committed offset's lag.
func (b *builder) groups() {
	var lines []Line
	var cmds, notes []string
	for _, t := range b.targets {
		r, err := groups.Groups(t, groups.Options{At: b.opts.At})
		if errors.Is(err, groups.ErrNoPartitions) {
			continue
		}
		cmds = append(cmds, commandLine(append(append([]string{"groups"}, b.atFlag()...), t.Path)...))
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		for _, d := range r.Damaged {
			notes = append(notes, fmt.Sprintf("%v; the offsets after the damage in that segment are not applied", d))
		}
		_, _ = r.EachLagged(func(l groups.Lagged) error {
			lines = append(lines, &GroupOffsetLine{Kind: "group_offset", Group: l.Group, Topic: l.Topic, Partition: l.Partition,
				Offset: l.Offset.Offset, CommitTimestamp: l.CommitTimestamp, LogEndOffset: l.LogEndOffset, Lag: l.Lag})
			return nil
		})
	}
	s := &SectionLine{Kind: "section", ID: SectionGroups, Title: "Consumer groups", Present: len(cmds) > 0,
		Command: strings.Join(cmds, "; "), Rows: len(lines), Note: strings.Join(notes, "; ")}
	if len(cmds) == 0 {
		s.Command, s.Note = commandLine("groups", "DATA_DIR"), "no __consumer_offsets partition under the paths"
	}
	b.section(s, lines...)
}

// transactions loads every partition's producer state as kseg txns does:
// its open transactions, and the partitions whose last stable offset lags.
func (b *builder) transactions() {
	cmd := b.analysisCommand("txns")
	rep, err := txns.Analyze(b.targets, txns.Options{Now: b.opts.Now, Configs: b.opts.Configs, Progress: b.opts.progress("txns")})
	if err != nil {
		b.sectionError(SectionTransactions, "Transactions", cmd, err)
		return
	}
	var open, lags []Line
	var notes []string
	for _, pt := range rep.Partitions {
		if pt.Err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", pt.Partition.Name(), pt.Err))
			continue
		}
		for _, o := range pt.Open {
			line := &OpenTransactionLine{Kind: "open_transaction", PartitionDir: pt.Partition.Name(), ProducerID: o.ProducerID,
				ProducerEpoch: o.ProducerEpoch, FirstOffset: o.FirstOffset, LastOffset: o.LastOffset, LastTimestamp: o.LastTimestamp,
				AgeMs: o.AgeMs, Verdict: o.Verdict, Why: o.Why}
			if o.Coordinator != nil {
				line.TransactionalID = &o.Coordinator.TransactionalID
			}
			open = append(open, line)
		}
		// A last stable offset below the high watermark is held by a
		// transaction; one at the high watermark lags only as replication does.
		if pt.LastStableOffset < pt.HighWatermark || len(pt.Open) > 0 {
			lags = append(lags, &LSOLine{Kind: "lso", PartitionDir: pt.Partition.Name(), LogEndOffset: pt.LogEndOffset,
				HighWatermark: pt.HighWatermark, LastStableOffset: pt.LastStableOffset, LSOLag: pt.LSOLag, OpenTransactions: len(pt.Open)})
		}
	}
	notes = append(notes, rep.Notes...)
	b.section(&SectionLine{Kind: "section", ID: SectionTransactions, Title: "Transactions", Present: len(rep.Partitions) > 0,
		Command: cmd, Rows: len(open) + len(lags), Note: strings.Join(notes, "; ")}, append(open, lags...)...)
}

// retention runs the next retention pass over every partition, as kseg
// retention does.
func (b *builder) retention() {
	cmd := b.analysisCommand("retention")
	rep, err := retention.Analyze(b.targets, retention.Options{Now: b.opts.Now, Configs: b.opts.Configs, Progress: b.opts.progress("retention")})
	if err != nil {
		b.sectionError(SectionRetention, "Retention", cmd, err)
		return
	}
	var lines []Line
	for _, pt := range rep.Partitions {
		if pt.Partition == nil {
			continue
		}
		line := &RetentionLine{Kind: "retention", PartitionDir: pt.Partition.Name(), Segments: len(pt.Segments), Deletable: pt.Deletable,
			BytesFreed: pt.BytesFreed}
		if pt.Config != nil {
			line.Config = RetentionConf{CleanupPolicy: strings.Join(pt.Config.CleanupPolicy, ","), RetentionMs: pt.Config.RetentionMs,
				RetentionBytes: pt.Config.RetentionBytes}
		}
		if bl := pt.BlockedBy; bl != nil {
			line.BlockedBy = &BlockedLine{Segment: bl.Segment, Reason: bl.Reason, SegmentsWaiting: bl.Waiting, BytesWaiting: bl.WaitingBytes}
		}
		if pt.Err != nil {
			line.Error = pt.Err.Error()
		}
		lines = append(lines, line)
	}
	b.section(&SectionLine{Kind: "section", ID: SectionRetention, Title: "Retention", Present: len(lines) > 0, Command: cmd, Rows: len(lines)}, lines...)
}

// cleaner runs the log cleaner's view over the compacted partitions, as
// kseg cleaner does.
func (b *builder) cleaner() {
	cmd := b.analysisCommand("cleaner")
	rep, err := cleaner.Analyze(b.targets, cleaner.Options{Now: b.opts.Now, Configs: b.opts.Configs, Progress: b.opts.progress("cleaner")})
	if err != nil {
		b.sectionError(SectionCleaner, "Log cleaner", cmd, err)
		return
	}
	var lines []Line
	for _, pt := range rep.Partitions {
		line := &CompactionLine{Kind: "compaction", PartitionDir: pt.Partition.Name(), FirstDirtyOffset: pt.FirstDirtyOffset,
			FirstUncleanable: pt.FirstUncleanableOffset, UncleanableBecause: pt.UncleanableBecause, CleanBytes: pt.CleanBytes,
			CleanableBytes: pt.CleanableBytes, WouldClean: pt.WouldClean}
		if !math.IsNaN(pt.CleanableRatio) {
			line.CleanableRatio = ptr(pt.CleanableRatio)
		}
		if pt.Config != nil {
			line.MinCleanableRatio = pt.Config.MinCleanableRatio
		}
		if pt.WhyNot != "" {
			line.WhyNot = ptr(pt.WhyNot)
		}
		if pt.Err != nil {
			line.Error = pt.Err.Error()
		}
		lines = append(lines, line)
	}
	s := &SectionLine{Kind: "section", ID: SectionCleaner, Title: "Log cleaner", Present: len(lines) > 0, Command: cmd, Rows: len(lines)}
	if len(lines) == 0 {
		s.Note = fmt.Sprintf("no partition's topic compacts (%d read)", rep.Skipped)
	}
	b.section(s, lines...)
}

// metadata loads the metadata image of the first __cluster_metadata-0
// under the paths, as kseg metadata does (as of --at).
func (b *builder) metadata() {
	for _, t := range b.targets {
		if metadata.Find(t) == nil {
			continue
		}
		args := []string{"metadata"}
		if b.opts.At != nil {
			args = append(args, "--at", fmt.Sprint(*b.opts.At))
		}
		cmd := commandLine(append(args, t.Path)...)
		im, err := metadata.LoadTarget(t, metadata.Options{Time: b.opts.At, Progress: b.opts.progress("metadata")})
		if err != nil {
			b.sectionError(SectionMetadata, "Metadata image", cmd, err)
			return
		}
		var lines []Line
		for _, id := range im.BrokerIDs() {
			br := im.Brokers[id]
			lines = append(lines, &MetadataBrokerLine{Kind: "metadata_broker", ID: id, Fenced: br.Fenced, Rack: br.Rack})
		}
		for _, name := range im.TopicNames() {
			tp := im.Topics[name]
			for _, id := range tp.PartitionIDs() {
				p := tp.Partitions[id]
				lines = append(lines, &MetadataPartitionLine{Kind: "metadata_partition", Topic: name, Partition: id, Leader: p.Leader,
					LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR})
			}
		}
		var notes []string
		if im.Incomplete != "" {
			notes = append(notes, "the image is incomplete: "+im.Incomplete)
		}
		if im.Damage != nil {
			notes = append(notes, im.Damage.Error())
		}
		b.section(&SectionLine{Kind: "section", ID: SectionMetadata, Title: "Metadata image", Present: true, Command: cmd,
			Rows: len(lines), Note: strings.Join(notes, "; ")}, lines...)
		return
	}
	b.absent(SectionMetadata, "Metadata image", commandLine("metadata", "DATA_DIR"), "no __cluster_metadata-0 under the paths")
}

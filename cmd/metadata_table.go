package cmd

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kseg/kseg/inspect/metadata"
)

// The tables of kseg metadata, one per section. The first reads like
// kafka-topics --describe (TopicCommand.describeTopic): a row per topic
// (its id, partition count, replication factor and configs) followed by a
// row per partition (leader, replicas, ISR, ELR).

// describeRow is a topic's row or one of its partitions'.
type describeRow struct {
	topic     *metadata.TopicLine
	partition *metadata.PartitionLine
}

func describePart(f func(*metadata.PartitionLine) string) func(describeRow) string {
	return func(r describeRow) string {
		if r.partition == nil {
			return ""
		}
		return f(r.partition)
	}
}

var metaDescribeColumns = []column[describeRow]{
	textColumn("topic", func(r describeRow) string {
		if r.topic != nil {
			return r.topic.Name
		}
		return "  " + r.partition.Topic
	}),
	column[describeRow]{name: "partition", right: true, cell: describePart(func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.Partition)) })},
	column[describeRow]{name: "leader", right: true, cell: describePart(func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.Leader)) })},
	textColumn("replicas", describePart(func(p *metadata.PartitionLine) string { return intsCSV(p.Replicas) })),
	textColumn("isr", describePart(func(p *metadata.PartitionLine) string { return intsCSV(p.ISR) })),
	omitIfEmpty(textColumn("elr", describePart(func(p *metadata.PartitionLine) string { return intsCSV(p.ELR) }))),
	omitIfEmpty(textColumn("last_known_elr", describePart(func(p *metadata.PartitionLine) string { return intsCSV(p.LastKnownELR) }))),
	wideOnly(column[describeRow]{name: "leader_epoch", right: true, cell: describePart(func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.LeaderEpoch)) })}),
	wideOnly(column[describeRow]{name: "partition_epoch", right: true, cell: describePart(func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.PartitionEpoch)) })}),
	wideOnly(omitIfEmpty(textColumn("removing_replicas", describePart(func(p *metadata.PartitionLine) string { return intsCSV(p.RemovingReplicas) })))),
	wideOnly(omitIfEmpty(textColumn("adding_replicas", describePart(func(p *metadata.PartitionLine) string { return intsCSV(p.AddingReplicas) })))),
	wideOnly(textColumn("leader_recovery_state", describePart(func(p *metadata.PartitionLine) string { return p.LeaderRecoveryState }))),
	wideOnly(textColumn("directories", describePart(func(p *metadata.PartitionLine) string { return strings.Join(p.Directories, ",") }))),
	withFit(textColumn("topic_id, partitions, replication factor, configs", func(r describeRow) string {
		if r.topic == nil {
			return ""
		}
		t := r.topic
		return fmt.Sprintf("TopicId: %s  PartitionCount: %d  ReplicationFactor: %d  Configs: %s", t.TopicID, t.Partitions, t.ReplicationFactor, configsText(t.Configs))
	}), fitWrap),
}

// metaPartitionColumns are -o csv's: one row per partition.
var metaPartitionColumns = []column[*metadata.PartitionLine]{
	textColumn("topic", func(p *metadata.PartitionLine) string { return p.Topic }),
	textColumn("topic_id", func(p *metadata.PartitionLine) string { return p.TopicID }),
	textColumn("partition", func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.Partition)) }),
	textColumn("leader", func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.Leader)) }),
	textColumn("leader_epoch", func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.LeaderEpoch)) }),
	textColumn("partition_epoch", func(p *metadata.PartitionLine) string { return strconv.Itoa(int(p.PartitionEpoch)) }),
	textColumn("replicas", func(p *metadata.PartitionLine) string { return intsCSV(p.Replicas) }),
	textColumn("isr", func(p *metadata.PartitionLine) string { return intsCSV(p.ISR) }),
	textColumn("elr", func(p *metadata.PartitionLine) string { return intsCSV(p.ELR) }),
	textColumn("last_known_elr", func(p *metadata.PartitionLine) string { return intsCSV(p.LastKnownELR) }),
	textColumn("removing_replicas", func(p *metadata.PartitionLine) string { return intsCSV(p.RemovingReplicas) }),
	textColumn("adding_replicas", func(p *metadata.PartitionLine) string { return intsCSV(p.AddingReplicas) }),
	textColumn("leader_recovery_state", func(p *metadata.PartitionLine) string { return p.LeaderRecoveryState }),
	textColumn("directories", func(p *metadata.PartitionLine) string { return strings.Join(p.Directories, ",") }),
}

var metaBrokerColumns = []column[*metadata.BrokerLine]{
	intColumn("broker", func(b *metadata.BrokerLine) int32 { return b.ID }),
	intColumn("epoch", func(b *metadata.BrokerLine) int64 { return b.Epoch }),
	boolColumn("fenced", func(b *metadata.BrokerLine) bool { return b.Fenced }),
	boolColumn("in_controlled_shutdown", func(b *metadata.BrokerLine) bool { return b.InControlledShutdown }),
	textColumn("rack", func(b *metadata.BrokerLine) string { return optText(b.Rack) }),
	withFit(textColumn("listeners", func(b *metadata.BrokerLine) string { return listenersText(b.Listeners) }), fitWrap),
	wideOnly(textColumn("incarnation_id", func(b *metadata.BrokerLine) string { return b.IncarnationID })),
	wideOnly(boolColumn("is_migrating_zk_broker", func(b *metadata.BrokerLine) bool { return b.IsMigratingZkBroker })),
	wideOnly(textColumn("log_dirs", func(b *metadata.BrokerLine) string { return strings.Join(b.LogDirs, ",") })),
	wideOnly(textColumn("features", func(b *metadata.BrokerLine) string { return featuresText(b.Features) })),
}

var metaControllerColumns = []column[*metadata.ControllerLine]{
	intColumn("controller", func(c *metadata.ControllerLine) int32 { return c.ID }),
	withFit(textColumn("listeners", func(c *metadata.ControllerLine) string { return listenersText(c.Listeners) }), fitWrap),
	wideOnly(textColumn("incarnation_id", func(c *metadata.ControllerLine) string { return c.IncarnationID })),
	wideOnly(boolColumn("zk_migration_ready", func(c *metadata.ControllerLine) bool { return c.ZkMigrationReady })),
	wideOnly(textColumn("features", func(c *metadata.ControllerLine) string { return featuresText(c.Features) })),
}

var metaConfigColumns = []column[*metadata.ConfigLine]{
	textColumn("resource_type", func(c *metadata.ConfigLine) string { return c.ResourceType }),
	textColumn("resource_name", func(c *metadata.ConfigLine) string { return strconv.Quote(c.ResourceName) }),
	textColumn("config", func(c *metadata.ConfigLine) string { return c.Name }),
	withFit(textColumn("value", func(c *metadata.ConfigLine) string { return c.Value }), fitWrap),
}

var metaFeatureColumns = []column[*metadata.FeatureLine]{
	textColumn("feature", func(f *metadata.FeatureLine) string { return f.Name }),
	intColumn("level", func(f *metadata.FeatureLine) int16 { return f.Level }),
}

var metaStrayColumns = []column[*metadata.StrayLine]{
	textColumn("stray", func(s *metadata.StrayLine) string { return s.PartitionDir }),
	withFit(textColumn("reason", func(s *metadata.StrayLine) string { return s.Reason }), fitWrap),
}

var metaUnappliedColumns = []column[*metadata.UnappliedLine]{
	textColumn("unapplied", func(u *metadata.UnappliedLine) string { return u.Type }),
	intColumn("offset", func(u *metadata.UnappliedLine) int64 { return u.Offset }),
	textColumn("file", func(u *metadata.UnappliedLine) string { return u.File }),
	intColumn("position", func(u *metadata.UnappliedLine) int64 { return u.Position }),
	withFit(textColumn("reason", func(u *metadata.UnappliedLine) string { return u.Reason }), fitWrap),
}

// metadataTables draws the table and wide forms: a table per section that
// has rows, the summary under the last.
func metadataTables(ios *IOStreams, im *metadata.Image, lines []any) error {
	var (
		describe    []describeRow
		brokers     []*metadata.BrokerLine
		controllers []*metadata.ControllerLine
		configs     []*metadata.ConfigLine
		features    []*metadata.FeatureLine
		strays      []*metadata.StrayLine
		unapplied   []*metadata.UnappliedLine
	)
	for _, l := range lines {
		switch v := l.(type) {
		case *metadata.TopicLine:
			describe = append(describe, describeRow{topic: v})
		case *metadata.PartitionLine:
			describe = append(describe, describeRow{partition: v})
		case *metadata.BrokerLine:
			brokers = append(brokers, v)
		case *metadata.ControllerLine:
			controllers = append(controllers, v)
		case *metadata.ConfigLine:
			if v.ResourceType != metadata.ResourceTopic.String() {
				configs = append(configs, v) // a topic's are on its row
			}
		case *metadata.FeatureLine:
			features = append(features, v)
		case *metadata.StrayLine:
			strays = append(strays, v)
		case *metadata.UnappliedLine:
			unapplied = append(unapplied, v)
		}
	}
	w := &sectionWriter{ios: ios}
	section(w, metaDescribeColumns, describe)
	section(w, metaBrokerColumns, brokers)
	section(w, metaControllerColumns, controllers)
	section(w, metaConfigColumns, configs)
	section(w, metaFeatureColumns, features)
	section(w, metaStrayColumns, strays)
	section(w, metaUnappliedColumns, unapplied)
	if w.err != nil {
		return w.err
	}
	return printFooter(ios, escapeControl(metadataSummaryText(im)))
}

// sectionWriter draws tables one after the other, a blank line between.
type sectionWriter struct {
	ios   *IOStreams
	drawn bool
	err   error
}

func section[T any](w *sectionWriter, columns []column[T], rows []T) {
	if w.err != nil || len(rows) == 0 {
		return
	}
	if w.drawn {
		if _, w.err = fmt.Fprintln(w.ios.Out); w.err != nil {
			return
		}
	}
	w.drawn = true
	l := newLister(w.ios, columns)
	for _, r := range rows {
		l.Add(r)
	}
	w.err = l.Close()
}

// metadataSummaryText is the summary line under the tables.
func metadataSummaryText(im *metadata.Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "image at offset %d of %s", im.Target, im.Dir)
	if im.LogEndOffset > im.LogStartOffset {
		fmt.Fprintf(&b, " (log offsets %d..%d)", im.LogStartOffset, im.LogEndOffset-1)
	}
	if im.Snapshot != nil {
		fmt.Fprintf(&b, ": snapshot %s (%s)", im.Snapshot.Name(), count(im.SnapshotRecords, "record"))
		if im.AppliedTo >= im.AppliedFrom {
			b.WriteString(", then")
		}
	} else {
		b.WriteString(":")
	}
	if im.AppliedTo >= im.AppliedFrom {
		fmt.Fprintf(&b, " log records %d..%d (%d applied)", im.AppliedFrom, im.AppliedTo, im.Records)
	} else if im.Snapshot == nil {
		b.WriteString(" no record")
	}
	fmt.Fprintf(&b, "; %s, %s, %s", countOf(len(im.Topics), "topic"), countOf(im.PartitionCount(), "partition"), countOf(len(im.Brokers), "broker"))
	if im.CommittedTransactions+im.AbortedTransactions > 0 {
		fmt.Fprintf(&b, "; metadata transactions: %d committed, %d aborted", im.CommittedTransactions, im.AbortedTransactions)
	}
	if im.OpenTransaction >= 0 {
		fmt.Fprintf(&b, "; a transaction open since offset %d is not applied", im.OpenTransaction)
	}
	if n := len(im.Unapplied); n > 0 {
		fmt.Fprintf(&b, "; %s not applied", countOf(n, "record"))
	}
	return b.String()
}

func configsText(cfg map[string]string) string {
	keys := slices.Sorted(maps.Keys(cfg))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + cfg[k]
	}
	return strings.Join(parts, ",")
}

func listenersText(es []metadata.EndpointLine) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s://%s:%d (%s)", e.Name, e.Host, e.Port, e.SecurityProtocol)
	}
	return strings.Join(parts, ", ")
}

func featuresText(fs []metadata.FeatureRangeLine) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %d-%d", f.Name, f.Min, f.Max)
	}
	return strings.Join(parts, ", ")
}

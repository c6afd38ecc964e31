package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect/groups"
)

type groupsOptions struct {
	path  string
	group string
	topic string
	at    timestampOption
}

// AddFlags adds groups' flags to f.
func (o *groupsOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.group, "group", "", "only this consumer group")
	f.StringVar(&o.topic, "topic", "", "only offsets of this consumed topic")
	o.at.AddFlag(f, "at", "the state as of this time: only records with a timestamp <= T (ms, RFC 3339, a date, or relative: -1h)")
}

// Validate parses --at.
func (o *groupsOptions) Validate() error { return o.at.Validate() }

func newGroupsCommand(ios *IOStreams) *cobra.Command {
	var opts groupsOptions
	c := &cobra.Command{
		Use:   "groups PATH [--group ID] [--topic NAME] [--at T]",
		Short: "Rebuild consumer groups' committed offsets from __consumer_offsets, offline",
		Long: `Rebuild the committed offsets of consumer groups from the __consumer_offsets-N
partitions under PATH (a data directory, or one such partition directory),
as the group coordinator does when it loads a partition: records are applied
in offset order; an offset commit sets the committed offset of (group,
topic, partition) and a tombstone removes it; offset commits written in a
transaction take effect at the producer's COMMIT marker (unless a commit
later in the log already set that partition) and are dropped at its ABORT
marker; commits whose transaction is still open at the end of the log are
not applied and are counted as pending. Group metadata records and the
KIP-848 consumer group records carry no offsets.

--at T applies only records whose timestamp is <= T (ms, RFC 3339, a date or
relative such as -1h): the offsets as of that time. --group and --topic
keep the lines of one group or one consumed topic.

One line per committed offset, sorted by group, topic, partition: kind
("group_offset") group topic partition offset leader_epoch (null when the
commit has none) metadata commit_timestamp source (the __consumer_offsets
partition) source_offset (the record that set it) log_end_offset and lag
(of the consumed partition when its directory is in the same data
directory, else null; a topic name Kafka would refuse, such as ../x, is
never looked up). A last line: kind ("summary") groups offsets
partitions_read pending_transactional.

Exit 0 (also when no offsets were found), 2 when PATH holds no
__consumer_offsets partition or one could not be read.`,
		Example: `  kseg groups /var/lib/kafka/data --group payments
  kseg groups -o json /var/lib/kafka/data --topic orders | jq -c 'select(.kind=="group_offset") | {group, partition, lag}'
  kseg groups /var/lib/kafka/data --group payments --at 2024-05-01T10:00:00Z`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.path = args[0]
			if err := opts.Validate(); err != nil {
				return err
			}
			return runGroups(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

// groupOffsetJSON is the contract's group_offset line.
type groupOffsetJSON struct {
	Kind            string `json:"kind"`
	Group           string `json:"group"`
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	LeaderEpoch     *int32 `json:"leader_epoch"`
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commit_timestamp"`
	Source          string `json:"source"`
	SourceOffset    int64  `json:"source_offset"`
	LogEndOffset    *int64 `json:"log_end_offset"`
	Lag             *int64 `json:"lag"`
}

// groupsSummaryJSON is the contract's last line of groups.
type groupsSummaryJSON struct {
	Kind                 string `json:"kind"`
	Groups               int    `json:"groups"`
	Offsets              int    `json:"offsets"`
	PartitionsRead       int    `json:"partitions_read"`
	PendingTransactional int    `json:"pending_transactional"`
}

// groupsLine is one row: an offset or the summary.
type groupsLine struct {
	offset  *groupOffsetJSON
	summary *groupsSummaryJSON
}

func (l groupsLine) MarshalJSON() ([]byte, error) { return marshalEither(l.summary, l.offset) }

func offsetCell(f func(*groupOffsetJSON) string) func(groupsLine) string {
	return func(l groupsLine) string {
		if l.offset == nil {
			return ""
		}
		return f(l.offset)
	}
}

func intText(p *int64) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

// groupsColumns: the default table shows the group, the consumed
// partition, the offset and lag and when it was committed; -o wide and CSV
// show every field.
var groupsColumns = []column[groupsLine]{
	tableOnly(withFit(textColumn("group", offsetCell(func(o *groupOffsetJSON) string { return o.Group })), fitElide)),
	tableOnly(withFit(textColumn("partition", offsetCell(func(o *groupOffsetJSON) string { return fmt.Sprintf("%s-%d", o.Topic, o.Partition) })), fitElide)),
	tableOnly(column[groupsLine]{name: "offset", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return fmt.Sprint(o.Offset) })}),
	tableOnly(column[groupsLine]{name: "lag", right: true, cell: offsetCell(func(o *groupOffsetJSON) string {
		if o.Lag == nil {
			return "-"
		}
		return groupCount(*o.Lag)
	})}),
	tableOnly(column[groupsLine]{name: "committed", display: func(l groupsLine, ios *IOStreams) string {
		if l.offset == nil {
			return ""
		}
		return ios.timeText(l.offset.CommitTimestamp)
	}}),
	wideOnly(textColumn("group", offsetCell(func(o *groupOffsetJSON) string { return o.Group }))),
	wideOnly(textColumn("topic", offsetCell(func(o *groupOffsetJSON) string { return o.Topic }))),
	wideOnly(column[groupsLine]{name: "partition", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return fmt.Sprint(o.Partition) })}),
	wideOnly(column[groupsLine]{name: "offset", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return fmt.Sprint(o.Offset) })}),
	wideOnly(column[groupsLine]{name: "leader_epoch", right: true, cell: offsetCell(func(o *groupOffsetJSON) string {
		if o.LeaderEpoch == nil {
			return ""
		}
		return fmt.Sprint(*o.LeaderEpoch)
	})}),
	wideOnly(textColumn("metadata", offsetCell(func(o *groupOffsetJSON) string { return o.Metadata }))),
	wideOnly(column[groupsLine]{name: "commit_timestamp", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return fmt.Sprint(o.CommitTimestamp) }),
		human: offsetCell(func(o *groupOffsetJSON) string { return humanTime(o.CommitTimestamp) })}),
	wideOnly(textColumn("source", offsetCell(func(o *groupOffsetJSON) string { return o.Source }))),
	wideOnly(column[groupsLine]{name: "source_offset", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return fmt.Sprint(o.SourceOffset) })}),
	wideOnly(column[groupsLine]{name: "log_end_offset", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return intText(o.LogEndOffset) })}),
	wideOnly(column[groupsLine]{name: "lag", right: true, cell: offsetCell(func(o *groupOffsetJSON) string { return intText(o.Lag) })}),
}

func runGroups(ios *IOStreams, opts groupsOptions) error {
	t, err := resolveTarget(opts.path)
	if err != nil {
		return err
	}
	r, err := groups.Groups(t, groups.Options{At: opts.at.Value, Group: opts.group, Topic: opts.topic})
	if errors.Is(err, groups.ErrNoPartitions) {
		return withHint(fmt.Errorf("%s: %w (found %s)", opts.path, groups.ErrNoPartitions, count(len(t.Partitions), "other partition")),
			"name the data directory of a broker that led __consumer_offsets partitions, or one __consumer_offsets-N directory; kseg coordinator --group ID says which N holds a group")
	}
	if err != nil {
		return err
	}
	for _, err := range r.Damaged {
		ios.Warnf("%v; the offsets after the damage in that segment are not applied", err)
	}
	if r.Undecodable > 0 {
		ios.Warnf("%s did not decode and were skipped (kseg dump-log --decoder consumer_offsets shows them)", count(r.Undecodable, "offset commit record"))
	}
	l := newLister(ios, groupsColumns)
	sum := &groupsSummaryJSON{Kind: "summary", Offsets: r.Len(), PartitionsRead: r.Partitions, PendingTransactional: r.PendingCount()}
	sum.Groups, err = r.EachLagged(func(o groups.Lagged) error {
		l.Add(groupsLine{offset: groupOffsetLine(ios, o)})
		return nil
	})
	if err != nil {
		return err
	}
	l.AddJSON(groupsLine{summary: sum})
	l.Footer("%s, %s from %s; %s pending", count(sum.Groups, "group"), count(sum.Offsets, "committed offset"),
		count(sum.PartitionsRead, groups.Topic+" partition"), count(sum.PendingTransactional, "transactional offset commit"))
	if err := l.Close(); err != nil {
		return err
	}
	if len(r.Damaged) > 0 {
		return withHint(fmt.Errorf("%s damaged: the offsets shown are those before the damage", count(len(r.Damaged), groups.Topic+" partition")), "kseg verify names the damage")
	}
	return nil
}

// groupOffsetLine is o's line.
func groupOffsetLine(ios *IOStreams, o groups.Lagged) *groupOffsetJSON {
	if o.EndOffsetErr != nil {
		ios.Warnf("%s-%d: log end offset unknown: %v", o.Topic, o.Partition, o.EndOffsetErr)
	}
	return &groupOffsetJSON{Kind: "group_offset", Group: o.Group, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset.Offset,
		LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, CommitTimestamp: o.CommitTimestamp, Source: o.Source, SourceOffset: o.SourceOffset,
		LogEndOffset: o.LogEndOffset, Lag: o.Lag}
}

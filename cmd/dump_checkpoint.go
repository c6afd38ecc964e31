package cmd

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect/dumpcheckpoint"
)

type dumpCheckpointOptions struct {
	paths []string
}

func newDumpCheckpointCommand(ios *IOStreams) *cobra.Command {
	var opts dumpCheckpointOptions
	c := &cobra.Command{
		Use:   "dump-checkpoint PATH...",
		Short: "List the entries of checkpoint and properties files",
		Long: `Read the small text files a broker keeps beside the segments, with the
broker's own strict readers, and list their entries. PATH is one of those
files, a partition directory (its leader-epoch-checkpoint,
partition.metadata and, in __cluster_metadata-0, quorum-state) or a data directory (its recovery-point-offset-checkpoint,
log-start-offset-checkpoint, replication-offset-checkpoint,
cleaner-offset-checkpoint, meta.properties and .kafka_cleanshutdown, then
every partition's files).

Lines, by kind (every line also has kind and file):
  offset              checkpoint (recovery_point, log_start, high_watermark,
                      cleaner) topic partition offset, in file order
  leader_epoch        epoch start_offset in_cache (false: the broker's epoch
                      cache drops the entry when it loads the file)
  partition_metadata  version topic_id
  property            key value (meta.properties, in file order)
  clean_shutdown      broker_epoch (absent in the empty marker of Kafka 3.6
                      and older)
  quorum_state        (__cluster_metadata-0's quorum-state, the KRaft
                      client's election state) data_version leader_id
                      leader_epoch voted_id, and by data_version: 0
                      cluster_id applied_offset current_voters (voter ids;
                      absent when null), 1 voted_directory_id
The table and CSV views show kind, file, key and value.

A file its broker reader would refuse is listed as far as it parses, then
reported (exit 2, naming the byte position); kseg verify says what the
broker does about it. Empty checkpoint files have no entries.`,
		Example: `  kseg dump-checkpoint /var/lib/kafka/data/recovery-point-offset-checkpoint
  kseg dump-checkpoint data/orders-0
  kseg dump-checkpoint -o json /var/lib/kafka/data | jq -c 'select(.kind=="offset" and .topic=="orders")'`,
		Args: cobra.MinimumNArgs(1),
		RunE: pathsRunE(&opts.paths, func() error { return runDumpCheckpoint(ios, opts) }),
	}
	return c
}

// checkpointKeyValue is the line as the table shows it.
func checkpointKeyValue(l dumpcheckpoint.Line) (string, string) {
	i64 := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	switch l.Kind {
	case "offset":
		return fmt.Sprintf("%s %s-%d", l.Checkpoint, *l.Topic, *l.Partition), i64(l.Offset)
	case "leader_epoch":
		v := i64(l.StartOffset)
		if l.InCache != nil && !*l.InCache {
			v += " (dropped by the broker's cache)"
		}
		return "epoch " + strconv.Itoa(int(*l.Epoch)), v
	case "partition_metadata":
		return "topic_id", fmt.Sprintf("%s (version %d)", *l.TopicID, *l.Version)
	case "property":
		return *l.Key, *l.Value
	case "quorum_state":
		v := fmt.Sprintf("%d (epoch %d, voted for %d)", *l.LeaderID, *l.LeaderEpoch, *l.VotedID)
		if l.CurrentVoters != nil {
			v += fmt.Sprintf(", voters %v", *l.CurrentVoters)
		}
		return "leader", v
	case "clean_shutdown":
		if l.BrokerEpoch == nil {
			return "clean_shutdown", "present"
		}
		return "broker_epoch", i64(l.BrokerEpoch)
	}
	return "", ""
}

var checkpointColumns = []column[dumpcheckpoint.Line]{
	textColumn("kind", func(l dumpcheckpoint.Line) string { return l.Kind }),
	textColumn("file", func(l dumpcheckpoint.Line) string { return l.File }),
	textColumn("key", func(l dumpcheckpoint.Line) string { k, _ := checkpointKeyValue(l); return k }),
	textColumn("value", func(l dumpcheckpoint.Line) string { _, v := checkpointKeyValue(l); return v }),
	// -o wide adds each JSON field of the lines listed (CSV keeps its
	// columns); key and value above are the JSON fields of property lines.
	omitIfEmpty(wideTableOnly(textColumn("checkpoint", func(l dumpcheckpoint.Line) string { return l.Checkpoint }))),
	omitIfEmpty(wideTableOnly(textPtrColumn("topic", func(l dumpcheckpoint.Line) *string { return l.Topic }))),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "partition", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.Partition) }})),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "offset", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.Offset) }})),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "epoch", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.Epoch) }})),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "start_offset", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.StartOffset) }})),
	omitIfEmpty(wideTableOnly(textColumn("in_cache", func(l dumpcheckpoint.Line) string {
		if l.InCache == nil {
			return ""
		}
		return strconv.FormatBool(*l.InCache)
	}))),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "version", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.Version) }})),
	omitIfEmpty(wideTableOnly(textPtrColumn("topic_id", func(l dumpcheckpoint.Line) *string { return l.TopicID }))),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "broker_epoch", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.BrokerEpoch) }})),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "data_version", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.DataVersion) }})),
	omitIfEmpty(wideTableOnly(textPtrColumn("cluster_id", func(l dumpcheckpoint.Line) *string { return l.ClusterID }))),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "leader_id", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.LeaderID) }})),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "leader_epoch", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.LeaderEpoch) }})),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "voted_id", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.VotedID) }})),
	omitIfEmpty(wideTableOnly(textPtrColumn("voted_directory_id", func(l dumpcheckpoint.Line) *string { return l.VotedDirectoryID }))),
	omitIfEmpty(wideTableOnly(column[dumpcheckpoint.Line]{name: "applied_offset", right: true, cell: func(l dumpcheckpoint.Line) string { return optDecimal(l.AppliedOffset) }})),
	omitIfEmpty(wideTableOnly(textColumn("current_voters", func(l dumpcheckpoint.Line) string {
		if l.CurrentVoters == nil {
			return ""
		}
		return fmt.Sprint(*l.CurrentVoters)
	}))),
}

func runDumpCheckpoint(ios *IOStreams, opts dumpCheckpointOptions) error {
	files, err := collectEach(opts.paths, dumpcheckpoint.Files)
	if err != nil {
		return err
	}
	l := newLister(ios, checkpointColumns)
	var firstErr error
	for _, f := range files {
		if err := dumpcheckpoint.Dump(f, l.Add); err != nil {
			l.Footer("%s", err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	return firstErr
}

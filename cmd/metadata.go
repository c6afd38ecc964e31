package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect/metadata"
)

type metadataOptions struct {
	path   string
	at     timestampOption
	offset int64
	topic  string
	flags  *pflag.FlagSet
	lib    metadata.Options
}

// AddFlags adds metadata's flags to f.
func (o *metadataOptions) AddFlags(f *pflag.FlagSet) {
	o.flags = f
	o.at.AddFlag(f, "at", "the image as of this time: up to the last record with a timestamp <= T (ms, RFC 3339, a date, or relative: -1h)")
	f.Int64Var(&o.offset, "offset", 0, "the image as of this offset of the metadata log (its record included)")
	f.StringVar(&o.topic, "topic", "", "only this topic's lines (and the summary)")
}

// Validate parses --at and --offset into the library's options.
func (o *metadataOptions) Validate() error {
	if err := o.at.Validate(); err != nil {
		return err
	}
	if o.at.Value != nil && o.flags.Changed("offset") {
		return usageErrorf("give --at or --offset, not both")
	}
	o.lib.Time = o.at.Value
	if o.flags.Changed("offset") {
		if o.offset < 0 {
			return usageErrorf("--offset must be >= 0, not %d", o.offset)
		}
		o.lib.Offset = &o.offset
	}
	return nil
}

// metadataLong is kseg metadata's help.
const metadataLong = `Rebuild the cluster's metadata image as a broker does when it starts
(MetadataLoader): the latest snapshot in __cluster_metadata-0 that the
target covers (<end offset>-<epoch>.checkpoint serves a target N when its
end offset is <= N+1, and not below the log start offset), then the
metadata log's records after it, up to and
including the target, each replayed by the rules of Kafka 4.x's image
deltas (TopicsDelta, TopicDelta with PartitionRegistration.merge,
ClusterDelta, ConfigurationsDelta, FeaturesDelta). Records inside a
metadata transaction (BeginTransactionRecord .. EndTransactionRecord) are
applied when it ends; an AbortTransactionRecord drops them; a transaction
still open at the target is not applied. PATH is a data directory holding
__cluster_metadata-0, that directory, or one snapshot (its image alone).

--offset N: the image as of offset N. --at T: as of the last record with a
timestamp <= T (ms, RFC 3339, a date or relative such as -1h). Default: the
log end. --topic NAME keeps that topic's lines and the summary.

JSON lines, by kind:
  topic       name topic_id partitions replication_factor configs (the
              topic's own dynamic configs)
  partition   topic partition replicas isr leader leader_epoch
              partition_epoch elr last_known_elr directories
              removing_replicas adding_replicas leader_recovery_state
  broker      id epoch incarnation_id fenced in_controlled_shutdown
              is_migrating_zk_broker listeners (name host port
              security_protocol) rack log_dirs features (name min max)
  controller  id incarnation_id zk_migration_ready listeners features
  config      resource_type (topic, broker, broker_logger, client_metrics,
              group, unknown) resource_name ("" for the brokers'
              cluster-wide default) name value
  feature     name level (metadata.version among them)
  stray       partition_dir topic partition topic_id reason: a partition
              directory beside __cluster_metadata-0 that the image does
              not assign to this node (LogManager.isStrayKraftReplica: no
              topic id, a topic id or partition not in the image, or a
              replica list without meta.properties' node.id); only when
              PATH is a data directory and the image is complete
  unapplied   file position (of the record's batch) offset type reason: a
              record the rules refuse (a PartitionChangeRecord for a topic
              the image does not hold, a fence of an unregistered broker)
              or that does not decode (an unknown api key or version); the
              broker's loader reports those to its fault handler
  summary     snapshot (file or null) applied_from applied_to (the log
              offsets read after the snapshot; null when none) topics
              partitions brokers target_offset log_start_offset
              log_end_offset records snapshot_records last_timestamp
              open_transaction (first offset, or null)
              committed_transactions aborted_transactions unapplied
              incomplete (why the image lacks records the cluster had, or
              null: the log does not start at 0 and no snapshot covers
              what came before)

The table reads like kafka-topics --describe: each topic, then its
partitions' leader, replicas, ISR and ELR; then brokers, controllers,
configs of other resources, features, strays and unapplied records, and
the summary under them. -o wide adds every field; -o csv lists the
partitions (one row each, with the topic id).

Damage in the metadata log ends the image there (what a broker's recovery
keeps): it is printed, the error names the file and byte position, and
the exit code is 2. Exit 2 also when PATH holds no metadata log or the
snapshot to start from cannot be loaded (a broker could not either); 1
when --topic names a topic the image does not hold; else 0.`

func newMetadataCommand(ios *IOStreams) *cobra.Command {
	var opts metadataOptions
	c := &cobra.Command{
		Use:   "metadata PATH [--at T | --offset N] [--topic NAME]",
		Short: "Rebuild the KRaft cluster metadata image from __cluster_metadata-0, offline",
		Long:  metadataLong,
		Example: `  kseg metadata /var/lib/kafka/data
  kseg metadata /var/lib/kafka/data --at 2024-05-01T10:00:00Z --topic orders
  kseg metadata -o json /var/lib/kafka/data/__cluster_metadata-0 | jq -c 'select(.kind=="partition" and (.isr|length) < (.replicas|length))'
  kseg metadata --offset 78269 data/__cluster_metadata-0`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.path = args[0]
			if err := opts.Validate(); err != nil {
				return err
			}
			return runMetadata(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

func runMetadata(ios *IOStreams, opts metadataOptions) error {
	bar := ios.progress("metadata")
	defer bar.done()
	opts.lib.Progress = bar.callback()
	im, err := metadata.Load(opts.path, opts.lib)
	bar.done()
	if err != nil {
		if errors.Is(err, metadata.ErrNoMetadataLog) {
			return withHint(err, "name a KRaft data directory, its __cluster_metadata-0 directory or a snapshot in it (kseg ls PATH lists what is there)")
		}
		return err
	}
	lines := im.Lines(opts.topic)
	if err := renderMetadata(ios, im, lines); err != nil {
		return err
	}
	if im.Incomplete != "" {
		ios.Warnf("the image is incomplete: %s", im.Incomplete)
	}
	if im.Damage != nil {
		return fmt.Errorf("%w (the image holds the records before it; run kseg verify %s)", im.Damage, opts.path)
	}
	if opts.topic != "" {
		if _, ok := im.Topic(opts.topic); !ok {
			ios.Warnf("no topic %q in the image at offset %d", opts.topic, im.Target)
			return errNegative("no such topic")
		}
	}
	return nil
}

// renderMetadata writes the lines (Image.Lines, each a *metadata.*Line):
// JSON Lines as they come, CSV the partitions, tables by section
// (metadata_table.go).
func renderMetadata(ios *IOStreams, im *metadata.Image, lines []any) error {
	switch ios.Format() {
	case FormatJSON:
		l := newLister(ios, []column[any]{})
		for _, line := range lines {
			l.Add(line)
		}
		return l.Close()
	case FormatCSV:
		l := newLister(ios, metaPartitionColumns)
		for _, line := range lines {
			if p, ok := line.(*metadata.PartitionLine); ok {
				l.Add(p)
			}
		}
		return l.Close()
	}
	return metadataTables(ios, im, lines)
}

func intsCSV(v []int32) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}

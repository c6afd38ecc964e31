package cmd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
	lines := metadataLines(im, opts.topic)
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

// metadataLine is one line of kseg metadata: a *meta*JSON of its kind.
type metadataLine struct{ v any }

func (l metadataLine) MarshalJSON() ([]byte, error) { return marshalJSON(l.v) }

type metaTopicJSON struct {
	Kind              string            `json:"kind"`
	Name              string            `json:"name"`
	TopicID           string            `json:"topic_id"`
	Partitions        int               `json:"partitions"`
	ReplicationFactor int               `json:"replication_factor"`
	Configs           map[string]string `json:"configs"`
}

type metaPartitionJSON struct {
	Kind                string   `json:"kind"`
	Topic               string   `json:"topic"`
	TopicID             string   `json:"topic_id"`
	Partition           int32    `json:"partition"`
	Replicas            []int32  `json:"replicas"`
	ISR                 []int32  `json:"isr"`
	Leader              int32    `json:"leader"`
	LeaderEpoch         int32    `json:"leader_epoch"`
	PartitionEpoch      int32    `json:"partition_epoch"`
	ELR                 []int32  `json:"elr"`
	LastKnownELR        []int32  `json:"last_known_elr"`
	Directories         []string `json:"directories"`
	RemovingReplicas    []int32  `json:"removing_replicas"`
	AddingReplicas      []int32  `json:"adding_replicas"`
	LeaderRecoveryState string   `json:"leader_recovery_state"`
}

type metaEndpointJSON struct {
	Name             string `json:"name"`
	Host             string `json:"host"`
	Port             uint16 `json:"port"`
	SecurityProtocol string `json:"security_protocol"`
}

type metaFeatureRangeJSON struct {
	Name string `json:"name"`
	Min  int16  `json:"min"`
	Max  int16  `json:"max"`
}

type metaBrokerJSON struct {
	Kind                 string                 `json:"kind"`
	ID                   int32                  `json:"id"`
	Epoch                int64                  `json:"epoch"`
	IncarnationID        string                 `json:"incarnation_id"`
	Fenced               bool                   `json:"fenced"`
	InControlledShutdown bool                   `json:"in_controlled_shutdown"`
	IsMigratingZkBroker  bool                   `json:"is_migrating_zk_broker"`
	Listeners            []metaEndpointJSON     `json:"listeners"`
	Rack                 *string                `json:"rack"`
	LogDirs              []string               `json:"log_dirs"`
	Features             []metaFeatureRangeJSON `json:"features"`
}

type metaControllerJSON struct {
	Kind             string                 `json:"kind"`
	ID               int32                  `json:"id"`
	IncarnationID    string                 `json:"incarnation_id"`
	ZkMigrationReady bool                   `json:"zk_migration_ready"`
	Listeners        []metaEndpointJSON     `json:"listeners"`
	Features         []metaFeatureRangeJSON `json:"features"`
}

type metaConfigJSON struct {
	Kind         string `json:"kind"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	Name         string `json:"name"`
	Value        string `json:"value"`
}

type metaFeatureJSON struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

type metaStrayJSON struct {
	Kind         string `json:"kind"`
	PartitionDir string `json:"partition_dir"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	TopicID      string `json:"topic_id"`
	Reason       string `json:"reason"`
}

type metaUnappliedJSON struct {
	Kind     string `json:"kind"`
	File     string `json:"file"`
	Position int64  `json:"position"`
	Offset   int64  `json:"offset"`
	Type     string `json:"type"`
	Reason   string `json:"reason"`
}

type metaSummaryJSON struct {
	Kind                  string  `json:"kind"`
	Snapshot              *string `json:"snapshot"`
	AppliedFrom           *int64  `json:"applied_from"`
	AppliedTo             *int64  `json:"applied_to"`
	Topics                int     `json:"topics"`
	Partitions            int     `json:"partitions"`
	Brokers               int     `json:"brokers"`
	TargetOffset          int64   `json:"target_offset"`
	LogStartOffset        int64   `json:"log_start_offset"`
	LogEndOffset          int64   `json:"log_end_offset"`
	Records               int64   `json:"records"`
	SnapshotRecords       int64   `json:"snapshot_records"`
	LastTimestamp         *int64  `json:"last_timestamp"`
	OpenTransaction       *int64  `json:"open_transaction"`
	CommittedTransactions int     `json:"committed_transactions"`
	AbortedTransactions   int     `json:"aborted_transactions"`
	Unapplied             int     `json:"unapplied"`
	Incomplete            *string `json:"incomplete"`
}

// securityProtocols names SecurityProtocol ids.
var securityProtocols = map[int16]string{0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}

func endpointsJSON(es []metadata.Endpoint) []metaEndpointJSON {
	out := make([]metaEndpointJSON, len(es))
	for i, e := range es {
		p, ok := securityProtocols[e.SecurityProtocol]
		if !ok {
			p = "unknown(" + strconv.Itoa(int(e.SecurityProtocol)) + ")"
		}
		out[i] = metaEndpointJSON{e.Name, e.Host, e.Port, p}
	}
	return out
}

func featureRangesJSON(fs []metadata.FeatureRange) []metaFeatureRangeJSON {
	out := make([]metaFeatureRangeJSON, len(fs))
	for i, f := range fs {
		out[i] = metaFeatureRangeJSON{f.Name, f.Min, f.Max}
	}
	return out
}

func orNullInt(v, none int64) *int64 {
	if v == none {
		return nil
	}
	return &v
}

// metadataLines turns the image into its lines, in the order listed in
// the help: topics with their partitions, brokers, controllers, configs,
// features, strays, unapplied records, the summary. topic, when not "",
// keeps that topic's lines and the summary.
func metadataLines(im *metadata.Image, topic string) []metadataLine {
	out := topicLines(im, topic)
	if topic == "" {
		out = append(out, clusterLines(im)...)
	}
	for _, r := range im.Resources() {
		if topic != "" && (r.Type != metadata.ResourceTopic || r.Name != topic) {
			continue
		}
		cfg := im.Config(r)
		for _, name := range slices.Sorted(maps.Keys(cfg)) {
			out = append(out, metadataLine{&metaConfigJSON{Kind: "config", ResourceType: r.Type.String(), ResourceName: r.Name, Name: name, Value: cfg[name]}})
		}
	}
	if topic == "" {
		for _, name := range slices.Sorted(maps.Keys(im.Features)) {
			out = append(out, metadataLine{&metaFeatureJSON{Kind: "feature", Name: name, Level: im.Features[name]}})
		}
	}
	for _, s := range im.Strays {
		if topic == "" || s.Topic == topic {
			out = append(out, metadataLine{&metaStrayJSON{Kind: "stray", PartitionDir: s.Dir, Topic: s.Topic, Partition: s.Partition, TopicID: s.TopicID, Reason: s.Reason}})
		}
	}
	if topic == "" {
		for _, u := range im.Unapplied {
			out = append(out, metadataLine{&metaUnappliedJSON{Kind: "unapplied", File: u.File, Position: u.Position, Offset: u.Offset, Type: u.Type, Reason: u.Reason}})
		}
	}
	return append(out, metadataLine{metadataSummary(im)})
}

// topicLines are each topic's line and its partitions' (one topic's when
// topic is not "").
func topicLines(im *metadata.Image, topic string) []metadataLine {
	var out []metadataLine
	for _, name := range im.TopicNames() {
		if topic != "" && name != topic {
			continue
		}
		t := im.Topics[name]
		cfg := im.TopicConfig(name)
		if cfg == nil {
			cfg = map[string]string{}
		}
		tl := &metaTopicJSON{Kind: "topic", Name: name, TopicID: t.ID, Partitions: len(t.Partitions), Configs: cfg}
		ids := t.PartitionIDs()
		if len(ids) > 0 {
			tl.ReplicationFactor = len(t.Partitions[ids[0]].Replicas) // TopicCommand: the first partition's
		}
		out = append(out, metadataLine{tl})
		for _, id := range ids {
			p := t.Partitions[id]
			lrs := "recovered"
			if p.LeaderRecoveryState == 1 {
				lrs = "recovering"
			}
			out = append(out, metadataLine{&metaPartitionJSON{Kind: "partition", Topic: name, TopicID: t.ID, Partition: id,
				Replicas: p.Replicas, ISR: p.ISR, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
				ELR: p.ELR, LastKnownELR: p.LastKnownELR, Directories: p.Directories, RemovingReplicas: p.RemovingReplicas,
				AddingReplicas: p.AddingReplicas, LeaderRecoveryState: lrs}})
		}
	}
	return out
}

// clusterLines are the brokers' and controllers' lines.
func clusterLines(im *metadata.Image) []metadataLine {
	var out []metadataLine
	for _, id := range im.BrokerIDs() {
		b := im.Brokers[id]
		out = append(out, metadataLine{&metaBrokerJSON{Kind: "broker", ID: id, Epoch: b.Epoch, IncarnationID: b.IncarnationID,
			Fenced: b.Fenced, InControlledShutdown: b.InControlledShutdown, IsMigratingZkBroker: b.IsMigratingZkBroker,
			Listeners: endpointsJSON(b.Listeners), Rack: b.Rack, LogDirs: b.LogDirs, Features: featureRangesJSON(b.Features)}})
	}
	for _, id := range im.ControllerIDs() {
		c := im.Controllers[id]
		out = append(out, metadataLine{&metaControllerJSON{Kind: "controller", ID: id, IncarnationID: c.IncarnationID,
			ZkMigrationReady: c.ZkMigrationReady, Listeners: endpointsJSON(c.Listeners), Features: featureRangesJSON(c.Features)}})
	}
	return out
}

func metadataSummary(im *metadata.Image) *metaSummaryJSON {
	sum := &metaSummaryJSON{Kind: "summary", Topics: len(im.Topics), Partitions: im.PartitionCount(), Brokers: len(im.Brokers),
		TargetOffset: im.Target, LogStartOffset: im.LogStartOffset, LogEndOffset: im.LogEndOffset, Records: im.Records,
		SnapshotRecords: im.SnapshotRecords, LastTimestamp: orNullInt(im.LastTimestamp, -1), OpenTransaction: orNullInt(im.OpenTransaction, -1),
		CommittedTransactions: im.CommittedTransactions, AbortedTransactions: im.AbortedTransactions, Unapplied: len(im.Unapplied)}
	if im.Snapshot != nil {
		sum.Snapshot = ptr(im.Snapshot.Path)
	}
	if im.AppliedTo >= im.AppliedFrom {
		sum.AppliedFrom, sum.AppliedTo = ptr(im.AppliedFrom), ptr(im.AppliedTo)
	}
	if im.Incomplete != "" {
		sum.Incomplete = ptr(im.Incomplete)
	}
	return sum
}

// renderMetadata writes the lines: JSON Lines as they come, CSV the
// partitions, tables by section (metadata_table.go).
func renderMetadata(ios *IOStreams, im *metadata.Image, lines []metadataLine) error {
	switch ios.Format() {
	case FormatJSON:
		l := newLister(ios, []column[metadataLine]{})
		for _, line := range lines {
			l.Add(line)
		}
		return l.Close()
	case FormatCSV:
		l := newLister(ios, metaPartitionColumns)
		for _, line := range lines {
			if _, ok := line.v.(*metaPartitionJSON); ok {
				l.Add(line)
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

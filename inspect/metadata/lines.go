package metadata

import (
	"maps"
	"slices"
	"strconv"
)

// The lines of kseg metadata's JSON (docs/cli-contract.md, "kseg
// metadata"): one type per kind, with the contract's field names.

// TopicLine is a topic: its id, partition count, replication factor (the
// first partition's replica count, as kafka-topics --describe reports it)
// and its own dynamic configs.
type TopicLine struct {
	Kind              string            `json:"kind"`
	Name              string            `json:"name"`
	TopicID           string            `json:"topic_id"`
	Partitions        int               `json:"partitions"`
	ReplicationFactor int               `json:"replication_factor"`
	Configs           map[string]string `json:"configs"`
}

type PartitionLine struct {
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

type EndpointLine struct {
	Name             string `json:"name"`
	Host             string `json:"host"`
	Port             uint16 `json:"port"`
	SecurityProtocol string `json:"security_protocol"`
}

type FeatureRangeLine struct {
	Name string `json:"name"`
	Min  int16  `json:"min"`
	Max  int16  `json:"max"`
}

type BrokerLine struct {
	Kind                 string             `json:"kind"`
	ID                   int32              `json:"id"`
	Epoch                int64              `json:"epoch"`
	IncarnationID        string             `json:"incarnation_id"`
	Fenced               bool               `json:"fenced"`
	InControlledShutdown bool               `json:"in_controlled_shutdown"`
	IsMigratingZkBroker  bool               `json:"is_migrating_zk_broker"`
	Listeners            []EndpointLine     `json:"listeners"`
	Rack                 *string            `json:"rack"`
	LogDirs              []string           `json:"log_dirs"`
	Features             []FeatureRangeLine `json:"features"`
}

type ControllerLine struct {
	Kind             string             `json:"kind"`
	ID               int32              `json:"id"`
	IncarnationID    string             `json:"incarnation_id"`
	ZkMigrationReady bool               `json:"zk_migration_ready"`
	Listeners        []EndpointLine     `json:"listeners"`
	Features         []FeatureRangeLine `json:"features"`
}

type ConfigLine struct {
	Kind         string `json:"kind"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	Name         string `json:"name"`
	Value        string `json:"value"`
}

type FeatureLine struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

type StrayLine struct {
	Kind         string `json:"kind"`
	PartitionDir string `json:"partition_dir"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	TopicID      string `json:"topic_id"`
	Reason       string `json:"reason"`
}

type UnappliedLine struct {
	Kind     string `json:"kind"`
	File     string `json:"file"`
	Position int64  `json:"position"`
	Offset   int64  `json:"offset"`
	Type     string `json:"type"`
	Reason   string `json:"reason"`
}

type SummaryLine struct {
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

func endpointLines(es []Endpoint) []EndpointLine {
	out := make([]EndpointLine, len(es))
	for i, e := range es {
		p, ok := securityProtocols[e.SecurityProtocol]
		if !ok {
			p = "unknown(" + strconv.Itoa(int(e.SecurityProtocol)) + ")"
		}
		out[i] = EndpointLine{e.Name, e.Host, e.Port, p}
	}
	return out
}

func featureRangeLines(fs []FeatureRange) []FeatureRangeLine {
	out := make([]FeatureRangeLine, len(fs))
	for i, f := range fs {
		out[i] = FeatureRangeLine(f)
	}
	return out
}

func orNullInt(v, none int64) *int64 {
	if v == none {
		return nil
	}
	return &v
}

// Lines are the image as kseg metadata prints it (docs/cli-contract.md,
// "kseg metadata"), each a pointer to one of the *Line types, in this
// order: topics with their partitions, brokers, controllers, configs,
// features, strays, unapplied records, the summary. topic, when not "",
// keeps that topic's lines (its partitions, configs and strays) and the
// summary.
func (im *Image) Lines(topic string) []any {
	out := topicLines(im, topic)
	if topic == "" {
		out = append(out, clusterLines(im)...)
	}
	for _, r := range im.Resources() {
		if topic != "" && (r.Type != ResourceTopic || r.Name != topic) {
			continue
		}
		cfg := im.Config(r)
		for _, name := range slices.Sorted(maps.Keys(cfg)) {
			out = append(out, &ConfigLine{Kind: "config", ResourceType: r.Type.String(), ResourceName: r.Name, Name: name, Value: cfg[name]})
		}
	}
	if topic == "" {
		for _, name := range slices.Sorted(maps.Keys(im.Features)) {
			out = append(out, &FeatureLine{Kind: "feature", Name: name, Level: im.Features[name]})
		}
	}
	for _, s := range im.Strays {
		if topic == "" || s.Topic == topic {
			out = append(out, &StrayLine{Kind: "stray", PartitionDir: s.Dir, Topic: s.Topic, Partition: s.Partition, TopicID: s.TopicID, Reason: s.Reason})
		}
	}
	if topic == "" {
		for _, u := range im.Unapplied {
			out = append(out, &UnappliedLine{Kind: "unapplied", File: u.File, Position: u.Position, Offset: u.Offset, Type: u.Type, Reason: u.Reason})
		}
	}
	return append(out, metadataSummary(im))
}

// topicLines are each topic's line and its partitions' (one topic's when
// topic is not "").
func topicLines(im *Image, topic string) []any {
	var out []any
	for _, name := range im.TopicNames() {
		if topic != "" && name != topic {
			continue
		}
		t := im.Topics[name]
		cfg := im.TopicConfig(name)
		if cfg == nil {
			cfg = map[string]string{}
		}
		tl := &TopicLine{Kind: "topic", Name: name, TopicID: t.ID, Partitions: len(t.Partitions), Configs: cfg}
		ids := t.PartitionIDs()
		if len(ids) > 0 {
			tl.ReplicationFactor = len(t.Partitions[ids[0]].Replicas) // TopicCommand: the first partition's
		}
		out = append(out, tl)
		for _, id := range ids {
			p := t.Partitions[id]
			lrs := "recovered"
			if p.LeaderRecoveryState == 1 {
				lrs = "recovering"
			}
			out = append(out, &PartitionLine{Kind: "partition", Topic: name, TopicID: t.ID, Partition: id,
				Replicas: p.Replicas, ISR: p.ISR, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
				ELR: p.ELR, LastKnownELR: p.LastKnownELR, Directories: p.Directories, RemovingReplicas: p.RemovingReplicas,
				AddingReplicas: p.AddingReplicas, LeaderRecoveryState: lrs})
		}
	}
	return out
}

// clusterLines are the brokers' and controllers' lines.
func clusterLines(im *Image) []any {
	var out []any
	for _, id := range im.BrokerIDs() {
		b := im.Brokers[id]
		out = append(out, &BrokerLine{Kind: "broker", ID: id, Epoch: b.Epoch, IncarnationID: b.IncarnationID,
			Fenced: b.Fenced, InControlledShutdown: b.InControlledShutdown, IsMigratingZkBroker: b.IsMigratingZkBroker,
			Listeners: endpointLines(b.Listeners), Rack: b.Rack, LogDirs: b.LogDirs, Features: featureRangeLines(b.Features)})
	}
	for _, id := range im.ControllerIDs() {
		c := im.Controllers[id]
		out = append(out, &ControllerLine{Kind: "controller", ID: id, IncarnationID: c.IncarnationID,
			ZkMigrationReady: c.ZkMigrationReady, Listeners: endpointLines(c.Listeners), Features: featureRangeLines(c.Features)})
	}
	return out
}

// metadataSummary is the image's summary line: null for what the image
// does not have (no snapshot, no record applied, no timestamp).
func metadataSummary(im *Image) *SummaryLine {
	sum := &SummaryLine{Kind: "summary", Topics: len(im.Topics), Partitions: im.PartitionCount(), Brokers: len(im.Brokers),
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

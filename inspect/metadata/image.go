// Package metadata rebuilds a KRaft cluster's metadata image offline, from
// the __cluster_metadata-0 directory of a controller or broker, as the
// broker does when it starts (MetadataLoader): the latest snapshot that the
// target covers, then the metadata log's records after it, in offset
// order, each replayed by the rules of Kafka's image deltas
// (metadata/src/main/java/org/apache/kafka/image/*Delta.java,
// PartitionRegistration.merge, BrokerRegistration), the records of a
// metadata transaction applied only when it ends (MetadataBatchLoader).
//
// Load is the entry point; an Image answers what the cluster believed:
// its topics and their partitions, brokers and controllers, dynamic
// configs of every resource, and feature levels. Records the rules cannot
// apply (a partition change for a topic that does not exist, a record
// kseg cannot decode) are skipped and listed in Image.Unapplied, as the
// broker's loader reports them to its fault handler and goes on.
package metadata

import (
	"maps"
	"slices"
	"sort"

	"github.com/kseg/kseg/inspect"
)

// Image is the metadata image at a log offset, with where it came from.
// Its maps are the image's own: read them, do not change them.
type Image struct {
	// Topics by name (TopicsImage.topicsByName) and by id.
	Topics     map[string]*Topic
	TopicsByID map[string]*Topic
	// Brokers and Controllers by node id (ClusterImage).
	Brokers     map[int32]*Broker
	Controllers map[int32]*Controller
	// Configs by resource (ConfigurationsImage): only resources with at
	// least one config.
	Configs map[ConfigResource]map[string]string
	// Features are the finalized feature levels (FeaturesImage), with
	// metadata.version among them once a FeatureLevelRecord set it.
	Features map[string]int16
	// ZkMigrationState is the ZkMigrationStateRecord's state, -1 when
	// none was read.
	ZkMigrationState int8
	// NextProducerID is the ProducerIdsRecord's next producer id
	// (ProducerIdsImage), -1 when none was read.
	NextProducerID int64

	// Provenance.

	// Dir is the __cluster_metadata-0 directory read.
	Dir string
	// Snapshot is the snapshot the image starts from; nil when it starts
	// from an empty image at the log's first record.
	Snapshot *inspect.MetadataSnapshot
	// SnapshotRecords counts the records replayed from the snapshot.
	SnapshotRecords int64
	// AppliedFrom and AppliedTo are the first and last offsets of the
	// metadata log whose records were read for the image (records of a
	// transaction left open at AppliedTo included, though not applied);
	// AppliedTo < AppliedFrom when none was.
	AppliedFrom, AppliedTo int64
	// Records counts the log records applied (transaction markers and
	// records of aborted or open transactions not included).
	Records int64
	// LastTimestamp is the append time of the last batch read (snapshot
	// or log; the snapshot header's last contained log timestamp when the
	// log added nothing), -1 when none (MetadataProvenance).
	LastTimestamp int64
	// LogStartOffset and LogEndOffset are the metadata log's first offset
	// and the offset after its last record, as found on disk.
	LogStartOffset, LogEndOffset int64
	// Target is the last offset the image covers, as asked (Options); -1
	// before the first record.
	Target int64
	// Incomplete, when not "", says why the image lacks records the
	// cluster had: the log does not start at 0 and no snapshot at or below
	// the target covers what came before, or the log starts after the
	// snapshot's end.
	Incomplete string
	// OpenTransaction is the first offset of a metadata transaction still
	// open at the target (its records are not applied), -1 when none.
	OpenTransaction int64
	// AbortedTransactions and CommittedTransactions count the metadata
	// transactions that ended in the records read.
	AbortedTransactions, CommittedTransactions int
	// Unapplied lists the records the rules could not apply, in the order
	// met.
	Unapplied []Unapplied
	// Damage is where reading the metadata log stopped at damage (a
	// *fileio.CorruptError naming the file and byte position), nil when it
	// read up to the target: the image holds what came before it, which
	// is what a broker's recovery keeps.
	Damage error
	// Strays are the partition directories beside __cluster_metadata-0
	// that the image does not assign here (LogManager.isStrayKraftReplica),
	// when Load was given a data directory and the image is complete.
	Strays []Stray
}

// Topic is one topic of the image (TopicImage).
type Topic struct {
	Name string
	// ID is the topic id as Kafka prints it (Uuid.toString: URL-safe
	// base64 without padding).
	ID         string
	Partitions map[int32]*Partition
}

// Partition is one partition's registration (PartitionRegistration).
// Broker id lists are as the records set them.
type Partition struct {
	Replicas         []int32
	ISR              []int32
	RemovingReplicas []int32
	AddingReplicas   []int32
	// ELR and LastKnownELR are the eligible leader replicas and the last
	// known ELR (KIP-966), empty when never set.
	ELR          []int32
	LastKnownELR []int32
	// Directories are the log directory ids of the replicas, in their
	// order; "AAAAAAAAAAAAAAAAAAAAAA" (DirectoryId.MIGRATING) when not
	// assigned.
	Directories []string
	Leader      int32 // -1: no leader
	// LeaderRecoveryState is 0 (RECOVERED) or 1 (RECOVERING, after an
	// unclean election).
	LeaderRecoveryState int8
	LeaderEpoch         int32
	PartitionEpoch      int32
}

// Broker is one broker's registration (BrokerRegistration).
type Broker struct {
	ID                   int32
	Epoch                int64
	IncarnationID        string
	Listeners            []Endpoint // by name
	Features             []FeatureRange
	Rack                 *string
	Fenced               bool
	InControlledShutdown bool
	IsMigratingZkBroker  bool
	LogDirs              []string // sorted, as BrokerRegistration sorts them
}

// Controller is one controller's registration (ControllerRegistration).
type Controller struct {
	ID               int32
	IncarnationID    string
	ZkMigrationReady bool
	Listeners        []Endpoint // by name
	Features         []FeatureRange
}

// Endpoint is a listener of a broker or controller.
type Endpoint struct {
	Name             string
	Host             string
	Port             uint16
	SecurityProtocol int16 // SecurityProtocol ids: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL
}

// FeatureRange is a feature a node supports, by level.
type FeatureRange struct {
	Name     string
	Min, Max int16
}

// ResourceType is a config resource's type (ConfigResource.Type ids).
type ResourceType int8

// Resource types of ConfigRecord.resourceType.
const (
	ResourceUnknown       ResourceType = 0
	ResourceTopic         ResourceType = 2
	ResourceBroker        ResourceType = 4
	ResourceBrokerLogger  ResourceType = 8
	ResourceClientMetrics ResourceType = 16
	ResourceGroup         ResourceType = 32
)

// String is the type's name in snake case: topic, broker, broker_logger,
// client_metrics, group, unknown.
func (t ResourceType) String() string {
	switch t {
	case ResourceTopic:
		return "topic"
	case ResourceBroker:
		return "broker"
	case ResourceBrokerLogger:
		return "broker_logger"
	case ResourceClientMetrics:
		return "client_metrics"
	case ResourceGroup:
		return "group"
	}
	return "unknown"
}

// resourceType is ConfigResource.Type.forId: an id it does not know is
// UNKNOWN.
func resourceType(id int8) ResourceType {
	switch t := ResourceType(id); t {
	case ResourceTopic, ResourceBroker, ResourceBrokerLogger, ResourceClientMetrics, ResourceGroup:
		return t
	}
	return ResourceUnknown
}

// ConfigResource names the resource a config belongs to. A broker's name
// is its id in decimal; "" is the cluster-wide default of brokers.
type ConfigResource struct {
	Type ResourceType
	Name string
}

// Unapplied is a record the image's rules could not apply.
type Unapplied struct {
	// File and Position are the log segment (or snapshot) and the byte
	// position of the record's batch.
	File     string
	Position int64
	// Offset is the record's offset in the log (in the snapshot's own
	// offsets for a snapshot's record).
	Offset int64
	// Type is the record type's name ("unknown" when it does not decode).
	Type string
	// Reason says why, citing the broker's rule.
	Reason string
}

// Stray is a partition directory the image does not assign to this node.
type Stray struct {
	Dir       string
	Topic     string
	Partition int32
	TopicID   string // from partition.metadata; "" when it has none
	Reason    string
}

func newImage() *Image {
	return &Image{
		Topics: map[string]*Topic{}, TopicsByID: map[string]*Topic{},
		Brokers: map[int32]*Broker{}, Controllers: map[int32]*Controller{},
		Configs: map[ConfigResource]map[string]string{}, Features: map[string]int16{},
		ZkMigrationState: -1, NextProducerID: -1,
		AppliedFrom: 0, AppliedTo: -1, LastTimestamp: -1, Target: -1, OpenTransaction: -1,
	}
}

// Topic returns the topic named name.
func (im *Image) Topic(name string) (*Topic, bool) {
	t, ok := im.Topics[name]
	return t, ok
}

// TopicNames returns the names of the image's topics, sorted.
func (im *Image) TopicNames() []string { return slices.Sorted(maps.Keys(im.Topics)) }

// BrokerIDs returns the ids of the registered brokers, sorted.
func (im *Image) BrokerIDs() []int32 { return slices.Sorted(maps.Keys(im.Brokers)) }

// ControllerIDs returns the ids of the registered controllers, sorted.
func (im *Image) ControllerIDs() []int32 { return slices.Sorted(maps.Keys(im.Controllers)) }

// Resources returns the config resources, by type then name.
func (im *Image) Resources() []ConfigResource {
	rs := slices.Collect(maps.Keys(im.Configs))
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Type != rs[j].Type {
			return rs[i].Type < rs[j].Type
		}
		return rs[i].Name < rs[j].Name
	})
	return rs
}

// Config returns the configs the image holds for one resource (nil when
// none), keyed by config name.
func (im *Image) Config(r ConfigResource) map[string]string { return im.Configs[r] }

// TopicConfig returns a topic's own configs: the dynamic topic-level
// overrides set with ConfigRecords on the topic (`kafka-configs --entity-type
// topics`), nil when it has none. A topic's effective value of a config it
// does not set comes from the broker (BrokerConfig), then from the
// broker's static configuration and Kafka's defaults, which the metadata
// log does not hold.
func (im *Image) TopicConfig(topic string) map[string]string {
	return im.Configs[ConfigResource{ResourceTopic, topic}]
}

// BrokerConfig returns the dynamic broker-level configs in effect on a
// broker: the cluster-wide defaults (resource BROKER "") with the
// broker's own (resource BROKER "<id>") over them, as
// DynamicBrokerConfig layers them. A negative id gives the cluster-wide
// defaults alone. The map is the caller's.
func (im *Image) BrokerConfig(id int32) map[string]string {
	out := maps.Clone(im.Configs[ConfigResource{ResourceBroker, ""}])
	if id >= 0 {
		own := im.Configs[ConfigResource{ResourceBroker, itoa(id)}]
		if out == nil && own != nil {
			out = map[string]string{}
		}
		maps.Copy(out, own)
	}
	return out
}

// PartitionIDs returns the topic's partition ids, sorted.
func (t *Topic) PartitionIDs() []int32 { return slices.Sorted(maps.Keys(t.Partitions)) }

// PartitionCount counts the topic's partitions.
func (im *Image) PartitionCount() int {
	n := 0
	for _, t := range im.Topics {
		n += len(t.Partitions)
	}
	return n
}

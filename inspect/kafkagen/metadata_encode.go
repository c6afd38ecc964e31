package kafkagen

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// KRaft metadata records, written from the message definitions
// (metadata/src/main/resources/common/metadata/*.json) and their framing
// (AbstractApiMessageSerde: unsigned varints frame version 1, api key,
// version, then the message). Every metadata record is flexible: compact
// strings and arrays (unsigned varint length+1, 0 = null) and a tagged
// field section (unsigned varint count, then tag, size, data, by tag).

// Metadata record types (MetadataRecordType) the generator writes.
const (
	RegisterBrokerRecord           = "RegisterBrokerRecord"
	UnregisterBrokerRecord         = "UnregisterBrokerRecord"
	TopicRecord                    = "TopicRecord"
	PartitionRecord                = "PartitionRecord"
	ConfigRecord                   = "ConfigRecord"
	PartitionChangeRecord          = "PartitionChangeRecord"
	FenceBrokerRecord              = "FenceBrokerRecord"
	UnfenceBrokerRecord            = "UnfenceBrokerRecord"
	RemoveTopicRecord              = "RemoveTopicRecord"
	FeatureLevelRecord             = "FeatureLevelRecord"
	ProducerIdsRecord              = "ProducerIdsRecord"
	BrokerRegistrationChangeRecord = "BrokerRegistrationChangeRecord"
	NoOpRecord                     = "NoOpRecord"
	BeginTransactionRecord         = "BeginTransactionRecord"
	EndTransactionRecord           = "EndTransactionRecord"
	AbortTransactionRecord         = "AbortTransactionRecord"
	RegisterControllerRecord       = "RegisterControllerRecord"
)

// metadataKinds are the api key and the version written of each type.
var metadataKinds = map[string]struct{ apiKey, version uint64 }{
	RegisterBrokerRecord: {0, 3}, UnregisterBrokerRecord: {1, 0}, TopicRecord: {2, 0}, PartitionRecord: {3, 1},
	ConfigRecord: {4, 0}, PartitionChangeRecord: {5, 1}, FenceBrokerRecord: {7, 0}, UnfenceBrokerRecord: {8, 0},
	RemoveTopicRecord: {9, 0}, FeatureLevelRecord: {12, 0}, ProducerIdsRecord: {15, 0}, BrokerRegistrationChangeRecord: {17, 1},
	NoOpRecord: {20, 0}, BeginTransactionRecord: {23, 0}, EndTransactionRecord: {24, 0}, AbortTransactionRecord: {25, 0},
	RegisterControllerRecord: {27, 0},
}

// NoLeaderChange is MetadataEvent.Leader of a PartitionChangeRecord that
// leaves the leader as it is (the record's default, -2).
const NoLeaderChange = -2

// MetadataEvent is one metadata record as the generator means it: its
// type and the fields of that type (others are zero). It is the manifest's
// account of a metadata log, and what AppendMetadataRecord encodes.
type MetadataEvent struct {
	Offset    int64 // in the log (in the snapshot's own offsets for a snapshot's records)
	Timestamp int64 // the batch's append time
	Type      string
	// Raw, when set, is written as the record's value instead of an
	// encoding of the fields (hand-built bad records).
	Raw []byte

	// TopicRecord, PartitionRecord, PartitionChangeRecord, RemoveTopicRecord.
	Topic     string
	TopicID   string // Uuid.toString form
	Partition int32
	// Replicas, ISR and Directories: a PartitionChangeRecord's are nil
	// when unchanged.
	Replicas, ISR []int32
	Directories   []string
	// Leader: a PartitionChangeRecord's is NoLeaderChange when unchanged.
	Leader                      int32
	LeaderEpoch, PartitionEpoch int32 // PartitionRecord

	// Broker records (and RegisterControllerRecord's id in Broker).
	Broker      int32
	BrokerEpoch int64
	// Fenced: RegisterBrokerRecord 1 or 0; BrokerRegistrationChangeRecord
	// 1 (fence), -1 (unfence) or 0.
	Fenced               int8
	InControlledShutdown int8
	Host                 string
	Port                 uint16
	Rack                 *string
	LogDirs              []string

	// ConfigRecord.
	ResourceType int8 // 2 topic, 4 broker
	ResourceName string
	ConfigName   string
	ConfigValue  *string // nil: the config is removed

	// FeatureLevelRecord.
	Feature string
	Level   int16

	// ProducerIdsRecord.
	NextProducerID int64
}

// metaWriter appends the flexible encodings.
type metaWriter struct{ b []byte }

func (w *metaWriter) uv(v uint64)  { w.b = binary.AppendUvarint(w.b, v) }
func (w *metaWriter) i8(v int8)    { w.b = append(w.b, byte(v)) }
func (w *metaWriter) i16(v int16)  { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *metaWriter) u16(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *metaWriter) i32(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *metaWriter) i64(v int64)  { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *metaWriter) boolean(v bool) {
	if v {
		w.i8(1)
	} else {
		w.i8(0)
	}
}
func (w *metaWriter) str(s string) { w.uv(uint64(len(s)) + 1); w.b = append(w.b, s...) }
func (w *metaWriter) nullableStr(s *string) {
	if s == nil {
		w.uv(0)
		return
	}
	w.str(*s)
}
func (w *metaWriter) uuid(s string) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		b = make([]byte, 16)
	}
	w.b = append(w.b, b...)
}
func (w *metaWriter) ints(v []int32) {
	w.uv(uint64(len(v)) + 1)
	for _, x := range v {
		w.i32(x)
	}
}
func (w *metaWriter) uuids(v []string) {
	w.uv(uint64(len(v)) + 1)
	for _, x := range v {
		w.uuid(x)
	}
}

// endpoint writes a listener list of one (BrokerEndpoint,
// ControllerEndpoint: name, host, port, security protocol 0 PLAINTEXT).
func (w *metaWriter) endpoint(name, host string, port uint16) {
	w.uv(2)
	w.str(name)
	w.str(host)
	w.u16(port)
	w.i16(0)
	w.tags()
}

// tagged is one tagged field: its tag and its bytes.
type tagged struct {
	tag  uint64
	data []byte
}

func (w *metaWriter) tags(fs ...tagged) {
	w.uv(uint64(len(fs)))
	for _, f := range fs {
		w.uv(f.tag)
		w.uv(uint64(len(f.data)))
		w.b = append(w.b, f.data...)
	}
}

func field(fill func(*metaWriter)) []byte {
	var w metaWriter
	fill(&w)
	return w.b
}

// AppendMetadataRecord appends the value of e's record: the frame and the
// message at the version the generator writes.
func AppendMetadataRecord(dst []byte, e MetadataEvent) ([]byte, error) {
	if e.Raw != nil {
		return append(dst, e.Raw...), nil
	}
	k, ok := metadataKinds[e.Type]
	if !ok {
		return dst, fmt.Errorf("gen: no encoder for metadata record type %q", e.Type)
	}
	w := metaWriter{b: dst}
	w.uv(1) // frame version
	w.uv(k.apiKey)
	w.uv(k.version)
	switch e.Type {
	case RegisterBrokerRecord: // version 3
		w.i32(e.Broker)
		w.boolean(false) // isMigratingZkBroker
		w.uuid(incarnation(e.Broker, e.BrokerEpoch))
		w.i64(e.BrokerEpoch)
		w.endpoint("PLAINTEXT", e.Host, e.Port)
		w.uv(2) // one feature
		w.str("metadata.version")
		w.i16(1)
		w.i16(21)
		w.tags()
		w.nullableStr(e.Rack)
		w.boolean(e.Fenced == 1)
		w.boolean(e.InControlledShutdown == 1)
		w.tags(tagged{0, field(func(f *metaWriter) { f.uuids(e.LogDirs) })})
	case RegisterControllerRecord:
		w.i32(e.Broker)
		w.uuid(incarnation(e.Broker, 0))
		w.boolean(false) // zkMigrationReady
		w.endpoint("CONTROLLER", e.Host, e.Port)
		w.uv(1) // no feature
		w.tags()
	case UnregisterBrokerRecord:
		w.i32(e.Broker)
		w.i64(e.BrokerEpoch)
		w.tags()
	case FenceBrokerRecord, UnfenceBrokerRecord:
		w.i32(e.Broker)
		w.i64(e.BrokerEpoch)
		w.tags()
	case BrokerRegistrationChangeRecord: // version 1
		w.i32(e.Broker)
		w.i64(e.BrokerEpoch)
		var ts []tagged
		if e.Fenced != 0 {
			ts = append(ts, tagged{0, []byte{byte(e.Fenced)}})
		}
		if e.InControlledShutdown != 0 {
			ts = append(ts, tagged{1, []byte{byte(e.InControlledShutdown)}})
		}
		w.tags(ts...)
	case TopicRecord:
		w.str(e.Topic)
		w.uuid(e.TopicID)
		w.tags()
	case PartitionRecord: // version 1
		w.i32(e.Partition)
		w.uuid(e.TopicID)
		w.ints(e.Replicas)
		w.ints(e.ISR)
		w.ints(nil) // removingReplicas
		w.ints(nil) // addingReplicas
		w.i32(e.Leader)
		w.i32(e.LeaderEpoch)
		w.i32(e.PartitionEpoch)
		w.uuids(e.Directories)
		w.tags()
	case PartitionChangeRecord: // version 1; fields by tag
		w.i32(e.Partition)
		w.uuid(e.TopicID)
		var ts []tagged
		if e.ISR != nil {
			ts = append(ts, tagged{0, field(func(f *metaWriter) { f.ints(e.ISR) })})
		}
		if e.Leader != NoLeaderChange {
			ts = append(ts, tagged{1, field(func(f *metaWriter) { f.i32(e.Leader) })})
		}
		if e.Replicas != nil {
			ts = append(ts, tagged{2, field(func(f *metaWriter) { f.ints(e.Replicas) })})
		}
		if e.Directories != nil {
			ts = append(ts, tagged{8, field(func(f *metaWriter) { f.uuids(e.Directories) })})
		}
		w.tags(ts...)
	case RemoveTopicRecord:
		w.uuid(e.TopicID)
		w.tags()
	case ConfigRecord:
		w.i8(e.ResourceType)
		w.str(e.ResourceName)
		w.str(e.ConfigName)
		w.nullableStr(e.ConfigValue)
		w.tags()
	case FeatureLevelRecord:
		w.str(e.Feature)
		w.i16(e.Level)
		w.tags()
	case ProducerIdsRecord:
		w.i32(e.Broker)
		w.i64(e.BrokerEpoch)
		w.i64(e.NextProducerID)
		w.tags()
	case NoOpRecord, EndTransactionRecord:
		w.tags()
	case BeginTransactionRecord, AbortTransactionRecord:
		w.tags(tagged{0, field(func(f *metaWriter) { f.str(e.Type) })}) // name / reason
	}
	return w.b, nil
}

// incarnation derives a node's incarnation id.
func incarnation(node int32, epoch int64) string {
	var b [16]byte
	binary.BigEndian.PutUint32(b[:], uint32(node)+1)
	binary.BigEndian.PutUint64(b[8:], uint64(epoch)+1)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// KRaft control records (ControlRecordType 2-4) and their values, from
// clients/src/main/resources/common/message: LeaderChangeMessage,
// SnapshotHeaderRecord, SnapshotFooterRecord, all version 0.
const (
	controlLeaderChange   int16 = 2
	controlSnapshotHeader int16 = 3
	controlSnapshotFooter int16 = 4
)

func leaderChangeValue(leader int32, voters []int32) []byte {
	var w metaWriter
	w.i16(0)
	w.i32(leader)
	for range 2 { // voters, grantingVoters
		w.uv(uint64(len(voters)) + 1)
		for _, v := range voters {
			w.i32(v)
			w.tags()
		}
	}
	w.tags()
	return w.b
}

func snapshotHeaderValue(lastContainedLogTimestamp int64) []byte {
	var w metaWriter
	w.i16(0)
	w.i64(lastContainedLogTimestamp)
	w.tags()
	return w.b
}

func snapshotFooterValue() []byte {
	var w metaWriter
	w.i16(0)
	w.tags()
	return w.b
}

// appendKRaftBatch appends one uncompressed v2 batch as KRaft's
// BatchBuilder writes it: producer id, epoch and sequence -1, every
// record with timestamp delta 0 (the batch's append time), control
// batches with the control attribute alone. values are the records'
// values (keys null), or for a control batch, keys and values in turn.
func appendKRaftBatch(dst []byte, base int64, epoch int32, ts int64, control bool, keys, values [][]byte) ([]byte, uint32) {
	h := v2Header{
		baseOffset: base, partitionLeaderEpoch: epoch, lastOffsetDelta: int32(len(values) - 1),
		baseTimestamp: ts, maxTimestamp: ts, producerID: -1, producerEpoch: -1, baseSequence: -1,
		recordsCount: int32(len(values)),
	}
	if control {
		h.attributes = attrControl
	}
	var payload []byte
	for i, v := range values {
		var key []byte
		if keys != nil {
			key = keys[i]
		}
		payload = appendV2Record(payload, 0, int32(i), key, v, nil)
	}
	return appendV2Batch(dst, &h, payload)
}

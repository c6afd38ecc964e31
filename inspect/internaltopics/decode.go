// Package internaltopics decodes the records of Kafka's internal topics, as
// DumpLogSegments' --offsets-decoder, --transaction-log-decoder,
// --cluster-metadata-decoder, --share-group-state-decoder and
// --remote-log-metadata-decoder do, and the control records of any topic
// (control.go):
//
//   - __consumer_offsets: offset commits (OffsetCommitKey v0-1,
//     OffsetCommitValue v0-4) and group metadata (GroupMetadataKey v2,
//     GroupMetadataValue v0-4, with a consumer group's subscriptions and
//     assignments, ConsumerProtocolSubscription and
//     ConsumerProtocolAssignment v0-3), fully; the keys of the new group
//     coordinator's consumer group records (key versions 3-8), without
//     their values;
//   - __transaction_state: TransactionLogKey v0 and TransactionLogValue
//     v0-1, fully;
//   - __cluster_metadata: every KRaft metadata record by type name and
//     version; the fields of every type kseg knows except those holding
//     credentials;
//   - __share_group_state: ShareSnapshotKey/Value and ShareUpdateKey/Value,
//     fully;
//   - __remote_log_metadata: the four records of the topic-based remote
//     log metadata manager, fully.
//
// The schemas are those of the broker's JSON message definitions at the
// Kafka 4.0 development snapshot the project follows, plus the tagged
// fields Kafka 4.1 added (noted where they are). Decoding works on bytes
// only: the caller hands over one record's key and value.
package internaltopics

import (
	"errors"
	"fmt"
)

// Decoder names, as Decoded.Decoder and the command line spell them.
const (
	ConsumerOffsets   = "consumer_offsets"
	TransactionState  = "transaction_state"
	ClusterMetadata   = "cluster_metadata"
	ShareGroupState   = "share_group_state"
	RemoteLogMetadata = "remote_log_metadata"
)

// Decoders lists the decoder names.
func Decoders() []string {
	return []string{ConsumerOffsets, TransactionState, ClusterMetadata, ShareGroupState, RemoteLogMetadata}
}

// ForTopic returns the decoder for a topic's records ("" when none):
// selected from the internal topic names, as a user of DumpLogSegments
// would pick the option.
func ForTopic(topic string) string {
	switch topic {
	case "__consumer_offsets":
		return ConsumerOffsets
	case "__transaction_state":
		return TransactionState
	case "__cluster_metadata":
		return ClusterMetadata
	case "__share_group_state":
		return ShareGroupState
	case "__remote_log_metadata":
		return RemoteLogMetadata
	}
	return ""
}

// Decoded is one record, decoded. Fields that do not apply are left out
// of the JSON form (Value is always there: null for a tombstone or a value
// that was not decoded).
type Decoded struct {
	Decoder string `json:"decoder"`
	// Type is the record type: offset_commit, group_metadata,
	// consumer_group_* or unknown (consumer offsets); transaction; the
	// metadata record's name (TopicRecord, ...) or unknown;
	// share_snapshot, share_update or unknown (share group state); the
	// remote log metadata record's name or unknown.
	Type string `json:"type,omitempty"`

	// Metadata and remote log metadata records only: the frame version
	// and api key of the header.
	FrameVersion *int16 `json:"frame_version,omitempty"`
	APIKey       *int16 `json:"api_key,omitempty"`

	KeyVersion   *int16 `json:"key_version,omitempty"`
	Key          Fields `json:"key,omitempty"`
	ValueVersion *int16 `json:"value_version,omitempty"`
	Value        Fields `json:"value"`
	// Tombstone: the value is null (a deleted offset, group or
	// transactional id).
	Tombstone bool `json:"tombstone,omitempty"`
	// Note says why part of a well-formed record was not decoded (a type or
	// version newer than this decoder, a value kept opaque).
	Note string `json:"note,omitempty"`
	// Error says why the record does not decode: its bytes do not match the
	// schema it claims.
	Error string `json:"error,omitempty"`

	unknownVersion bool
}

// OK reports whether the record's value was read: not an error, not
// a type or version this decoder does not know. (A record type whose
// fields are kept opaque, such as credentials, counts as decoded.)
func (d *Decoded) OK() bool {
	return d.Error == "" && d.Type != "unknown" && !d.unknownVersion
}

// Decode decodes one record's key and value (nil means null) with the
// named decoder. It never fails: problems are in Decoded.Error, records it
// does not know in Decoded.Note. An unknown decoder name gives an Error.
func Decode(decoder string, key, value []byte) Decoded {
	switch decoder {
	case ConsumerOffsets:
		return decodeConsumerOffsets(key, value)
	case TransactionState:
		return decodeTransactionState(key, value)
	case ClusterMetadata:
		return decodeClusterMetadata(value)
	case ShareGroupState:
		return decodeShareGroupState(key, value)
	case RemoteLogMetadata:
		return decodeRemoteLogMetadata(value)
	}
	return Decoded{Decoder: decoder, Error: "unknown decoder"}
}

// decodeRecord fills d from a key (kb, its body after the version kv) and
// a value: the key by ks, then a tombstone for a nil value, else the value's
// version and, when vs is not nil, its fields by vs. Errors and notes land in
// d, never in a return value: a record that does not decode is still shown.
func decodeRecord(d *Decoded, ks, vs *schema, kb []byte, kv int16, value []byte) {
	k, err := ks.decode(kb, kv)
	if err != nil {
		d.Error = "key: " + err.Error()
		return
	}
	d.Key = k
	if value == nil {
		d.Tombstone = true
		return
	}
	vv, vb, ok := versionPrefix(value)
	if !ok {
		d.Error = fmt.Sprintf("value of %d bytes has no version", len(value))
		return
	}
	d.ValueVersion = &vv
	if vs == nil {
		d.Note = "the value of this record type is not decoded"
		return
	}
	d.Value, err = vs.decode(vb, vv)
	setValueError(d, err)
}

// setValueError files a value decoding error as a Note (a version newer
// than the decoder knows) or an Error.
func setValueError(d *Decoded, err error) {
	if err == nil {
		return
	}
	d.Value = nil
	if errors.Is(err, errUnknownVersion) {
		d.Note = "value " + err.Error()
		d.unknownVersion = true
		return
	}
	d.Error = "value: " + err.Error()
}

package internaltopics

import "fmt"

// __share_group_state records (broker: ShareCoordinatorRecordSerde, a
// CoordinatorRecordSerde): the key is an i16 record type (its version)
// then the key message; the value an i16 version then the value message
// of that record type; a null value is a tombstone. DumpLogSegments'
// --share-group-state-decoder prints them with their JsonConverters.
// Schemas: share-coordinator/src/main/resources/common/message/Share*.json.
//
//	key 0  ShareSnapshotKey  value ShareSnapshotValue v0 (flexible)
//	key 1  ShareUpdateKey    value ShareUpdateValue v0 (flexible)

// Record types of __share_group_state, as Decoded.Type spells them.
const (
	TypeShareSnapshot = "share_snapshot"
	TypeShareUpdate   = "share_update"
)

func shareKey(name string, v int16) schema {
	return schema{name: name, valid: only(v, v), flexible: none, fields: []field{
		f("groupId", kString, only(v, v)),
		f("topicId", kUUID, only(v, v)),
		f("partition", kInt32, only(v, v)),
	}}
}

var stateBatches = structs("stateBatches", only(0, 0),
	f("firstOffset", kInt64, only(0, 0)),
	f("lastOffset", kInt64, only(0, 0)),
	f("deliveryState", kInt8, only(0, 0)),
	f("deliveryCount", kInt16, only(0, 0)),
)

var shareRecords = map[int16]struct {
	typ        string
	key, value schema
}{
	0: {TypeShareSnapshot, shareKey("ShareSnapshotKey", 0), schema{name: "ShareSnapshotValue", valid: only(0, 0), flexible: from(0), fields: []field{
		f("snapshotEpoch", kUint16, only(0, 0)),
		f("stateEpoch", kInt32, from(0)),
		f("leaderEpoch", kInt32, from(0)),
		f("startOffset", kInt64, only(0, 0)),
		stateBatches,
	}}},
	1: {TypeShareUpdate, shareKey("ShareUpdateKey", 1), schema{name: "ShareUpdateValue", valid: only(0, 0), flexible: from(0), fields: []field{
		f("snapshotEpoch", kUint16, only(0, 0)),
		f("leaderEpoch", kInt32, from(0)),
		f("startOffset", kInt64, only(0, 0)),
		stateBatches,
	}}},
}

func decodeShareGroupState(key, value []byte) Decoded {
	d := Decoded{Decoder: ShareGroupState}
	if key == nil {
		// DumpLogSegments: "message had a missing key".
		d.Error = "null key: a share group state record always has one"
		return d
	}
	kv, kb, ok := versionPrefix(key)
	if !ok {
		d.Error = fmt.Sprintf("key of %d bytes has no record type", len(key))
		return d
	}
	d.KeyVersion = &kv
	rec, known := shareRecords[kv]
	if !known {
		// CoordinatorLoader.UnknownRecordTypeException: the loader skips it.
		d.Type = "unknown"
		d.Note = fmt.Sprintf("key version %d is not a record type this decoder knows", kv)
		return d
	}
	d.Type = rec.typ
	decodeRecord(&d, &rec.key, &rec.value, kb, kv, value)
	return d
}

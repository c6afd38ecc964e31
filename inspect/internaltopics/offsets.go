package internaltopics

import (
	"encoding/binary"
	"fmt"
)

// __consumer_offsets records (broker: GroupMetadataManager.readMessageKey /
// readOffsetMessageValue / readGroupMessageValue, later
// GroupCoordinatorRecordSerde). Key and value each start with an i16
// version; the key's version says what the record is:
//
//	key 0, 1   OffsetCommitKey    value OffsetCommitValue v0-4 (v4 flexible)
//	key 2      GroupMetadataKey   value GroupMetadataValue v0-4 (v4 flexible)
//	key 3-8    the consumer group records of the new group coordinator
//	           (KIP-848): the key is decoded, the value is not
//
// A null value is a tombstone: the offset or group was deleted.
// Schemas: group-coordinator/src/main/resources/common/message/*.json.

var offsetCommitKey = schema{
	name: "OffsetCommitKey", valid: only(0, 1), flexible: none,
	fields: []field{
		f("group", kString, only(0, 1)),
		f("topic", kString, only(0, 1)),
		f("partition", kInt32, only(0, 1)),
	},
}

var offsetCommitValue = schema{
	name: "OffsetCommitValue", valid: only(0, 4), flexible: from(4),
	fields: []field{
		f("offset", kInt64, from(0)),
		f("leaderEpoch", kInt32, from(3)),
		f("metadata", kString, from(0)),
		f("commitTimestamp", kInt64, from(0)),
		f("expireTimestamp", kInt64, only(1, 1)),
		// Added in Kafka 4.1 (KAFKA-19141), after the broker sources kseg
		// follows: a tagged field, so older readers skip it.
		f("topicId", kUUID, from(4)).taggedAt(0, from(4)),
	},
}

var groupMetadataKey = schema{
	name: "GroupMetadataKey", valid: only(2, 2), flexible: none,
	fields: []field{f("group", kString, only(2, 2))},
}

var groupMetadataValue = schema{
	name: "GroupMetadataValue", valid: only(0, 4), flexible: from(4),
	fields: []field{
		f("protocolType", kString, from(0)),
		f("generation", kInt32, from(0)),
		f("protocol", kString, from(0)).null(from(0)),
		f("leader", kString, from(0)).null(from(0)),
		f("currentStateTimestamp", kInt64, from(2)),
		structs("members", from(0),
			f("memberId", kString, from(0)),
			f("groupInstanceId", kString, from(3)).null(from(3)),
			f("clientId", kString, from(0)),
			f("clientHost", kString, from(0)),
			f("rebalanceTimeout", kInt32, from(1)),
			f("sessionTimeout", kInt32, from(0)),
			f("subscription", kBytes, from(0)),
			f("assignment", kBytes, from(0)),
		),
	},
}

// consumerGroupKeys are the keys of the new group coordinator's consumer
// group records, by key version (= record type).
var consumerGroupKeys = map[int16]struct {
	typ    string
	schema schema
}{
	3: {"consumer_group_metadata", groupKey("ConsumerGroupMetadataKey", 3, false)},
	4: {"consumer_group_partition_metadata", groupKey("ConsumerGroupPartitionMetadataKey", 4, false)},
	5: {"consumer_group_member_metadata", groupKey("ConsumerGroupMemberMetadataKey", 5, true)},
	6: {"consumer_group_target_assignment_metadata", groupKey("ConsumerGroupTargetAssignmentMetadataKey", 6, false)},
	7: {"consumer_group_target_assignment_member", groupKey("ConsumerGroupTargetAssignmentMemberKey", 7, true)},
	8: {"consumer_group_current_member_assignment", groupKey("ConsumerGroupCurrentMemberAssignmentKey", 8, true)},
}

func groupKey(name string, v int16, member bool) schema {
	s := schema{name: name, valid: only(v, v), flexible: none, fields: []field{f("groupId", kString, only(v, v))}}
	if member {
		s.fields = append(s.fields, f("memberId", kString, only(v, v)))
	}
	return s
}

// Record types of __consumer_offsets, as Decoded.Type spells them.
const (
	TypeOffsetCommit  = "offset_commit"
	TypeGroupMetadata = "group_metadata"
)

func decodeConsumerOffsets(key, value []byte) Decoded {
	d := Decoded{Decoder: ConsumerOffsets}
	kv, kb, ok := versionPrefix(key)
	if !ok {
		d.Error = fmt.Sprintf("key of %d bytes has no version", len(key))
		return d
	}
	d.KeyVersion = &kv
	var ks, vs *schema
	switch {
	case kv == 0 || kv == 1:
		d.Type, ks, vs = TypeOffsetCommit, &offsetCommitKey, &offsetCommitValue
	case kv == 2:
		d.Type, ks, vs = TypeGroupMetadata, &groupMetadataKey, &groupMetadataValue
	default:
		cg, known := consumerGroupKeys[kv]
		if !known {
			d.Type = "unknown"
			d.Note = fmt.Sprintf("key version %d is not a record type this decoder knows", kv)
			return d
		}
		d.Type, ks = cg.typ, &cg.schema
	}
	decodeRecord(&d, ks, vs, kb, kv, value)
	return d
}

// versionPrefix splits off the i16 version that starts every key and value.
func versionPrefix(b []byte) (int16, []byte, bool) {
	if len(b) < 2 {
		return 0, nil, false
	}
	return int16(binary.BigEndian.Uint16(b)), b[2:], true
}

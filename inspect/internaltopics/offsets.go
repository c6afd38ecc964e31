package internaltopics

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// __consumer_offsets records (broker: GroupMetadataManager.readMessageKey /
// readOffsetMessageValue / readGroupMessageValue, later
// GroupCoordinatorRecordSerde). Key and value each start with an i16
// version; the key's version says what the record is:
//
//	key 0, 1   OffsetCommitKey    value OffsetCommitValue v0-4 (v4 flexible)
//	key 2      GroupMetadataKey   value GroupMetadataValue v0-4 (v4 flexible);
//	           with protocol type "consumer", each member's subscription
//	           and assignment decoded (ConsumerProtocolSubscription and
//	           ConsumerProtocolAssignment v0-3)
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

// The consumer protocol's subscription and assignment, the bytes a member
// of a group of protocol type "consumer" carries in GroupMetadataValue
// (clients/src/main/resources/common/message/ConsumerProtocolSubscription.json,
// ConsumerProtocolAssignment.json). Each starts with its own i16 version.
var consumerProtocolSubscription = schema{
	name: "ConsumerProtocolSubscription", valid: only(0, 3), flexible: none,
	fields: []field{
		arr("topics", kString, from(0)),
		f("userData", kBytes, from(0)).null(from(0)),
		structs("ownedPartitions", from(1),
			f("topic", kString, from(1)),
			arr("partitions", kInt32, from(1)),
		),
		f("generationId", kInt32, from(2)),
		f("rackId", kString, from(3)).null(from(3)),
	},
}

var consumerProtocolAssignment = schema{
	name: "ConsumerProtocolAssignment", valid: only(0, 3), flexible: none,
	fields: []field{
		structs("assignedPartitions", from(0),
			f("topic", kString, from(0)),
			arr("partitions", kInt32, from(0)),
		),
		f("userData", kBytes, from(0)).null(from(0)),
	},
}

// consumerProtocolType is ConsumerProtocol.PROTOCOL_TYPE.
const consumerProtocolType = "consumer"

// decodeConsumerProtocol replaces, in a GroupMetadataValue of protocol
// type "consumer", each member's subscription and assignment (base64) by
// its decoded fields, as DumpLogSegments' prepareGroupMetadataValue does:
// the version read from the bytes' first two, the fields read from the
// rest (bytes after them are left unread, as the generated read leaves
// them); a member's bytes that do not decode stay base64, as it swallows
// the exception.
func decodeConsumerProtocol(value Fields) {
	if pt, _ := value.Get("protocolType"); pt != consumerProtocolType {
		return
	}
	members, _ := value.Get("members")
	list, _ := members.([]any)
	for _, m := range list {
		fields, ok := m.(Fields)
		if !ok {
			continue
		}
		for j, x := range fields {
			var s *schema
			switch x.Name {
			case "subscription":
				s = &consumerProtocolSubscription
			case "assignment":
				s = &consumerProtocolAssignment
			default:
				continue
			}
			text, _ := x.Value.(string) // bytes, as the schema reader gives them
			raw, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				continue
			}
			v, body, ok := versionPrefix(raw)
			if !ok || !s.valid.has(v) {
				continue
			}
			r := &reader{b: body}
			if decoded := r.decodeStruct(s.fields, v, false); r.err == nil {
				fields[j].Value = decoded
			}
		}
	}
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
	if d.Type == TypeGroupMetadata && d.Value != nil {
		decodeConsumerProtocol(d.Value)
	}
	return d
}

// versionPrefix splits off the i16 version that starts every key and value.
func versionPrefix(b []byte) (int16, []byte, bool) {
	if len(b) < 2 {
		return 0, nil, false
	}
	return int16(binary.BigEndian.Uint16(b)), b[2:], true
}

package internaltopics

import "fmt"

// KRaft __cluster_metadata records (broker: MetadataRecordSerde, built on
// AbstractApiMessageSerde). The key is null; the value is
//
//	unsigned varint  frame version (1; 0 was the 2.8 preview, refused)
//	unsigned varint  api key: the record type
//	unsigned varint  record version
//	message          the record, always flexible
//
// Control batches of the metadata log (leader change, snapshot header and
// footer, KRaft version and voters) are not metadata records.
// Schemas: metadata/src/main/resources/common/metadata/*.json.

// metadataType is one record type: its name and, for the types whose
// fields are decoded, the schema.
type metadataType struct {
	name   string
	schema *schema // nil: name and version only
}

func meta(name string, valid versions, fields ...field) metadataType {
	return metadataType{name: name, schema: &schema{name: name, valid: valid, flexible: from(0), fields: fields}}
}

func endpoints(name string) field {
	return structs(name, from(0),
		f("name", kString, from(0)),
		f("host", kString, from(0)),
		f("port", kUint16, from(0)),
		f("securityProtocol", kInt16, from(0)),
	)
}

func features(name string) field {
	return structs(name, from(0),
		f("name", kString, from(0)),
		f("minSupportedVersion", kInt16, from(0)),
		f("maxSupportedVersion", kInt16, from(0)),
	)
}

// metadataTypes by api key. The records holding credentials
// (delegation tokens, SCRAM credentials) are named but not decoded.
var metadataTypes = map[int16]metadataType{
	0: meta("RegisterBrokerRecord", only(0, 3),
		f("brokerId", kInt32, from(0)),
		f("isMigratingZkBroker", kBool, from(2)),
		f("incarnationId", kUUID, from(0)),
		f("brokerEpoch", kInt64, from(0)),
		endpoints("endPoints"),
		features("features"),
		f("rack", kString, from(0)).null(from(0)),
		f("fenced", kBool, from(0)),
		f("inControlledShutdown", kBool, from(1)),
		arr("logDirs", kUUID, from(3)).taggedAt(0, from(3)),
	),
	1: meta("UnregisterBrokerRecord", only(0, 0),
		f("brokerId", kInt32, from(0)),
		f("brokerEpoch", kInt64, from(0)),
	),
	2: meta("TopicRecord", only(0, 0),
		f("name", kString, from(0)),
		f("topicId", kUUID, from(0)),
	),
	3: meta("PartitionRecord", only(0, 2),
		f("partitionId", kInt32, from(0)),
		f("topicId", kUUID, from(0)),
		arr("replicas", kInt32, from(0)),
		arr("isr", kInt32, from(0)),
		arr("removingReplicas", kInt32, from(0)),
		arr("addingReplicas", kInt32, from(0)),
		f("leader", kInt32, from(0)),
		f("leaderRecoveryState", kInt8, from(0)).taggedAt(0, from(0)),
		f("leaderEpoch", kInt32, from(0)),
		f("partitionEpoch", kInt32, from(0)),
		arr("directories", kUUID, from(1)),
		arr("eligibleLeaderReplicas", kInt32, from(2)).null(from(2)).taggedAt(1, from(2)),
		arr("lastKnownElr", kInt32, from(2)).null(from(2)).taggedAt(2, from(2)),
	),
	4: meta("ConfigRecord", only(0, 0),
		f("resourceType", kInt8, from(0)),
		f("resourceName", kString, from(0)),
		f("name", kString, from(0)),
		f("value", kString, from(0)).null(from(0)),
	),
	5: meta("PartitionChangeRecord", only(0, 2),
		f("partitionId", kInt32, from(0)),
		f("topicId", kUUID, from(0)),
		arr("isr", kInt32, from(0)).null(from(0)).taggedAt(0, from(0)),
		f("leader", kInt32, from(0)).taggedAt(1, from(0)),
		arr("replicas", kInt32, from(0)).null(from(0)).taggedAt(2, from(0)),
		arr("removingReplicas", kInt32, from(0)).null(from(0)).taggedAt(3, from(0)),
		arr("addingReplicas", kInt32, from(0)).null(from(0)).taggedAt(4, from(0)),
		f("leaderRecoveryState", kInt8, from(0)).taggedAt(5, from(0)),
		arr("directories", kUUID, from(1)).null(from(1)).taggedAt(8, from(1)),
		arr("eligibleLeaderReplicas", kInt32, from(2)).null(from(2)).taggedAt(6, from(2)),
		arr("lastKnownElr", kInt32, from(2)).null(from(2)).taggedAt(7, from(2)),
	),
	7: meta("FenceBrokerRecord", only(0, 0),
		f("id", kInt32, from(0)),
		f("epoch", kInt64, from(0)),
	),
	8: meta("UnfenceBrokerRecord", only(0, 0),
		f("id", kInt32, from(0)),
		f("epoch", kInt64, from(0)),
	),
	9:  meta("RemoveTopicRecord", only(0, 0), f("topicId", kUUID, from(0))),
	10: {name: "DelegationTokenRecord"},
	11: {name: "UserScramCredentialRecord"},
	12: meta("FeatureLevelRecord", only(0, 0),
		f("name", kString, from(0)),
		f("featureLevel", kInt16, from(0)),
	),
	14: meta("ClientQuotaRecord", only(0, 0),
		structs("entity", from(0),
			f("entityType", kString, from(0)),
			f("entityName", kString, from(0)).null(from(0)),
		),
		f("key", kString, from(0)),
		f("value", kFloat64, from(0)),
		f("remove", kBool, from(0)),
	),
	15: meta("ProducerIdsRecord", only(0, 0),
		f("brokerId", kInt32, from(0)),
		f("brokerEpoch", kInt64, from(0)),
		f("nextProducerId", kInt64, from(0)),
	),
	17: meta("BrokerRegistrationChangeRecord", only(0, 2),
		f("brokerId", kInt32, from(0)),
		f("brokerEpoch", kInt64, from(0)),
		f("fenced", kInt8, from(0)).taggedAt(0, from(0)),
		f("inControlledShutdown", kInt8, from(1)).taggedAt(1, from(1)),
		arr("logDirs", kUUID, from(2)).taggedAt(2, from(2)),
	),
	18: meta("AccessControlEntryRecord", only(0, 0),
		f("id", kUUID, from(0)),
		f("resourceType", kInt8, from(0)),
		f("resourceName", kString, from(0)),
		f("patternType", kInt8, from(0)),
		f("principal", kString, from(0)),
		f("host", kString, from(0)),
		f("operation", kInt8, from(0)),
		f("permissionType", kInt8, from(0)),
	),
	19: meta("RemoveAccessControlEntryRecord", only(0, 0), f("id", kUUID, from(0))),
	20: meta("NoOpRecord", only(0, 0)),
	21: meta("ZkMigrationStateRecord", only(0, 0), f("zkMigrationState", kInt8, from(0))),
	22: {name: "RemoveUserScramCredentialRecord"},
	23: meta("BeginTransactionRecord", only(0, 0),
		f("name", kString, from(0)).null(from(0)).taggedAt(0, from(0)),
	),
	24: meta("EndTransactionRecord", only(0, 0)),
	25: meta("AbortTransactionRecord", only(0, 0),
		f("reason", kString, from(0)).null(from(0)).taggedAt(0, from(0)),
	),
	26: {name: "RemoveDelegationTokenRecord"},
	27: meta("RegisterControllerRecord", only(0, 0),
		f("controllerId", kInt32, from(0)),
		f("incarnationId", kUUID, from(0)),
		f("zkMigrationReady", kBool, from(0)),
		endpoints("endPoints"),
		features("features"),
	),
}

// MetadataTypeName names a metadata record type by api key ("" when
// unknown).
func MetadataTypeName(apiKey int16) string { return metadataTypes[apiKey].name }

func decodeClusterMetadata(value []byte) Decoded {
	return decodeFramed(ClusterMetadata, "metadata record type", value, metadataTypes)
}

// decodeFramed decodes a value framed as AbstractApiMessageSerde frames
// metadata records (unsigned varints frame version 1, api key, version,
// then the message, every byte used), with the message types by api key
// (what names them).
func decodeFramed(decoder, what string, value []byte, types map[int16]metadataType) Decoded {
	d := Decoded{Decoder: decoder}
	if value == nil {
		d.Error = "null value: a metadata record always has one"
		return d
	}
	r := &reader{b: value}
	frame := r.uvarint()
	apiKey := r.uvarint()
	version := r.uvarint()
	if r.err != nil {
		d.Error = "record header: " + r.err.Error()
		return d
	}
	if frame > 0x7fff || apiKey > 0x7fff || version > 0x7fff {
		// AbstractApiMessageSerde.unsignedIntToShort.
		d.Error = fmt.Sprintf("record header values %d, %d, %d: too large", frame, apiKey, version)
		return d
	}
	fv, ak, v := int16(frame), int16(apiKey), int16(version)
	d.FrameVersion, d.APIKey, d.ValueVersion = &fv, &ak, &v
	if fv != 1 {
		d.Error = fmt.Sprintf("frame version %d: only frame version 1 is supported (0 was the 2.8 preview format)", fv)
		return d
	}
	t, ok := types[ak]
	if !ok {
		d.Type = "unknown"
		d.Note = fmt.Sprintf("api key %d is not a %s this decoder knows", ak, what)
		return d
	}
	d.Type = t.name
	if t.schema == nil {
		d.Note = "fields not decoded (the record may hold credentials)"
		return d
	}
	var err error
	d.Value, err = t.schema.decode(value[r.pos:], v)
	setValueError(&d, err)
	return d
}

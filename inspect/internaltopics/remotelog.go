package internaltopics

// __remote_log_metadata records (broker: RemoteLogMetadataSerde, over
// BytesApiMessageSerde): the value is framed as a metadata record (frame
// version 1, api key, version as unsigned varints, then the message); the
// key is null. DumpLogSegments' --remote-log-metadata-decoder prints the
// records it builds from them. Schemas:
// storage/src/main/resources/message/RemoteLogSegmentMetadata*Record.json,
// RemotePartitionDeleteMetadataRecord.json.

func topicIDPartition(name string) field {
	return structField(name, from(0),
		f("name", kString, from(0)),
		f("id", kUUID, from(0)),
		f("partition", kInt32, from(0)),
	)
}

var remoteLogSegmentID = structField("remoteLogSegmentId", from(0),
	topicIDPartition("topicIdPartition"),
	f("id", kUUID, from(0)),
)

// segmentFields are the fields a segment's metadata record and its
// snapshot record share, after the segment's id.
var segmentFields = []field{
	f("startOffset", kInt64, from(0)),
	f("endOffset", kInt64, from(0)),
	f("brokerId", kInt32, from(0)),
	f("maxTimestampMs", kInt64, from(0)),
	f("eventTimestampMs", kInt64, from(0)),
	structs("segmentLeaderEpochs", from(0),
		f("leaderEpoch", kInt32, from(0)),
		f("offset", kInt64, from(0)),
	),
	f("segmentSizeInBytes", kInt32, from(0)),
	f("customMetadata", kBytes, from(0)).null(from(0)),
	f("remoteLogSegmentState", kInt8, from(0)),
}

// remoteLogTypes by api key.
var remoteLogTypes = map[int16]metadataType{
	0: meta("RemoteLogSegmentMetadataRecord", only(0, 0), append([]field{remoteLogSegmentID}, segmentFields...)...),
	1: meta("RemoteLogSegmentMetadataUpdateRecord", only(0, 0),
		remoteLogSegmentID,
		f("brokerId", kInt32, from(0)),
		f("eventTimestampMs", kInt64, from(0)),
		f("customMetadata", kBytes, from(0)).null(from(0)),
		f("remoteLogSegmentState", kInt8, from(0)),
	),
	2: meta("RemotePartitionDeleteMetadataRecord", only(0, 0),
		topicIDPartition("topicIdPartition"),
		f("brokerId", kInt32, from(0)),
		f("eventTimestampMs", kInt64, from(0)),
		f("remotePartitionDeleteState", kInt8, from(0)),
	),
	3: meta("RemoteLogSegmentMetadataSnapshotRecord", only(0, 0), append([]field{f("segmentId", kUUID, from(0))}, segmentFields...)...),
}

func decodeRemoteLogMetadata(value []byte) Decoded {
	return decodeFramed(RemoteLogMetadata, "remote log metadata record type", value, remoteLogTypes)
}

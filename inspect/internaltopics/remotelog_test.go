package internaltopics_test

import (
	"testing"

	"github.com/kseg/kseg/inspect/internaltopics"
)

// TestRemoteLogMetadata builds the four records of __remote_log_metadata
// from storage's message schemas (frame version 1, api key, version, then
// the flexible message: RemoteLogMetadataSerde over BytesApiMessageSerde).
func TestRemoteLogMetadata(t *testing.T) {
	if got := internaltopics.ForTopic("__remote_log_metadata"); got != internaltopics.RemoteLogMetadata {
		t.Fatalf("ForTopic: %q", got)
	}
	frame := func(apiKey uint32) *w { return (&w{}).uv(1).uv(apiKey).uv(0) }
	tip := func(x *w) *w { return x.str("orders").uuid(2).i32(5).noTags() }
	segID := func(x *w) *w { tip(x); return x.uuid(9).noTags() }
	epochs := func(x *w) *w { return x.uv(3).i32(4).i64(100).noTags().i32(5).i64(150).noTags() }
	tipJSON := `{"name":"orders","id":"` + uid(2) + `","partition":5}`
	segJSON := `{"topicIdPartition":` + tipJSON + `,"id":"` + uid(9) + `"}`
	epochsJSON := `[{"leaderEpoch":4,"offset":100},{"leaderEpoch":5,"offset":150}]`
	for _, tc := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"segment", epochs(segID(frame(0)).i64(100).i64(199).i32(1).i64(1700000000000).i64(1700000000100)).i32(4096).uv(4).i8(1).i8(2).i8(3).i8(1).noTags().b,
			`{"decoder":"remote_log_metadata","type":"RemoteLogSegmentMetadataRecord","frame_version":1,"api_key":0,"value_version":0,"value":{"remoteLogSegmentId":` + segJSON + `,"startOffset":100,"endOffset":199,"brokerId":1,"maxTimestampMs":1700000000000,"eventTimestampMs":1700000000100,"segmentLeaderEpochs":` + epochsJSON + `,"segmentSizeInBytes":4096,"customMetadata":"AQID","remoteLogSegmentState":1}}`},
		{"update", segID(frame(1)).i32(2).i64(1700000000200).null().i8(3).noTags().b,
			`{"decoder":"remote_log_metadata","type":"RemoteLogSegmentMetadataUpdateRecord","frame_version":1,"api_key":1,"value_version":0,"value":{"remoteLogSegmentId":` + segJSON + `,"brokerId":2,"eventTimestampMs":1700000000200,"customMetadata":null,"remoteLogSegmentState":3}}`},
		{"partition delete", tip(frame(2)).i32(0).i64(1700000000300).i8(2).noTags().b,
			`{"decoder":"remote_log_metadata","type":"RemotePartitionDeleteMetadataRecord","frame_version":1,"api_key":2,"value_version":0,"value":{"topicIdPartition":` + tipJSON + `,"brokerId":0,"eventTimestampMs":1700000000300,"remotePartitionDeleteState":2}}`},
		{"snapshot", epochs(frame(3).uuid(9).i64(100).i64(199).i32(1).i64(5).i64(6)).i32(4096).null().i8(1).noTags().b,
			`{"decoder":"remote_log_metadata","type":"RemoteLogSegmentMetadataSnapshotRecord","frame_version":1,"api_key":3,"value_version":0,"value":{"segmentId":"` + uid(9) + `","startOffset":100,"endOffset":199,"brokerId":1,"maxTimestampMs":5,"eventTimestampMs":6,"segmentLeaderEpochs":` + epochsJSON + `,"segmentSizeInBytes":4096,"customMetadata":null,"remoteLogSegmentState":1}}`},
		{"unknown api key", frame(7).b, `{"decoder":"remote_log_metadata","type":"unknown","frame_version":1,"api_key":7,"value_version":0,"value":null,"note":"api key 7 is not a remote log metadata record type this decoder knows"}`},
		{"garbage after", tip(frame(2)).i32(0).i64(1).i8(2).noTags().i8(0).b, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := internaltopics.Decode(internaltopics.RemoteLogMetadata, nil, tc.value)
			got := mustJSON(t, d)
			if tc.want == "" {
				if d.Error == "" || d.Value != nil {
					t.Errorf("got %s, want an error", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

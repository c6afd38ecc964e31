package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestDumpLogKRaftSnapshots: dump-log reads a KRaft snapshot (the issue's
// report: "not a Kafka file" on the real fixture) and bootstrap.checkpoint
// as record batches, with the snapshot id from the name on every batch
// line, the header and footer decoded, and the metadata records decoded
// by the cluster metadata decoder.
func TestDumpLogKRaftSnapshots(t *testing.T) {
	real := requireRealFixtures(t)
	dir := filepath.Join(real, "cp-kraft-multiseg-compacted")
	out := sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", filepath.Join(dir, "__cluster_metadata-0", "00000000000000078270-0000000035.checkpoint")},
		`^\{"kind":"batch","segment":"00000000000000078270-0000000035.checkpoint","position":0,"size":83,.*"is_control":true,"snapshot":\{"end_offset":78270,"epoch":35\}\}`,
		`"offset":0,.*"control":\{"type":"snapshot_header","version":0,"lastContainedLogTimestamp":1776930786922\}\}`,
		`"offset":67,.*"control":\{"type":"snapshot_footer","version":0\}\}$`,
		`"offset":1,.*"decoded":\{"decoder":"cluster_metadata","type":"FeatureLevelRecord",.*"value":\{"name":"metadata.version","featureLevel":29\}\}\}`,
		`!"error"`)
	if n := strings.Count(out, `"kind":"batch"`); n != 3 {
		t.Errorf("%d batches, want 3 (PROVENANCE.md)", n)
	}
	if n := strings.Count(out, `"snapshot":{"end_offset":78270,"epoch":35}`); n != 3 {
		t.Errorf("%d batch lines with the snapshot id, want 3", n)
	}
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", filepath.Join(dir, "bootstrap.checkpoint")},
		`"snapshot":\{"end_offset":0,"epoch":0,"bootstrap":true\}`,
		`"type":"FeatureLevelRecord",.*"value":\{"name":"share.version","featureLevel":1\}`)
	// The table names the control records with their fields.
	sideRun(t, 0, []string{"dump-log", "--records", filepath.Join(dir, "bootstrap.checkpoint")},
		`control: snapshot_header \{"version":0,"lastContainedLogTimestamp":0\}`)
	sideRun(t, 2, []string{"dump-log", filepath.Join(dir, "__cluster_metadata-0", "00000000000000044344-0000000027.checkpoint.deleted")},
		`stderr:not a Kafka file`)
}

// TestVerifyKRaftSnapshots: verify checks the snapshots and bootstrap
// files of the real KRaft fixtures and finds nothing to say (they are
// whole), also when a snapshot is named alone.
func TestVerifyKRaftSnapshots(t *testing.T) {
	real := requireRealFixtures(t)
	dir := filepath.Join(real, "cp-kraft-multiseg-compacted")
	sideRun(t, 0, []string{"-o", "json", "verify", "--strict", filepath.Join(dir, "__cluster_metadata-0", "00000000000000070179-0000000034.checkpoint")},
		`"kind":"summary","partitions":1,"segments":0,"batches":3,`, `!"kind":"finding"`)
}

// TestDumpCheckpointQuorumState: quorum-state is listed with the fields
// of its data_version.
func TestDumpCheckpointQuorumState(t *testing.T) {
	real := requireRealFixtures(t)
	sideRun(t, 0, []string{"-o", "json", "dump-checkpoint", filepath.Join(real, "cp-kraft-multiseg-compacted", "__cluster_metadata-0", "quorum-state")},
		`^\{"kind":"quorum_state","file":".*quorum-state","data_version":0,"cluster_id":"","leader_id":1,"leader_epoch":36,"voted_id":-1,"applied_offset":0,"current_voters":\[1\]\}$`)
	sideRun(t, 0, []string{"dump-checkpoint", filepath.Join(real, "kafka40-kraft-snappy-retention")},
		`quorum_state .*quorum-state +leader +1 \(epoch 8, voted for -1\), voters \[1\]`)
	t.Chdir(t.TempDir())
	sideWrite(t, "quorum-state", `{"leaderId":1,"data_version":0}`)
	sideRun(t, 2, []string{"dump-checkpoint", "quorum-state"}, `stderr:unable to locate field 'leaderEpoch', which is mandatory in version 0`)
}

// TestDumpLogShareAndRemoteDecoders: the partitions of __share_group_state
// and __remote_log_metadata are decoded by auto from their topic, and the
// DumpLogSegments flags pick the decoders too.
func TestDumpLogShareAndRemoteDecoders(t *testing.T) {
	t.Chdir(t.TempDir())
	// ShareSnapshotKey v0 {grp, topic id 0x01.., partition 3}; a
	// ShareSnapshotValue v0 with no batch; then a tombstone.
	key := []byte{0, 0, 0, 3, 'g', 'r', 'p', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3}
	value := []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 42, 1, 0}
	sideGen(t, "__share_group_state-0", kafkagen.Options{Topic: "__share_group_state", Records: []kafkagen.KeyValue{{Key: key, Value: value}, {Key: key}}, Batches: 1})
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "__share_group_state-0"},
		`"offset":0,.*"decoded":\{"decoder":"share_group_state","type":"share_snapshot","key_version":0,"key":\{"groupId":"grp","topicId":"AQAAAAAAAAAAAAAAAAAAAQ","partition":3\},"value_version":0,"value":\{"snapshotEpoch":1,"stateEpoch":2,"leaderEpoch":9,"startOffset":42,"stateBatches":\[\]\}\}\}$`,
		`"offset":1,.*"tombstone":true\}\}$`)
	// RemotePartitionDeleteMetadataRecord: frame 1, api key 2, version 0.
	rec := []byte{1, 2, 0, 7, 'o', 'r', 'd', 'e', 'r', 's', 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 99, 0, 0}
	sideGen(t, "__remote_log_metadata-0", kafkagen.Options{Topic: "__remote_log_metadata", Records: []kafkagen.KeyValue{{Value: rec}}, Batches: 1})
	want := `"decoded":\{"decoder":"remote_log_metadata","type":"RemotePartitionDeleteMetadataRecord","frame_version":1,"api_key":2,"value_version":0,"value":\{"topicIdPartition":\{"name":"orders","id":"AgAAAAAAAAAAAAAAAAAAAg","partition":5\},"brokerId":1,"eventTimestampMs":99,"remotePartitionDeleteState":0\}\}\}$`
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "__remote_log_metadata-0"}, want)
	if err := os.Rename("__remote_log_metadata-0", "tiered-0"); err != nil {
		t.Fatal(err)
	}
	sideRun(t, 0, []string{"-o", "json", "dump-log", "tiered-0"}, `!"decoded"`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--remote-log-metadata-decoder", "tiered-0"}, want)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--decoder", "share_group_state", "tiered-0"}, `"decoded":\{"decoder":"share_group_state","value":null,"error":"null key: a share group state record always has one"\}`)
}

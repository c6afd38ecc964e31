package cmd

import (
	"path/filepath"
	"strings"
	"testing"
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

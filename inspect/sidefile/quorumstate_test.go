package sidefile_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/sidefile"
)

func quorumText(q *sidefile.QuorumState) string {
	s := fmt.Sprintf("v%d leader %d epoch %d voted %d", q.DataVersion, q.LeaderID, q.LeaderEpoch, q.VotedID)
	if q.ClusterID != nil {
		s += fmt.Sprintf(" cluster %q", *q.ClusterID)
	}
	if q.VotedDirectoryID != nil {
		s += " dir " + *q.VotedDirectoryID
	}
	if q.AppliedOffset != nil {
		s += fmt.Sprintf(" applied %d", *q.AppliedOffset)
	}
	if q.CurrentVotersNull {
		s += " voters null"
	} else if q.CurrentVoters != nil {
		s += fmt.Sprintf(" voters %v", q.CurrentVoters)
	}
	return s
}

// TestQuorumStateRealFixtures reads the four quorum-state files the real
// brokers wrote (their text is in the fixtures: data_version 0, node 1
// alone in the quorum, leader epochs 8, 36, 1 and 1).
func TestQuorumStateRealFixtures(t *testing.T) {
	root := fixtures.Root(t)
	for dir, epoch := range map[string]int{"kafka40-kraft-snappy-retention": 8, "cp-kraft-multiseg-compacted": 36, "kafka361-kraft-windows-metadata": 1, "kraft-metadata-tiny": 1} {
		f := sidefile.ReadQuorumState(filepath.Join(root, dir, "__cluster_metadata-0", sidefile.QuorumStateFile))
		if !f.OK() {
			t.Errorf("%s: %+v", dir, f)
			continue
		}
		want := fmt.Sprintf(`v0 leader 1 epoch %d voted -1 cluster "" applied 0 voters [1]`, epoch)
		if got := quorumText(f.Value); got != want {
			t.Errorf("%s: %s, want %s", dir, got, want)
		}
	}
}

func TestParseQuorumState(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{`{"clusterId":"c","leaderId":3,"leaderEpoch":9,"votedId":2,"appliedOffset":17,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`,
			`v0 leader 3 epoch 9 voted 2 cluster "c" applied 17 voters [1 2 3]`, ""},
		{`{"clusterId":"","leaderId":-1,"leaderEpoch":0,"votedId":-1,"appliedOffset":0,"currentVoters":null,"data_version":0}` + "\nanything after the first line\n",
			`v0 leader -1 epoch 0 voted -1 cluster "" applied 0 voters null`, ""},
		// Version 1 (KIP-853): no cluster id, applied offset or voters;
		// a voted directory id. Version 0's fields are ignored if there.
		{`{"leaderId":2,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ","appliedOffset":99,"data_version":1}`,
			`v1 leader 2 epoch 5 voted 2 dir AAAAAAAAAAAAAAAAAAAAAQ`, ""},
		{``, "", "empty first line"},
		{"\n{}", "", "empty first line"},
		{`[1,2]`, "", "not a JSON object"},
		{`null`, "", "not a JSON object"},
		{`{"leaderId":1}`, "", "no data_version"},
		{`{"data_version":2,"leaderId":1}`, "", "data_version (2) is not within"},
		{`{"data_version":"0"}`, "", "data_version: expected an integer"},
		{`{"data_version":0,"leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[]}`, "", "unable to locate field 'clusterId', which is mandatory in version 0"},
		{`{"data_version":1,"leaderId":1,"leaderEpoch":1,"votedId":-1}`, "", "unable to locate field 'votedDirectoryId'"},
		{`{"data_version":0,"clusterId":"","leaderId":"1","leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[]}`, "", "leaderId: expected an integer"},
		{`{"data_version":0,"clusterId":"","leaderId":4294967296,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[]}`, "", "leaderId: expected an integer of 32 bits"},
		{`{"data_version":0,"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"id":1}]}`, "", "currentVoters[0]: unable to locate field 'voterId'"},
		{`{"data_version":0,"clusterId":7,"leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[]}`, "", "clusterId: expected a string"},
	} {
		q, err := sidefile.ParseQuorumState("quorum-state", []byte(tc.in))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, sidefile.ErrCheckpointFormat) {
				t.Errorf("%q: %v, want an ErrCheckpointFormat error with %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case quorumText(q) != tc.want:
			t.Errorf("%q: %s, want %s", tc.in, quorumText(q), tc.want)
		}
	}
}

package sidefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/kseg/kseg/inspect/fileio"
)

// QuorumStateFile is the KRaft client's election state in
// __cluster_metadata-0 (FileQuorumStateStore.DEFAULT_FILE_NAME).
const QuorumStateFile = "quorum-state"

// QuorumState is a quorum-state file: the first line, a JSON object of
// QuorumStateData (raft/src/main/resources/common/message/
// QuorumStateData.json) at the version its "data_version" names, 0 or 1
// (FileQuorumStateStore.readStateFromFile). Fields of the other version
// are nil.
type QuorumState struct {
	DataVersion int16
	ClusterID   *string // version 0
	LeaderID    int32
	LeaderEpoch int32
	VotedID     int32
	// VotedDirectoryID is version 1's (KIP-853), as written (base64).
	VotedDirectoryID *string
	AppliedOffset    *int64 // version 0
	// CurrentVoters are version 0's voter ids; CurrentVotersNull says the
	// array was null.
	CurrentVoters     []int32
	CurrentVotersNull bool
}

// ReadQuorumState reads a __cluster_metadata-0 quorum-state file.
func ReadQuorumState(path string) SideFile[QuorumState] {
	return readSide(path, ParseQuorumState)
}

// ParseQuorumState reads a quorum-state file as the KRaft client does:
// its first line is a JSON object with a data_version of 0 or 1, and
// every field of that version is there with its type
// (QuorumStateDataJsonConverter.read). Anything else is an error of kind
// ErrCheckpointFormat: the client cannot start ("Error while reading the
// Quorum status").
func ParseQuorumState(file string, b []byte) (*QuorumState, error) {
	bad := func(format string, args ...any) error {
		return fileio.Corruptf(file, 0, ErrCheckpointFormat, format, args...)
	}
	line := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		line = b[:i]
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, bad("empty first line (File ended prematurely)")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return nil, bad("the first line is not a JSON object: %v", errOr(err, "null"))
	}
	dv, ok := obj["data_version"]
	if !ok {
		return nil, bad("no data_version field")
	}
	version, err := jsonInt(dv, 16)
	if err != nil {
		return nil, bad("data_version: %v", err)
	}
	if version < 0 || version > 1 {
		return nil, bad("data_version (%d) is not within the min (0) and max (1) supported version", version)
	}
	q := &QuorumState{DataVersion: int16(version)}
	field := func(name string, in bool) (json.RawMessage, error) {
		raw, ok := obj[name]
		if !ok && in {
			return nil, fmt.Errorf("unable to locate field '%s', which is mandatory in version %d", name, version)
		}
		if !in {
			return nil, nil
		}
		return raw, nil
	}
	ints := []struct {
		name string
		dst  *int32
	}{{"leaderId", &q.LeaderID}, {"leaderEpoch", &q.LeaderEpoch}, {"votedId", &q.VotedID}}
	for _, f := range ints {
		raw, err := field(f.name, true)
		if err != nil {
			return nil, bad("%v", err)
		}
		v, err := jsonInt(raw, 32)
		if err != nil {
			return nil, bad("%s: %v", f.name, err)
		}
		*f.dst = int32(v)
	}
	if raw, err := field("clusterId", version == 0); err != nil {
		return nil, bad("%v", err)
	} else if raw != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad("clusterId: expected a string, got %s", raw)
		}
		q.ClusterID = &s
	}
	if raw, err := field("votedDirectoryId", version >= 1); err != nil {
		return nil, bad("%v", err)
	} else if raw != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, bad("votedDirectoryId: expected a string, got %s", raw)
		}
		q.VotedDirectoryID = &s
	}
	if raw, err := field("appliedOffset", version == 0); err != nil {
		return nil, bad("%v", err)
	} else if raw != nil {
		v, err := jsonInt(raw, 64)
		if err != nil {
			return nil, bad("appliedOffset: %v", err)
		}
		q.AppliedOffset = &v
	}
	if raw, err := field("currentVoters", version == 0); err != nil {
		return nil, bad("%v", err)
	} else if raw != nil {
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			q.CurrentVotersNull = true
		} else {
			var voters []map[string]json.RawMessage
			if json.Unmarshal(raw, &voters) != nil {
				return nil, bad("currentVoters: expected an array of objects, got %s", raw)
			}
			for i, v := range voters {
				id, ok := v["voterId"]
				if !ok {
					return nil, bad("currentVoters[%d]: unable to locate field 'voterId', which is mandatory in version 0", i)
				}
				n, err := jsonInt(id, 32)
				if err != nil {
					return nil, bad("currentVoters[%d].voterId: %v", i, err)
				}
				q.CurrentVoters = append(q.CurrentVoters, int32(n))
			}
		}
	}
	return q, nil
}

// jsonInt reads an integer JSON number that fits in bits bits; a string
// is refused as MessageUtil.jsonNodeToInt refuses one.
func jsonInt(raw json.RawMessage, bits int) (int64, error) {
	v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("expected an integer of %d bits, got %s", bits, raw)
	}
	return v, nil
}

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}

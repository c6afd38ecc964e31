package internaltopics_test

import (
	"testing"

	"github.com/kseg/kseg/inspect/internaltopics"
)

// nstr writes a non-flexible string (i16 length).
func (x *w) nstr(s string) *w { x.i16(int16(len(s))); x.b = append(x.b, s...); return x }

// TestShareGroupState builds __share_group_state records from the
// message schemas (share-coordinator ShareSnapshotKey/Value,
// ShareUpdateKey/Value; ShareCoordinatorRecordSerde's version prefixes)
// and decodes them; the decoder is chosen from the topic name.
func TestShareGroupState(t *testing.T) {
	if got := internaltopics.ForTopic("__share_group_state"); got != internaltopics.ShareGroupState {
		t.Fatalf("ForTopic: %q", got)
	}
	batches := func(x *w) *w {
		x.uv(3)
		x.i64(100).i64(109).i8(2).i16(1).noTags()
		x.i64(110).i64(110).i8(4).i16(5).noTags()
		return x
	}
	snapKey := (&w{}).i16(0).nstr("grp").uuid(4).i32(7).b
	snapVal := batches((&w{}).i16(0).u16(65535).i32(3).i32(12).i64(100)).noTags().b
	updKey := (&w{}).i16(1).nstr("grp").uuid(4).i32(7).b
	updVal := batches((&w{}).i16(0).u16(2).i32(13).i64(-1)).noTags().b
	batchesJSON := `"stateBatches":[{"firstOffset":100,"lastOffset":109,"deliveryState":2,"deliveryCount":1},{"firstOffset":110,"lastOffset":110,"deliveryState":4,"deliveryCount":5}]`
	for _, tc := range []struct {
		name       string
		key, value []byte
		want       string
	}{
		{"snapshot", snapKey, snapVal, `{"decoder":"share_group_state","type":"share_snapshot","key_version":0,"key":{"groupId":"grp","topicId":"` + uid(4) + `","partition":7},"value_version":0,"value":{"snapshotEpoch":65535,"stateEpoch":3,"leaderEpoch":12,"startOffset":100,` + batchesJSON + `}}`},
		{"update", updKey, updVal, `{"decoder":"share_group_state","type":"share_update","key_version":1,"key":{"groupId":"grp","topicId":"` + uid(4) + `","partition":7},"value_version":0,"value":{"snapshotEpoch":2,"leaderEpoch":13,"startOffset":-1,` + batchesJSON + `}}`},
		{"tombstone", updKey, nil, `{"decoder":"share_group_state","type":"share_update","key_version":1,"key":{"groupId":"grp","topicId":"` + uid(4) + `","partition":7},"value":null,"tombstone":true}`},
		{"unknown record type", (&w{}).i16(5).b, nil, `{"decoder":"share_group_state","type":"unknown","key_version":5,"value":null,"note":"key version 5 is not a record type this decoder knows"}`},
		{"newer value version", snapKey, (&w{}).i16(1).b, `{"decoder":"share_group_state","type":"share_snapshot","key_version":0,"key":{"groupId":"grp","topicId":"` + uid(4) + `","partition":7},"value_version":1,"value":null,"note":"value unknown version: ShareSnapshotValue version 1 is not one this decoder knows (0)"}`},
		{"short key", []byte{0}, nil, `{"decoder":"share_group_state","value":null,"error":"key of 1 bytes has no record type"}`},
		{"truncated value", snapKey, snapVal[:20], ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := internaltopics.Decode(internaltopics.ForTopic("__share_group_state"), tc.key, tc.value)
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

package internaltopics_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/record"
)

// consumerMember decodes a GroupMetadataValue holding one member with these
// subscription and assignment bytes, and returns that member's two fields
// as JSON.
func consumerMember(t *testing.T, protocolType string, sub, asg []byte) (string, string) {
	t.Helper()
	v := kmsg.GroupMetadataValue{Version: 3, ProtocolType: protocolType, Generation: 1, Protocol: ptr("range"),
		Members: []kmsg.GroupMetadataValueMember{{MemberID: "m", ClientID: "c", ClientHost: "/h", Subscription: sub, Assignment: asg}}}
	d := internaltopics.Decode(internaltopics.ConsumerOffsets, (&kmsg.GroupMetadataKey{Version: 2, Group: "g"}).AppendTo(nil), v.AppendTo(nil))
	if d.Error != "" {
		t.Fatalf("%s", d.Error)
	}
	var value struct {
		Members []struct {
			Subscription json.RawMessage `json:"subscription"`
			Assignment   json.RawMessage `json:"assignment"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(mustJSON(t, d.Value)), &value); err != nil || len(value.Members) != 1 {
		t.Fatalf("%v: %s", err, mustJSON(t, d.Value))
	}
	return string(value.Members[0].Subscription), string(value.Members[0].Assignment)
}

// A consumer group's members' subscription and assignment are decoded as
// kafka-dump-log --offsets-decoder decodes them (prepareGroupMetadataValue:
// ConsumerProtocolSubscription / ConsumerProtocolAssignment, each at the
// version its bytes start with), encoded here by franz-go's kmsg, an
// independent implementation of the same schemas, at every version.
func TestConsumerProtocolAgainstKmsg(t *testing.T) {
	for ver := int16(0); ver <= 3; ver++ {
		sub := kmsg.ConsumerMemberMetadata{Version: ver, Topics: []string{"orders", "audit"}, UserData: []byte{7},
			OwnedPartitions: []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{0, 2}}},
			Generation:      5, Rack: ptr("rack-a")}
		asg := kmsg.ConsumerMemberAssignment{Version: ver, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{1, 3}}}}
		wantSub := `{"topics":["orders","audit"],"userData":"Bw=="`
		if ver >= 1 {
			wantSub += `,"ownedPartitions":[{"topic":"orders","partitions":[0,2]}]`
		}
		if ver >= 2 {
			wantSub += `,"generationId":5`
		}
		if ver >= 3 {
			wantSub += `,"rackId":"rack-a"`
		}
		wantSub += `}`
		wantAsg := `{"assignedPartitions":[{"topic":"orders","partitions":[1,3]}],"userData":null}`
		gotSub, gotAsg := consumerMember(t, "consumer", sub.AppendTo(nil), asg.AppendTo(nil))
		if gotSub != wantSub || gotAsg != wantAsg {
			t.Errorf("version %d:\n got %s %s\nwant %s %s", ver, gotSub, gotAsg, wantSub, wantAsg)
		}
	}
	sub := (&kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{"t"}}).AppendTo(nil)
	asg := (&kmsg.ConsumerMemberAssignment{Version: 0}).AppendTo(nil)
	b64 := func(b []byte) string { return `"` + base64.StdEncoding.EncodeToString(b) + `"` }
	for _, c := range []struct {
		what, protocolType string
		sub, asg           []byte
		wantSub, wantAsg   string
	}{
		// Not the consumer protocol (Kafka Connect's): the bytes as they are.
		{"connect", "connect", sub, asg, b64(sub), b64(asg)},
		// A version past 3: the generated read refuses it, the tool keeps the bytes.
		{"version 4", "consumer", append([]byte{0, 4}, sub[2:]...), asg, b64(append([]byte{0, 4}, sub[2:]...)), `{"assignedPartitions":[],"userData":null}`},
		// Bytes after the fields are left unread, as by the generated read.
		{"trailing bytes", "consumer", append(sub, 1, 2), asg, `{"topics":["t"],"userData":null}`, `{"assignedPartitions":[],"userData":null}`},
		// Cut short: kept as bytes.
		{"short", "consumer", sub[:5], nil, b64(sub[:5]), `""`},
	} {
		gotSub, gotAsg := consumerMember(t, c.protocolType, c.sub, c.asg)
		if gotSub != c.wantSub || gotAsg != c.wantAsg {
			t.Errorf("%s:\n got %s %s\nwant %s %s", c.what, gotSub, gotAsg, c.wantSub, c.wantAsg)
		}
	}
}

// In the group metadata of the real brokers' __consumer_offsets, every
// member of a consumer group has its subscription and assignment decoded
// (and zk-kafka2x-clean's group is assigned new_topic partition 0).
func TestConsumerProtocolRealFixtures(t *testing.T) {
	members, assigned := 0, false
	for _, dir := range fixtures.Dirs(t) {
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tg.Partitions {
			if p.Topic != "__consumer_offsets" {
				continue
			}
			var rd record.RecordDecoder
			err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				if w.Batch.IsControl() {
					return nil
				}
				return rd.Records(w.Segment.Log, w.Entry, w.Batch, func(r *record.Record) error {
					d := internaltopics.Decode(internaltopics.ConsumerOffsets, r.Key, r.Value)
					if d.Type != internaltopics.TypeGroupMetadata || d.Value == nil {
						return nil
					}
					if pt, _ := d.Value.Get("protocolType"); pt != "consumer" {
						return nil
					}
					ms, _ := d.Value.Get("members")
					for _, m := range ms.([]any) {
						members++
						fs := m.(internaltopics.Fields)
						for _, name := range []string{"subscription", "assignment"} {
							if v, _ := fs.Get(name); !strings.HasPrefix(mustJSON(t, v), "{") {
								t.Errorf("%s offset %d: %s not decoded: %s", p.Dir, r.Offset, name, mustJSON(t, v))
							}
						}
						if v, _ := fs.Get("assignment"); strings.Contains(mustJSON(t, v), `[{"topic":"new_topic","partitions":[0]}]`) {
							assigned = true
						}
					}
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if members == 0 || !assigned {
		t.Errorf("%d consumer group members read; new_topic-0 assigned: %v", members, assigned)
	}
}

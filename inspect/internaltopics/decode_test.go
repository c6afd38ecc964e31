package internaltopics_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/inspect/internaltopics"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// TestOffsetCommitAgainstKmsg encodes offset commits of every key and value
// version with franz-go's kmsg (an independent implementation of the same
// schemas) and decodes them.
func TestOffsetCommitAgainstKmsg(t *testing.T) {
	for kv := int16(0); kv <= 1; kv++ {
		k := kmsg.OffsetCommitKey{Version: kv, Group: "grp", Topic: "orders", Partition: 7}
		for vv := int16(0); vv <= 4; vv++ {
			v := kmsg.OffsetCommitValue{Version: vv, Offset: 1234, LeaderEpoch: 9, Metadata: "meta", CommitTimestamp: 1700000000000, ExpireTimestamp: 1700000100000}
			want := `{"decoder":"consumer_offsets","type":"offset_commit","key_version":` + itoa(kv) +
				`,"key":{"group":"grp","topic":"orders","partition":7},"value_version":` + itoa(vv) + `,"value":{"offset":1234,`
			if vv >= 3 {
				want += `"leaderEpoch":9,`
			}
			want += `"metadata":"meta","commitTimestamp":1700000000000`
			if vv == 1 {
				want += `,"expireTimestamp":1700000100000`
			}
			if vv == 4 {
				v.TopicID = [16]byte{1, 2, 3}
				want += `,"topicId":"` + base64.RawURLEncoding.EncodeToString(v.TopicID[:]) + `"`
			}
			want += `}}`
			d := internaltopics.Decode(internaltopics.ConsumerOffsets, k.AppendTo(nil), v.AppendTo(nil))
			if got := mustJSON(t, d); got != want {
				t.Errorf("key v%d value v%d:\n got %s\nwant %s", kv, vv, got, want)
			}
		}
		// A tombstone: the offset was deleted.
		d := internaltopics.Decode(internaltopics.ConsumerOffsets, k.AppendTo(nil), nil)
		if !d.Tombstone || d.Value != nil || d.Error != "" || d.Key == nil {
			t.Errorf("tombstone: %+v", d)
		}
	}
	// Version 4 is flexible: unknown tagged fields are skipped.
	v := kmsg.OffsetCommitValue{Version: 4, Offset: 1, Metadata: ""}
	v.UnknownTags.Set(9, []byte{1, 2, 3})
	d := internaltopics.Decode(internaltopics.ConsumerOffsets, (&kmsg.OffsetCommitKey{Version: 1}).AppendTo(nil), v.AppendTo(nil))
	if d.Error != "" || mustJSON(t, d.Value) != `{"offset":1,"leaderEpoch":0,"metadata":"","commitTimestamp":0}` {
		t.Errorf("unknown tag: %s", mustJSON(t, d))
	}
}

func TestGroupMetadataAgainstKmsg(t *testing.T) {
	k := kmsg.GroupMetadataKey{Version: 2, Group: "g1"}
	for vv := int16(0); vv <= 4; vv++ {
		v := kmsg.GroupMetadataValue{Version: vv, ProtocolType: "consumer", Generation: 3, Protocol: ptr("range"), Leader: nil, CurrentStateTimestamp: 42,
			Members: []kmsg.GroupMetadataValueMember{
				{MemberID: "m1", InstanceID: ptr("i1"), ClientID: "c1", ClientHost: "/10.0.0.1", RebalanceTimeoutMillis: 300000, SessionTimeoutMillis: 45000, Subscription: []byte{0, 1}, Assignment: []byte{}},
				{MemberID: "m2", InstanceID: nil, ClientID: "c2", ClientHost: "/10.0.0.2", RebalanceTimeoutMillis: 1, SessionTimeoutMillis: 2, Subscription: nil, Assignment: []byte{9}},
			}}
		member := func(id, inst, client, host string, reb, sess int64, sub, asg string) string {
			s := `{"memberId":"` + id + `",`
			if vv >= 3 {
				s += `"groupInstanceId":` + inst + `,`
			}
			s += `"clientId":"` + client + `","clientHost":"` + host + `",`
			if vv >= 1 {
				s += `"rebalanceTimeout":` + mustItoa(reb) + `,`
			}
			return s + `"sessionTimeout":` + mustItoa(sess) + `,"subscription":"` + sub + `","assignment":"` + asg + `"}`
		}
		want := `{"decoder":"consumer_offsets","type":"group_metadata","key_version":2,"key":{"group":"g1"},"value_version":` + itoa(vv) +
			`,"value":{"protocolType":"consumer","generation":3,"protocol":"range","leader":null,`
		if vv >= 2 {
			want += `"currentStateTimestamp":42,`
		}
		want += `"members":[` + member("m1", `"i1"`, "c1", "/10.0.0.1", 300000, 45000, "AAE=", "") + `,` +
			member("m2", "null", "c2", "/10.0.0.2", 1, 2, "", "CQ==") + `]}}`
		d := internaltopics.Decode(internaltopics.ConsumerOffsets, k.AppendTo(nil), v.AppendTo(nil))
		if got := mustJSON(t, d); got != want {
			t.Errorf("value v%d:\n got %s\nwant %s", vv, got, want)
		}
	}
}

func TestTransactionLogAgainstKmsg(t *testing.T) {
	k := kmsg.TxnMetadataKey{Version: 0, TransactionalID: "tx-1"}
	for vv := int16(0); vv <= 1; vv++ {
		v := kmsg.TxnMetadataValue{Version: vv, ProducerID: 4000, ProducerEpoch: 2, TimeoutMillis: 60000, State: 4,
			Topics:              []kmsg.TxnMetadataValueTopic{{Topic: "a", Partitions: []int32{0, 3}}, {Topic: "b", Partitions: []int32{}}},
			LastUpdateTimestamp: 11, StartTimestamp: 10, PreviousProducerID: -1, NextProducerID: -1, ClientTransactionVersion: 0, NextProducerEpoch: -1}
		want := `{"decoder":"transaction_state","type":"transaction","key_version":0,"key":{"transactionalId":"tx-1"},"value_version":` + itoa(vv) +
			`,"value":{"producerId":4000,"producerEpoch":2,"transactionTimeoutMs":60000,"transactionStatus":4,"transactionState":"CompleteCommit",` +
			`"transactionPartitions":[{"topic":"a","partitionIds":[0,3]},{"topic":"b","partitionIds":[]}],` +
			`"transactionLastUpdateTimestampMs":11,"transactionStartTimestampMs":10}}`
		if got := mustJSON(t, internaltopics.Decode(internaltopics.TransactionState, k.AppendTo(nil), v.AppendTo(nil))); got != want {
			t.Errorf("value v%d:\n got %s\nwant %s", vv, got, want)
		}
	}
	// Version 1 with every tagged field set, and null partitions.
	v := kmsg.TxnMetadataValue{Version: 1, ProducerID: 5, ProducerEpoch: 1, TimeoutMillis: 2, State: 1, Topics: nil,
		LastUpdateTimestamp: 3, StartTimestamp: 4, PreviousProducerID: 6, NextProducerID: 7, ClientTransactionVersion: 2, NextProducerEpoch: 8}
	want := `{"producerId":5,"previousProducerId":6,"nextProducerId":7,"producerEpoch":1,"nextProducerEpoch":8,"transactionTimeoutMs":2,` +
		`"transactionStatus":1,"transactionState":"Ongoing","transactionPartitions":null,"transactionLastUpdateTimestampMs":3,` +
		`"transactionStartTimestampMs":4,"clientTransactionVersion":2}`
	d := internaltopics.Decode(internaltopics.TransactionState, k.AppendTo(nil), v.AppendTo(nil))
	if got := mustJSON(t, d.Value); got != want || d.Error != "" {
		t.Errorf("tagged fields:\n got %s %s\nwant %s", got, d.Error, want)
	}
	if d := internaltopics.Decode(internaltopics.TransactionState, k.AppendTo(nil), nil); !d.Tombstone || d.Error != "" {
		t.Errorf("tombstone: %+v", d)
	}
	for id, name := range map[int8]string{0: "Empty", 2: "PrepareCommit", 3: "PrepareAbort", 5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence", 9: "Unknown(9)"} {
		if got := internaltopics.TransactionStateName(id); got != name {
			t.Errorf("state %d: %s", id, got)
		}
	}
}

// TestConsumerGroupKeys: the new coordinator's record types, hand-encoded.
func TestConsumerGroupKeys(t *testing.T) {
	str := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...) }
	for kv, c := range map[int16]struct {
		typ    string
		member bool
	}{3: {"consumer_group_metadata", false}, 4: {"consumer_group_partition_metadata", false}, 5: {"consumer_group_member_metadata", true},
		6: {"consumer_group_target_assignment_metadata", false}, 7: {"consumer_group_target_assignment_member", true}, 8: {"consumer_group_current_member_assignment", true}} {
		key := str(binary.BigEndian.AppendUint16(nil, uint16(kv)), "grp")
		wantKey := `{"groupId":"grp"}`
		if c.member {
			key = str(key, "mem")
			wantKey = `{"groupId":"grp","memberId":"mem"}`
		}
		d := internaltopics.Decode(internaltopics.ConsumerOffsets, key, []byte{0, 0, 1, 2})
		if d.Type != c.typ || mustJSON(t, d.Key) != wantKey || *d.ValueVersion != 0 || d.Value != nil || d.Note == "" || d.Error != "" {
			t.Errorf("key version %d: %s", kv, mustJSON(t, d))
		}
	}
	d := internaltopics.Decode(internaltopics.ConsumerOffsets, []byte{0, 99, 1}, []byte{0, 0})
	if d.Type != "unknown" || d.Note == "" || d.Error != "" {
		t.Errorf("unknown key version: %s", mustJSON(t, d))
	}
}

// TestMalformedRecords: damage is an Error, never a panic; newer versions
// are a Note.
func TestMalformedRecords(t *testing.T) {
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 1}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 5, Metadata: "m"}).AppendTo(nil)
	for name, c := range map[string]struct {
		decoder    string
		key, value []byte
		err, note  string
	}{
		"empty key":          {internaltopics.ConsumerOffsets, []byte{0}, val, "key of 1 bytes has no version", ""},
		"key cut":            {internaltopics.ConsumerOffsets, key[:len(key)-1], val, "key: record does not match its schema", ""},
		"key trailing":       {internaltopics.ConsumerOffsets, append(append([]byte{}, key...), 0), val, "1 bytes left after the last field", ""},
		"value cut":          {internaltopics.ConsumerOffsets, key, val[:len(val)-2], "value: record does not match", ""},
		"value version 5":    {internaltopics.ConsumerOffsets, key, []byte{0, 5, 1}, "", "OffsetCommitValue version 5 is not one this decoder knows (0-4)"},
		"negative string":    {internaltopics.ConsumerOffsets, []byte{0, 2, 0xff, 0xfe}, nil, "key: record does not match", ""},
		"null group":         {internaltopics.ConsumerOffsets, []byte{0, 2, 0xff, 0xff}, nil, "non-nullable field \"group\" was serialized as null", ""},
		"huge array":         {internaltopics.TransactionState, []byte{0, 0, 0, 1, 'x'}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4, 4, 0x7f, 0xff, 0xff, 0xff}, "array \"transactionPartitions\" of 2147483647 elements", ""},
		"txn key version 1":  {internaltopics.TransactionState, []byte{0, 1, 0, 1, 'x'}, nil, "TransactionLogKey version 1 is not one this decoder knows", ""},
		"metadata null":      {internaltopics.ClusterMetadata, nil, nil, "null value", ""},
		"metadata frame 0":   {internaltopics.ClusterMetadata, nil, []byte{0, 2, 0}, "frame version 0", ""},
		"metadata header":    {internaltopics.ClusterMetadata, nil, []byte{1, 0x80}, "record header", ""},
		"metadata big key":   {internaltopics.ClusterMetadata, nil, []byte{1, 0xff, 0xff, 0x03, 0}, "too large", ""},
		"metadata new":       {internaltopics.ClusterMetadata, nil, []byte{1, 2, 5, 0}, "", "TopicRecord version 5 is not one this decoder knows (0)"},
		"metadata bad tag":   {internaltopics.ClusterMetadata, nil, []byte{1, 23, 0, 1, 0, 3, 2, 'a', 'b'}, "tagged field \"name\": record does not match its schema: byte 2: 1 bytes left", ""},
		"varint too long":    {internaltopics.ClusterMetadata, nil, []byte{1, 20, 0, 0x80, 0x80, 0x80, 0x80, 0x80}, "longer than 5 bytes", ""},
		"unknown decoder":    {"nope", nil, nil, "unknown decoder", ""},
		"tags past the end":  {internaltopics.ClusterMetadata, nil, []byte{1, 20, 0, 9}, "9 tagged fields declared", ""},
		"metadata unknown 6": {internaltopics.ClusterMetadata, nil, []byte{1, 6, 0, 0}, "", "api key 6 is not a metadata record type"},
	} {
		d := internaltopics.Decode(c.decoder, c.key, c.value)
		if !strings.Contains(d.Error, c.err) || (c.err == "") != (d.Error == "") || !strings.Contains(d.Note, c.note) || (c.note == "") != (d.Note == "") {
			t.Errorf("%s: error %q note %q; want error %q note %q", name, d.Error, d.Note, c.err, c.note)
		}
		if d.Error != "" && d.Value != nil {
			t.Errorf("%s: a value next to an error", name)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(0, (&kmsg.OffsetCommitKey{Version: 1, Group: "g"}).AppendTo(nil), (&kmsg.OffsetCommitValue{Version: 4}).AppendTo(nil))
	f.Add(1, (&kmsg.TxnMetadataKey{TransactionalID: "t"}).AppendTo(nil), (&kmsg.TxnMetadataValue{Version: 1}).AppendTo(nil))
	f.Add(2, []byte(nil), []byte{1, 0, 3, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, which int, key, value []byte) {
		names := internaltopics.Decoders()
		d := internaltopics.Decode(names[uint(which)%uint(len(names))], key, value)
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
	})
}

func itoa(v int16) string { return mustItoa(int64(v)) }

func mustItoa(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

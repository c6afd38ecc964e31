package internaltopics_test

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"testing"

	"github.com/kseg/kseg/inspect/internaltopics"
)

// w is a hand encoder for flexible metadata records, written from the
// JSON schemas field by field (independently of the decoder's tables).
type w struct{ b []byte }

func (x *w) uv(v uint32) *w  { x.b = binary.AppendUvarint(x.b, uint64(v)); return x }
func (x *w) i8(v int8) *w    { x.b = append(x.b, byte(v)); return x }
func (x *w) i16(v int16) *w  { x.b = binary.BigEndian.AppendUint16(x.b, uint16(v)); return x }
func (x *w) u16(v uint16) *w { x.b = binary.BigEndian.AppendUint16(x.b, v); return x }
func (x *w) i32(v int32) *w  { x.b = binary.BigEndian.AppendUint32(x.b, uint32(v)); return x }
func (x *w) i64(v int64) *w  { x.b = binary.BigEndian.AppendUint64(x.b, uint64(v)); return x }
func (x *w) f64(v float64) *w {
	x.b = binary.BigEndian.AppendUint64(x.b, math.Float64bits(v))
	return x
}
func (x *w) bl(v bool) *w {
	if v {
		return x.i8(1)
	}
	return x.i8(0)
}
func (x *w) uuid(n byte) *w {
	x.b = append(x.b, n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n)
	return x
}
func (x *w) str(s string) *w { x.uv(uint32(len(s) + 1)); x.b = append(x.b, s...); return x }
func (x *w) null() *w        { return x.uv(0) }
func (x *w) ints(v ...int32) *w {
	x.uv(uint32(len(v) + 1))
	for _, i := range v {
		x.i32(i)
	}
	return x
}
func (x *w) uuids(v ...byte) *w {
	x.uv(uint32(len(v) + 1))
	for _, n := range v {
		x.uuid(n)
	}
	return x
}
func (x *w) noTags() *w { return x.uv(0) }

// tags writes a tagged-field section; each field's bytes come from fn.
func (x *w) tags(fields ...func(*w) (uint32, *w)) *w {
	x.uv(uint32(len(fields)))
	for _, fn := range fields {
		tag, sub := fn(&w{})
		x.uv(tag).uv(uint32(len(sub.b)))
		x.b = append(x.b, sub.b...)
	}
	return x
}

func uid(n byte) string {
	return base64.RawURLEncoding.EncodeToString([]byte{n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n})
}

// TestMetadataRecordsEveryVersion builds a record of every type and
// version the decoder claims and checks the decoded fields.
func TestMetadataRecordsEveryVersion(t *testing.T) {
	type tc struct {
		apiKey  uint32
		version uint32
		body    func(*w)
		name    string
		want    string
	}
	endpoint := func(x *w) { x.uv(2).str("PLAINTEXT").str("h").u16(9092).i16(0).noTags() }
	feature := func(x *w) { x.uv(2).str("metadata.version").i16(1).i16(25).noTags() }
	const ep = `[{"name":"PLAINTEXT","host":"h","port":9092,"securityProtocol":0}]`
	const ft = `[{"name":"metadata.version","minSupportedVersion":1,"maxSupportedVersion":25}]`
	broker := func(v uint32) tc {
		c := tc{apiKey: 0, version: v, name: "RegisterBrokerRecord"}
		c.body = func(x *w) {
			x.i32(1)
			if v >= 2 {
				x.bl(true)
			}
			x.uuid(7).i64(99)
			endpoint(x)
			feature(x)
			x.null().bl(false)
			if v >= 1 {
				x.bl(true)
			}
			if v >= 3 {
				x.tags(func(s *w) (uint32, *w) { return 0, s.uuids(1, 2) })
			} else {
				x.noTags()
			}
		}
		c.want = `{"brokerId":1,`
		if v >= 2 {
			c.want += `"isMigratingZkBroker":true,`
		}
		c.want += `"incarnationId":"` + uid(7) + `","brokerEpoch":99,"endPoints":` + ep + `,"features":` + ft + `,"rack":null,"fenced":false`
		if v >= 1 {
			c.want += `,"inControlledShutdown":true`
		}
		if v >= 3 {
			c.want += `,"logDirs":["` + uid(1) + `","` + uid(2) + `"]`
		}
		c.want += `}`
		return c
	}
	partition := func(v uint32) tc {
		c := tc{apiKey: 3, version: v, name: "PartitionRecord"}
		c.body = func(x *w) {
			x.i32(4).uuid(3).ints(1, 2, 3).ints(1, 2).ints().ints(3).i32(1).i32(5).i32(6)
			if v >= 1 {
				x.uuids(9, 9, 9)
			}
			fs := []func(*w) (uint32, *w){func(s *w) (uint32, *w) { return 0, s.i8(1) }}
			if v >= 2 {
				fs = append(fs, func(s *w) (uint32, *w) { return 1, s.ints(2) }, func(s *w) (uint32, *w) { return 2, s.null() })
			}
			x.tags(fs...)
		}
		c.want = `{"partitionId":4,"topicId":"` + uid(3) + `","replicas":[1,2,3],"isr":[1,2],"removingReplicas":[],"addingReplicas":[3],"leader":1,"leaderRecoveryState":1,"leaderEpoch":5,"partitionEpoch":6`
		if v >= 1 {
			c.want += `,"directories":["` + uid(9) + `","` + uid(9) + `","` + uid(9) + `"]`
		}
		if v >= 2 {
			c.want += `,"eligibleLeaderReplicas":[2],"lastKnownElr":null`
		}
		c.want += `}`
		return c
	}
	change := func(v uint32) tc {
		c := tc{apiKey: 5, version: v, name: "PartitionChangeRecord"}
		c.body = func(x *w) {
			x.i32(0).uuid(3)
			fs := []func(*w) (uint32, *w){
				func(s *w) (uint32, *w) { return 0, s.ints(1) },
				func(s *w) (uint32, *w) { return 1, s.i32(-1) },
				func(s *w) (uint32, *w) { return 5, s.i8(0) },
			}
			if v >= 2 {
				fs = append(fs, func(s *w) (uint32, *w) { return 6, s.ints() }, func(s *w) (uint32, *w) { return 7, s.ints(3) })
			}
			if v >= 1 {
				fs = append(fs, func(s *w) (uint32, *w) { return 8, s.uuids(5) })
			}
			x.tags(fs...)
		}
		c.want = `{"partitionId":0,"topicId":"` + uid(3) + `","isr":[1],"leader":-1,"leaderRecoveryState":0`
		if v >= 1 {
			c.want += `,"directories":["` + uid(5) + `"]`
		}
		if v >= 2 {
			c.want += `,"eligibleLeaderReplicas":[],"lastKnownElr":[3]`
		}
		c.want += `}`
		return c
	}
	regChange := func(v uint32) tc {
		c := tc{apiKey: 17, version: v, name: "BrokerRegistrationChangeRecord"}
		c.body = func(x *w) {
			x.i32(2).i64(77)
			fs := []func(*w) (uint32, *w){func(s *w) (uint32, *w) { return 0, s.i8(-1) }}
			if v >= 1 {
				fs = append(fs, func(s *w) (uint32, *w) { return 1, s.i8(1) })
			}
			if v >= 2 {
				fs = append(fs, func(s *w) (uint32, *w) { return 2, s.uuids(4) })
			}
			x.tags(fs...)
		}
		c.want = `{"brokerId":2,"brokerEpoch":77,"fenced":-1`
		if v >= 1 {
			c.want += `,"inControlledShutdown":1`
		}
		if v >= 2 {
			c.want += `,"logDirs":["` + uid(4) + `"]`
		}
		c.want += `}`
		return c
	}
	cases := []tc{
		broker(0), broker(1), broker(2), broker(3),
		{1, 0, func(x *w) { x.i32(3).i64(8).noTags() }, "UnregisterBrokerRecord", `{"brokerId":3,"brokerEpoch":8}`},
		{2, 0, func(x *w) { x.str("orders").uuid(3).noTags() }, "TopicRecord", `{"name":"orders","topicId":"` + uid(3) + `"}`},
		partition(0), partition(1), partition(2),
		{4, 0, func(x *w) { x.i8(2).str("orders").str("retention.ms").null().noTags() }, "ConfigRecord", `{"resourceType":2,"resourceName":"orders","name":"retention.ms","value":null}`},
		change(0), change(1), change(2),
		{7, 0, func(x *w) { x.i32(1).i64(5).noTags() }, "FenceBrokerRecord", `{"id":1,"epoch":5}`},
		{8, 0, func(x *w) { x.i32(1).i64(6).noTags() }, "UnfenceBrokerRecord", `{"id":1,"epoch":6}`},
		{9, 0, func(x *w) { x.uuid(3).noTags() }, "RemoveTopicRecord", `{"topicId":"` + uid(3) + `"}`},
		{12, 0, func(x *w) { x.str("metadata.version").i16(25).noTags() }, "FeatureLevelRecord", `{"name":"metadata.version","featureLevel":25}`},
		{14, 0, func(x *w) {
			x.uv(3).str("user").str("alice").noTags().str("client-id").null().noTags().str("producer_byte_rate").f64(1024.5).bl(false).noTags()
		}, "ClientQuotaRecord", `{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1024.5,"remove":false}`},
		{15, 0, func(x *w) { x.i32(1).i64(12).i64(5000).noTags() }, "ProducerIdsRecord", `{"brokerId":1,"brokerEpoch":12,"nextProducerId":5000}`},
		regChange(0), regChange(1), regChange(2),
		{18, 0, func(x *w) { x.uuid(1).i8(2).str("t").i8(3).str("User:a").str("*").i8(4).i8(3).noTags() }, "AccessControlEntryRecord",
			`{"id":"` + uid(1) + `","resourceType":2,"resourceName":"t","patternType":3,"principal":"User:a","host":"*","operation":4,"permissionType":3}`},
		{19, 0, func(x *w) { x.uuid(1).noTags() }, "RemoveAccessControlEntryRecord", `{"id":"` + uid(1) + `"}`},
		{20, 0, func(x *w) { x.noTags() }, "NoOpRecord", `{}`},
		{21, 0, func(x *w) { x.i8(2).noTags() }, "ZkMigrationStateRecord", `{"zkMigrationState":2}`},
		{23, 0, func(x *w) { x.tags(func(s *w) (uint32, *w) { return 0, s.str("bulk") }) }, "BeginTransactionRecord", `{"name":"bulk"}`},
		{23, 0, func(x *w) { x.noTags() }, "BeginTransactionRecord", `{}`},
		{24, 0, func(x *w) { x.noTags() }, "EndTransactionRecord", `{}`},
		{25, 0, func(x *w) { x.tags(func(s *w) (uint32, *w) { return 0, s.null() }) }, "AbortTransactionRecord", `{"reason":null}`},
		{27, 0, func(x *w) {
			x.i32(3000).uuid(2).bl(false)
			endpoint(x)
			feature(x)
			x.noTags()
		}, "RegisterControllerRecord", `{"controllerId":3000,"incarnationId":"` + uid(2) + `","zkMigrationReady":false,"endPoints":` + ep + `,"features":` + ft + `}`},
	}
	for _, c := range cases {
		x := (&w{}).uv(1).uv(c.apiKey).uv(c.version)
		c.body(x)
		d := internaltopics.Decode(internaltopics.ClusterMetadata, nil, x.b)
		if d.Error != "" || d.Note != "" || d.Type != c.name || *d.APIKey != int16(c.apiKey) || *d.ValueVersion != int16(c.version) || *d.FrameVersion != 1 {
			t.Errorf("%s v%d: %s", c.name, c.version, mustJSON(t, d))
			continue
		}
		if got := mustJSON(t, d.Value); got != c.want {
			t.Errorf("%s v%d:\n got %s\nwant %s", c.name, c.version, got, c.want)
		}
		if internaltopics.MetadataTypeName(int16(c.apiKey)) != c.name {
			t.Errorf("MetadataTypeName(%d) = %q", c.apiKey, internaltopics.MetadataTypeName(int16(c.apiKey)))
		}
	}
	// Named, not decoded: the records that hold credentials.
	for key, name := range map[uint32]string{10: "DelegationTokenRecord", 11: "UserScramCredentialRecord", 22: "RemoveUserScramCredentialRecord", 26: "RemoveDelegationTokenRecord"} {
		d := internaltopics.Decode(internaltopics.ClusterMetadata, nil, (&w{}).uv(1).uv(key).uv(0).str("secret").noTags().b)
		if d.Type != name || d.Value != nil || d.Note == "" || d.Error != "" {
			t.Errorf("api key %d: %s", key, mustJSON(t, d))
		}
	}
}

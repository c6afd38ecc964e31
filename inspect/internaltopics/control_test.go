package internaltopics_test

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/record"
)

// ckey is a control record key (ControlRecordType: version 0, type).
func ckey(typ int16) []byte { return (&w{}).i16(0).i16(typ).b }

// TestDecodeControlEveryType builds the value of every control record type
// from the message schemas (clients/src/main/resources/common/message:
// LeaderChangeMessage, SnapshotHeaderRecord, SnapshotFooterRecord,
// KRaftVersionRecord, VotersRecord; EndTransactionMarker) and checks the
// decoded fields, as DumpLogSegments' JsonConverters name them.
func TestDecodeControlEveryType(t *testing.T) {
	voters := func(x *w) {
		x.uv(2)
		// voter 3: id, directory id, endpoints (one), kraft version feature {min, max}
		x.i32(3).uuid(7).uv(2).str("CONTROLLER").str("c3").u16(9093).noTags()
		x.i16(0).i16(1).noTags() // the feature struct, with its own tag section
		x.noTags()               // the voter's
	}
	for _, tc := range []struct {
		name       string
		typ        int16
		value      []byte
		want       string
		wantString string
	}{
		{"abort", 0, (&w{}).i16(0).i32(7).b, `{"Type":"abort","TypeID":0,"CoordinatorEpoch":7,"Fields":null,"Error":""}`, "abort"},
		{"commit", 1, (&w{}).i16(0).i32(12).b, `{"Type":"commit","TypeID":1,"CoordinatorEpoch":12,"Fields":null,"Error":""}`, "commit"},
		{"leader change v0", 2, (&w{}).i16(0).i32(1).uv(3).i32(1).noTags().i32(2).noTags().uv(2).i32(1).noTags().noTags().b,
			`{"Type":"leader_change","TypeID":2,"CoordinatorEpoch":null,"Fields":{"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2}],"grantingVoters":[{"voterId":1}]},"Error":""}`, "leader_change"},
		{"leader change v1 (KIP-853 directory ids)", 2, (&w{}).i16(1).i32(2).uv(2).i32(2).uuid(9).noTags().uv(1).noTags().b,
			`{"Type":"leader_change","TypeID":2,"CoordinatorEpoch":null,"Fields":{"version":1,"leaderId":2,"voters":[{"voterId":2,"voterDirectoryId":"` + uid(9) + `"}],"grantingVoters":[]},"Error":""}`, "leader_change"},
		{"snapshot header", 3, (&w{}).i16(0).i64(1700000000123).noTags().b,
			`{"Type":"snapshot_header","TypeID":3,"CoordinatorEpoch":null,"Fields":{"version":0,"lastContainedLogTimestamp":1700000000123},"Error":""}`, "snapshot_header"},
		{"snapshot footer", 4, (&w{}).i16(0).noTags().b,
			`{"Type":"snapshot_footer","TypeID":4,"CoordinatorEpoch":null,"Fields":{"version":0},"Error":""}`, "snapshot_footer"},
		{"kraft version", 5, (&w{}).i16(0).i16(1).noTags().b,
			`{"Type":"kraft_version","TypeID":5,"CoordinatorEpoch":null,"Fields":{"version":0,"kRaftVersion":1},"Error":""}`, "kraft_version"},
		{"kraft voters", 6, func() []byte { x := (&w{}).i16(0); voters(x); return x.noTags().b }(),
			`{"Type":"kraft_voters","TypeID":6,"CoordinatorEpoch":null,"Fields":{"version":0,"voters":[{"voterId":3,"voterDirectoryId":"` + uid(7) + `","endpoints":[{"name":"CONTROLLER","host":"c3","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]},"Error":""}`, "kraft_voters"},
		// A type the broker does not know: unknown, with its id; no error.
		{"unknown type", 9, []byte{1, 2, 3}, `{"Type":"unknown","TypeID":9,"CoordinatorEpoch":null,"Fields":null,"Error":""}`, "unknown (9)"},
		{"negative type", -3, nil, `{"Type":"unknown","TypeID":-3,"CoordinatorEpoch":null,"Fields":null,"Error":""}`, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := internaltopics.DecodeControl(ckey(tc.typ), tc.value)
			if got := mustJSON(t, c); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if c.String() != tc.wantString {
				t.Errorf("String() = %q, want %q", c.String(), tc.wantString)
			}
		})
	}
}

// TestDecodeControlDamage: keys and values that do not parse are errors
// in the result, never a panic, and the type is kept when the key parsed.
func TestDecodeControlDamage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		key, value []byte
		typ, err   string
	}{
		{"short key", []byte{0, 0, 1}, nil, "unknown", "control record key has 3 bytes"},
		{"negative key version", (&w{}).i16(-1).i16(1).b, nil, "unknown", "invalid control record key version -1"},
		{"short marker", ckey(1), []byte{0, 0, 0}, "commit", "end transaction marker value has 3 bytes"},
		{"null header", ckey(3), nil, "snapshot_header", "null value"},
		{"truncated header", ckey(3), (&w{}).i16(0).i32(1).b, "snapshot_header", "bytes needed"},
		{"trailing bytes", ckey(4), (&w{}).i16(0).noTags().i8(1).b, "snapshot_footer", "bytes left after the last field"},
		{"voters array too long", ckey(6), (&w{}).i16(0).uv(1 << 30).b, "kraft_voters", "only 0 bytes left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := internaltopics.DecodeControl(tc.key, tc.value)
			if c.Type != tc.typ || !strings.Contains(c.Error, tc.err) || c.Fields != nil {
				t.Errorf("got %s, want type %s and an error with %q", mustJSON(t, c), tc.typ, tc.err)
			}
		})
	}
}

// TestControlRecordsRealFixtures decodes every control record the real
// brokers wrote, in logs, KRaft snapshots and bootstrap files: none fails,
// and the types PROVENANCE.md names are there (LEADER_CHANGE in every
// metadata log, a COMMIT marker in the ksqlDB command topic, a snapshot
// header first and a footer last in every snapshot).
func TestControlRecordsRealFixtures(t *testing.T) {
	types := map[string]int{}
	for _, dir := range fixtures.Dirs(t) {
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		parts := append([]*inspect.Partition(nil), tg.Partitions...)
		for _, p := range tg.Partitions {
			for _, s := range p.MetadataSnapshots {
				parts = append(parts, s.Partition())
			}
		}
		if tg.Bootstrap != nil {
			parts = append(parts, tg.Bootstrap.Partition())
		}
		for _, p := range parts {
			var seq []string
			var rd record.RecordDecoder
			err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				if !w.Batch.IsControl() {
					return nil
				}
				return rd.Records(w.Segment.Log, w.Entry, w.Batch, func(r *record.Record) error {
					c := internaltopics.DecodeControl(r.Key, r.Value)
					if c.Error != "" || c.Type == "unknown" {
						t.Errorf("%s offset %d: %s", w.Segment.Log, r.Offset, mustJSON(t, c))
					}
					if c.Type == "leader_change" {
						if id, _ := c.Fields.Get("leaderId"); id != int64(1) {
							t.Errorf("%s offset %d: leader %v; every fixture's quorum is node 1 alone", w.Segment.Log, r.Offset, id)
						}
					}
					types[c.Type]++
					seq = append(seq, c.Type)
					return nil
				})
			})
			if err != nil {
				t.Errorf("%s: %v", p.Dir, err)
			}
			if s := p.Segments[0].Snapshot; s != nil {
				if len(seq) < 2 || seq[0] != "snapshot_header" || seq[len(seq)-1] != "snapshot_footer" {
					t.Errorf("%s: control records %v, want a header first and a footer last", s.Path, seq)
				}
			}
		}
	}
	// 8 + 15 + 1 + 1 LEADER_CHANGE in the four metadata logs; 2 snapshots
	// and 7 bootstrap files; one COMMIT.
	for typ, n := range map[string]int{"leader_change": 25, "snapshot_header": 9, "snapshot_footer": 9, "commit": 1} {
		if types[typ] != n {
			t.Errorf("%d %s records, want %d (all: %v)", types[typ], typ, n, types)
		}
	}
}

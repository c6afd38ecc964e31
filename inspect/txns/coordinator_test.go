package txns

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/sidefile"
)

// txnKey and txnValue encode TransactionLogKey and TransactionLogValue
// version 0 (TransactionLogKey.json, TransactionLogValue.json), written
// here from the schema, independently of the decoder.
func txnKey(id string) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(id)))
	return append(b, id...)
}

func txnValue(version int16, pid int64, status int8, topic string, parts ...int32) []byte {
	be := binary.BigEndian
	b := be.AppendUint16(nil, uint16(version))
	b = be.AppendUint64(b, uint64(pid))
	b = be.AppendUint16(b, 0)     // epoch
	b = be.AppendUint32(b, 60000) // timeout
	b = append(b, byte(status))   // status
	if topic == "" {
		b = be.AppendUint32(b, 0xffffffff) // null partitions (Empty)
	} else {
		b = be.AppendUint32(b, 1)
		b = be.AppendUint16(b, uint16(len(topic)))
		b = append(b, topic...)
		b = be.AppendUint32(b, uint32(len(parts)))
		for _, p := range parts {
			b = be.AppendUint32(b, uint32(p))
		}
	}
	b = be.AppendUint64(b, 1_700_000_000_000) // last update
	b = be.AppendUint64(b, 1_700_000_000_000) // start
	return b
}

// The coordinator's view decides hanging as find-hanging does.
func TestHangingVerdicts(t *testing.T) {
	t0 := int64(1_700_000_000_000)
	orders := gentest.Concat(gentest.Data(0, 2, t0), gentest.TxnData(2, 2, t0, 7, true), gentest.Data(4, 1, t0))
	now := t0 + 16*minute // over the 15-minute timeout, not late (20)
	for _, tc := range []struct {
		name    string
		records []kafkagen.Record
		verdict string
		stopped string
	}{
		{"lists this partition", []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 7, 1, "orders", 0)}}, VerdictOngoing, ""},
		{"lists another partition", []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 7, 1, "orders", 1)}}, VerdictHanging, ""},
		{"completed", []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 7, 1, "orders", 0)}, {OffsetDelta: 1, Key: txnKey("tx1"), Value: txnValue(0, 7, 4, "")}}, VerdictHanging, ""},
		{"another producer", []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 8, 1, "orders", 0)}}, VerdictHanging, ""},
		{"tombstone", []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 7, 1, "orders", 0)}, {OffsetDelta: 1, Key: txnKey("tx1")}}, VerdictHanging, ""},
		{"unknown value version", []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 7, 1, "orders", 0)}, {OffsetDelta: 1, Key: txnKey("tx1"), Value: txnValue(9, 7, 4, "")}}, VerdictOngoing, "unknown version 9"},
	} {
		dir := t.TempDir()
		gentest.WriteLogs(t, filepath.Join(dir, "orders-0"), map[int64][]byte{0: orders})
		ts := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1, Records: tc.records})
		gentest.WriteLogs(t, filepath.Join(dir, "__transaction_state-0"), map[int64][]byte{0: ts})
		if err := os.WriteFile(filepath.Join(dir, sidefile.ReplicationCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: 5}}), 0o644); err != nil {
			t.Fatal(err)
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		rep := analyze(t, tg, now, "transaction.state.log.num.partitions=1")
		var got *OpenTransaction
		for _, pt := range rep.Partitions {
			if pt.Partition.Topic == "orders" && len(pt.Open) == 1 {
				got = &pt.Open[0]
			}
		}
		if got == nil || got.Verdict != tc.verdict {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.verdict)
			continue
		}
		if tc.stopped != "" && (len(rep.Coordinator.Stopped) != 1 || !strings.Contains(rep.Coordinator.Stopped[0], tc.stopped)) {
			t.Errorf("%s: stopped %v", tc.name, rep.Coordinator.Stopped)
		}
		if tc.stopped == "" && len(rep.Notes) != 0 {
			t.Errorf("%s: notes %v", tc.name, rep.Notes)
		}
		// With the default 50 __transaction_state partitions, of which one
		// was read, a hanging verdict says what it assumed.
		if tc.verdict == VerdictHanging {
			def := analyze(t, tg, now)
			for _, pt := range def.Partitions {
				for _, o := range pt.Open {
					if o.Verdict != VerdictHanging || !strings.Contains(o.Why, "assuming") {
						t.Errorf("%s: with 49 partitions unread: %s %q", tc.name, o.Verdict, o.Why)
					}
				}
			}
			if len(def.Notes) == 0 || !strings.Contains(def.Notes[0], "49") {
				t.Errorf("%s: notes %v", tc.name, def.Notes)
			}
		}
		// At 14 minutes nothing is hanging.
		if v := analyze(t, tg, t0+14*minute, "transaction.state.log.num.partitions=1").Hanging; v != 0 {
			t.Errorf("%s: %d hanging at 14 minutes", tc.name, v)
		}
	}
}

// A damaged __transaction_state batch ends that partition's load, as the
// coordinator's catch-all does: what came before is kept, and the notes
// say so.
func TestCoordinatorDamage(t *testing.T) {
	dir := t.TempDir()
	good := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1, Records: []kafkagen.Record{{Key: txnKey("tx1"), Value: txnValue(0, 7, 1, "orders", 0)}}})
	bad := kafkagen.AppendBatch(nil, kafkagen.Batch{BaseOffset: 1, ProducerID: -1, Records: []kafkagen.Record{{Key: txnKey("tx2"), Value: txnValue(0, 8, 1, "orders", 0)}}})
	bad[len(bad)-1] ^= 0xff // CRC mismatch
	gentest.WriteLogs(t, filepath.Join(dir, "__transaction_state-0"), map[int64][]byte{0: gentest.Concat(good, bad)})
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := analyze(t, tg, 1_700_000_000_000)
	c := rep.Coordinator
	if c == nil || c.Len() != 1 || len(c.ByProducer(7)) != 1 || len(c.Stopped) != 1 || !strings.Contains(c.Stopped[0], "keeps the 1 transactional ids") {
		t.Fatalf("%+v", c)
	}
}

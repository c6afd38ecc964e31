package internaltopics_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/record"
)

// TestRealFixtures decodes every record of every internal-topic partition
// the real brokers wrote (__consumer_offsets from Kafka 1.1 to 4.1+,
// __transaction_state, __cluster_metadata from 3.6 to 4.1+): none fails,
// none is left undecoded, and known values come out.
func TestRealFixtures(t *testing.T) {
	root := fixtures.Root(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	var features []string
	var txnIDs []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		tg, err := inspect.Resolve(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tg.Partitions {
			dec := internaltopics.ForTopic(p.Topic)
			if dec == "" {
				continue
			}
			var rd record.RecordDecoder
			err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				if w.Batch.IsControl() {
					return nil
				}
				return rd.Records(w.Segment.Log, w.Entry, w.Batch, func(r *record.Record) error {
					d := internaltopics.Decode(dec, r.Key, r.Value)
					if d.Error != "" || d.Note != "" {
						t.Errorf("%s offset %d: %s", p.Dir, r.Offset, mustJSON(t, d))
					}
					types[dec+"/"+d.Type]++
					if d.Type == "FeatureLevelRecord" {
						name, _ := d.Value.Get("name")
						level, _ := d.Value.Get("featureLevel")
						features = append(features, e.Name()+":"+name.(string)+"="+mustItoa(level.(int64)))
					}
					if d.Type == internaltopics.TypeTransaction {
						id, _ := d.Key.Get("transactionalId")
						state, _ := d.Value.Get("transactionState")
						txnIDs = append(txnIDs, id.(string)+":"+state.(string))
					}
					return nil
				})
			})
			if err != nil {
				t.Errorf("%s: %v", p.Dir, err)
			}
		}
	}
	for _, k := range []string{"consumer_offsets/offset_commit", "consumer_offsets/group_metadata", "transaction_state/transaction",
		"cluster_metadata/RegisterBrokerRecord", "cluster_metadata/PartitionRecord", "cluster_metadata/PartitionChangeRecord",
		"cluster_metadata/TopicRecord", "cluster_metadata/FeatureLevelRecord", "cluster_metadata/NoOpRecord", "cluster_metadata/RegisterControllerRecord"} {
		if types[k] == 0 {
			t.Errorf("no %s record decoded; the fixtures have them (seen: %v)", k, types)
		}
	}
	// kafka40-kraft-snappy-retention runs metadata.version 25 (4.0-IV3),
	// cp76 level 14 (3.6-IV2), as PROVENANCE.md says.
	want := map[string]bool{"kafka40-kraft-snappy-retention:metadata.version=25": false, "kafka361-kraft-windows-metadata:metadata.version=14": false}
	for _, f := range features {
		if _, ok := want[f]; ok {
			want[f] = true
		}
	}
	for f, seen := range want {
		if !seen {
			t.Errorf("feature level %s not decoded (got %v)", f, features)
		}
	}
	// ksqlDB's one transaction, through the coordinator's states.
	if got := strings.Join(txnIDs, " "); got != "default_:Empty default_:Ongoing default_:PrepareCommit default_:CompleteCommit" {
		t.Errorf("transaction records %q, want the 4 of __transaction_state-44", got)
	}
}

package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/record"
)

// TestCoordinatorPartitionOfDecodedRecords ties the coordinator hash to
// the brokers' own placement: every group and transactional id decoded
// from the real __consumer_offsets-N and __transaction_state-N partitions
// (default 50 partitions) hashes to N.
func TestCoordinatorPartitionOfDecodedRecords(t *testing.T) {
	root := fixtures.Root(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ids := 0
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
			if dec != internaltopics.ConsumerOffsets && dec != internaltopics.TransactionState {
				continue
			}
			var rd record.RecordDecoder
			err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				if w.Batch.IsControl() {
					return nil
				}
				return rd.Records(w.Segment.Log, w.Entry, w.Batch, func(r *record.Record) error {
					d := internaltopics.Decode(dec, r.Key, r.Value)
					name := "group"
					if dec == internaltopics.TransactionState {
						name = "transactionalId"
					}
					v, ok := d.Key.Get(name)
					if !ok {
						t.Errorf("%s offset %d: no %s in %+v", p.Dir, r.Offset, name, d)
						return nil
					}
					id := v.(string)
					if got := internaltopics.CoordinatorPartition(id, defaultStatePartitions); got != p.Partition {
						t.Errorf("%s: %s %q hashes to partition %d", p.Dir, name, id, got)
					}
					ids++
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if ids < 100 {
		t.Errorf("only %d ids checked", ids)
	}
}

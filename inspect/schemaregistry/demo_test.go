package schemaregistry

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// TestDemoValuesAgree: the generator writes the same orders (same seed) in
// Avro, Protobuf and JSON, each encoded by hand in the generator; decoded
// through the demo registry's _schemas, the three agree on every record,
// and each order's id is its offset.
func TestDemoValuesAgree(t *testing.T) {
	data := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(data, TopicPartitionDir), kafkagen.Options{Topic: Topic, Records: kafkagen.DemoSchemaRecords()}); err != nil {
		t.Fatal(err)
	}
	reg, err := Find(data)
	if err != nil || reg == nil || reg.Len() != 3 {
		t.Fatalf("registry %v, %v", reg, err)
	}
	type order struct {
		ID       any     `json:"id"`
		Customer string  `json:"customer"`
		Amount   float64 `json:"amount"`
		Status   string  `json:"status"`
		Note     any     `json:"note"`
	}
	orders := map[string][]order{}
	for _, format := range []string{kafkagen.ValueAvro, kafkagen.ValueProtobuf, kafkagen.ValueJSON} {
		dir := filepath.Join(data, "orders-"+format+"-0")
		if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 5, Segments: 2, Batches: 20, Compression: "snappy", ValueFormat: format}); err != nil {
			t.Fatal(err)
		}
		p, err := inspect.ReadPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		d := NewDecoder(reg, nil, nil)
		var rd record.RecordDecoder
		err = p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
			return rd.Records(w.Segment.Log, w.Entry, w.Batch, func(r *record.Record) error {
				got := d.Decode(r.Key, r.Value)
				if got.Error != "" || got.KeySchema != nil {
					return fmt.Errorf("offset %d: %+v", r.Offset, got)
				}
				var o order
				if err := json.Unmarshal(got.Value, &o); err != nil {
					return err
				}
				// Protobuf leaves out defaults and writes int64 as a string.
				switch o.ID {
				case nil, "0":
					o.ID = float64(0)
				}
				if s, ok := o.ID.(string); ok {
					var n float64
					fmt.Sscan(s, &n)
					o.ID = n
				}
				if o.Status == "" {
					o.Status = "NEW"
				}
				if m, ok := o.Note.(map[string]any); ok {
					o.Note = m["string"]
				}
				if o.ID != float64(r.Offset) {
					return fmt.Errorf("offset %d: order id %v", r.Offset, o.ID)
				}
				orders[format] = append(orders[format], o)
				return nil
			})
		})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
	}
	if len(orders[kafkagen.ValueAvro]) < 100 {
		t.Fatalf("%d orders", len(orders[kafkagen.ValueAvro]))
	}
	for _, f := range []string{kafkagen.ValueProtobuf, kafkagen.ValueJSON} {
		if !reflect.DeepEqual(orders[f], orders[kafkagen.ValueAvro]) {
			t.Errorf("%s orders differ from avro's", f)
		}
	}
	notes := 0
	for _, o := range orders[kafkagen.ValueAvro] {
		if o.Note != nil {
			notes++
		}
	}
	if notes == 0 || notes == len(orders[kafkagen.ValueAvro]) {
		t.Errorf("%d notes of %d orders: want some", notes, len(orders[kafkagen.ValueAvro]))
	}
}

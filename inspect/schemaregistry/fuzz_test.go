package schemaregistry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// FuzzDecode feeds mangled keys and values to a decoder with the test
// registry's schemas (Avro with every type, Protobuf with nested messages,
// JSON Schema): it must never panic, every result must marshal as JSON,
// and a side that did not decode must be null with its error named.
func FuzzDecode(f *testing.F) {
	event := `{"id":"e1","at":"123","inner":{"n":5,"deep":{"ok":true}},"tags":["a","b"],"origin":{"host":"h","port":9092}}`
	seeds := [][]byte{
		kafkagen.WireFormat(idOrderKey, nil, mustAvro(f, `"string"`, "order-42")),
		kafkagen.WireFormat(idOrderV2, nil, mustAvro(f, orderV2Schema, order(map[string]any{"array": []int64{1, -2}}), moneySchema)),
		kafkagen.WireFormat(idOrderV2, nil, mustAvro(f, orderV2Schema, order(nil), moneySchema)),
		kafkagen.WireFormat(idEvents, []int{1}, mustProto(f, "shop.Event", event)),
		kafkagen.WireFormat(idEvents, []int{1, 0, 0}, mustProto(f, "shop.Event.Inner.Deep", `{"ok":true}`)),
		kafkagen.WireFormat(idClicks, nil, []byte(`{"page":"/x"}`)),
		kafkagen.WireFormat(idNulls, nil, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
		kafkagen.WireFormat(idOrderV2, nil, []byte{0x54, 2, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}),
		{0, 0, 0, 0},
		nil,
	}
	for _, k := range seeds {
		for _, v := range seeds {
			f.Add(k, v)
		}
	}
	reg, err := Open(writeRegistry(f))
	if err != nil {
		f.Fatal(err)
	}
	reg.byID[idNulls] = &Schema{ID: idNulls, SchemaType: Avro, Schema: nullsSchema}
	d := NewDecoder(reg, nil, nil)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		got := d.Decode(key, value)
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("decoded does not marshal: %v: %+v", err, got)
		}
		for _, side := range []struct {
			name string
			b    []byte
			ref  *SchemaRef
			v    json.RawMessage
		}{{"key", key, got.KeySchema, got.Key}, {"value", value, got.ValueSchema, got.Value}} {
			if (side.ref == nil) != (side.v == nil) {
				t.Fatalf("%s: schema %+v with value %s", side.name, side.ref, side.v)
			}
			failed := strings.Contains(got.Error, side.name+": ")
			if IsWireFormat(side.b) && side.ref == nil && !failed {
				t.Fatalf("%s in the wire format neither decoded nor failed: %x", side.name, side.b)
			}
			if len(side.v) > outputBase+outputPerByte*len(side.b) {
				t.Fatalf("%s: %d bytes of JSON from %d", side.name, len(side.v), len(side.b))
			}
		}
	})
}

// An array of nulls takes no payload bytes per item.
const (
	idNulls     = 100
	nullsSchema = `{"type":"array","items":"null"}`
)

// TestZeroSizeItemsAreBounded: a block count of 2^62 items that take no
// payload bytes stops at the output bound instead of running on.
func TestZeroSizeItemsAreBounded(t *testing.T) {
	reg := newRegistry("t")
	reg.byID[idNulls] = &Schema{ID: idNulls, SchemaType: Avro, Schema: nullsSchema}
	d := NewDecoder(reg, nil, nil)
	got := d.Decode(nil, kafkagen.WireFormat(idNulls, nil, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}))
	if !strings.Contains(got.Error, "expands to more than") || got.Value != nil {
		t.Errorf("got %.100s, error %q", got.Value, got.Error)
	}
	got = d.Decode(nil, kafkagen.WireFormat(idNulls, nil, []byte{6, 0}))
	if string(got.Value) != "[null,null,null]" || got.Error != "" {
		t.Errorf("three nulls: %s %q", got.Value, got.Error)
	}
	// A negative block count is followed by the block's size in bytes.
	got = d.Decode(nil, kafkagen.WireFormat(idNulls, nil, []byte{3, 0, 0}))
	if string(got.Value) != "[null,null]" || got.Error != "" {
		t.Errorf("block of -2 with a size: %s %q", got.Value, got.Error)
	}
}

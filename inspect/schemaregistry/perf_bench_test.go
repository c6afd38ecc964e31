package schemaregistry

import (
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// Decoding speed per schema type, on the test registry's schemas: an Avro
// order (nested records, an enum, an array of records, a map, a union of
// a referenced record, logical types, fixed), a Protobuf event (nested
// messages, repeated field, an imported message, a well-known type) and a
// JSON Schema document. Each op decodes one record's key and value;
// records/s is the figure docs/performance.md records. The allocations
// are the output's (the decoded JSON, the error text).
func benchDecode(b *testing.B, key, value []byte) {
	reg, err := Open(writeRegistry(b))
	if err != nil {
		b.Fatal(err)
	}
	d := NewDecoder(reg, nil, nil)
	if got := d.Decode(key, value); got.Error != "" || got.Value == nil {
		b.Fatalf("does not decode: %+v", got)
	}
	b.SetBytes(int64(len(key) + len(value)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d.Decode(key, value)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkDecodeAvro(b *testing.B) {
	money := map[string]any{"com.shop.Money": map[string]any{"cents": int64(1250), "currency": "EUR"}}
	benchDecode(b, kafkagen.WireFormat(idOrderKey, nil, mustAvro(b, `"string"`, "order-000042")),
		kafkagen.WireFormat(idOrderV2, nil, mustAvro(b, orderV2Schema, order(money), moneySchema)))
}

func BenchmarkDecodeProtobuf(b *testing.B) {
	event := `{"id":"e1","at":"123","inner":{"n":5,"deep":{"ok":true}},"tags":["a","b"],"origin":{"host":"h","port":9092},"when":"2023-11-14T22:13:20Z"}`
	benchDecode(b, nil, kafkagen.WireFormat(idEvents, []int{1}, mustProto(b, "shop.Event", event)))
}

func BenchmarkDecodeJSONSchema(b *testing.B) {
	benchDecode(b, nil, kafkagen.WireFormat(idClicks, nil, []byte(`{"page":"/products/42","referrer":"https://example.com/","ms":1700000000123,"tags":["a","b"]}`)))
}

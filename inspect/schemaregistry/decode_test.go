package schemaregistry

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

func jsonEqual(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: output is not JSON: %v: %s", what, err, got)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func order(note any) map[string]any {
	return map[string]any{
		"id": int64(42), "status": "PAID",
		"items": []any{map[string]any{"sku": `a"b`, "qty": 2}, map[string]any{"sku": "é", "qty": -1}},
		"tags":  map[string]any{"k": "v"},
		"note":  note, "created": int64(1700000000123), "day": 19000,
		"price": []byte{0x01, 0xff}, "digest": [4]byte{0, 0x7f, 0x80, 0xff}, "ratio": float32(0.5), "ok": true,
		"address": map[string]any{"city": "Oslo", "zip": map[string]any{"string": "0150"}},
	}
}

// orderJSON is the Avro JSON encoding of order(note) as the specification
// defines it: unions {"branch": value}, bytes and fixed as code points,
// enums as symbols, logical types as their underlying type.
func orderJSON(note string) string {
	return `{"id":42,"status":"PAID","items":[{"sku":"a\"b","qty":2},{"sku":"é","qty":-1}],"tags":{"k":"v"},` +
		`"note":` + note + `,"created":1700000000123,"day":19000,"price":"\u0001\u00ff","digest":"\u0000\u007f\u0080\u00ff",` +
		`"ratio":0.5,"ok":true,"address":{"city":"Oslo","zip":{"string":"0150"}}}`
}

func TestReplayRegistry(t *testing.T) {
	reg, err := Open(writeRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if reg.Records != len(registryRecords()) {
		t.Errorf("replayed %d records, want %d", reg.Records, len(registryRecords()))
	}
	want := []int32{idOrderKey, idOrderV1, idOrderV2, idMoney, idEvents, idCommon, idClicks, idSoftGone, idBadSchema, idReplacing, idEventsJSON}
	got := reg.IDs()
	wantSorted := append([]int32(nil), want...)
	sortInt32(wantSorted)
	if !reflect.DeepEqual(got, wantSorted) {
		t.Errorf("ids %v, want %v (a null value deletes, the last record of a key wins)", got, wantSorted)
	}
	if s := reg.Lookup(idSoftGone); s == nil || !s.Deleted {
		t.Errorf("soft-deleted schema: %+v", s)
	}
	if s := reg.Lookup(idEvents); s.Subject != "events-copy" && s.Subject != "events-value" || s.SchemaType != Protobuf {
		t.Errorf("events: %+v", s)
	} else if s.Subject != "events-copy" {
		t.Errorf("shared id names subject %q, want the first in order (events-copy)", s.Subject)
	}
	if s := reg.Lookup(idOrderKey); s.SchemaType != Avro {
		t.Errorf("absent schemaType is %q, want AVRO", s.SchemaType)
	}
}

func sortInt32(s []int32) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func TestDecodeWireFormat(t *testing.T) {
	reg, err := Open(writeRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(reg, nil, nil)
	money := map[string]any{"com.shop.Money": map[string]any{"cents": int64(5), "currency": "EUR"}}
	event := `{"id":"e1","at":"123","inner":{"n":5,"deep":{"ok":true}},"tags":["a","b"],"origin":{"host":"h","port":9092},"when":"2023-11-14T22:13:20Z"}`
	avroKey := kafkagen.WireFormat(idOrderKey, nil, mustAvro(t, `"string"`, "order-42"))
	cases := []struct {
		name       string
		key, value []byte
		keySchema  string // "id type subject version" of key_schema, "" null
		wantKey    string // "" null
		valSchema  string
		wantValue  string
		err        string // substring of Error, "" none
	}{
		{name: "avro key and v1 value", key: avroKey,
			value:     kafkagen.WireFormat(idOrderV1, nil, mustAvro(t, orderV1Schema, map[string]any{"id": int64(7), "amount": 12.25})),
			keySchema: "1 AVRO orders-key 1", wantKey: `"order-42"`, valSchema: "2 AVRO orders-value 1", wantValue: `{"id":7,"amount":12.25}`},
		{name: "union null", value: kafkagen.WireFormat(idOrderV2, nil, mustAvro(t, orderV2Schema, order(nil), moneySchema)),
			valSchema: "3 AVRO orders-value 2", wantValue: orderJSON("null")},
		{name: "union string", value: kafkagen.WireFormat(idOrderV2, nil, mustAvro(t, orderV2Schema, order(map[string]any{"string": "hi"}), moneySchema)),
			valSchema: "3 AVRO orders-value 2", wantValue: orderJSON(`{"string":"hi"}`)},
		{name: "union int", value: kafkagen.WireFormat(idOrderV2, nil, mustAvro(t, orderV2Schema, order(map[string]any{"int": 7}), moneySchema)),
			valSchema: "3 AVRO orders-value 2", wantValue: orderJSON(`{"int":7}`)},
		{name: "union referenced record", value: kafkagen.WireFormat(idOrderV2, nil, mustAvro(t, orderV2Schema, order(money), moneySchema)),
			valSchema: "3 AVRO orders-value 2", wantValue: orderJSON(`{"com.shop.Money":{"cents":5,"currency":"EUR"}}`)},
		{name: "union array", value: kafkagen.WireFormat(idOrderV2, nil, mustAvro(t, orderV2Schema, order(map[string]any{"array": []int64{1, -2}}), moneySchema)),
			valSchema: "3 AVRO orders-value 2", wantValue: orderJSON(`{"array":[1,-2]}`)},
		{name: "protobuf index [1]", value: kafkagen.WireFormat(idEvents, []int{1}, mustProto(t, "shop.Event", event)),
			valSchema: "5 PROTOBUF events-copy 3", wantValue: event},
		{name: "protobuf nested [1,0]", value: kafkagen.WireFormat(idEvents, []int{1, 0}, mustProto(t, "shop.Event.Inner", `{"n":5,"deep":{"ok":true}}`)),
			valSchema: "5 PROTOBUF events-copy 3", wantValue: `{"n":5,"deep":{"ok":true}}`},
		{name: "protobuf nested [1,0,0]", value: kafkagen.WireFormat(idEvents, []int{1, 0, 0}, mustProto(t, "shop.Event.Inner.Deep", `{"ok":true}`)),
			valSchema: "5 PROTOBUF events-copy 3", wantValue: `{"ok":true}`},
		{name: "protobuf [0] as one byte", key: kafkagen.WireFormat(idEvents, []int{0}, mustProto(t, "shop.Envelope", `{"source":"s"}`)),
			keySchema: "5 PROTOBUF events-copy 3", wantKey: `{"source":"s"}`},
		{name: "protobuf [0] as a list", key: kafkagen.WireFormat(idEvents, []int{0, 0}[:1:1], nil)[:5],
			keySchema: "", err: "message-index list"},
		{name: "json schema", value: kafkagen.WireFormat(idClicks, nil, []byte(`{"page": "/x" }`)),
			valSchema: "7 JSON clicks-value 1", wantValue: `{"page":"/x"}`},
		{name: "soft-deleted schema decodes", value: kafkagen.WireFormat(idSoftGone, nil, mustAvro(t, `"long"`, int64(-3))),
			valSchema: "8 AVRO old-value 1", wantValue: `-3`},
		{name: "replaced subject version", value: kafkagen.WireFormat(idReplacing, nil, mustAvro(t, `"string"`, "x")),
			valSchema: "12 AVRO re-value 1", wantValue: `"x"`},
		{name: "plain key and value stay", key: []byte("k"), value: []byte(`{"a":1}`)},
		{name: "null key and value", key: nil, value: nil},
		{name: "unknown id", key: avroKey, value: kafkagen.WireFormat(99, nil, []byte{2}),
			keySchema: "1 AVRO orders-key 1", wantKey: `"order-42"`, err: "value: schema id 99: unknown"},
		{name: "deleted by a null value", value: kafkagen.WireFormat(idHardGone, nil, []byte{2}), err: "schema id 9: unknown"},
		{name: "replaced id", value: kafkagen.WireFormat(idReplaced, nil, []byte{2}), err: "schema id 11: unknown"},
		{name: "schema does not parse", value: kafkagen.WireFormat(idBadSchema, nil, []byte{2}), err: "schema id 10 (AVRO bad-value version 1): schema does not parse"},
		{name: "proto schema does not parse", value: kafkagen.WireFormat(idEventsJSON, []int{0}, nil), err: "schema id 13 (PROTOBUF events-json version 1): schema does not parse"},
		{name: "truncated avro", value: kafkagen.WireFormat(idOrderV1, nil, []byte{0x0e, 1, 2}), err: "schema id 2 (AVRO orders-value version 1): payload does not match the schema: at byte 1: payload ends inside a value"},
		{name: "trailing bytes", value: kafkagen.WireFormat(idOrderKey, nil, []byte{2, 'a', 'b'}), err: "1 bytes left after the value"},
		{name: "enum index", value: kafkagen.WireFormat(idOrderV2, nil, []byte{2, 9}), err: "enum com.shop.Status: symbol index -5 of 3"},
		{name: "string past the end", value: kafkagen.WireFormat(idOrderKey, nil, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}), err: "past the end of the payload"},
		{name: "protobuf index out of range", value: kafkagen.WireFormat(idEvents, []int{1, 4}, nil), err: "message index 4: shop.Event has 1 nested messages"},
		{name: "protobuf bad payload", value: kafkagen.WireFormat(idEvents, []int{1}, []byte{0x0a, 0x50}), err: "payload does not match message shop.Event"},
		{name: "json not json", value: kafkagen.WireFormat(idClicks, nil, []byte(`{"page":`)), err: "schema id 7 (JSON clicks-value version 1): payload is not a JSON document"},
		{name: "key and value errors", key: kafkagen.WireFormat(98, nil, nil), value: kafkagen.WireFormat(99, nil, nil), err: "key: schema id 98: unknown (11 schemas in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := d.Decode(c.key, c.value)
			if got.Decoder != DecoderName {
				t.Errorf("decoder %q", got.Decoder)
			}
			checkSide(t, "key", got.KeySchema, got.Key, c.keySchema, c.wantKey)
			checkSide(t, "value", got.ValueSchema, got.Value, c.valSchema, c.wantValue)
			if c.err == "" && got.Error != "" || !strings.Contains(got.Error, c.err) {
				t.Errorf("error %q, want %q", got.Error, c.err)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("decoded does not marshal: %v", err)
			}
		})
	}
}

func checkSide(t *testing.T, side string, ref *SchemaRef, got json.RawMessage, wantRef, want string) {
	t.Helper()
	if wantRef == "" {
		if ref != nil || got != nil {
			t.Errorf("%s: schema %+v value %s, want both null", side, ref, got)
		}
		return
	}
	if ref == nil {
		t.Errorf("%s: no schema, want %s", side, wantRef)
		return
	}
	id := "nil"
	if ref.ID != nil {
		id = itoa(int64(*ref.ID))
	}
	if g := id + " " + ref.Type + " " + ref.Subject + " " + itoa(int64(ref.Version)); g != wantRef {
		t.Errorf("%s schema %q, want %q", side, g, wantRef)
	}
	jsonEqual(t, side, got, want)
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

// TestAvroJSONEncodingBytes holds the output to the exact characters of
// the specification's JSON encoding where a parse would hide them: bytes
// and fixed are one code point per byte, and a float keeps float
// precision.
func TestAvroJSONEncodingBytes(t *testing.T) {
	s := `{"type":"record","name":"R","fields":[{"name":"b","type":"bytes"},{"name":"f","type":{"type":"fixed","name":"F","size":3}},
		{"name":"x","type":"float"},{"name":"d","type":"double"},{"name":"s","type":"string"},{"name":"e","type":{"type":"map","values":"null"}}]}`
	payload := mustAvro(t, s, map[string]any{"b": []byte{'A', 0, 0xe9, '"'}, "f": [3]byte{0xff, '\n', 0x80}, "x": float32(0.1), "d": 1e-7,
		"s": "tab\t\u2028 ✓", "e": map[string]any{}})
	reg := newRegistry("t")
	reg.byID[1] = &Schema{ID: 1, SchemaType: Avro, Schema: s}
	got := NewDecoder(reg, nil, nil).Decode(nil, kafkagen.WireFormat(1, nil, payload))
	want := `{"b":"A\u0000é\"","f":"ÿ\n` + "\u0080" + `","x":0.1,"d":1e-7,"s":"tab\t\u2028 ✓","e":{}}`
	if string(got.Value) != want || got.Error != "" {
		t.Errorf("got %s (%s)\nwant %s", got.Value, got.Error, want)
	}
}

// TestDecodersShareARegistry: decoders in several goroutines compile and
// use the registry's schemas at the same time (run with -race).
func TestDecodersShareARegistry(t *testing.T) {
	reg, err := Open(writeRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	values := [][]byte{
		kafkagen.WireFormat(idOrderV1, nil, mustAvro(t, orderV1Schema, map[string]any{"id": int64(7), "amount": 1.5})),
		kafkagen.WireFormat(idEvents, []int{1, 0}, mustProto(t, "shop.Event.Inner", `{"n":5}`)),
		kafkagen.WireFormat(idClicks, nil, []byte(`{"page":"/x"}`)),
	}
	want := []string{`{"id":7,"amount":1.5}`, `{"n":5}`, `{"page":"/x"}`}
	done := make(chan error)
	for g := range 4 {
		go func() {
			d := NewDecoder(reg, nil, nil)
			for i := range 50 {
				k := (g + i) % len(values)
				if got := d.Decode(nil, values[k]); string(got.Value) != want[k] {
					done <- fmt.Errorf("goroutine %d: %s %q", g, got.Value, got.Error)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestRecursiveSchema: a schema that refers to itself decodes as deep as
// its payload goes, up to the nesting bound, and no deeper.
func TestRecursiveSchema(t *testing.T) {
	const node = `{"type":"record","name":"Node","namespace":"list","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}`
	reg := newRegistry("t")
	reg.byID[1] = &Schema{ID: 1, SchemaType: Avro, Schema: node}
	d := NewDecoder(reg, nil, nil)
	list := func(n int) []byte {
		var b []byte
		for i := range n {
			b = append(b, byte(i%60)<<1, 2) // v, then the Node branch
		}
		return append(b[:len(b)-1], 0) // the last next is null
	}
	got := d.Decode(nil, kafkagen.WireFormat(1, nil, list(3)))
	if want := `{"v":0,"next":{"list.Node":{"v":1,"next":{"list.Node":{"v":2,"next":null}}}}}`; string(got.Value) != want {
		t.Errorf("got %s %q\nwant %s", got.Value, got.Error, want)
	}
	got = d.Decode(nil, kafkagen.WireFormat(1, nil, list(10000)))
	if got.Value != nil || !strings.Contains(got.Error, "values nest deeper than 256") {
		t.Errorf("10000 levels: %.80s %q", got.Value, got.Error)
	}
}

// TestProto2MissingRequired: a proto2 message without a required field is
// shown as far as it goes, as protoc --decode would.
func TestProto2MissingRequired(t *testing.T) {
	reg := newRegistry("t")
	reg.byID[1] = &Schema{ID: 1, SchemaType: Protobuf, Schema: `syntax = "proto2"; message R { required int32 a = 1; optional string b = 2; }`}
	got := NewDecoder(reg, nil, nil).Decode(nil, kafkagen.WireFormat(1, []int{0}, []byte{0x12, 1, 'x'}))
	if string(got.Value) != `{"b":"x"}` || got.Error != "" {
		t.Errorf("got %s %q", got.Value, got.Error)
	}
}

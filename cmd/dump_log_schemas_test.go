package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/kseg/kseg/inspect/kafkagen"
)

const (
	testKeySchema   = `"string"`
	testValueSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},
		{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID"]}},{"name":"note","type":["null","string","long"]}]}`
	testProto = `syntax = "proto3"; package shop; message A { string a = 1; } message Event { string id = 1; int64 at = 2; }`
)

func avroBytes(t *testing.T, schema string, v any) []byte {
	t.Helper()
	b, err := avro.Marshal(avro.MustParse(schema), v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// schemaDataDir writes a data directory in the working directory: the
// registry's _schemas-0 (ids 1 key string, 2 Order, 3 Protobuf) and
// orders-0 with wire-format records: offsets 0-2 decode, 3 has an unknown
// id, 4 is plain text, 5 a tombstone, 6 Protobuf message [1].
func schemaDataDir(t *testing.T) {
	t.Helper()
	sideGen(t, "_schemas-0", kafkagen.Options{Topic: "_schemas", RecordsPerBatch: 2, Records: []kafkagen.KeyValue{
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "orders-key", Version: 1, ID: 1, Schema: testKeySchema}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "orders-value", Version: 1, ID: 2, Schema: testValueSchema}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "events-value", Version: 1, ID: 3, SchemaType: "PROTOBUF", Schema: testProto}),
	}})
	key := func(k string) []byte { return kafkagen.WireFormat(1, nil, avroBytes(t, testKeySchema, k)) }
	order := func(id int64, status string, note any) []byte {
		return kafkagen.WireFormat(2, nil, avroBytes(t, testValueSchema, map[string]any{"id": id, "status": status, "note": note}))
	}
	sideGen(t, "orders-0", kafkagen.Options{Topic: "orders", RecordsPerBatch: 3, Compression: "zstd", Records: []kafkagen.KeyValue{
		{Key: key("o-1"), Value: order(1, "NEW", nil)},
		{Key: key("o-2"), Value: order(2, "PAID", map[string]any{"string": "gift"})},
		{Key: nil, Value: order(3, "PAID", map[string]any{"long": int64(9)})},
		{Key: key("o-4"), Value: kafkagen.WireFormat(77, nil, []byte{2})},
		{Key: []byte("plain"), Value: []byte("text")},
		{Key: key("o-1"), Value: nil},
		{Key: nil, Value: kafkagen.WireFormat(3, []int{1}, []byte{0x0a, 0x02, 'e', '1', 0x10, 0x05})},
	}})
}

// decodedOf returns the decoded objects of the record lines of a JSON
// dump-log output, by offset ("" for a record without one).
func decodedOf(t *testing.T, out string) map[int64]string {
	t.Helper()
	got := map[int64]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Kind    string          `json:"kind"`
			Offset  int64           `json:"offset"`
			Decoded json.RawMessage `json:"decoded"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if l.Kind == "record" {
			got[l.Offset] = string(l.Decoded)
		}
	}
	return got
}

func TestDumpLogSchemaRegistry(t *testing.T) {
	t.Chdir(t.TempDir())
	schemaDataDir(t)
	want := map[int64]string{
		0: `{"decoder":"schema_registry","key_schema":{"id":1,"type":"AVRO","subject":"orders-key","version":1},"key":"o-1","value_schema":{"id":2,"type":"AVRO","subject":"orders-value","version":1},"value":{"id":1,"status":"NEW","note":null}}`,
		1: `{"decoder":"schema_registry","key_schema":{"id":1,"type":"AVRO","subject":"orders-key","version":1},"key":"o-2","value_schema":{"id":2,"type":"AVRO","subject":"orders-value","version":1},"value":{"id":2,"status":"PAID","note":{"string":"gift"}}}`,
		2: `{"decoder":"schema_registry","key_schema":null,"key":null,"value_schema":{"id":2,"type":"AVRO","subject":"orders-value","version":1},"value":{"id":3,"status":"PAID","note":{"long":9}}}`,
		3: `{"decoder":"schema_registry","key_schema":{"id":1,"type":"AVRO","subject":"orders-key","version":1},"key":"o-4","value_schema":null,"value":null,"error":"value: schema id 77: unknown (3 schemas in _schemas-0)"}`,
		4: `{"decoder":"schema_registry","key_schema":null,"key":null,"value_schema":null,"value":null}`,
		5: `{"decoder":"schema_registry","key_schema":{"id":1,"type":"AVRO","subject":"orders-key","version":1},"key":"o-1","value_schema":null,"value":null}`,
		6: `{"decoder":"schema_registry","key_schema":null,"key":null,"value_schema":{"id":3,"type":"PROTOBUF","subject":"events-value","version":1},"value":{"id":"e1","at":"5"}}`,
	}
	for _, args := range [][]string{
		{"-o", "json", "dump-log", "--records", "orders-0"},
		{"-o", "json", "dump-log", "--decoder", "schema-registry", "orders-0/00000000000000000000.log"},
		{"-o", "json", "dump-log", "--records", "--schemas", ".", "orders-0"},
		{"-o", "json", "dump-log", "--records", "--schemas", "_schemas-0", "orders-0"},
	} {
		out := sideRun(t, 0, args, `"value":"text"`)
		got := decodedOf(t, out)
		for off, w := range want {
			if got[off] != w {
				t.Errorf("%s: offset %d decoded\n got %s\nwant %s", strings.Join(args, " "), off, got[off], w)
			}
		}
	}
	// The record's own key and value stay as they are beside "decoded".
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "orders-0"}, `"offset":4,.*"key":"plain","value":"text",`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "--decoder", "none", "orders-0"}, `!"decoded"`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "orders-0"}, `!"decoded"`)
	// The registry's own topic is not decoded with its schemas.
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "_schemas-0"}, `!"decoded"`, `"keytype\\":\\"SCHEMA`)
	// The table shows the decoded forms compactly.
	sideRun(t, 0, []string{"dump-log", "--records", "orders-0"}, `^ *position +offsets .* +decoded$`,
		`key=#1 "o-2" value=#2 \{"id":2,"status":"PAID","note":\{"string":"gift"\}\}$`,
		`key=#1 "o-4" error: value: schema id 77: unknown`)
}

func TestDumpLogSchemaFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	schemaDataDir(t)
	if err := os.Mkdir("schemas", 0o755); err != nil {
		t.Fatal(err)
	}
	sideWrite(t, "schemas/2.avsc", testValueSchema)
	sideWrite(t, "schemas/3.proto", testProto)
	sideWrite(t, "schemas/README", "not a schema")
	got := decodedOf(t, sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "--schemas", "schemas", "orders-0"}))
	if w := `{"decoder":"schema_registry","key_schema":null,"key":null,"value_schema":{"id":2,"type":"AVRO","file":"2.avsc"},"value":{"id":1,"status":"NEW","note":null},"error":"key: schema id 1: unknown (2 schemas in schemas)"}`; got[0] != w {
		t.Errorf("offset 0:\n got %s\nwant %s", got[0], w)
	}
	if w := `"value_schema":{"id":3,"type":"PROTOBUF","file":"3.proto"},"value":{"id":"e1","at":"5"}}`; !strings.HasSuffix(got[6], w) {
		t.Errorf("offset 6: %s", got[6])
	}

	// Plain values: Avro without the wire format, Protobuf by message name.
	plainAvro := avroBytes(t, testValueSchema, map[string]any{"id": int64(5), "status": "NEW", "note": map[string]any{"string": "x"}})
	sideGen(t, "plain-0", kafkagen.Options{Topic: "plain", Records: []kafkagen.KeyValue{{Key: []byte("k"), Value: plainAvro}}})
	sideGen(t, "plainpb-0", kafkagen.Options{Topic: "plainpb", Records: []kafkagen.KeyValue{{Key: nil, Value: []byte{0x0a, 0x01, 'z'}}}})
	got = decodedOf(t, sideRun(t, 0, []string{"-o", "json", "dump-log", "--value-schema", "schemas/2.avsc", "plain-0"}))
	if w := `{"decoder":"schema_registry","key_schema":null,"key":null,"value_schema":{"type":"AVRO","file":"2.avsc"},"value":{"id":5,"status":"NEW","note":{"string":"x"}}}`; got[0] != w {
		t.Errorf("plain avro:\n got %s\nwant %s", got[0], w)
	}
	got = decodedOf(t, sideRun(t, 0, []string{"-o", "json", "dump-log", "--value-schema", "schemas/3.proto", "--value-message", "Event", "plainpb-0"}))
	if w := `"value_schema":{"type":"PROTOBUF","file":"3.proto"},"value":{"id":"z"}}`; !strings.HasSuffix(got[0], w) {
		t.Errorf("plain protobuf: %s", got[0])
	}
	got = decodedOf(t, sideRun(t, 0, []string{"-o", "json", "dump-log", "--value-schema", "schemas/3.proto", "plainpb-0"}))
	if w := `"value":{"a":"z"}}`; !strings.HasSuffix(got[0], w) {
		t.Errorf("plain protobuf, first message: %s", got[0])
	}
	// A plain payload that does not match: listed raw with the error.
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--value-schema", "schemas/2.avsc", "plainpb-0"},
		`"value":"CgF6".*"value_schema":null,"value":null,"error":"value: AVRO schema 2.avsc: payload does not match the schema: at byte 2: enum shop.Status: symbol index -1 of 2"`)
}

func TestDumpLogSchemaErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	sideGen(t, "orders-0", kafkagen.Options{Batches: 2, RecordsPerBatch: 1})
	sideWrite(t, "bad.avsc", `{"type":"nope"}`)
	sideWrite(t, "x.proto", testProto)
	sideRun(t, 2, []string{"dump-log", "--decoder", "schema-registry", "orders-0"}, `stderr:--decoder schema-registry: no _schemas-0 in \.`, `stderr:give --schemas PATH`)
	sideRun(t, 2, []string{"dump-log", "--schemas", "nowhere", "orders-0"}, `stderr:--schemas: stat nowhere: no such file`)
	sideRun(t, 2, []string{"dump-log", "--schemas", "orders-0/..", "--decoder", "consumer_offsets", "orders-0"}, `stderr:are for --decoder schema-registry, not consumer_offsets`)
	sideRun(t, 2, []string{"dump-log", "--key-message", "A", "orders-0"}, `stderr:--key-message and --value-message name a message`)
	sideRun(t, 2, []string{"dump-log", "--value-schema", "bad.avsc", "orders-0"}, `stderr:--value-schema: bad.avsc: `)
	sideRun(t, 2, []string{"dump-log", "--value-schema", "x.proto", "--value-message", "Nope", "orders-0"}, `stderr:--value-schema: x.proto: no message "Nope"`)
	sideRun(t, 2, []string{"dump-log", "--schemas", "orders-0/00000000000000000000.log", "orders-0"}, `stderr:no schemas found`)
	sideRun(t, 2, []string{"dump-log", "--schemas", "orders-0", "orders-0"}, `stderr:--schemas: orders-0: no schemas found: 2 records, none registers a schema`)
	if err := os.Mkdir("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	sideRun(t, 2, []string{"dump-log", "--schemas", "empty", "orders-0"}, `stderr:empty: no schemas found`)
}

// TestDumpLogDamagedSchemas: a _schemas log cut inside its last batch
// still gives the schemas before the damage, with a warning.
func TestDumpLogDamagedSchemas(t *testing.T) {
	t.Chdir(t.TempDir())
	schemaDataDir(t)
	log := filepath.Join("_schemas-0", "00000000000000000000.log")
	st, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(log, st.Size()-10); err != nil {
		t.Fatal(err)
	}
	out := sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "orders-0"},
		"stderr:warning: _schemas-0: read 2 schemas before: ", `"value":{"id":1,"status":"NEW","note":null}`)
	if !strings.Contains(decodedOf(t, out)[6], `"error":"value: schema id 3: unknown (2 schemas in _schemas-0)"`) {
		t.Errorf("offset 6: %s", decodedOf(t, out)[6])
	}
}

package schemaregistry

import (
	"path/filepath"
	"testing"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// The schemas of the test registry. Payloads are encoded by other code
// than the decoder under test: hamba/avro's encoder for Avro, dynamicpb
// and proto.Marshal for Protobuf.
const (
	moneySchema = `{"type":"record","name":"Money","namespace":"com.shop","fields":[
		{"name":"cents","type":"long"},{"name":"currency","type":"string"}]}`
	orderV1Schema = `{"type":"record","name":"Order","namespace":"com.shop","fields":[
		{"name":"id","type":"long"},{"name":"amount","type":"double"}]}`
	orderV2Schema = `{"type":"record","name":"Order","namespace":"com.shop","fields":[
		{"name":"id","type":"long"},
		{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
		{"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
			{"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
		{"name":"tags","type":{"type":"map","values":"string"}},
		{"name":"note","type":["null","string","int","com.shop.Money",{"type":"array","items":"long"}]},
		{"name":"created","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"day","type":{"type":"int","logicalType":"date"}},
		{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
		{"name":"digest","type":{"type":"fixed","name":"Digest","size":4}},
		{"name":"ratio","type":"float"},
		{"name":"ok","type":"boolean"},
		{"name":"address","type":{"type":"record","name":"Address","fields":[
			{"name":"city","type":"string"},{"name":"zip","type":["null","string"]}]}}]}`
	eventsProto = `syntax = "proto3";
package shop;
import "common.proto";
import "google/protobuf/timestamp.proto";
message Envelope { string source = 1; }
message Event {
  string id = 1;
  int64 at = 2;
  Inner inner = 3;
  repeated string tags = 4;
  common.Origin origin = 5;
  google.protobuf.Timestamp when = 6;
  message Inner {
    int32 n = 1;
    Deep deep = 2;
    message Deep { bool ok = 1; }
  }
}`
	commonProto = `syntax = "proto3";
package common;
message Origin { string host = 1; uint32 port = 2; }`
	clickSchema = `{"type":"object","properties":{"page":{"type":"string"}}}`
)

// Schema ids of the test registry.
const (
	idOrderKey   = 1
	idOrderV1    = 2
	idOrderV2    = 3
	idMoney      = 4
	idEvents     = 5
	idCommon     = 6
	idClicks     = 7
	idSoftGone   = 8  // deleted: true, still decodes
	idHardGone   = 9  // its record was deleted by a null value
	idBadSchema  = 10 // does not parse
	idReplaced   = 11 // its subject version was registered again with id 12
	idReplacing  = 12
	idEventsJSON = 13
)

// registryRecords is the _schemas topic of the test registry, with the
// records a registry writes besides schemas (CONFIG, NOOP) in between.
func registryRecords() []kafkagen.KeyValue {
	recs := []kafkagen.KeyValue{
		{Key: []byte(`{"keytype":"NOOP","magic":0}`), Value: nil},
		{Key: []byte(`{"keytype":"CONFIG","subject":null,"magic":0}`), Value: []byte(`{"compatibilityLevel":"BACKWARD"}`)},
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "orders-key", Version: 1, ID: idOrderKey, Schema: `"string"`}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "orders-value", Version: 1, ID: idOrderV1, Schema: orderV1Schema}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "money", Version: 1, ID: idMoney, Schema: moneySchema}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "orders-value", Version: 2, ID: idOrderV2, Schema: orderV2Schema,
			References: []kafkagen.SchemaRef{{Name: "com.shop.Money", Subject: "money", Version: 1}}}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "common.proto", Version: 1, ID: idCommon, SchemaType: "PROTOBUF", Schema: commonProto}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "events-value", Version: 1, ID: idEvents, SchemaType: "PROTOBUF", Schema: eventsProto,
			References: []kafkagen.SchemaRef{{Name: "common.proto", Subject: "common.proto", Version: -1}}}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "clicks-value", Version: 1, ID: idClicks, SchemaType: "JSON", Schema: clickSchema}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "old-value", Version: 1, ID: idSoftGone, Schema: `"long"`}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "old-value", Version: 1, ID: idSoftGone, Schema: `"long"`, Deleted: true}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "gone-value", Version: 1, ID: idHardGone, Schema: `"long"`}),
		{Key: []byte(`{"keytype":"DELETE_SUBJECT","subject":"gone-value","magic":0}`), Value: []byte(`{"subject":"gone-value","version":1}`)},
		{Key: kafkagen.SchemaKey("gone-value", 1), Value: nil},
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "bad-value", Version: 1, ID: idBadSchema, Schema: `{"type":"record","name":"X","fields":[{"name":"a","type":"nope"}]}`}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "re-value", Version: 1, ID: idReplaced, Schema: `"int"`}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "re-value", Version: 1, ID: idReplacing, Schema: `"string"`}),
		// The same schema text under another subject shares the id; the id
		// names the first subject.
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "events-copy", Version: 3, ID: idEvents, SchemaType: "PROTOBUF", Schema: eventsProto,
			References: []kafkagen.SchemaRef{{Name: "common.proto", Subject: "common.proto", Version: 1}}}),
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "events-json", Version: 1, ID: idEventsJSON, SchemaType: "PROTOBUF",
			Schema: `syntax = "proto3"; message Broken { string s = 1 }`}),
	}
	return recs
}

// writeRegistry writes the test registry's _schemas-0 in a new data
// directory (over several segments, compressed) and returns the directory.
func writeRegistry(t testing.TB) string {
	t.Helper()
	data := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(data, TopicPartitionDir), kafkagen.Options{Seed: 1, Topic: Topic, Segments: 3,
		RecordsPerBatch: 3, Compression: "lz4", Records: registryRecords()}); err != nil {
		t.Fatal(err)
	}
	return data
}

func mustAvro(t testing.TB, schema string, v any, refs ...string) []byte {
	t.Helper()
	cache := &avro.SchemaCache{}
	for _, r := range refs {
		if _, err := avro.ParseWithCache(r, "", cache); err != nil {
			t.Fatal(err)
		}
	}
	s, err := avro.ParseWithCache(schema, "", cache)
	if err != nil {
		t.Fatal(err)
	}
	b, err := avro.Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustProto encodes the message fullName of the events schema given in
// protobuf JSON, with the descriptors compiled by protocompile through a
// registry of its own.
func mustProto(t testing.TB, fullName, js string) []byte {
	t.Helper()
	reg := newRegistry("test")
	fd, err := reg.compileProtoText(map[string]string{rootFile: eventsProto, "common.proto": commonProto})
	if err != nil {
		t.Fatal(err)
	}
	md, err := protoMessageByName(fd, fullName)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(js), m); err != nil {
		t.Fatal(err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

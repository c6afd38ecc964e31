package kafkagen

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Records of a schema registry's _schemas topic and values in its wire
// format, for Options.Records (the registry's KafkaStore and
// AbstractKafkaSchemaSerDe are what they mirror).

// SchemaRef is a reference of a registered schema.
type SchemaRef struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// RegisteredSchema is one schema version as the registry stores it.
type RegisteredSchema struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"` // "" is AVRO
	Schema     string      `json:"schema"`
	References []SchemaRef `json:"references,omitempty"`
	Deleted    bool        `json:"deleted"`
}

// SchemaRecord is the _schemas record registering s: key
// {"keytype":"SCHEMA","subject":S,"version":V,"magic":1} and s as JSON.
func SchemaRecord(s RegisteredSchema) KeyValue {
	v, _ := json.Marshal(s)
	return KeyValue{Key: SchemaKey(s.Subject, s.Version), Value: v}
}

// SchemaKey is the key of the _schemas record of a subject's version (a
// record with this key and a null value deletes the version).
func SchemaKey(subject string, version int) []byte {
	k, _ := json.Marshal(struct {
		KeyType string `json:"keytype"`
		Subject string `json:"subject"`
		Version int    `json:"version"`
		Magic   int    `json:"magic"`
	}{"SCHEMA", subject, version, 1})
	return k
}

// WireFormat frames payload in the wire format: byte 0, the schema id
// (4 bytes, big-endian), for Protobuf the message-index list (a zig-zag
// varint count then the indexes; [0] is written as the single byte 0, as
// the serializer does; nil writes no list, for Avro and JSON Schema),
// then the payload.
func WireFormat(id int32, messageIndexes []int, payload []byte) []byte {
	return append(appendWireHeader(nil, id, messageIndexes), payload...)
}

// appendWireHeader appends the wire format's header (WireFormat).
func appendWireHeader(dst []byte, id int32, messageIndexes []int) []byte {
	dst = binary.BigEndian.AppendUint32(append(dst, 0), uint32(id))
	switch {
	case messageIndexes == nil:
	case len(messageIndexes) == 1 && messageIndexes[0] == 0:
		dst = append(dst, 0)
	default:
		dst = binary.AppendVarint(dst, int64(len(messageIndexes)))
		for _, i := range messageIndexes {
			dst = binary.AppendVarint(dst, int64(i))
		}
	}
	return dst
}

// Value formats of Options.ValueFormat: values in the wire format, written
// with the schemas DemoSchemas registers.
const (
	ValueAvro     = "avro"
	ValueProtobuf = "protobuf"
	ValueJSON     = "json"
)

// Ids of DemoSchemas, one per value format.
const (
	DemoAvroID     = 1
	DemoProtobufID = 2
	DemoJSONID     = 3
)

// The demo order in each schema language: id, customer, amount, status
// and an optional note.
const (
	demoAvroSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},` +
		`{"name":"customer","type":"string"},{"name":"amount","type":"double"},` +
		`{"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},` +
		`{"name":"note","type":["null","string"],"default":null}]}`
	demoProtoSchema = "syntax = \"proto3\";\npackage shop;\n\nmessage Order {\n  int64 id = 1;\n  string customer = 2;\n  double amount = 3;\n" +
		"  Status status = 4;\n  string note = 5;\n  enum Status {\n    NEW = 0;\n    PAID = 1;\n    SHIPPED = 2;\n  }\n}\n"
	demoJSONSchema = `{"type":"object","properties":{"id":{"type":"integer"},"customer":{"type":"string"},` +
		`"amount":{"type":"number"},"status":{"enum":["NEW","PAID","SHIPPED"]},"note":{"type":"string"}}}`
)

var demoStatuses = []string{"NEW", "PAID", "SHIPPED"}

// DemoSchemas are the schemas of the three value formats, registered as
// orders-avro-value, orders-protobuf-value and orders-json-value.
func DemoSchemas() []RegisteredSchema {
	return []RegisteredSchema{
		{Subject: "orders-avro-value", Version: 1, ID: DemoAvroID, Schema: demoAvroSchema},
		{Subject: "orders-protobuf-value", Version: 1, ID: DemoProtobufID, SchemaType: "PROTOBUF", Schema: demoProtoSchema},
		{Subject: "orders-json-value", Version: 1, ID: DemoJSONID, SchemaType: "JSON", Schema: demoJSONSchema},
	}
}

// DemoSchemaRecords are the _schemas records registering DemoSchemas.
func DemoSchemaRecords() []KeyValue {
	var out []KeyValue
	for _, s := range DemoSchemas() {
		out = append(out, SchemaRecord(s))
	}
	return out
}

// demoOrder is one order drawn for a demo value.
type demoOrder struct {
	id       int64
	customer int
	cents    int64
	status   int
	note     bool
}

func (o demoOrder) amount() float64 { return float64(o.cents) / 100 }

// appendDemoValue appends o in the wire format of format.
func appendDemoValue(dst []byte, format string, o demoOrder) []byte {
	customer := fmt.Appendf(nil, "customer-%03d", o.customer)
	switch format {
	case ValueAvro:
		dst = appendWireHeader(dst, DemoAvroID, nil)
		dst = binary.AppendVarint(dst, o.id)
		dst = binary.AppendVarint(dst, int64(len(customer)))
		dst = append(dst, customer...)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(o.amount()))
		dst = binary.AppendVarint(dst, int64(o.status))
		if o.note {
			dst = binary.AppendVarint(dst, 1)
			dst = binary.AppendVarint(dst, int64(len(demoNote)))
			dst = append(dst, demoNote...)
		} else {
			dst = binary.AppendVarint(dst, 0)
		}
	case ValueProtobuf:
		// Tags: field number << 3 | wire type (0 varint, 1 fixed64, 2
		// length-delimited).
		const varint, fixed64, bytes = 0, 1, 2
		dst = appendWireHeader(dst, DemoProtobufID, []int{0})
		dst = append(dst, 1<<3|varint)
		dst = binary.AppendUvarint(dst, uint64(o.id))
		dst = append(dst, 2<<3|bytes)
		dst = binary.AppendUvarint(dst, uint64(len(customer)))
		dst = append(dst, customer...)
		dst = append(dst, 3<<3|fixed64)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(o.amount()))
		if o.status != 0 {
			dst = append(dst, 4<<3|varint, byte(o.status))
		}
		if o.note {
			dst = append(dst, 5<<3|bytes, byte(len(demoNote)))
			dst = append(dst, demoNote...)
		}
	case ValueJSON:
		dst = appendWireHeader(dst, DemoJSONID, nil)
		dst = fmt.Appendf(dst, `{"id":%d,"customer":%q,"amount":%s,"status":%q`, o.id, customer,
			strconv.FormatFloat(o.amount(), 'f', -1, 64), demoStatuses[o.status])
		if o.note {
			dst = fmt.Appendf(dst, `,"note":%q`, demoNote)
		}
		dst = append(dst, '}')
	}
	return dst
}

const demoNote = "gift wrap"

package gen

import (
	"encoding/binary"
	"encoding/json"
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
	b := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
	switch {
	case messageIndexes == nil:
	case len(messageIndexes) == 1 && messageIndexes[0] == 0:
		b = append(b, 0)
	default:
		b = binary.AppendVarint(b, int64(len(messageIndexes)))
		for _, i := range messageIndexes {
			b = binary.AppendVarint(b, int64(i))
		}
	}
	return append(b, payload...)
}

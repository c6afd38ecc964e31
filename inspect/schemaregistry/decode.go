package schemaregistry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kseg/kseg/inspect/jsontext"
)

// DecoderName is the decoded object's "decoder".
const DecoderName = "schema_registry"

// SchemaRef says which schema decoded a key or value.
type SchemaRef struct {
	ID      *int32 `json:"id,omitempty"` // nil for a plain schema file
	Type    string `json:"type"`
	Subject string `json:"subject,omitempty"`
	Version int32  `json:"version,omitempty"`
	File    string `json:"file,omitempty"` // a schema file's base name
}

// Decoded is the contract's "decoded" object of a record: the schema and
// the decoded form of its key and value; a side that is not in the wire
// format (or did not decode) has a nil schema and a null form.
type Decoded struct {
	Decoder     string          `json:"decoder"`
	KeySchema   *SchemaRef      `json:"key_schema"`
	Key         json.RawMessage `json:"key"`
	ValueSchema *SchemaRef      `json:"value_schema"`
	Value       json.RawMessage `json:"value"`
	// Error says why a wire-format key or value did not decode: the
	// schema id and what failed.
	Error string `json:"error,omitempty"`
}

// wireHeader is the wire format's magic byte and schema id.
const wireHeader = 5

// compiled is a schema made ready to decode with, or why it cannot be.
type compiled struct {
	ref   SchemaRef
	avro  avro.Schema
	proto protoreflect.FileDescriptor
	// message is the Protobuf message of a plain schema file.
	message protoreflect.MessageDescriptor
	err     error
}

// compile returns id's compiled schema, compiling it on first use; nil when
// the id is unknown.
func (r *Registry) compile(id int32) *compiled {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.compiled[id]; ok {
		return c
	}
	s := r.byID[id]
	if s == nil {
		return nil
	}
	c := &compiled{ref: SchemaRef{ID: &s.ID, Type: s.SchemaType, Subject: s.Subject, Version: s.Version}}
	if s.File != "" {
		c.ref.File = filepath.Base(s.File)
	}
	switch s.SchemaType {
	case Avro:
		c.avro, c.err = r.parseAvro(s)
	case Protobuf:
		c.proto, c.err = r.compileProto(s)
	case JSONSchema:
	default:
		c.err = fmt.Errorf("schema type %q is not AVRO, PROTOBUF or JSON", s.SchemaType)
	}
	if c.err != nil {
		c.err = fmt.Errorf("schema does not parse: %w", c.err)
	}
	r.compiled[id] = c
	return c
}

// PlainSchema is a schema file for keys or values written without the wire
// format: plain Avro binary, or a plain Protobuf message.
type PlainSchema struct{ c *compiled }

// OpenPlainSchema reads an Avro (.avsc) or Protobuf (.proto) schema file;
// message names the Protobuf message (full or short name; "" the file's
// first message) and must be "" for Avro. Protobuf imports are found next
// to the file.
func OpenPlainSchema(path, message string) (*PlainSchema, error) {
	text, err := readSchemaFile(path)
	if err != nil {
		return nil, err
	}
	c := &compiled{ref: SchemaRef{File: filepath.Base(path)}}
	switch filepath.Ext(path) {
	case ".avsc":
		if message != "" {
			return nil, fmt.Errorf("%s: a message name is for Protobuf schemas", path)
		}
		c.ref.Type = Avro
		reg := newRegistry(path)
		c.avro, err = reg.parseAvro(&Schema{Schema: text})
	case ".proto":
		c.ref.Type = Protobuf
		reg := newRegistry(path)
		reg.dir = filepath.Dir(path)
		if c.proto, err = reg.compileProtoText(map[string]string{rootFile: text}); err == nil {
			c.message, err = protoMessageByName(c.proto, message)
		}
	default:
		return nil, fmt.Errorf("%s: want an Avro schema (.avsc) or a Protobuf schema (.proto)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &PlainSchema{c: c}, nil
}

// Decoder decodes keys and values. It keeps scratch buffers and Protobuf
// messages between records, so it is not safe for concurrent use: give
// each goroutine its own (they may share a Registry).
type Decoder struct {
	reg                   *Registry    // nil: no wire-format decoding
	plainKey, plainValue  *PlainSchema // nil: the wire format
	buf                   []byte
	indexes               []int64
	messages              map[protoreflect.MessageDescriptor]*dynamicpb.Message
	protoJSON             protojson.MarshalOptions
	protoUnmarshalOptions proto.UnmarshalOptions
}

// NewDecoder returns a decoder for keys and values in the wire format with
// the schemas of reg (nil: none), keys with plainKey and values with
// plainValue when those are given.
func NewDecoder(reg *Registry, plainKey, plainValue *PlainSchema) *Decoder {
	return &Decoder{reg: reg, plainKey: plainKey, plainValue: plainValue,
		messages: map[protoreflect.MessageDescriptor]*dynamicpb.Message{},
		// AllowPartial: a message missing a proto2 required field is shown
		// as far as it goes (and the check costs a third of the decoding).
		protoJSON:             protojson.MarshalOptions{AllowPartial: true},
		protoUnmarshalOptions: proto.UnmarshalOptions{RecursionLimit: maxAvroDepth, AllowPartial: true}}
}

// Decode decodes a record's key and value (nil means null). It never
// fails: what did not decode is named in Decoded.Error, and that side
// stays null.
func (d *Decoder) Decode(key, value []byte) Decoded {
	out := Decoded{Decoder: DecoderName}
	var errs []string
	var err error
	out.KeySchema, out.Key, err = d.decodeSide(key, d.plainKey)
	if err != nil {
		errs = append(errs, "key: "+err.Error())
	}
	out.ValueSchema, out.Value, err = d.decodeSide(value, d.plainValue)
	if err != nil {
		errs = append(errs, "value: "+err.Error())
	}
	out.Error = strings.Join(errs, "; ")
	return out
}

// IsWireFormat tells whether b starts as the wire format does: byte 0 and
// a 4-byte schema id.
func IsWireFormat(b []byte) bool { return len(b) >= wireHeader && b[0] == 0 }

func (d *Decoder) decodeSide(b []byte, plain *PlainSchema) (*SchemaRef, json.RawMessage, error) {
	if b == nil {
		return nil, nil, nil
	}
	if plain != nil {
		v, err := d.decodePayload(plain.c, b, false)
		if err != nil {
			return nil, nil, fmt.Errorf("%s schema %s: %w", plain.c.ref.Type, plain.c.ref.File, err)
		}
		return &plain.c.ref, v, nil
	}
	if d.reg == nil || !IsWireFormat(b) {
		return nil, nil, nil
	}
	id := int32(binary.BigEndian.Uint32(b[1:wireHeader]))
	c := d.reg.compile(id)
	if c == nil {
		return nil, nil, fmt.Errorf("schema id %d: unknown (%d schemas in %s)", id, d.reg.Len(), d.reg.Source)
	}
	if c.err != nil {
		return nil, nil, fmt.Errorf("schema id %d (%s): %w", id, describe(&c.ref), c.err)
	}
	v, err := d.decodePayload(c, b[wireHeader:], true)
	if err != nil {
		return nil, nil, fmt.Errorf("schema id %d (%s): %w", id, describe(&c.ref), err)
	}
	return &c.ref, v, nil
}

func describe(r *SchemaRef) string {
	if r.Subject == "" {
		return r.Type + " " + r.File
	}
	return fmt.Sprintf("%s %s version %d", r.Type, r.Subject, r.Version)
}

// decodePayload decodes what follows the wire-format header (wire) or a
// plain payload. The result is a new slice (the record's output).
func (d *Decoder) decodePayload(c *compiled, payload []byte, wire bool) (json.RawMessage, error) {
	switch c.ref.Type {
	case Avro:
		out, err := avroToJSON(d.buf[:0], c.avro, payload)
		d.buf = out[:0]
		if err != nil {
			return nil, fmt.Errorf("payload does not match the schema: %w", err)
		}
		return bytes.Clone(out), nil
	case Protobuf:
		md := c.message
		if wire {
			ixs, n, err := messageIndexes(payload, d.indexes)
			if err != nil {
				return nil, err
			}
			d.indexes = ixs
			if md, err = protoMessage(c.proto, ixs); err != nil {
				return nil, err
			}
			payload = payload[n:]
		}
		m := d.messages[md]
		if m == nil {
			m = dynamicpb.NewMessage(md)
			d.messages[md] = m
		}
		m.Reset()
		if err := d.protoUnmarshalOptions.Unmarshal(payload, m); err != nil {
			return nil, fmt.Errorf("payload does not match message %s: %w", md.FullName(), err)
		}
		// protojson varies its spacing on purpose; compacted, the output
		// is stable.
		j, err := d.protoJSON.MarshalAppend(d.buf[:0], m)
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", md.FullName(), err)
		}
		var out bytes.Buffer
		out.Grow(len(j))
		err = json.Compact(&out, j)
		d.buf = j[:0]
		return jsontext.Valid(out.Bytes()), err
	case JSONSchema:
		if !json.Valid(payload) {
			return nil, errors.New("payload is not a JSON document")
		}
		// The document as it is, compacted; bytes that are not UTF-8
		// become \ufffd (the JSON line must be valid UTF-8).
		var out bytes.Buffer
		out.Grow(len(payload))
		err := json.Compact(&out, payload)
		return jsontext.Valid(out.Bytes()), err
	}
	return nil, fmt.Errorf("schema type %q", c.ref.Type)
}

package internaltopics

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// A small interpreter for Kafka's message schemas (the JSON definitions the
// broker generates its *Key/*Value/*Record classes from), enough for the
// records of the internal topics: fixed-width numbers, strings, bytes,
// UUIDs, arrays of those or of structs, nullable fields, and for flexible
// versions compact lengths and tagged fields.
//
// Encoding (broker: the generated read(Readable, short) methods,
// ByteBufferAccessor):
//
//	int8/16/32/64, uint16, float64   big-endian, fixed width
//	bool                             one byte, non-zero is true
//	uuid                             16 bytes
//	string / bytes / array length    non-flexible: i16 (string) or i32
//	                                 (bytes, array), -1 = null;
//	                                 flexible: unsigned varint n+1, 0 = null
//	struct (and the top level)       its fields in order; in flexible
//	                                 versions then an unsigned varint count
//	                                 of tagged fields, each tag, size, data
//
// A field is present in the versions it lists; a tagged field only in the
// tagged section of the versions it is tagged in.

type kind uint8

const (
	kInt8 kind = iota
	kInt16
	kInt32
	kInt64
	kUint16
	kFloat64
	kBool
	kString
	kBytes
	kUUID
	kStruct // the field's fields: a struct, or an array of them
)

// versions is an inclusive range of message versions; hi < lo is empty.
type versions struct{ lo, hi int16 }

func (v versions) has(x int16) bool { return x >= v.lo && x <= v.hi }

const maxVersion = math.MaxInt16

var none = versions{0, -1}

// from is "N+".
func from(n int16) versions { return versions{n, maxVersion} }

// only is "N" or "N-M".
func only(lo, hi int16) versions { return versions{lo, hi} }

// field describes one field of a schema. name is the JSON name, as the
// broker's generated JsonConverter spells it (camelCase, first letter
// lower case).
type field struct {
	name     string
	kind     kind
	array    bool
	fields   []field // struct element fields
	versions versions
	nullable versions
	tag      int32 // -1: not tagged
	tagged   versions
}

// Helpers to write the schema tables.
func f(name string, k kind, v versions) field {
	return field{name: name, kind: k, versions: v, nullable: none, tag: -1, tagged: none}
}

func arr(name string, k kind, v versions) field {
	x := f(name, k, v)
	x.array = true
	return x
}

func structs(name string, v versions, fields ...field) field {
	x := f(name, kStruct, v)
	x.array = true
	x.fields = fields
	return x
}

// structField is a field holding one struct (not an array of them).
func structField(name string, v versions, fields ...field) field {
	x := f(name, kStruct, v)
	x.fields = fields
	return x
}

func (x field) null(v versions) field { x.nullable = v; return x }

// taggedAt makes the field a tagged field with this tag in versions v.
func (x field) taggedAt(tag int32, v versions) field { x.tag, x.tagged = tag, v; return x }

// schema is one message definition.
type schema struct {
	name     string
	valid    versions
	flexible versions
	fields   []field
}

// Fields is a decoded struct: its fields in schema order. It marshals to a
// JSON object keeping that order.
type Fields []Field

// Field is one decoded field. Value is int64, float64, bool, string,
// nil (null), []any or Fields.
type Field struct {
	Name  string
	Value any
}

// Get returns a field's value by JSON name.
func (fs Fields) Get(name string) (any, bool) {
	for _, x := range fs {
		if x.Name == name {
			return x.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the fields as an object in order.
func (fs Fields) MarshalJSON() ([]byte, error) {
	if fs == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshalNoHTML(x.Name)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalValue(x.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case float64:
		// JSON has no NaN or infinities: print them as strings.
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return marshalNoHTML(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case []any:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			m, err := marshalValue(e)
			if err != nil {
				return nil, err
			}
			b.Write(m)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	}
	return marshalNoHTML(v)
}

// marshalNoHTML is json.Marshal with HTML escaping off: <, > and & as they
// are, as every JSON line kseg prints has them.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// errSchema is the kind of every decoding error.
var errSchema = errors.New("record does not match its schema")

// reader is a cursor over one record's bytes with a sticky error.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: byte %d: %s", errSchema, r.pos, fmt.Sprintf(format, args...))
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.pos {
		r.fail("%d bytes needed, %d left", n, len(r.b)-r.pos)
		return nil
	}
	p := r.b[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return p
}

// fixed reads an n-byte big-endian number (0 after an error).
func (r *reader) fixed(n int) uint64 {
	var v uint64
	for _, c := range r.take(n) {
		v = v<<8 | uint64(c)
	}
	return v
}

// uvarint reads an unsigned varint of at most 5 bytes
// (ByteUtils.readUnsignedVarint).
func (r *reader) uvarint() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		c := r.fixed(1)
		if r.err != nil {
			return 0
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("unsigned varint longer than 5 bytes")
	return 0
}

// length reads a string/bytes/array length: -1 for null.
func (r *reader) length(flexible bool, wide bool) int {
	if flexible {
		n := r.uvarint()
		if n > math.MaxInt32 {
			r.fail("length %d out of range", n)
			return 0
		}
		return int(n) - 1
	}
	if wide {
		return int(int32(r.fixed(4)))
	}
	return int(int16(r.fixed(2)))
}

// size reads the length of a string, bytes or array field: ok is false
// when the field is null (an error unless it may be) or the read failed.
func (r *reader) size(fd field, v int16, flexible, wide bool) (n int, ok bool) {
	n = r.length(flexible, wide)
	if r.err != nil {
		return 0, false
	}
	if n < 0 {
		if !fd.nullable.has(v) {
			r.fail("non-nullable field %q was serialized as null", fd.name)
		}
		return 0, false
	}
	return n, true
}

// decodeStruct reads the fields of a struct at version v.
func (r *reader) decodeStruct(fields []field, v int16, flexible bool) Fields {
	out := make(Fields, 0, len(fields))
	var slotBuf [16]int
	slot := slotBuf[:0] // index into out, -1: absent
	if len(fields) > len(slotBuf) {
		slot = make([]int, 0, len(fields))
	}
	slot = slot[:len(fields)]
	for i, fd := range fields {
		slot[i] = -1
		if !fd.versions.has(v) || (fd.tag >= 0 && fd.tagged.has(v)) {
			continue
		}
		val := r.value(fd, v, flexible)
		if r.err != nil {
			return nil
		}
		slot[i] = len(out)
		out = append(out, Field{fd.name, val})
	}
	if !flexible {
		return out
	}
	n := r.uvarint()
	if int(n) > len(r.b)-r.pos {
		r.fail("%d tagged fields declared, %d bytes left", n, len(r.b)-r.pos)
	}
	var tagged []Field
	var taggedIdx []int
	for i := uint32(0); i < n && r.err == nil; i++ {
		tag := r.uvarint()
		size := r.uvarint()
		data := r.take(int(size))
		if r.err != nil {
			return nil
		}
		idx := -1
		for j, fd := range fields {
			if fd.tag == int32(tag) && fd.tagged.has(v) {
				idx = j
			}
		}
		if idx < 0 {
			continue // an unknown tagged field: skipped, as the broker keeps it unread
		}
		sub := &reader{b: data}
		val := sub.value(fields[idx], v, flexible)
		if sub.err == nil && sub.pos != len(data) {
			sub.fail("%d bytes left in tagged field %q", len(data)-sub.pos, fields[idx].name)
		}
		if sub.err != nil {
			r.fail("tagged field %q: %v", fields[idx].name, sub.err)
			return nil
		}
		tagged = append(tagged, Field{fields[idx].name, val})
		taggedIdx = append(taggedIdx, idx)
	}
	if r.err != nil || len(tagged) == 0 {
		return out
	}
	// Put the tagged fields back in schema order.
	merged := make(Fields, 0, len(out)+len(tagged))
	for i := range fields {
		if slot[i] >= 0 {
			merged = append(merged, out[slot[i]])
		}
		for k, idx := range taggedIdx {
			if idx == i {
				merged = append(merged, tagged[k])
			}
		}
	}
	return merged
}

// value reads one field (not its tag framing).
func (r *reader) value(fd field, v int16, flexible bool) any {
	if fd.array {
		n, ok := r.size(fd, v, flexible, true)
		if !ok {
			return nil
		}
		if n > len(r.b)-r.pos {
			// Every element takes at least one byte
			// (ByteBufferAccessor: "Tried to allocate a collection of size").
			r.fail("array %q of %d elements, only %d bytes left", fd.name, n, len(r.b)-r.pos)
			return nil
		}
		items := make([]any, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			if fd.kind == kStruct {
				items = append(items, r.decodeStruct(fd.fields, v, flexible))
			} else {
				items = append(items, r.scalar(fd, fd.kind, v, flexible))
			}
		}
		if r.err != nil {
			return nil
		}
		return items
	}
	if fd.kind == kStruct {
		return r.decodeStruct(fd.fields, v, flexible)
	}
	return r.scalar(fd, fd.kind, v, flexible)
}

func (r *reader) scalar(fd field, k kind, v int16, flexible bool) any {
	switch k {
	case kInt8:
		return int64(int8(r.fixed(1)))
	case kInt16:
		return int64(int16(r.fixed(2)))
	case kInt32:
		return int64(int32(r.fixed(4)))
	case kInt64:
		return int64(r.fixed(8))
	case kUint16:
		return int64(r.fixed(2))
	case kFloat64:
		return math.Float64frombits(r.fixed(8))
	case kBool:
		return r.fixed(1) != 0
	case kUUID:
		p := r.take(16)
		if p == nil {
			return nil
		}
		return base64.RawURLEncoding.EncodeToString(p)
	case kString, kBytes:
		n, ok := r.size(fd, v, flexible, k == kBytes)
		if !ok {
			return nil
		}
		p := r.take(n)
		if p == nil {
			return nil
		}
		if k == kBytes {
			return base64.StdEncoding.EncodeToString(p)
		}
		return string(p)
	}
	r.fail("field %q: unsupported type", fd.name)
	return nil
}

// decode reads a whole message at version v; every byte must be used
// (the serdes refuse trailing bytes).
func (s *schema) decode(b []byte, v int16) (Fields, error) {
	if !s.valid.has(v) {
		return nil, fmt.Errorf("%w: %s version %d is not one this decoder knows (%s)", errUnknownVersion, s.name, v, s.valid)
	}
	r := &reader{b: b}
	out := r.decodeStruct(s.fields, v, s.flexible.has(v))
	if r.err == nil && r.pos != len(b) {
		r.fail("%d bytes left after the last field of %s", len(b)-r.pos, s.name)
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// errUnknownVersion marks a record whose version is outside the schema's
// known range: not damage, only newer than kseg.
var errUnknownVersion = errors.New("unknown version")

func (v versions) String() string {
	switch {
	case v.hi < v.lo:
		return "none"
	case v.hi == maxVersion:
		return fmt.Sprintf("%d+", v.lo)
	case v.lo == v.hi:
		return strconv.Itoa(int(v.lo))
	}
	return fmt.Sprintf("%d-%d", v.lo, v.hi)
}

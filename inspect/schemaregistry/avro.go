package schemaregistry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/kseg/kseg/inspect/jsontext"
)

// Avro schemas are parsed by github.com/hamba/avro/v2 (names, namespaces,
// references, logical types); the binary payload is walked here, straight
// into Avro's JSON encoding (the Avro specification, "JSON Encoding"; what
// org.apache.avro.io.JsonEncoder and kafka-avro-console-consumer print):
// a union value other than null is {"<branch name>": value}, bytes and
// fixed are strings of the code points 0-255, an enum its symbol, a
// logical type its underlying type. Neither library decodes to that form
// in one step (hamba's generic decoding turns logical types into Go
// values and drops the union branch of a nullable union; goavro's goes
// through Go maps twice, see docs/performance.md), and a walk that only
// appends to one buffer costs no allocation per record.

// parseAvro parses an Avro schema with the named types of its references
// defined first (depth first, as the registry's AvroSchema does), in a
// cache of its own: ids never share names.
func (r *Registry) parseAvro(s *Schema) (avro.Schema, error) {
	cache := &avro.SchemaCache{}
	seen := map[subjectVersion]bool{}
	var define func(refs []Reference, depth int) error
	define = func(refs []Reference, depth int) error {
		if depth > maxReferenceDepth {
			return fmt.Errorf("references nest deeper than %d", maxReferenceDepth)
		}
		for _, ref := range refs {
			rs := r.version(ref.Subject, ref.Version)
			if rs == nil {
				return fmt.Errorf("reference %q: subject %q version %d not found", ref.Name, ref.Subject, ref.Version)
			}
			sv := subjectVersion{rs.Subject, rs.Version}
			if seen[sv] {
				continue
			}
			seen[sv] = true
			if err := define(rs.References, depth+1); err != nil {
				return err
			}
			if _, err := avro.ParseWithCache(rs.Schema, "", cache); err != nil {
				return fmt.Errorf("reference %q (subject %q version %d): %w", ref.Name, rs.Subject, rs.Version, err)
			}
		}
		return nil
	}
	if err := define(s.References, 0); err != nil {
		return nil, err
	}
	return avro.ParseWithCache(s.Schema, "", cache)
}

const (
	// maxReferenceDepth bounds chains of references.
	maxReferenceDepth = 32
	// maxAvroDepth bounds the nesting of values (a recursive schema can
	// nest as deep as its payload allows).
	maxAvroDepth = 256
	// The JSON one value may expand to is bounded by 256 KiB plus 64 bytes
	// per payload byte: items that take no payload bytes (null, empty
	// records) would let a block count of 2^62 make unbounded output from a
	// few bytes.
	outputBase, outputPerByte = 256 << 10, 64
)

var (
	errAvroShort    = errors.New("payload ends inside a value")
	errAvroVarint   = errors.New("varint longer than 10 bytes")
	errAvroTooDeep  = fmt.Errorf("values nest deeper than %d", maxAvroDepth)
	errAvroTooLarge = fmt.Errorf("value expands to more than %d bytes of JSON plus %d per payload byte", outputBase, outputPerByte)
)

// avroReader reads the binary encoding from a byte slice; every length and
// count is checked against the bytes left before anything is read.
type avroReader struct {
	b      []byte
	pos    int
	maxOut int // bound on the output's length
}

func (r *avroReader) long() (int64, error) {
	var u uint64
	for i := 0; ; i++ {
		if i == 10 {
			return 0, errAvroVarint
		}
		if r.pos >= len(r.b) {
			return 0, errAvroShort
		}
		c := r.b[r.pos]
		r.pos++
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), nil // zig-zag
}

func (r *avroReader) int() (int32, error) {
	v, err := r.long()
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		err = fmt.Errorf("int %d out of range", v)
	}
	return int32(v), err
}

func (r *avroReader) fixed(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, errAvroShort
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// bytes reads a length-prefixed bytes or string.
func (r *avroReader) bytes() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("negative length %d", n)
	}
	if n > int64(len(r.b)-r.pos) {
		return nil, fmt.Errorf("length %d at byte %d is past the end of the payload (%d bytes)", n, r.pos, len(r.b))
	}
	return r.fixed(int(n))
}

// blockCount reads an array or map block header: the item count (a
// negative count is followed by the block's size in bytes).
func (r *avroReader) blockCount() (int64, error) {
	n, err := r.long()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		if n == math.MinInt64 {
			return 0, fmt.Errorf("block count %d", n)
		}
		n = -n
		if _, err := r.long(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// avroToJSON decodes one value of schema s from payload, appending its
// JSON encoding to dst. All of payload must be used.
func avroToJSON(dst []byte, s avro.Schema, payload []byte) ([]byte, error) {
	r := avroReader{b: payload, maxOut: len(dst) + outputBase + outputPerByte*len(payload)}
	out, err := appendAvro(dst, s, &r, 0)
	if err != nil {
		return dst, fmt.Errorf("at byte %d: %w", r.pos, err)
	}
	if r.pos != len(payload) {
		return dst, fmt.Errorf("%d bytes left after the value", len(payload)-r.pos)
	}
	return out, nil
}

func appendAvro(dst []byte, s avro.Schema, r *avroReader, depth int) ([]byte, error) {
	if depth > maxAvroDepth {
		return dst, errAvroTooDeep
	}
	if len(dst) > r.maxOut {
		return dst, errAvroTooLarge
	}
	switch s.Type() {
	case avro.Null:
		return append(dst, "null"...), nil
	case avro.Boolean:
		b, err := r.fixed(1)
		if err != nil {
			return dst, err
		}
		switch b[0] {
		case 0:
			return append(dst, "false"...), nil
		case 1:
			return append(dst, "true"...), nil
		}
		return dst, fmt.Errorf("boolean byte %d", b[0])
	case avro.Int:
		v, err := r.int()
		return strconv.AppendInt(dst, int64(v), 10), err
	case avro.Long:
		v, err := r.long()
		return strconv.AppendInt(dst, v, 10), err
	case avro.Float:
		b, err := r.fixed(4)
		if err != nil {
			return dst, err
		}
		return appendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 32), nil
	case avro.Double:
		b, err := r.fixed(8)
		if err != nil {
			return dst, err
		}
		return appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)), 64), nil
	case avro.String:
		b, err := r.bytes()
		if err != nil {
			return dst, err
		}
		return appendJSONString(dst, b), nil
	case avro.Bytes:
		b, err := r.bytes()
		if err != nil {
			return dst, err
		}
		return appendCodePoints(dst, b), nil
	case avro.Fixed:
		b, err := r.fixed(s.(*avro.FixedSchema).Size())
		if err != nil {
			return dst, err
		}
		return appendCodePoints(dst, b), nil
	case avro.Enum:
		symbols := s.(*avro.EnumSchema).Symbols()
		i, err := r.int()
		if err != nil {
			return dst, err
		}
		if i < 0 || int(i) >= len(symbols) {
			return dst, fmt.Errorf("enum %s: symbol index %d of %d", s.(*avro.EnumSchema).FullName(), i, len(symbols))
		}
		return appendJSONString(dst, []byte(symbols[i])), nil
	case avro.Record, avro.Error:
		dst = append(dst, '{')
		for i, f := range s.(*avro.RecordSchema).Fields() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, []byte(f.Name()))
			dst = append(dst, ':')
			var err error
			if dst, err = appendAvro(dst, f.Type(), r, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case avro.Ref:
		return appendAvro(dst, s.(*avro.RefSchema).Schema(), r, depth)
	case avro.Array:
		items := s.(*avro.ArraySchema).Items()
		return appendBlocks(dst, '[', ']', r, depth, func(dst []byte) ([]byte, error) {
			return appendAvro(dst, items, r, depth+1)
		})
	case avro.Map:
		values := s.(*avro.MapSchema).Values()
		return appendBlocks(dst, '{', '}', r, depth, func(dst []byte) ([]byte, error) {
			k, err := r.bytes()
			if err != nil {
				return dst, err
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			return appendAvro(dst, values, r, depth+1)
		})
	case avro.Union:
		types := s.(*avro.UnionSchema).Types()
		i, err := r.long()
		if err != nil {
			return dst, err
		}
		if i < 0 || i >= int64(len(types)) {
			return dst, fmt.Errorf("union branch %d of %d", i, len(types))
		}
		branch := types[i]
		if branch.Type() == avro.Null {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '{')
		dst = appendJSONString(dst, []byte(branchName(branch)))
		dst = append(dst, ':')
		if dst, err = appendAvro(dst, branch, r, depth+1); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	}
	return dst, fmt.Errorf("unsupported schema type %s", s.Type())
}

// appendBlocks appends an array or map: blocks of items until a block of
// count 0. A count is checked against the bytes left when items take
// payload bytes; the output bound stops counts of items that take none.
func appendBlocks(dst []byte, open, close byte, r *avroReader, depth int, item func([]byte) ([]byte, error)) ([]byte, error) {
	dst = append(dst, open)
	first := true
	for {
		n, err := r.blockCount()
		if err != nil {
			return dst, err
		}
		if n == 0 {
			return append(dst, close), nil
		}
		for ; n > 0; n-- {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			start := r.pos
			if dst, err = item(dst); err != nil {
				return dst, err
			}
			if r.pos == start && len(dst) > r.maxOut {
				return dst, errAvroTooLarge
			}
		}
	}
}

// branchName is the name a union branch goes by in the JSON encoding: the
// full name of a named type, else the type's name (a logical type goes by
// its underlying type's).
func branchName(s avro.Schema) string {
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}

// appendCodePoints appends bytes as a JSON string whose characters are
// the code points 0-255, one per byte (the JSON encoding of bytes and
// fixed: ISO-8859-1).
func appendCodePoints(dst, b []byte) []byte {
	dst = append(dst, '"')
	for _, c := range b {
		if c < utf8.RuneSelf {
			dst = appendJSONChar(dst, c)
			continue
		}
		dst = utf8.AppendRune(dst, rune(c))
	}
	return append(dst, '"')
}

// appendJSONString appends UTF-8 text as a JSON string; invalid bytes
// become U+FFFD, as encoding/json does (jsontext.AppendChar).
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendJSONChar(dst, c)
			i++
			continue
		}
		var n int
		dst, n = jsontext.AppendChar(dst, s[i:])
		i += n
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

func appendJSONChar(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if c < 0x20 || c == 0x7f {
		return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(dst, c)
}

// appendFloat formats as encoding/json does; NaN and the infinities,
// which JSON cannot hold, become the strings Java's Double.toString
// gives them.
func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

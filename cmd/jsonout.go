package cmd

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/kseg/kseg/inspect/jsontext"
)

// The one JSON encoding of kseg's output: every command's -o json line,
// every MarshalJSON of a line type, and the JSON shown in table cells go
// through jsonEncoder (or marshalJSON, which uses it). It is
// encoding/json with HTML escaping off, so <, > and & are printed as they
// are (as the contract's examples and the goldens show them: a group id
// "a&b" is "a&b"), then jsontext.Valid: a byte that is not UTF-8 is
// \ufffd and U+2028 and U+2029 are escaped, also in JSON text taken as it
// is (a decoded JSON Schema value). Raw bytes are base64 fields
// (--encoding), never strings of bytes.

// jsonEncoder writes values as JSON, one per line, in kseg's encoding.
type jsonEncoder struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func newJSONEncoderTo(w io.Writer) *jsonEncoder {
	e := &jsonEncoder{w: w}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false) // keys and file names as they are: "<", "&"
	return e
}

// newJSONEncoder writes to ios.Out.
func newJSONEncoder(ios *IOStreams) *jsonEncoder { return newJSONEncoderTo(ios.Out) }

// marshal returns v's JSON text without a newline, valid until the next
// call.
func (e *jsonEncoder) marshal(v any) ([]byte, error) {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	return jsontext.Valid(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), nil
}

// Encode writes v's JSON text and a newline.
func (e *jsonEncoder) Encode(v any) error {
	b, err := e.marshal(v)
	if err != nil {
		return err
	}
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	_, err = e.w.Write([]byte{'\n'})
	return err
}

// marshalJSON is json.Marshal in kseg's encoding: for MarshalJSON methods
// and JSON shown in table cells.
func marshalJSON(v any) ([]byte, error) {
	var e jsonEncoder
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	b, err := e.marshal(v)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// marshalEither is the JSON of a line that is one of two kinds, each its
// own object (dump-log's batch or record, groups' summary or offset,
// retention's segment or partition, txns' open transaction or
// partition): a's when set, else b's.
func marshalEither[A, B any](a *A, b *B) ([]byte, error) {
	if a != nil {
		return marshalJSON(a)
	}
	return marshalJSON(b)
}

// appendJSONString appends s as kseg's JSON encoding writes a string
// (jsonout.go); anything but printable ASCII goes through it.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := marshalJSON(s) // a string always encodes
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

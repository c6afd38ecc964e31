// Package jsontext holds the one rule kseg's JSON text obeys wherever it
// comes from: valid UTF-8, with U+2028 and U+2029 escaped. encoding/json
// writes strings that way (a byte that is not UTF-8 as \ufffd, U+2028 and
// U+2029 escaped); JSON text taken as it is (a JSON Schema value, the
// JSON protojson writes, a json.RawMessage) is brought to the same rule
// by Valid. Both the decoders that return JSON text
// (inspect/schemaregistry) and the command line's one encoder apply it.
package jsontext

import (
	"bytes"
	"unicode/utf8"
)

var lineSeparator, paragraphSeparator = []byte("\u2028"), []byte("\u2029")

// Valid returns JSON text b with each byte that is not UTF-8 written as
// \ufffd and U+2028 and U+2029 escaped, as encoding/json writes them in
// strings: b itself when it needs nothing. Outside strings JSON text is
// ASCII, so only strings change, and the result is the same JSON value
// with those characters replaced.
func Valid(b []byte) []byte {
	if utf8.Valid(b) && !bytes.Contains(b, lineSeparator) && !bytes.Contains(b, paragraphSeparator) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r == '\u2028':
			out = append(out, `\u2028`...)
		case r == '\u2029':
			out = append(out, `\u2029`...)
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

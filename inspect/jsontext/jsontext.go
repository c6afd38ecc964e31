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
		var n int
		out, n = AppendChar(out, b[i:])
		i += n
	}
	return out
}

// AppendChar appends the character that starts s, which is not ASCII, as
// kseg's JSON strings hold it: a byte that is not UTF-8 as \ufffd, U+2028
// and U+2029 escaped, any other character as it is. It returns how many
// bytes of s it took. String encoders that handle ASCII themselves (the
// Avro decoder's) use it for the rest.
func AppendChar(dst, s []byte) ([]byte, int) {
	r, size := utf8.DecodeRune(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return append(dst, `\ufffd`...), 1
	case r == '\u2028':
		return append(dst, `\u2028`...), size
	case r == '\u2029':
		return append(dst, `\u2029`...), size
	}
	return append(dst, s[:size]...), size
}

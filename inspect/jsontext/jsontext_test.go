package jsontext

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// Valid writes a string's bytes as encoding/json does: for any bytes s,
// Valid of the string's text taken raw equals encoding/json's encoding of
// it (HTML escaping off), and the result is valid UTF-8 JSON.
func TestValidIsEncodingJSONsStringRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "é", "\xff", "\xe2\x80", "\u2028", "\u2029", "&", "<", "\U0001F600", "\xc3", "z"}
	for range 2000 {
		var s []byte
		for range rng.IntN(12) {
			s = append(s, alphabet[rng.IntN(len(alphabet))]...)
		}
		raw := append(append([]byte(`{"k":"`), s...), `"}`...)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]string{"k": string(s)}); err != nil {
			t.Fatal(err)
		}
		got := Valid(raw)
		if !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Fatalf("%q: got %s, encoding/json writes %s", s, got, want.Bytes())
		}
		if !utf8.Valid(got) || !json.Valid(got) {
			t.Fatalf("%q: %q is not valid UTF-8 JSON", s, got)
		}
	}
	if b := []byte(`{"a":"plain"}`); &Valid(b)[0] != &b[0] {
		t.Error("valid text is copied")
	}
}

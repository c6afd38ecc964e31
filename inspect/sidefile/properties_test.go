package sidefile

import (
	"errors"
	"testing"
)

// Properties.load's rules: separators, comments, continuations, escapes,
// the last value of a key.
func TestParseProperties(t *testing.T) {
	in := "# c\n! c\n\n  a=1\nb : 2\nc 3\nd\\=x=4\ne=multi\\\n   line\\\n  end\nf=\\u0041\\t\\z\ng=\na=5\r\nh:=6\nlast=\\\n"
	p, err := ParseProperties("f", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Property{
		{Key: "a", Value: "5", Line: 13}, {Key: "b", Value: "2", Line: 5}, {Key: "c", Value: "3", Line: 6},
		{Key: "d=x", Value: "4", Line: 7}, {Key: "e", Value: "multilineend", Line: 8}, {Key: "f", Value: "A\tz", Line: 11},
		{Key: "g", Value: "", Line: 12}, {Key: "h", Value: "=6", Line: 14}, {Key: "last", Value: "", Line: 15},
	}
	if len(p.List) != len(want) {
		t.Fatalf("%d keys: %+v", len(p.List), p.List)
	}
	for i, w := range want {
		g := p.List[i]
		if g.Key != w.Key || g.Value != w.Value || g.Line != w.Line {
			t.Errorf("key %d: %+v, want %+v", i, g, w)
		}
	}
	if _, err := ParseProperties("f", []byte("x=1\ny=\\u00zz\n")); !errors.Is(err, ErrCheckpointFormat) {
		t.Errorf("malformed \\u: %v", err)
	}
}

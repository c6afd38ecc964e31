package cmd

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// strictLines parses JSON Lines as a strict parser does (Python's
// json.loads of the bytes): every line valid UTF-8 and valid JSON. It
// returns each line's fields, raw.
func strictLines(t *testing.T, what, out string) []map[string]json.RawMessage {
	t.Helper()
	var lines []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !utf8.ValidString(l) {
			t.Errorf("%s: a line is not valid UTF-8: %q", what, l)
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%s: %v: %q", what, err, l)
		}
		lines = append(lines, o)
	}
	return lines
}

// TestJSONIsValidUTF8AndEscapedAlike is issue 27's items 3 and 4: bytes
// that are not UTF-8 (in a JSON Schema value, a record key, a header
// name) and HTML characters (& < >) in records of magic 1 and 2, printed
// by dump-log --records and find -o json. Every line is valid UTF-8 JSON
// (dump-log printed the JSON Schema value's bytes raw), the HTML
// characters are printed as they are in both (dump-log escaped them as
// \u0026, \u003c, \u003e in magic 1 records, find did not), and the same
// record gives byte-identical key, value, headers and decoded fields in
// both commands.
func TestJSONIsValidUTF8AndEscapedAlike(t *testing.T) {
	t.Chdir(t.TempDir())
	sideGen(t, "_schemas-0", kafkagen.Options{Topic: "_schemas", Records: []kafkagen.KeyValue{
		kafkagen.SchemaRecord(kafkagen.RegisteredSchema{Subject: "orders-value", Version: 1, ID: 4, SchemaType: "JSON", Schema: `{"type":"object"}`}),
	}})
	notUTF8 := kafkagen.WireFormat(4, nil, []byte("{\"note\":\"caf\xe9 & <b>\",\"raw\":\"\xff\xfe\",\"sep\":\"a\u2028b\"}"))
	gentest.WriteLogs(t, "orders-0", map[int64][]byte{0: gentest.Concat(
		gentest.LegacyMessage(0, 1, 1700000000000, []byte("a & b <c>")),
		gentest.LegacyMessage(1, 1, 1700000000001, notUTF8),
	)})
	gentest.WriteLogs(t, "events-0", map[int64][]byte{0: kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1, LeaderEpoch: -1, Records: []kafkagen.Record{
		{Timestamp: 1700000000000, Key: []byte("\xff<key>"), Value: notUTF8, Headers: []kafkagen.RecordHeader{{Key: "n\xffame&", Value: []byte("v & w")}}},
		{OffsetDelta: 1, Timestamp: 1700000000001, Key: []byte("a & b"), Value: []byte("x < y")},
	}})})
	for _, dir := range []string{"orders-0", "events-0"} {
		dump := sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", dir})
		found := sideRun(t, 0, []string{"-o", "json", "find", dir, "--from-offset", "0"})
		for _, out := range []string{dump, found} {
			if strings.Contains(out, `\u0026`) || strings.Contains(out, `\u003c`) || strings.Contains(out, `\u003e`) {
				t.Errorf("%s: HTML characters escaped: %s", dir, out)
			}
		}
		var records []map[string]json.RawMessage
		for _, l := range strictLines(t, dir+" dump-log", dump) {
			if string(l["kind"]) == `"record"` {
				records = append(records, l)
			}
		}
		matches := strictLines(t, dir+" find", found)
		if len(matches) != len(records) || len(records) != 2 {
			t.Fatalf("%s: dump-log printed %d records, find %d, want 2", dir, len(records), len(matches))
		}
		for i, r := range records {
			for _, f := range []string{"offset", "key", "value", "headers", "decoded"} {
				if !bytes.Equal(r[f], matches[i][f]) {
					t.Errorf("%s record %d: %s differs:\n dump-log %s\n find     %s", dir, i, f, r[f], matches[i][f])
				}
			}
		}
		if d := records[len(records)-map[string]int{"orders-0": 1, "events-0": 2}[dir]]["decoded"]; !bytes.Contains(d, []byte(`"note":"caf\ufffd & <b>"`)) {
			t.Errorf("%s: the JSON Schema value's invalid byte is not U+FFFD: %s", dir, d)
		}
	}
}

// TestOneJSONEncoder: nothing in cmd writes JSON but the one encoder
// (jsonout.go): no json.Marshal, MarshalIndent, NewEncoder, Compact or
// Indent elsewhere. dump-index's hand-written lines (appendJSON) write
// strings through it and are held equal to it by their own test.
func TestOneJSONEncoder(t *testing.T) {
	pending := map[string]int{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "jsonout.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ast.Inspect(f, func(node ast.Node) bool {
			sel, ok := node.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "json" {
				switch sel.Sel.Name {
				case "Marshal", "MarshalIndent", "NewEncoder", "Compact", "Indent", "HTMLEscape":
					n++
					if n > pending[name] {
						t.Errorf("%s: json.%s: JSON goes through the one encoder (jsonout.go)", fset.Position(sel.Pos()), sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
}

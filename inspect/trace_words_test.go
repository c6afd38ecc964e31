package inspect_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
)

// Every TraceWhy inspect declares is told in words: none falls through to
// Message's placeholder, and a batch verdict to Verdict's.
func TestTraceWordsForEveryWhy(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "trace.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var whys []string
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "TraceWhy" {
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						whys = append(whys, strings.Trim(lit.Value, `"`))
					}
				}
			}
		}
		return true
	})
	if len(whys) < 30 {
		t.Fatalf("found %d TraceWhy constants in inspect/trace.go", len(whys))
	}
	slot, n := 3, int64(7)
	for _, w := range whys {
		s := inspect.TraceStep{Why: inspect.TraceWhy(w), Slot: &slot, Position: &n, BaseOffset: &n, LastOffset: &n, MaxTS: &n}
		if isBatchWhy(w) {
			if v := s.Verdict(); v == w {
				t.Errorf("batch verdict %s has no words", w)
			}
			continue
		}
		s.Step = inspect.StepNote
		if msg := s.Message(); strings.HasSuffix(msg, "("+w+")") {
			t.Errorf("%s has no words: %q", w, msg)
		}
	}
}

// isBatchWhy: the whys of batch steps, told by Verdict.
func isBatchWhy(w string) bool {
	switch inspect.TraceWhy(w) {
	case inspect.WhyLastOffsetReaches, inspect.WhyLastOffsetBelow, inspect.WhyMaxTSBelow, inspect.WhyRecordReaches,
		inspect.WhyNoRecordReaches, inspect.WhyMaxTSOther, inspect.WhyMagic0, inspect.WhyFirstMaxRecord:
		return true
	}
	return false
}

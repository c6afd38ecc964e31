package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRaceWhereGoroutinesAre holds make test to its promise of the race
// detector where the code runs goroutines: every package with tests whose
// own source starts a goroutine (a go statement) or shares memory between
// goroutines (imports sync or sync/atomic) is in the Makefile's
// RACE_PACKAGES, but cmd, whose goroutines are raced through
// RACE_CMD_TESTS, each of whose names must start a test of cmd. Nothing
// listed is missing from the module.
func TestRaceWhereGoroutinesAre(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	raced := strings.Fields(makeVariable(t, mk, "RACE_PACKAGES"))
	pkgs := packages(t)
	for _, dir := range raced {
		if _, ok := pkgs[module+"/"+dir]; !ok {
			t.Errorf("RACE_PACKAGES lists %s, not a package of the module", dir)
		}
	}
	concurrent := 0
	for pkg := range pkgs {
		dir := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if dir == "" {
			dir = "."
		}
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(bp.TestGoFiles)+len(bp.XTestGoFiles) == 0 {
			continue // nothing of its own to run
		}
		why := ""
		for _, name := range bp.GoFiles {
			if why = concurrency(t, filepath.Join(dir, name)); why != "" {
				break
			}
		}
		if why == "" {
			continue
		}
		concurrent++
		if dir != "cmd" && !slices.Contains(raced, dir) {
			t.Errorf("%s: %s, but RACE_PACKAGES does not list %s: make test runs its tests without the race detector", pkg, why, dir)
		}
	}
	if concurrent < 3 {
		t.Fatalf("only %d packages with goroutines found: the scan does not work", concurrent)
	}
	var tests []string
	files, _ := filepath.Glob(filepath.Join("cmd", "*_test.go"))
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			tests = append(tests, string(m[1]))
		}
	}
	for _, name := range strings.Split(makeVariable(t, mk, "RACE_CMD_TESTS"), "|") {
		if !slices.ContainsFunc(tests, func(test string) bool { return strings.HasPrefix(test, name) }) {
			t.Errorf("RACE_CMD_TESTS names %s, which starts no test of cmd", name)
		}
	}
}

// makeVariable returns the value of a "NAME := value" line of a Makefile.
func makeVariable(t *testing.T, mk []byte, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	return strings.TrimSpace(string(m[1]))
}

// concurrency says why the Go file at path runs code on several
// goroutines: its first go statement, or its import of sync or
// sync/atomic; "" when it does neither.
func concurrency(t *testing.T, path string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "sync" || p == "sync/atomic" {
			return path + " imports " + p
		}
	}
	why := ""
	ast.Inspect(f, func(n ast.Node) bool {
		if g, ok := n.(*ast.GoStmt); ok && why == "" {
			why = fset.Position(g.Pos()).String() + " starts a goroutine"
		}
		return why == ""
	})
	return why
}

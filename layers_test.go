package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kseg/kseg"

// packages returns the module's packages (directories with non-test Go
// files for this platform), by import path, with their direct imports of
// other packages of the module.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		ip := module
		if path != "." {
			ip += "/" + filepath.ToSlash(path)
		}
		var own []string
		for _, imp := range bp.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				own = append(own, imp)
			}
		}
		pkgs[ip] = own
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// deps returns every package of the module that pkg imports, directly or not.
func deps(pkgs map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		for _, d := range pkgs[p] {
			if !seen[d] {
				seen[d] = true
				visit(d)
			}
		}
	}
	visit(pkg)
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// under reports whether pkg is the package dir of the module or one below it.
func under(pkg, dir string) bool {
	p := module + "/" + dir
	return pkg == p || strings.HasPrefix(pkg, p+"/")
}

// TestLayersPointOneWay holds the arrows of docs/design.md:
// cmd → {verify, rebuild} → inspect → {inspect/record, inspect/sidefile}
// → inspect/fileio, and inspect → indexfmt, verify and rebuild
// siblings that do not import each other (what both need of broker recovery
// is in inspect/recovery), and nothing but main importing cmd. Test files
// are not counted: their imports do not reach the binary.
func TestLayersPointOneWay(t *testing.T) {
	pkgs := packages(t)
	for _, want := range []string{"cmd", "verify", "rebuild", "inspect", "inspect/recovery", "inspect/record", "inspect/sidefile", "inspect/fileio", "indexfmt"} {
		if _, ok := pkgs[module+"/"+want]; !ok {
			t.Fatalf("package %s not found: the walk over the module is broken (found %v)", want, pkgs)
		}
	}
	// Known arrows, so that an empty graph cannot pass.
	for _, arrow := range [][2]string{{"verify", "inspect"}, {"rebuild", "inspect/recovery"}, {"inspect", "indexfmt"}, {"inspect", "inspect/record"}, {"inspect", "inspect/sidefile"}, {"inspect/record", "inspect/fileio"}, {"cmd", "verify"}} {
		if !slices.Contains(deps(pkgs, module+"/"+arrow[0]), module+"/"+arrow[1]) {
			t.Errorf("%s does not reach %s: the import graph is not read", arrow[0], arrow[1])
		}
	}
	// forbidden[a] lists the directories a's packages must not reach.
	forbidden := map[string][]string{
		"verify":   {"rebuild", "cmd"},
		"rebuild":  {"verify", "cmd"},
		"inspect":  {"verify", "rebuild", "cmd"},
		"indexfmt": {"inspect", "verify", "rebuild", "cmd"},
	}
	for pkg := range pkgs {
		for from, bad := range forbidden {
			if !under(pkg, from) {
				continue
			}
			for _, d := range deps(pkgs, pkg) {
				for _, b := range bad {
					if under(d, b) {
						t.Errorf("%s imports %s (directly or not): %s must not depend on %s (docs/design.md)", pkg, d, from, b)
					}
				}
			}
		}
		// The layers under inspect's face reach only the ones below them.
		if below, ok := lowLayers[strings.TrimPrefix(pkg, module+"/")]; ok {
			for _, d := range deps(pkgs, pkg) {
				if !slices.Contains(below, strings.TrimPrefix(d, module+"/")) {
					t.Errorf("%s imports %s (directly or not): it may reach only %v (docs/design.md)", pkg, d, below)
				}
			}
		}
		if pkg != module && !under(pkg, "cmd") {
			for _, d := range deps(pkgs, pkg) {
				if under(d, "cmd") {
					t.Errorf("%s imports %s: only main imports cmd", pkg, d)
				}
			}
		}
	}
}

// lowLayers are the packages below inspect's face, each with the only
// packages of the module it may reach: the log scan engine stands on the
// batch codec, the batch codec and the side-file
// formats stand on file access (and the codec on the XXH32 leaf it shares
// with the generator), file access on the index formats (it reads their
// slots for indexfmt's searches), and the index formats on nothing.
var lowLayers = map[string][]string{
	"inspect/internal/scan": {"inspect/record", "inspect/fileio", "indexfmt", "inspect/internal/xxh32"},
	"inspect/record":        {"inspect/fileio", "indexfmt", "inspect/internal/xxh32"},
	"inspect/sidefile":      {"inspect/fileio", "indexfmt"},
	"inspect/fileio":        {"indexfmt"},
	"indexfmt":              {},
}

// TestNothingBelowCmdPrintsOrExits scans the non-test source of every
// package but cmd and the programs (main packages) for writes to the process's stdout or stderr
// and for exits: os.Stdout, os.Stderr, os.Exit, fmt.Print*, the log
// package, and the print/println built-ins. Libraries return values and
// errors; cmd renders them.
func TestNothingBelowCmdPrintsOrExits(t *testing.T) {
	pkgs := packages(t)
	fset := token.NewFileSet()
	scanned := 0
	for pkg := range pkgs {
		if pkg == module || under(pkg, "cmd") {
			continue
		}
		dir := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range bp.GoFiles {
			path := filepath.Join(dir, name)
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			scanned++
			for _, v := range forbiddenOutput(f) {
				t.Errorf("%s: %s below cmd", fset.Position(v.pos), v.what)
			}
		}
	}
	if scanned < 20 {
		t.Fatalf("only %d files scanned", scanned)
	}
}

type violation struct {
	pos  token.Pos
	what string
}

// forbiddenOutput lists f's uses of os.Stdout, os.Stderr, os.Exit,
// fmt.Print*, the log package and print/println, by the names f imports
// them under.
func forbiddenOutput(f *ast.File) []violation {
	names := map[string]string{} // local name → import path
	var out []violation
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch path {
		case "os", "fmt", "log", "log/slog":
			names[local] = path
			if path == "log" || path == "log/slog" {
				out = append(out, violation{imp.Pos(), "import of " + path})
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok || id.Obj != nil {
				return true
			}
			switch names[id.Name] {
			case "os":
				if n.Sel.Name == "Stdout" || n.Sel.Name == "Stderr" || n.Sel.Name == "Exit" {
					out = append(out, violation{n.Pos(), "os." + n.Sel.Name})
				}
			case "fmt":
				if strings.HasPrefix(n.Sel.Name, "Print") {
					out = append(out, violation{n.Pos(), "fmt." + n.Sel.Name})
				}
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Obj == nil && (id.Name == "print" || id.Name == "println") {
				out = append(out, violation{n.Pos(), id.Name})
			}
		}
		return true
	})
	return out
}

// The scanner itself finds what it looks for, under renamed imports too.
func TestForbiddenOutputFinds(t *testing.T) {
	src := `package x
import (
	o "os"
	"fmt"
	"log"
)
func f() {
	fmt.Println("a")
	fmt.Fprintln(o.Stderr, "b")
	o.Exit(2)
	println("c")
	log.Print("d")
	fmt.Sprintf("fine")
}`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range forbiddenOutput(f) {
		got = append(got, v.what)
	}
	want := []string{"import of log", "fmt.Println", "os.Stderr", "os.Exit", "println"}
	if !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
}

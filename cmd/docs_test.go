package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// docsDir is the module's docs/, seen from cmd/.
var docsDir = filepath.Join("..", "docs")

// The committed command reference is what the commands say now.
func TestDocsAreCurrent(t *testing.T) {
	tmp := t.TempDir()
	if err := WriteDocs(tmp); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"reference", "man"} {
		want := listFiles(t, filepath.Join(tmp, sub))
		got := listFiles(t, filepath.Join(docsDir, sub))
		if len(want) == 0 {
			t.Fatalf("WriteDocs wrote nothing under %s", sub)
		}
		for name, w := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("docs/%s/%s is missing: run make docs", sub, name)
			case !bytes.Equal(g, w):
				t.Errorf("docs/%s/%s is out of date: run make docs", sub, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("docs/%s/%s documents no command: run make docs", sub, name)
			}
		}
	}
}

// Every command has a page of each kind, and the pages link to each other.
func TestDocsCoverEveryCommand(t *testing.T) {
	tmp := t.TempDir()
	if err := WriteDocs(tmp); err != nil {
		t.Fatal(err)
	}
	root := docsRoot()
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	index, err := os.ReadFile(filepath.Join(tmp, "reference", "kseg.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		for _, f := range []string{filepath.Join("reference", "kseg_"+n+".md"), filepath.Join("man", "kseg-"+n+".1")} {
			if _, err := os.Stat(filepath.Join(tmp, f)); err != nil {
				t.Errorf("no %s for kseg %s", f, n)
			}
		}
		if !bytes.Contains(index, []byte("(kseg_"+n+".md)")) {
			t.Errorf("kseg.md does not link to kseg %s", n)
		}
	}
	man, err := os.ReadFile(filepath.Join(tmp, "man", "kseg-ls.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(man, []byte(`.TH "KSEG" "1" "Jan 2026" "kseg" "kseg manual"`)) || !bytes.Contains(man, []byte("padded-index")) {
		t.Errorf("kseg-ls.1 lacks its header or its text:\n%s", man[:min(len(man), 400)])
	}
}

func listFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

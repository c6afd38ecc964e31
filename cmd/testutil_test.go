package cmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// Shared test helpers for every command's tests.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden from the current output")

// goldenDir is the module's top-level testdata/golden, seen from cmd/.
var goldenDir = filepath.Join("..", "testdata", "golden")

// realFixtures is the directory of partition data written by real brokers,
// beside the module (../shared/fixtures/real from the module root). Tests
// read it in place, never copy it.
var realFixtures = fixtures.Dir()

// requireRealFixtures returns realFixtures, or skips the test when the
// directory is absent.
func requireRealFixtures(t testing.TB) string {
	t.Helper()
	return fixtures.Root(t)
}

// runKseg runs kseg in process with the given arguments over test streams
// and returns what it wrote and its exit code. setup, if not nil, adjusts
// the streams first (TTY state, stdin).
func runKseg(t testing.TB, setup func(*IOStreams), args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := Test()
	if setup != nil {
		setup(ios)
	}
	code = execute(NewRootCommand(ios), ios, args)
	return out.String(), errOut.String(), code
}

// hashTree returns the SHA-256 of every regular file under dir, keyed by its
// path relative to dir (symbolic links by their target text), for "inputs
// unchanged" assertions:
//
//	before := hashTree(t, dir)
//	... run a read-only command on dir ...
//	assertTreeUnchanged(t, dir, before)
func hashTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	sums := make(map[string]string)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			sums[rel] = hex.EncodeToString(sum[:])
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			sums[rel] = "symlink:" + target
		case d.IsDir():
			sums[rel+string(filepath.Separator)] = "dir"
		}
		return nil
	})
	if err != nil {
		t.Fatalf("hashing %s: %v", dir, err)
	}
	return sums
}

// assertTreeUnchanged fails the test if any file under dir was added,
// removed or changed since before was taken with hashTree.
func assertTreeUnchanged(t testing.TB, dir string, before map[string]string) {
	t.Helper()
	after := hashTree(t, dir)
	for name, sum := range before {
		switch got, ok := after[name]; {
		case !ok:
			t.Errorf("%s: removed", name)
		case got != sum:
			t.Errorf("%s: changed", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: added", name)
		}
	}
}

// assertGolden compares got with testdata/golden/<name>; with -update it
// writes got there instead. Review golden changes in the diff.
func assertGolden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test ./cmd -run '%s' -update to create it): %v", t.Name(), err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// tableWidths are the terminal widths default tables are held to in
// golden files: a narrow terminal and a wide one (0: no terminal, no limit).
var tableWidths = []int{0, 80, 160}

// assertTableGoldens runs kseg with args in dir as a table at each of
// tableWidths and as -o wide, and compares each output with
// <name>[-<width>].txt and <name>-wide.txt. The wide table is the same at
// every width (it is never fitted). It returns the outputs by width.
func assertTableGoldens(t *testing.T, dir, name string, wantCode int, args ...string) map[int]string {
	t.Helper()
	outs := map[int]string{}
	for _, w := range tableWidths {
		out, stderr, code := runInWith(t, dir, func(ios *IOStreams) { ios.SetTerminalWidth(w); ios.SetNow(tickingClock(1500 * time.Millisecond)) }, args...)
		if code != wantCode {
			t.Fatalf("%v at %d columns: exit %d, want %d: %s", args, w, code, wantCode, stderr)
		}
		file := name + ".txt"
		if w > 0 {
			file = fmt.Sprintf("%s-%d.txt", name, w)
		}
		assertGolden(t, file, out)
		outs[w] = out
	}
	var wide []string
	for _, w := range []int{80, 160} {
		out, _, _ := runInWith(t, dir, func(ios *IOStreams) { ios.SetTerminalWidth(w); ios.SetNow(tickingClock(1500 * time.Millisecond)) }, append([]string{"-o", "wide"}, args...)...)
		wide = append(wide, out)
	}
	if wide[0] != wide[1] {
		t.Errorf("%v -o wide depends on the terminal width:\n%s\n%s", args, wide[0], wide[1])
	}
	assertGolden(t, name+"-wide.txt", wide[0])
	return outs
}

// tickingClock is a clock for golden outputs: it starts at
// 2026-01-02T03:04:05Z and each reading is step after the one before, so
// elapsed times and rates are the same on every run.
func tickingClock(step time.Duration) func() time.Time {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t := now
		now = now.Add(step)
		return t
	}
}

// runInWith is runIn with the streams adjusted by setup first.
func runInWith(t *testing.T, dir string, setup func(*IOStreams), args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Run(strings.Join(args, " "), func(t *testing.T) {
		t.Chdir(dir)
		stdout, stderr, code = runKseg(t, setup, args...)
	})
	return stdout, stderr, code
}

// assertLinesFit fails the test if a line of out is wider than width.
func assertLinesFit(t *testing.T, what, out string, width int) {
	t.Helper()
	for line := range strings.Lines(out) {
		if w := displayWidth(strings.TrimSuffix(line, "\n")); w > width {
			t.Errorf("%s: a line of %d columns on a terminal of %d: %q", what, w, width, line)
		}
	}
}

// assertColumnsMatchJSON checks that a row's table/CSV view says what its
// JSON says: every column name is a field of sample's JSON object (a dotted
// name walks into nested objects), and every cell is that field's value
// written as text (null as the empty cell). Use a sample whose fields are
// all set to distinct values.
func assertColumnsMatchJSON[T any](t testing.TB, sample T, columns []column[T]) {
	t.Helper()
	b, err := json.Marshal(sample)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("%T does not encode as a JSON object: %v", sample, err)
	}
	for _, c := range columns {
		if c.view == viewTable {
			continue // a view for people, not a JSON field
		}
		v, err := jsonField(obj, c.name)
		if err != nil {
			t.Errorf("column %q: %v in %s", c.name, err, b)
			continue
		}
		var want string
		switch v := v.(type) {
		case nil:
			want = ""
		case string:
			want = v
		case json.Number:
			want = v.String()
		case bool:
			want = "false"
			if v {
				want = "true"
			}
		default:
			t.Errorf("column %q: field is not a scalar in %s", c.name, b)
			continue
		}
		if got := c.cell(sample); got != want {
			t.Errorf("column %q: cell %q, JSON says %q", c.name, got, want)
		}
	}
}

// jsonField walks a dotted name ("batch.base_offset") into a decoded object.
func jsonField(obj map[string]any, name string) (any, error) {
	var v any = obj
	for _, part := range strings.Split(name, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is not inside an object", part)
		}
		if v, ok = m[part]; !ok {
			return nil, fmt.Errorf("no field %q", part)
		}
	}
	return v, nil
}

// tbRecorder captures a helper's failures instead of failing the test.
type tbRecorder struct {
	testing.TB
	failures []string
}

func (r *tbRecorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func TestHashTreeSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("orders-0/00000000000000000000.log", "log bytes")
	write("orders-0/00000000000000000000.index", "")
	write("orders-1/00000000000000000000.log", "other")
	if err := os.Symlink("00000000000000000000.log", filepath.Join(dir, "orders-1", "link")); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dir)
	if len(before) != 7 { // 3 dirs (the root included), 3 files, 1 link
		t.Fatalf("hashTree found %d entries: %v", len(before), before)
	}
	check := func(what string, want ...string) {
		t.Helper()
		r := &tbRecorder{TB: t}
		assertTreeUnchanged(r, dir, before)
		if strings.Join(r.failures, "|") != strings.Join(want, "|") {
			t.Errorf("%s: failures %q, want %q", what, r.failures, want)
		}
		before = hashTree(t, dir)
	}
	check("nothing done")
	write("orders-0/00000000000000000000.log", "log bytez")
	check("one byte changed", filepath.FromSlash("orders-0/00000000000000000000.log")+": changed")
	write("orders-0/00000000000000000000.index.bak", "")
	check("file added", filepath.FromSlash("orders-0/00000000000000000000.index.bak")+": added")
	if err := os.Remove(filepath.Join(dir, "orders-1", "00000000000000000000.log")); err != nil {
		t.Fatal(err)
	}
	check("file removed", filepath.FromSlash("orders-1/00000000000000000000.log")+": removed")
	if err := os.Remove(filepath.Join(dir, "orders-1", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(dir, "orders-1", "link")); err != nil {
		t.Fatal(err)
	}
	check("link retargeted", filepath.FromSlash("orders-1/link")+": changed")
}

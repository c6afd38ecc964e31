//go:build unix

package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// genDamaged writes data/orders-0 (3 segments, transactions) and damages
// it: segment 0's .index zero-padded, segment 1's .timeindex removed. It
// returns the data and partition directories.
func genDamaged(t *testing.T) (dataDir, dir string) {
	t.Helper()
	dataDir = filepath.Join(t.TempDir(), "data")
	dir = filepath.Join(dataDir, "orders-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 5, Segments: 3, Batches: 50, Transactions: true, ValueSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	idx := m.IndexPath(&m.Segments[0])
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx, append(b, make([]byte, 800)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.TimeIndexPath(&m.Segments[1])); err != nil {
		t.Fatal(err)
	}
	return dataDir, dir
}

// TestRebuildDryRunOutputs pins the three output forms of a dry run (no
// paths in them: nothing is written) and checks the JSON lines carry
// exactly the contract's fields, in order.
func TestRebuildDryRunOutputs(t *testing.T) {
	dataDir, dir := genDamaged(t)
	before := hashTree(t, dataDir)
	for _, f := range []string{"table", "json", "csv"} {
		out, errOut, code := runKseg(t, nil, "rebuild", "--dry-run", "-o", f, dir)
		if code != 0 || errOut != "" {
			t.Fatalf("-o %s: exit %d, stderr %q", f, code, errOut)
		}
		assertGolden(t, "rebuild-dry-run."+f, out)
		if f != "json" {
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			dec := json.NewDecoder(strings.NewReader(line))
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k.(string))
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					t.Fatal(err)
				}
			}
			want := "segment index_entries timeindex_entries txnindex_entries valid_bytes truncated_bytes changed written"
			if got := strings.Join(keys, " "); got != want {
				t.Errorf("JSON fields %q, want %q", got, want)
			}
			if !strings.HasSuffix(line, `"written":[]}`) {
				t.Errorf("dry run line %s: written must be an empty list", line)
			}
		}
	}
	assertTreeUnchanged(t, dataDir, before)
}

func TestRebuildColumnsMatchJSON(t *testing.T) {
	sample := rebuildJSON{Segment: "00000000000000000368.log", IndexEntries: 1, TimeIndexEntries: 2, TxnIndexEntries: 3,
		ValidBytes: 4, TruncatedBytes: 5, Changed: true, Written: []string{"a b/x.index", "y.index.bak"}}
	cols := rebuildColumns[:len(rebuildColumns)-1]
	assertColumnsMatchJSON(t, sample, cols)
	last := rebuildColumns[len(rebuildColumns)-1]
	if last.name != "written" || last.cell(sample) != "a b/x.index y.index.bak" {
		t.Errorf("written column %q: %q", last.name, last.cell(sample))
	}
}

// TestRebuildInPlace runs the real command on a damaged partition: the
// damaged files are rebuilt (with backups), the rest is untouched, a second
// run changes nothing.
func TestRebuildInPlace(t *testing.T) {
	_, dir := genDamaged(t)
	out, errOut, code := runKseg(t, nil, "rebuild", "-o", "json", dir)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rows []rebuildJSON
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r rebuildJSON
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 3 || !rows[0].Changed || !rows[1].Changed || rows[2].Changed {
		t.Fatalf("rows %+v", rows)
	}
	if want := filepath.Join(dir, "00000000000000000000.index"); len(rows[0].Written) != 2 || rows[0].Written[0] != want || rows[0].Written[1] != want+".bak" {
		t.Errorf("written %q", rows[0].Written)
	}
	before := hashTree(t, dir)
	out, _, code = runKseg(t, nil, "rebuild", "-o", "json", dir)
	if code != 0 || strings.Contains(out, `"changed":true`) {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
	assertTreeUnchanged(t, dir, before)
}

// TestRebuildLock: while a process holds the data directory's .lock (as a
// running broker does), an in-place rebuild exits 2 and writes nothing;
// --force, --out and --dry-run go ahead.
func TestRebuildLock(t *testing.T) {
	dataDir, dir := genDamaged(t)
	lock := filepath.Join(dataDir, ".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dataDir)
	out, errOut, code := runKseg(t, nil, "rebuild", dir)
	if code != exitFailed || out != "" || !strings.Contains(errOut, lock+" is locked") || !strings.Contains(errOut, "--force") {
		t.Errorf("locked: exit %d, stdout %q, stderr %q; want 2 and a message naming %s", code, out, errOut, lock)
	}
	assertTreeUnchanged(t, dataDir, before)

	if _, errOut, code := runKseg(t, nil, "rebuild", "--dry-run", dir); code != 0 {
		t.Errorf("--dry-run while locked: exit %d %s", code, errOut)
	}
	if _, errOut, code := runKseg(t, nil, "rebuild", "--out", t.TempDir(), dir); code != 0 {
		t.Errorf("--out while locked: exit %d %s", code, errOut)
	}
	assertTreeUnchanged(t, dataDir, before)
	out, errOut, code = runKseg(t, nil, "rebuild", "--force", "-o", "json", dir)
	if code != 0 || !strings.Contains(out, `"changed":true`) {
		t.Errorf("--force: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

func TestRebuildArguments(t *testing.T) {
	_, dir := genDamaged(t)
	cases := []struct {
		args   []string
		stderr string
	}{
		{[]string{"rebuild"}, "accepts 1 arg(s), received 0"},
		{[]string{"rebuild", dir, dir}, "accepts 1 arg(s), received 2"},
		{[]string{"rebuild", "--index-interval-bytes", "-1", dir}, "--index-interval-bytes must be >= 0, not -1"},
		{[]string{"rebuild", "--index-interval-bytes", "many", dir}, `invalid argument "many"`},
		{[]string{"rebuild", "--no-backup", "--out", t.TempDir(), dir}, "--no-backup applies to in-place rebuilds"},
		{[]string{"rebuild", "--out=", dir}, "--out needs a directory"},
		{[]string{"rebuild", filepath.Join(dir, "nope")}, "no such file or directory"},
		{[]string{"rebuild", "--out", dir, dir}, "inside"},
	}
	before := hashTree(t, dir)
	for _, c := range cases {
		out, errOut, code := runKseg(t, nil, c.args...)
		if code != exitFailed || out != "" || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errOut, c.stderr)
		}
	}
	assertTreeUnchanged(t, dir, before)
}

// TestRebuildCorruptLog: recovery stops at a zero-filled tail; the warning
// says where; --truncate-log cuts it and saves the cut bytes.
func TestRebuildCorruptLog(t *testing.T) {
	_, dir := genDamaged(t)
	log := filepath.Join(dir, "00000000000000000000.log")
	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append(bytes.Clone(orig), make([]byte, 5000)...)
	if err := os.WriteFile(log, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runKseg(t, nil, "rebuild", "--dry-run", "-o", "json", log)
	if code != 0 || !strings.Contains(out, `"truncated_bytes":5000`) ||
		!strings.Contains(errOut, "warning: 00000000000000000000.log: indexes cover the first") || !strings.Contains(errOut, "--truncate-log") {
		t.Errorf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = runKseg(t, nil, "rebuild", "--truncate-log", "-o", "json", log)
	saved := log + ".truncated-at-" + itoa(len(orig))
	if code != 0 || !strings.Contains(out, saved) || !strings.Contains(errOut, "5000 bytes cut at byte") {
		t.Fatalf("--truncate-log: exit %d\n%s%s", code, out, errOut)
	}
	got, _ := os.ReadFile(log)
	tail, _ := os.ReadFile(saved)
	if !bytes.Equal(got, orig) || !bytes.Equal(append(got, tail...), damaged) {
		t.Errorf("log %d bytes + saved %d bytes: not the original split at %d", len(got), len(tail), len(orig))
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestRebuildRealFixtures: rebuilding every real data directory into --out
// works and leaves the fixtures as they were.
func TestRebuildRealFixtures(t *testing.T) {
	root := requireRealFixtures(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, root)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		out := t.TempDir()
		stdout, errOut, code := runKseg(t, nil, "rebuild", "-o", "json", "--out", out, filepath.Join(root, e.Name()))
		if code != 0 || strings.Contains(errOut, "warning: 0") {
			t.Errorf("%s: exit %d\n%s", e.Name(), code, errOut)
		}
		if n := strings.Count(stdout, "\n"); n == 0 {
			t.Errorf("%s: no segment rebuilt", e.Name())
		}
	}
	assertTreeUnchanged(t, root, before)
}

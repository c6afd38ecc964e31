package rebuild

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/recovery"
)

// genPartition writes a generated partition data/<name> and returns the
// data directory, the partition directory and the manifest.
func genPartition(t *testing.T, name string, o kafkagen.Options) (dataDir, dir string, m *kafkagen.Manifest) {
	t.Helper()
	dataDir = filepath.Join(t.TempDir(), "data")
	dir = filepath.Join(dataDir, name)
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatalf("kafkagen.Generate: %v", err)
	}
	return dataDir, dir, m
}

func resolve(t *testing.T, path string) *inspect.Target {
	t.Helper()
	tg, err := inspect.Resolve(path)
	if err != nil {
		t.Fatalf("Resolve(%s): %v", path, err)
	}
	return tg
}

// snapshot hashes every file under root (relative name -> sha256) and
// records symlinks by their target.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// damage leaves a generated 3-segment partition as an unclean broker
// might: segment 0 correct, segment 1's .index zero-padded and its
// .timeindex deleted, segment 2's .timeindex with a wrong byte. It returns
// the original (correct) bytes of the damaged files.
func damage(t *testing.T, m *kafkagen.Manifest) map[string][]byte {
	t.Helper()
	s1, s2 := &m.Segments[1], &m.Segments[2]
	orig := map[string][]byte{
		m.IndexPath(s1):     mustRead(t, m.IndexPath(s1)),
		m.TimeIndexPath(s1): mustRead(t, m.TimeIndexPath(s1)),
		m.TimeIndexPath(s2): mustRead(t, m.TimeIndexPath(s2)),
	}
	mustWrite(t, m.IndexPath(s1), append(bytes.Clone(orig[m.IndexPath(s1)]), make([]byte, 4096)...))
	if err := os.Remove(m.TimeIndexPath(s1)); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(orig[m.TimeIndexPath(s2)])
	bad[3] ^= 0xff
	mustWrite(t, m.TimeIndexPath(s2), bad)
	return orig
}

func TestApplyInPlace(t *testing.T) {
	dataDir, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 21, Segments: 3, Batches: 80, IndexIntervalBytes: 600})
	orig := damage(t, m)
	padded := mustRead(t, m.IndexPath(&m.Segments[1]))
	badTime := mustRead(t, m.TimeIndexPath(&m.Segments[2]))
	before := snapshot(t, dir)
	inode := func(p string) fs.FileInfo {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	keep := inode(m.IndexPath(&m.Segments[0]))

	res, err := Run(resolve(t, dataDir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 600}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	s1, s2 := &m.Segments[1], &m.Segments[2]
	want := [][]string{
		{},
		{m.IndexPath(s1), m.IndexPath(s1) + ".bak", m.TimeIndexPath(s1)},
		{m.TimeIndexPath(s2), m.TimeIndexPath(s2) + ".bak"},
	}
	for i, r := range res {
		if r.Changed != (i > 0) || !slices.Equal(r.Written, want[i]) {
			t.Errorf("segment %d: changed %v written %q; want %v, %q", i, r.Changed, r.Written, i > 0, want[i])
		}
		sm := &m.Segments[i]
		if r.Segment != inspect.SegmentName(sm.BaseOffset)+".log" || r.IndexEntries != sm.IndexEntries || r.TimeIndexEntries != sm.TimeIndexEntries ||
			r.ValidBytes != sm.LogSize || r.TruncatedBytes != 0 || r.Partition != dir {
			t.Errorf("segment %d: result %+v", i, r)
		}
	}
	for path, b := range orig {
		if got := mustRead(t, path); !bytes.Equal(got, b) {
			t.Errorf("%s: not rebuilt to the broker's bytes", filepath.Base(path))
		}
	}
	if !bytes.Equal(mustRead(t, m.IndexPath(s1)+".bak"), padded) || !bytes.Equal(mustRead(t, m.TimeIndexPath(s2)+".bak"), badTime) {
		t.Errorf(".bak files do not hold the replaced bytes")
	}
	if !os.SameFile(keep, inode(m.IndexPath(&m.Segments[0]))) {
		t.Errorf("an unchanged index was rewritten")
	}
	after := snapshot(t, dir)
	for name := range after {
		if _, ok := before[name]; !ok && !strings.HasSuffix(name, ".bak") && name != filepath.Base(m.TimeIndexPath(s1)) {
			t.Errorf("unexpected new file %s", name)
		}
	}
	if exists(filepath.Join(dataDir, LockFile)) {
		t.Errorf("the lock check created %s", LockFile)
	}

	// A second run finds nothing to do, and leaves the .bak files alone.
	res, err = Run(resolve(t, dir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 600}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Changed || len(r.Written) != 0 || r.Written == nil {
			t.Errorf("second run: %+v", r)
		}
	}
	if got := snapshot(t, dir); !mapsEqual(got, after) {
		t.Errorf("second run changed files")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestApplyNoBackupAndDryRun(t *testing.T) {
	dataDir, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 22, Segments: 3, Batches: 60})
	orig := damage(t, m)
	before := snapshot(t, dataDir)

	res, err := Run(resolve(t, dir), ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dataDir); !mapsEqual(got, before) {
		t.Errorf("--dry-run changed files")
	}
	for i, r := range res {
		if r.Changed != (i > 0) || len(r.Written) != 0 {
			t.Errorf("dry run segment %d: %+v", i, r)
		}
	}

	if _, err := Run(resolve(t, dir), ApplyOptions{NoBackup: true}); err != nil {
		t.Fatal(err)
	}
	for path, b := range orig {
		if !bytes.Equal(mustRead(t, path), b) || exists(path+".bak") {
			t.Errorf("%s: not rebuilt, or a .bak was kept", path)
		}
	}
	for name := range snapshot(t, dir) {
		if strings.Contains(name, "kseg-tmp") {
			t.Errorf("temporary file left: %s", name)
		}
	}
}

func TestApplyOut(t *testing.T) {
	dataDir, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 23, Segments: 3, Batches: 60, Transactions: true})
	orig := damage(t, m)
	before := snapshot(t, dataDir)
	out := filepath.Join(t.TempDir(), "out")
	res, err := Run(resolve(t, dataDir), ApplyOptions{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dataDir); !mapsEqual(got, before) {
		t.Errorf("--out changed files under PATH")
	}
	for i, r := range res {
		sm := &m.Segments[i]
		name := inspect.SegmentName(sm.BaseOffset)
		var want []string
		for _, sfx := range []string{".index", ".timeindex", ".txnindex"} {
			if sfx == ".txnindex" && !sm.TxnIndexWritten {
				continue
			}
			want = append(want, filepath.Join(out, "orders-0", name+sfx))
		}
		if !slices.Equal(r.Written, want) || r.Changed != (i > 0) {
			t.Errorf("segment %d: written %q changed %v; want %q, %v", i, r.Written, r.Changed, want, i > 0)
		}
		for _, p := range want {
			src := filepath.Join(dir, filepath.Base(p))
			wantBytes, ok := orig[src]
			if !ok {
				wantBytes = mustRead(t, src)
			}
			if !bytes.Equal(mustRead(t, p), wantBytes) {
				t.Errorf("%s: not the broker's bytes", p)
			}
		}
	}
	if !slices.ContainsFunc(res, func(r Result) bool { return r.TxnEntries > 0 }) {
		t.Errorf("no aborted transaction generated: the .txnindex output is not tested")
	}
	// An output directory under PATH is refused: the partition itself, a
	// directory inside it, inside the data directory named, or reached
	// through a symbolic link.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, out string }{
		{dir, dataDir}, {dir, dir}, {dir, filepath.Join(dir, "sub")}, {dataDir, filepath.Join(dataDir, "x")}, {dir, link},
		{filepath.Join(dir, inspect.SegmentName(0)+".log"), dataDir},
	} {
		if _, err := Run(resolve(t, c.path), ApplyOptions{OutDir: c.out}); err == nil || !strings.Contains(err.Error(), "inside") {
			t.Errorf("rebuild %s --out %s: %v, want a refusal", c.path, c.out, err)
		}
	}
	if got := snapshot(t, dataDir); !mapsEqual(got, before) {
		t.Errorf("a refused --out changed files under PATH")
	}
}

// TestApplyTxnIndexRule: no aborted transaction -> no .txnindex if there
// was none, an empty one if there was one; aborted ones -> the entries.
func TestApplyTxnIndexRule(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "t-0")
	p := gentest.WriteLogs(t, dir, map[int64][]byte{
		0:  gentest.Concat(gentest.TxnData(0, 1, 1, 1, true), gentest.Marker(1, 2, 1, gentest.CommitType)),
		10: gentest.Concat(gentest.Data(10, 1, 3)),
		20: gentest.Concat(gentest.TxnData(20, 1, 4, 1, true), gentest.Marker(21, 5, 1, gentest.AbortType)),
	})
	stale := indexfmt.AppendTxnEntry(nil, indexfmt.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 1, LastStableOffset: 2})
	mustWrite(t, filepath.Join(dir, inspect.SegmentName(0)+".txnindex"), stale)
	if len(p.Segments) != 3 {
		t.Fatalf("%d segments", len(p.Segments))
	}
	res, err := Run(resolve(t, dir), ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	txn := func(base int64) string { return filepath.Join(dir, inspect.SegmentName(base)+".txnindex") }
	if b := mustRead(t, txn(0)); len(b) != 0 || !slices.Contains(res[0].Written, txn(0)) || !bytes.Equal(mustRead(t, txn(0)+".bak"), stale) {
		t.Errorf("segment 0: .txnindex %d bytes, written %q; want emptied with a .bak", len(b), res[0].Written)
	}
	if exists(txn(10)) {
		t.Errorf("segment 10: a .txnindex was created")
	}
	if b := mustRead(t, txn(20)); len(b) != 34 || res[2].TxnEntries != 1 {
		t.Errorf("segment 20: .txnindex %d bytes, %d entries", len(b), res[2].TxnEntries)
	}
}

// TestApplyOverlap: in place with TruncateLog the overlapping tail is cut
// and saved (saved bytes + cut log = the old log); without it the log stays
// and the result reports the overlap.
func TestApplyOverlap(t *testing.T) {
	seg0, seg15, cutAt := gentest.OverlapLogs()
	for _, truncate := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "t-0")
		gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 15: seg15})
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(tg, ApplyOptions{TruncateLog: truncate, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		log0 := tg.Partitions[0].Segments[0].Log
		r := res[0]
		if !errors.Is(r.Overlap, recovery.ErrOverlap) || res[1].Overlap != nil {
			t.Errorf("truncate=%v: overlap %v, %v", truncate, r.Overlap, res[1].Overlap)
		}
		got := gentest.ReadFileOrNil(t, log0)
		if !truncate {
			if !bytes.Equal(got, seg0) || r.TruncatedBytes != 0 || r.StopErr != nil {
				t.Errorf("without TruncateLog the log changed (%d bytes) or was planned cut (%+v)", len(got), r)
			}
			continue
		}
		saved := gentest.ReadFileOrNil(t, log0+TruncatedSuffix+strconv.FormatInt(cutAt, 10))
		if !bytes.Equal(got, seg0[:cutAt]) || !bytes.Equal(append(got, saved...), seg0) || r.ValidBytes != cutAt || !r.Changed {
			t.Errorf("cut log %d bytes + saved %d bytes, want %d + %d (%+v)", len(got), len(saved), cutAt, len(seg0)-int(cutAt), r)
		}
		if _, err := os.Stat(tg.Partitions[0].Segments[1].Log + TruncatedSuffix + "0"); err == nil {
			t.Error("the next segment was cut")
		}
	}
}

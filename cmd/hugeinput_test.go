package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// allocDuring runs kseg in process and returns its output and how many
// bytes it allocated (runtime.MemStats.TotalAlloc, an upper bound on the
// memory it held at any time).
func allocDuring(t *testing.T, args ...string) (stdout, stderr string, code int, alloc uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	stdout, stderr, code = runKseg(t, nil, args...)
	runtime.ReadMemStats(&after)
	return stdout, stderr, code, after.TotalAlloc - before.TotalAlloc
}

// TestTxnIndexSparseHuge: a 100 GiB sparse .txnindex beside a small log is
// checked against what the log could justify (one entry per ABORT marker
// batch of at least 72 bytes) and not read past that: verify reports
// txnindex.size, dump-index lists at most that many entries and exits 2,
// each allocating a bounded amount however large the file claims to be.
func TestTxnIndexSparseHuge(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Segments: 1, Batches: 60, Transactions: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &m.Segments[0]
	txn := m.TxnIndexPath(s)
	if err := os.WriteFile(txn, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const huge = 100 << 30
	if err := os.Truncate(txn, huge); err != nil {
		t.Skipf("cannot make a 100 GiB sparse file here: %v", err)
	}
	st, err := os.Stat(m.LogPath(s))
	if err != nil {
		t.Fatal(err)
	}
	bound := st.Size() / 72
	// The memory allowed: a fixed 32 MiB for the program, plus the log's
	// own size (what verify of a healthy log may cost); nothing in
	// proportion to the 100 GiB claimed.
	limit := uint64(32<<20 + st.Size())

	for _, args := range [][]string{
		{"verify", "-o", "json", dir},
		{"verify", "-o", "json", "--recovery-plan", dir},
		{"verify", "-o", "json", txn},
	} {
		out, errOut, code, alloc := allocDuring(t, args...)
		t.Logf("%s: exit %d, %d bytes allocated (limit %d)", strings.Join(args, " "), code, alloc, limit)
		if code != 1 || !strings.Contains(out, `"check":"txnindex.size"`) || !strings.Contains(out, "ABORT markers") {
			t.Errorf("kseg %s: exit %d, stderr %q\n%s; want exit 1 with txnindex.size", strings.Join(args, " "), code, errOut, out)
		}
		if alloc > limit {
			t.Errorf("kseg %s allocated %d bytes, more than %d", strings.Join(args, " "), alloc, limit)
		}
	}
	out, errOut, code, alloc := allocDuring(t, "dump-index", "-o", "json", txn)
	t.Logf("dump-index: exit %d, %d bytes allocated (limit %d)", code, alloc, limit)
	if lines := strings.Count(out, "\n"); code != exitFailed || int64(lines) != bound || !strings.Contains(errOut, "ABORT markers") {
		t.Errorf("dump-index: exit %d, %d lines (want %d), stderr %q", code, lines, bound, errOut)
	}
	if alloc > limit {
		t.Errorf("dump-index allocated %d bytes, more than %d", alloc, limit)
	}
}

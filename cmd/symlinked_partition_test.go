package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRebuildDataDirWithSymlinkedPartition: a data directory holds a
// partition directory as a symbolic link (the broker loads it, so kseg
// lists it). rebuild of the data directory refuses to write through the
// link, and refuses before writing anything: the partition listed before
// it, which needs a rebuild too, is left as it was.
func TestRebuildDataDirWithSymlinkedPartition(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	wsPartition(t, data, "a-0") // its indexes need a rebuild
	wsPartition(t, filepath.Join(root, "elsewhere"), "b-0")
	if err := os.Symlink(filepath.Join(root, "elsewhere", "b-0"), filepath.Join(data, "b-0")); err != nil {
		t.Fatal(err)
	}
	out, _, code := runKseg(t, nil, "ls", data)
	if code != 0 || !strings.Contains(out, "a-0") || !strings.Contains(out, "b-0") {
		t.Fatalf("ls: exit %d, want both partitions listed:\n%s", code, out)
	}
	before := hashTree(t, root)
	// The dry run says what the run does: it refuses too.
	for _, args := range [][]string{{"rebuild", data}, {"rebuild", "--dry-run", data}} {
		_, stderr, code := runKseg(t, nil, args...)
		if code != exitFailed || !strings.Contains(stderr, "symbolic link") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a refusal naming the symbolic link", args, code, stderr)
		}
	}
	assertTreeUnchanged(t, root, before)
}

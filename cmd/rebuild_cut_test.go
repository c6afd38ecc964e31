//go:build unix

package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRebuildCutWording: with --truncate-log, stderr says what happened to
// the log's bad tail: "would cut" on a dry run, "not cut" when the run
// fails before cutting (here: a file size limit stops the write of the
// saved tail or an index, EFBIG), "cut" when it was.
func TestRebuildCutWording(t *testing.T) {
	_, dir := genDamaged(t)
	log := filepath.Join(dir, "00000000000000000000.log")
	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, append(bytes.Clone(orig), make([]byte, 5000)...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runKseg(t, nil, "rebuild", "--dry-run", "--truncate-log", log)
	if code != 0 || !strings.Contains(errOut, "would cut 5000 bytes at byte") || strings.Contains(errOut, "bytes cut") {
		t.Errorf("--dry-run --truncate-log: exit %d, stderr %q; want \"would cut\"", code, errOut)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	c := exec.Command(sh, "-c", `ulimit -f 2 && exec "$0" "$@"`, ksegExecutable(t), "rebuild", "--truncate-log", log)
	stderr, code := runChild(t, c)
	if code != exitFailed || !strings.Contains(stderr, "5000 bytes not cut at byte") || strings.Contains(stderr, "5000 bytes cut") {
		t.Errorf("--truncate-log under a 1 KiB file size limit: exit %d, stderr %q; want exit 2 and \"not cut\"", code, stderr)
	}
	if got, _ := os.ReadFile(log); len(got) != len(orig)+5000 {
		t.Fatalf("the log is %d bytes after the failed run, want %d (uncut)", len(got), len(orig)+5000)
	}
	_, errOut, code = runKseg(t, nil, "rebuild", "--truncate-log", log)
	if code != 0 || !strings.Contains(errOut, "5000 bytes cut at byte") {
		t.Errorf("--truncate-log: exit %d, stderr %q; want \"cut\"", code, errOut)
	}
}

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRebuildLockPathSpellings: with a real flock held on data/.lock, an
// in-place rebuild refuses every spelling of a path under that data
// directory (relative to the partition directory, a bare segment file
// name, "..", a symbolic link to the partition directory or to the data
// directory) and writes nothing; the message names the real lock file.
func TestRebuildLockPathSpellings(t *testing.T) {
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
	elsewhere := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(elsewhere, "orders-0")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dataDir, filepath.Join(elsewhere, "data")); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dataDir)
	cases := []struct{ cwd, path string }{
		{dir, "."},
		{dir, "./"},
		{dir, "00000000000000000000.log"},
		{dir, "00000000000000000000.index"},
		{dir, "../orders-0"},
		{filepath.Join(dir, ".."), "orders-0/../orders-0"},
		{dataDir, "."},
		{elsewhere, "orders-0"},
		{elsewhere, "orders-0/00000000000000000000.log"},
		{elsewhere, "data/orders-0"},
		{elsewhere, "data"},
		{"/", strings.TrimPrefix(filepath.Join(elsewhere, "orders-0"), "/")},
	}
	for _, c := range cases {
		for _, extra := range [][]string{nil, {"--truncate-log"}} {
			args := append(append([]string{"rebuild"}, extra...), c.path)
			out, errOut, code := runIn(t, c.cwd, args...)
			if code != exitFailed || out != "" || !strings.Contains(errOut, lock+" is locked") {
				t.Errorf("cd %s && kseg %s: exit %d, stdout %q, stderr %q; want exit 2 naming %s", c.cwd, strings.Join(args, " "), code, out, errOut, lock)
			}
			assertTreeUnchanged(t, dataDir, before)
		}
	}
}

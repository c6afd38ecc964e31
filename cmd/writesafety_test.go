//go:build linux

package cmd

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// Write safety of rebuild, end to end: a failure to write (disk full, file
// size limit, permission denied) is exit 2 with a message saying what
// failed, and leaves every old file as it was with no temporary file
// behind; rebuild writes nothing outside the partition (or --out) and
// never through a symbolic link.

// wsPartition writes dataDir/<name> with indexes a rebuild must write anew
// (the .index and .timeindex of the first segment deleted, the second
// segment's .index zero-padded), every batch indexed so that the rebuilt
// files are a few KiB (the tests rebuild with --index-interval-bytes 0).
func wsPartition(t *testing.T, dataDir, name string) (dir string, m *kafkagen.Manifest) {
	t.Helper()
	dir = filepath.Join(dataDir, name)
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 61, Segments: 2, Batches: 300, RecordsPerBatch: 2, ValueSize: 10, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{m.IndexPath(&m.Segments[0]), m.TimeIndexPath(&m.Segments[0])} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	idx := m.IndexPath(&m.Segments[1])
	f, err := os.OpenFile(idx, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Segments[0].IndexEntries*8 <= 1024 {
		t.Fatalf("rebuilt index of %d entries: too small for the size-limit case", m.Segments[0].IndexEntries)
	}
	return dir, m
}

// wsNoTemporaryFiles fails when a rebuild left a temporary file under dir.
func wsNoTemporaryFiles(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(filepath.Base(path), "kseg-tmp") {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

// wsWantFailure checks a failed rebuild: exit 2, nothing on stdout but
// what was done before the failure, stderr naming the cause and a path.
func wsWantFailure(t *testing.T, code int, stderr, cause, path string) {
	t.Helper()
	t.Logf("exit %d: %s", code, strings.TrimSpace(stderr))
	if code != exitFailed {
		t.Errorf("exit %d, want %d; stderr %q", code, exitFailed, stderr)
	}
	if !strings.Contains(stderr, cause) || !strings.Contains(stderr, path) {
		t.Errorf("stderr %q: want it to say %q and name %s", stderr, cause, path)
	}
	for _, bad := range []string{"panic", "goroutine ", "internal error"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr shows %q: %s", bad, stderr)
		}
	}
}

// mountTmpfs mounts a tmpfs of size bytes at a new directory, or skips the
// test when this process may not mount (it needs root with CAP_SYS_ADMIN;
// TestRebuildFileSizeLimit covers the same error path without a mount).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a %s tmpfs (root with CAP_SYS_ADMIN needed): %v; TestRebuildFileSizeLimit covers the write failure without one", size, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// fillFilesystem writes a file in dir until the file system is full.
func fillFilesystem(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return
		}
	}
}

// TestRebuildDiskFull: rebuild on a full file system, in place and to an
// --out directory there.
func TestRebuildDiskFull(t *testing.T) {
	t.Run("in place", func(t *testing.T) {
		fs := mountTmpfs(t, "2m")
		dataDir := filepath.Join(fs, "data")
		dir, _ := wsPartition(t, dataDir, "orders-0")
		fillFilesystem(t, fs)
		before := hashTree(t, dataDir)
		_, stderr, code := runKseg(t, nil, "rebuild", "--index-interval-bytes", "0", dir)
		wsWantFailure(t, code, stderr, "no space left on device", filepath.Join(dir, "00000000000000000000.index")+":")
		assertTreeUnchanged(t, dataDir, before)
		wsNoTemporaryFiles(t, fs)
	})
	t.Run("out", func(t *testing.T) {
		fs := mountTmpfs(t, "256k")
		dataDir := filepath.Join(t.TempDir(), "data")
		dir, _ := wsPartition(t, dataDir, "orders-0")
		out := filepath.Join(fs, "out")
		fillFilesystem(t, fs)
		before := hashTree(t, dataDir)
		_, stderr, code := runKseg(t, nil, "rebuild", "--index-interval-bytes", "0", "--out", out, dir)
		wsWantFailure(t, code, stderr, "no space left on device", filepath.Join(out, "orders-0", "00000000000000000000.index")+":")
		assertTreeUnchanged(t, dataDir, before)
		wsNoTemporaryFiles(t, fs)
		_ = filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
				// Whatever was complete before the disk filled is whole: it
				// reached its name only after being written and synced.
				t.Logf("written before the failure: %s (%d bytes)", path, fi.Size())
			}
			return nil
		})
	})
}

// ksegExecutable returns the kseg executable the test binary installed
// for the scripts (this test binary under the name kseg: see TestMain).
func ksegExecutable(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kseg")
	if err != nil {
		t.Fatalf("no kseg in PATH (TestMain installs it): %v", err)
	}
	return path
}

// runChild runs the kseg executable as cmd says and returns stderr and
// the exit code; stdout goes to c.Stdout, or is discarded.
func runChild(t *testing.T, c *exec.Cmd) (stderr string, code int) {
	t.Helper()
	var errOut strings.Builder
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	c.Stderr = &errOut
	err := c.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running %v: %v", c.Args, err)
	}
	return errOut.String(), code
}

// TestRebuildFileSizeLimit: the same failure without mounting anything: a
// child kseg under a 1 KiB file size limit (RLIMIT_FSIZE, set by the
// shell's ulimit, in 512-byte blocks) fails to write the rebuilt index
// with EFBIG. (Go ignores SIGXFSZ, so the write returns the error.)
func TestRebuildFileSizeLimit(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	dir, _ := wsPartition(t, dataDir, "orders-0")
	before := hashTree(t, dataDir)
	c := exec.Command(sh, "-c", `ulimit -f 2 && exec "$0" "$@"`, ksegExecutable(t), "rebuild", "--index-interval-bytes", "0", dir)
	stderr, code := runChild(t, c)
	wsWantFailure(t, code, stderr, "file too large", filepath.Join(dir, "00000000000000000000.index")+":")
	assertTreeUnchanged(t, dataDir, before)
	wsNoTemporaryFiles(t, dataDir)

	// With a limit the files fit under, the same rebuild succeeds.
	c = exec.Command(sh, "-c", `ulimit -f 1024 && exec "$0" "$@"`, ksegExecutable(t), "rebuild", "--index-interval-bytes", "0", dir)
	if stderr, code := runChild(t, c); code != 0 {
		t.Errorf("rebuild under a 512 KiB limit: exit %d: %s", code, stderr)
	}
}

// TestRebuildPermissionDenied: a partition directory and an --out
// directory kseg may not write to. As root, whom directory permissions do
// not stop, the command runs as the unprivileged user nobody.
func TestRebuildPermissionDenied(t *testing.T) {
	base := t.TempDir()
	run := func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		if os.Geteuid() != 0 {
			_, stderr, code := runKseg(t, nil, args...)
			return stderr, code
		}
		// A copy of kseg nobody may execute, in directories nobody may
		// enter (t.TempDir makes them private).
		bin := filepath.Join(base, "bin", "kseg")
		if _, err := os.Stat(bin); err != nil {
			if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(ksegExecutable(t), bin); err != nil {
				copyFile(t, ksegExecutable(t), bin)
			}
			if err := os.Chmod(bin, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for p := base; p != filepath.Dir(p) && strings.HasPrefix(p, os.TempDir()) && p != os.TempDir(); p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		c := exec.Command(bin, args...)
		c.Dir = base
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return runChild(t, c)
	}

	dataDir := filepath.Join(base, "data")
	dir, _ := wsPartition(t, dataDir, "orders-0")
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	before := hashTree(t, dataDir)

	t.Run("in place", func(t *testing.T) {
		stderr, code := run(t, "rebuild", "--index-interval-bytes", "0", dir)
		wsWantFailure(t, code, stderr, "permission denied", dir)
		assertTreeUnchanged(t, dataDir, before)
	})
	t.Run("out", func(t *testing.T) {
		out := filepath.Join(base, "readonly-out")
		if err := os.Mkdir(out, 0o555); err != nil {
			t.Fatal(err)
		}
		stderr, code := run(t, "rebuild", "--index-interval-bytes", "0", "--out", out, dir)
		wsWantFailure(t, code, stderr, "permission denied", out)
		assertTreeUnchanged(t, dataDir, before)
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("%d entries created in the read-only --out directory", len(ents))
		}
	})
	t.Run("read-only commands still work", func(t *testing.T) {
		if stderr, code := run(t, "verify", "--strict", dir); code != 1 || strings.Contains(stderr, "permission") {
			t.Errorf("verify: exit %d (want 1: the indexes are damaged): %s", code, stderr)
		}
		assertTreeUnchanged(t, dataDir, before)
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildWritesOnlyWhereAsked: around the partition being rebuilt sit
// another partition, a data-directory file and a directory outside the
// data directory. In place, only the partition's index files change (each
// replaced one kept as .bak with its old bytes); with --out, only the
// output directory gets files. Nothing else changes.
func TestRebuildWritesOnlyWhereAsked(t *testing.T) {
	root := t.TempDir()
	dataDir := filepath.Join(root, "data")
	dir, _ := wsPartition(t, dataDir, "orders-0")
	other, _ := wsPartition(t, dataDir, "orders-1")
	if err := os.WriteFile(filepath.Join(dataDir, "recovery-point-offset-checkpoint"), []byte("0\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "elsewhere"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, root)

	out := filepath.Join(root, "elsewhere", "out")
	if _, stderr, code := runKseg(t, nil, "rebuild", "--index-interval-bytes", "0", "--out", out, dir); code != 0 {
		t.Fatalf("--out: exit %d: %s", code, stderr)
	}
	after := hashTree(t, root)
	for name, sum := range after {
		if before[name] == sum {
			continue
		}
		rel := filepath.ToSlash(name)
		if !strings.HasPrefix(rel, "elsewhere/out") || strings.HasSuffix(rel, ".bak") {
			t.Errorf("--out: %s changed or appeared", name)
		}
	}
	if len(after) <= len(before) {
		t.Errorf("--out wrote nothing")
	}
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}

	if _, stderr, code := runKseg(t, nil, "rebuild", "--index-interval-bytes", "0", dir); code != 0 {
		t.Fatalf("in place: exit %d: %s", code, stderr)
	}
	after = hashTree(t, root)
	changed := 0
	for name, sum := range after {
		if before[name] == sum {
			continue
		}
		changed++
		rel := filepath.ToSlash(name)
		base := filepath.Base(rel)
		switch {
		case !strings.HasPrefix(rel, "data/orders-0/"):
			t.Errorf("in place: %s, outside the partition, changed or appeared", name)
		case strings.HasSuffix(base, ".bak"):
			if before[strings.TrimSuffix(name, ".bak")] != sum {
				t.Errorf("in place: %s does not hold the replaced file's bytes", name)
			}
		case !isIndexName(base):
			t.Errorf("in place: %s, not an index file, changed", name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("in place: %s removed", name)
		}
	}
	if changed < 3 {
		t.Errorf("in place: only %d files changed; the damage needs 3 index files and a backup", changed)
	}
	if _, _, code := runKseg(t, nil, "verify", "--strict", "--index-interval-bytes", "0", dir); code != 0 {
		t.Errorf("verify after the rebuild: exit %d", code)
	}
	if _, _, code := runKseg(t, nil, "verify", "--strict", other); code != 1 {
		t.Errorf("the other partition, untouched, should still be damaged: verify exit %d", code)
	}
}

// TestRebuildRefusesSymlinks: symbolic links planted in a partition
// cannot make rebuild write outside it. Each refusal is exit 2 before
// anything is written, and the link targets are untouched.
func TestRebuildRefusesSymlinks(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, dir, outside string, m *kafkagen.Manifest) (args []string)
		says  string
	}{
		{"index file linked outside", func(t *testing.T, dir, outside string, m *kafkagen.Manifest) []string {
			idx := m.IndexPath(&m.Segments[1])
			mustSymlink(t, outside, idx, true)
			return []string{dir}
		}, "symbolic link"},
		{"backup name linked outside", func(t *testing.T, dir, outside string, m *kafkagen.Manifest) []string {
			mustSymlink(t, outside, m.IndexPath(&m.Segments[1])+".bak", false)
			return []string{dir}
		}, ".bak already exists"},
		{"log linked outside, cut asked", func(t *testing.T, dir, outside string, m *kafkagen.Manifest) []string {
			log := m.LogPath(&m.Segments[1])
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(outside, append(b, 1, 2, 3), 0o644); err != nil { // a torn tail to cut
				t.Fatal(err)
			}
			mustSymlink(t, outside, log, true)
			return []string{"--truncate-log", dir}
		}, "symbolic link"},
		{"--out through a link into the partition", func(t *testing.T, dir, outside string, m *kafkagen.Manifest) []string {
			link := filepath.Join(filepath.Dir(outside), "out-link")
			mustSymlink(t, dir, link, false)
			return []string{"--out", filepath.Join(link, "sub"), dir}
		}, "inside"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dataDir := filepath.Join(root, "data")
			dir, m := wsPartition(t, dataDir, "orders-0")
			if err := os.MkdirAll(filepath.Join(root, "elsewhere"), 0o755); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(root, "elsewhere", "target")
			if err := os.WriteFile(outside, []byte("not kseg's to write"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := tc.plant(t, dir, outside, m)
			before := hashTree(t, root)
			_, stderr, code := runKseg(t, nil, append([]string{"rebuild", "--index-interval-bytes", "0"}, args...)...)
			if code != exitFailed || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, stderr %q; want 2 and a refusal saying %q", code, stderr, tc.says)
			}
			assertTreeUnchanged(t, root, before)
		})
	}
}

// mustSymlink makes link point at target, replacing a file at link when
// replace is set.
func mustSymlink(t *testing.T, target, link string, replace bool) {
	t.Helper()
	if replace {
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

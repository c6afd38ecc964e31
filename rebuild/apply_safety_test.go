//go:build unix

package rebuild

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/recovery"
)

// holdLockEnv makes the test binary a stand-in broker: it takes a POSIX
// write lock on the named file (as the JVM's FileChannel.tryLock does),
// says "locked" and holds it until its stdin closes.
const holdLockEnv = "KSEG_REBUILD_TEST_HOLD_LOCK"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdLockEnv); path != "" {
		os.Exit(holdLock(path))
	}
	os.Exit(m.Run())
}

func holdLock(path string) int {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until EOF
	return 0
}

// cutCase is a generated partition whose two logs have damaged tails.
type cutCase struct {
	dataDir, dir string
	m            *kafkagen.Manifest
	logs         []string // the .log paths
	orig         [][]byte // their damaged bytes
	valid        []int64  // where recovery cuts them
	mtime        time.Time
}

func newCutCase(t *testing.T) *cutCase {
	t.Helper()
	dataDir, dir, m := genPartition(t, "cut-0", kafkagen.Options{Seed: 31, Segments: 2, Batches: 50, IndexIntervalBytes: 500})
	c := &cutCase{dataDir: dataDir, dir: dir, m: m, mtime: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	for i := range m.Segments {
		s := &m.Segments[i]
		path := m.LogPath(s)
		b := mustRead(t, path)
		if i == 0 {
			b = append(b, make([]byte, 3000)...) // preallocated, zero-filled tail
		} else {
			last := s.Batches[len(s.Batches)-1]
			b = b[:last.Position+last.Size/2] // torn last batch
		}
		mustWrite(t, path, b)
		if err := os.Chtimes(path, c.mtime, c.mtime); err != nil {
			t.Fatal(err)
		}
		c.logs = append(c.logs, path)
		c.orig = append(c.orig, b)
	}
	c.valid = []int64{m.Segments[0].LogSize, m.Segments[1].Batches[len(m.Segments[1].Batches)-1].Position}
	return c
}

func savedPath(log string, valid int64) string {
	return log + TruncatedSuffix + strconv.FormatInt(valid, 10)
}

func TestApplyTruncateLog(t *testing.T) {
	t.Run("without --truncate-log the log stays", func(t *testing.T) {
		c := newCutCase(t)
		res, err := Run(resolve(t, c.dir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if !bytes.Equal(mustRead(t, c.logs[i]), c.orig[i]) || r.ValidBytes != c.valid[i] || r.TruncatedBytes != int64(len(c.orig[i]))-c.valid[i] || r.StopErr == nil {
				t.Errorf("segment %d: %+v", i, r)
			}
		}
		if !errors.Is(res[0].StopErr, inspect.ErrCorruptHeader) || !errors.Is(res[1].StopErr, inspect.ErrTorn) {
			t.Errorf("stop reasons %v, %v", res[0].StopErr, res[1].StopErr)
		}
		// Segment 0's indexes were right (the zeros are past them); segment
		// 1's were built for the full last batch and are rebuilt.
		if res[0].Changed || !res[1].Changed {
			t.Errorf("changed %v %v, want false true", res[0].Changed, res[1].Changed)
		}
	})
	t.Run("in place", func(t *testing.T) {
		c := newCutCase(t)
		res, err := Run(resolve(t, c.dataDir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}, TruncateLog: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			saved := savedPath(c.logs[i], c.valid[i])
			log, tail := mustRead(t, c.logs[i]), mustRead(t, saved)
			if !bytes.Equal(append(bytes.Clone(log), tail...), c.orig[i]) || int64(len(log)) != c.valid[i] {
				t.Errorf("segment %d: saved (%d bytes) + log (%d bytes) is not the original (%d bytes)", i, len(tail), len(log), len(c.orig[i]))
			}
			if !r.Changed || !slices.Contains(r.Written, saved) || !slices.Contains(r.Written, c.logs[i]) {
				t.Errorf("segment %d: changed %v written %q", i, r.Changed, r.Written)
			}
			if fi, err := os.Stat(c.logs[i]); err != nil || !fi.ModTime().Equal(c.mtime) {
				t.Errorf("segment %d: log modification time not kept", i)
			}
		}
		// Now the partition is what a broker recovery leaves: nothing to do.
		res, err = Run(resolve(t, c.dir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}, TruncateLog: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Changed || r.TruncatedBytes != 0 || r.StopErr != nil || len(r.Written) != 0 {
				t.Errorf("second run: %+v", r)
			}
		}
		// A saved tail in the way with other bytes is never overwritten.
		mustWrite(t, c.logs[1], c.orig[1])
		mustWrite(t, savedPath(c.logs[1], c.valid[1]), []byte("other"))
		if _, err := Run(resolve(t, c.dir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}, TruncateLog: true}); err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("existing saved tail: %v", err)
		}
	})
	t.Run("--out", func(t *testing.T) {
		c := newCutCase(t)
		before := snapshot(t, c.dataDir)
		out := filepath.Join(t.TempDir(), "out")
		res, err := Run(resolve(t, c.dir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}, TruncateLog: true, OutDir: out})
		if err != nil {
			t.Fatal(err)
		}
		if !mapsEqual(snapshot(t, c.dataDir), before) {
			t.Errorf("--out changed files under PATH")
		}
		for i := range res {
			log := filepath.Join(out, "cut-0", filepath.Base(c.logs[i]))
			prefix, tail := mustRead(t, log), mustRead(t, savedPath(log, c.valid[i]))
			if !bytes.Equal(append(bytes.Clone(prefix), tail...), c.orig[i]) || int64(len(prefix)) != c.valid[i] {
				t.Errorf("segment %d: output log + saved tail is not the original", i)
			}
			if fi, err := os.Stat(log); err != nil || !fi.ModTime().Equal(c.mtime) {
				t.Errorf("segment %d: output log modification time not the source's", i)
			}
		}
	})
	t.Run("segment emptied by recovery", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data", "t-0")
		log := gentest.Concat(gentest.Sized(0, 9, 1, 100), gentest.Sized(10, 90, 5, 100), gentest.Sized(101, 29, 6, 100), gentest.Sized(40, 0, 7, 100))
		gentest.WriteLogs(t, dir, map[int64][]byte{0: log})
		res, err := Run(resolve(t, dir), ApplyOptions{Options: recovery.Options{IndexIntervalBytes: recovery.IndexEveryBatch}, TruncateLog: true})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, inspect.SegmentName(0)+".log")
		if got := mustRead(t, path); len(got) != 0 || !bytes.Equal(mustRead(t, savedPath(path, 0)), log) || res[0].ValidBytes != 0 {
			t.Errorf("emptied: log %d bytes, result %+v", len(got), res[0])
		}
	})
}

// replaceSteps and cutSteps are the failure points of the in-place
// replacement and of the log cut (see hook).
var (
	replaceSteps = []string{"create", "write", "fsync", "close", "backup", "rename", "sync-dir"}
	cutSteps     = []string{"save-create", "save-write", "save-fsync", "save-close", "save-link", "truncate", "truncate-fsync"}
)

func failAt(t *testing.T, name string) {
	t.Helper()
	hook = func(s string) error {
		if s == name {
			return errInjected
		}
		return nil
	}
	t.Cleanup(func() { hook = nil })
}

var errInjected = errors.New("injected failure")

// TestApplyCrashSafety fails each step of an in-place replacement: after
// each failure every final name holds the whole old file or the whole new
// one, a .bak holds the old one, and a second run completes the job.
func TestApplyCrashSafety(t *testing.T) {
	for _, s := range replaceSteps {
		for _, backup := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/backup=%v", s, backup), func(t *testing.T) {
				_, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 24, Segments: 3, Batches: 60})
				want := damage(t, m)
				old := map[string][]byte{}
				for path := range want {
					old[path] = gentest.ReadFileOrNil(t, path)
				}
				failAt(t, s)
				_, err := Run(resolve(t, dir), ApplyOptions{NoBackup: !backup})
				if s == "backup" && !backup {
					if err != nil {
						t.Fatalf("no backup step without backups, but: %v", err)
					}
				} else if !errors.Is(err, errInjected) {
					t.Fatalf("Run: %v, want the injected failure", err)
				}
				for path, w := range want {
					got := gentest.ReadFileOrNil(t, path)
					if !bytes.Equal(got, w) && !bytes.Equal(got, old[path]) || (got == nil) != (old[path] == nil) && !bytes.Equal(got, w) {
						t.Errorf("%s: neither the old nor the new bytes", filepath.Base(path))
					}
					if exists(path + ".bak") {
						if !backup || !bytes.Equal(mustRead(t, path+".bak"), old[path]) {
							t.Errorf("%s.bak does not hold the old bytes", filepath.Base(path))
						}
					}
				}
				for name := range snapshot(t, dir) {
					if strings.Contains(name, "kseg-tmp") {
						t.Errorf("temporary file left: %s", name)
					}
				}
				hook = nil
				if _, err := Run(resolve(t, dir), ApplyOptions{NoBackup: !backup}); err != nil {
					t.Fatalf("second run: %v", err)
				}
				for path, w := range want {
					if !bytes.Equal(mustRead(t, path), w) {
						t.Errorf("%s: not rebuilt by the second run", filepath.Base(path))
					}
					if backup && old[path] != nil && !bytes.Equal(mustRead(t, path+".bak"), old[path]) {
						t.Errorf("%s.bak lost the old bytes", filepath.Base(path))
					}
				}
			})
		}
	}
}

// TestApplyCutCrashSafety fails each step of a log cut: the log is the
// whole original or the valid prefix, a saved tail is complete, and a
// second run finishes with saved + log == original.
func TestApplyCutCrashSafety(t *testing.T) {
	for _, s := range cutSteps {
		t.Run(s, func(t *testing.T) {
			c := newCutCase(t)
			failAt(t, s)
			opts := ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}, TruncateLog: true}
			if _, err := Run(resolve(t, c.dir), opts); !errors.Is(err, errInjected) {
				t.Fatalf("Run: %v, want the injected failure", err)
			}
			log := mustRead(t, c.logs[0])
			if !bytes.Equal(log, c.orig[0]) && !bytes.Equal(log, c.orig[0][:c.valid[0]]) {
				t.Errorf("log is %d bytes: neither the original nor the valid prefix", len(log))
			}
			saved := savedPath(c.logs[0], c.valid[0])
			if exists(saved) && !bytes.Equal(mustRead(t, saved), c.orig[0][c.valid[0]:]) {
				t.Errorf("saved tail incomplete")
			}
			if !exists(saved) && !bytes.Equal(log, c.orig[0]) {
				t.Errorf("log cut without its tail saved")
			}
			hook = nil
			if _, err := Run(resolve(t, c.dir), opts); err != nil {
				t.Fatalf("second run: %v", err)
			}
			got := append(mustRead(t, c.logs[0]), mustRead(t, savedPath(c.logs[0], c.valid[0]))...)
			if !bytes.Equal(got, c.orig[0]) {
				t.Errorf("segment 0: saved + log != original after the second run")
			}
			// Segment 1 follows a cut segment: recovery's rule sets it
			// aside whole. When the first run had already cut segment 0,
			// the second sees no cut there and cuts segment 1's own torn
			// tail instead; either way no byte is lost.
			aside := c.logs[1] + CutAsideSuffix + strconv.FormatInt(c.m.Segments[0].NextOffset, 10)
			if exists(aside) {
				if !bytes.Equal(mustRead(t, aside), c.orig[1]) || exists(c.logs[1]) {
					t.Errorf("segment 1: set aside as %s, but not whole, or still in place", filepath.Base(aside))
				}
			} else if got := append(mustRead(t, c.logs[1]), mustRead(t, savedPath(c.logs[1], c.valid[1]))...); !bytes.Equal(got, c.orig[1]) {
				t.Errorf("segment 1: saved + log != original after the second run")
			}
		})
	}
}

func TestApplyLock(t *testing.T) {
	dataDir, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 25, Segments: 3, Batches: 40})
	damage(t, m)
	lockPath := filepath.Join(dataDir, LockFile)
	mustWrite(t, lockPath, nil)
	before := snapshot(t, dataDir)

	t.Run("flock", func(t *testing.T) {
		f, err := os.Open(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
		_, err = Run(resolve(t, dir), ApplyOptions{})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lockPath) {
			t.Errorf("Run with .lock held: %v, want ErrLocked naming %s", err, lockPath)
		}
		if !mapsEqual(snapshot(t, dataDir), before) {
			t.Fatalf("files changed although the lock was held")
		}
		for _, o := range []ApplyOptions{{DryRun: true}, {OutDir: filepath.Join(t.TempDir(), "out")}} {
			if _, err := Run(resolve(t, dir), o); err != nil {
				t.Errorf("%+v with the lock held: %v", o, err)
			}
		}
		if !mapsEqual(snapshot(t, dataDir), before) {
			t.Fatalf("a dry run or --out changed files under PATH")
		}
	})
	t.Run("posix lock of another process", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), holdLockEnv+"="+lockPath)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("lock holder: %v", err)
			}
		}()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "locked\n" {
			t.Fatalf("lock holder said %q, %v", line, err)
		}
		err = CheckLock(dataDir)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("CheckLock with a POSIX lock held by process %d: %v", cmd.Process.Pid, err)
		}
		if runtime.GOOS == "linux" && !strings.Contains(err.Error(), strconv.Itoa(cmd.Process.Pid)) {
			t.Errorf("%v does not name the holder %d", err, cmd.Process.Pid)
		}
	})
	if runtime.GOOS == "linux" {
		t.Run("posix lock of this process", func(t *testing.T) {
			f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lk := unix.Flock_t{Type: unix.F_WRLCK}
			if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
				t.Fatal(err)
			}
			if err := CheckLock(dataDir); !errors.Is(err, ErrLocked) {
				t.Errorf("CheckLock: %v, want ErrLocked", err)
			}
		})
	}
	t.Run("released, then --force", func(t *testing.T) {
		if err := CheckLock(dataDir); err != nil {
			t.Fatalf("CheckLock after release: %v", err)
		}
		f, err := os.Open(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		res, err := Run(resolve(t, dir), ApplyOptions{Force: true})
		if err != nil || !res[1].Changed || len(res[1].Written) == 0 {
			t.Errorf("--force: %v %+v", err, res)
		}
	})
	if err := CheckLock(t.TempDir()); err != nil {
		t.Errorf("no .lock: %v", err)
	}
}

func TestApplyPermissionDenied(t *testing.T) {
	t.Run("read-only partition directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root: a read-only directory does not stop writes (the next case covers the error path)")
		}
		_, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 26, Segments: 3, Batches: 40})
		damage(t, m)
		before := snapshot(t, dir)
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		_, err := Run(resolve(t, dir), ApplyOptions{})
		if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), dir) {
			t.Errorf("Run: %v, want a permission error naming %s", err, dir)
		}
		if !mapsEqual(snapshot(t, dir), before) {
			t.Errorf("files changed")
		}
	})
	t.Run("--out under a file", func(t *testing.T) {
		_, dir, _ := genPartition(t, "orders-0", kafkagen.Options{Seed: 26, Batches: 10})
		file := filepath.Join(t.TempDir(), "file")
		mustWrite(t, file, []byte("x"))
		_, err := Run(resolve(t, dir), ApplyOptions{OutDir: filepath.Join(file, "out")})
		if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("Run: %v, want an error naming %s", err, file)
		}
	})
}

func TestApplySymlinks(t *testing.T) {
	t.Run("index file", func(t *testing.T) {
		_, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 27, Segments: 2, Batches: 40})
		outside := filepath.Join(t.TempDir(), "elsewhere.index")
		mustWrite(t, outside, []byte("not an index"))
		idx := m.IndexPath(&m.Segments[1])
		if err := os.Remove(idx); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, idx); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		_, err := Run(resolve(t, dir), ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), idx) {
			t.Errorf("Run: %v, want a refusal naming %s", err, idx)
		}
		if got := mustRead(t, outside); string(got) != "not an index" || !mapsEqual(snapshot(t, dir), before) {
			t.Errorf("something was written")
		}
		// Read through it with --out: allowed, and the output is a file.
		out := filepath.Join(t.TempDir(), "out")
		if _, err := Run(resolve(t, dir), ApplyOptions{OutDir: out}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(out, "orders-0", filepath.Base(idx))); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("--out output: %v", err)
		}
	})
	t.Run("partition directory inside a data directory", func(t *testing.T) {
		_, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 28, Segments: 2, Batches: 40})
		damage2 := m.IndexPath(&m.Segments[1])
		mustWrite(t, damage2, nil)
		dataDir := t.TempDir()
		if err := os.Symlink(dir, filepath.Join(dataDir, "orders-0")); err != nil {
			t.Fatal(err)
		}
		// (inspect.Resolve does not follow it; a caller building the target
		// itself might.)
		p, err := inspect.ReadPartition(filepath.Join(dataDir, "orders-0"))
		if err != nil {
			t.Fatal(err)
		}
		target := &inspect.Target{Path: dataDir, Kind: "data_dir", DataDir: dataDir, Partitions: []*inspect.Partition{p}}
		if _, err := Run(target, ApplyOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Run: %v, want a refusal", err)
		}
		if len(mustRead(t, damage2)) != 0 {
			t.Errorf("written through the link")
		}
	})
}

// TestApplyKeepsModeAndOwner: a replaced file keeps the old one's
// permission bits, and, when kseg runs as root, its owner (so the broker's
// user can still open it); a new file takes the .log's.
func TestApplyKeepsModeAndOwner(t *testing.T) {
	_, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 29, Segments: 3, Batches: 40})
	damage(t, m)
	idx := m.IndexPath(&m.Segments[1])      // replaced
	tidx := m.TimeIndexPath(&m.Segments[1]) // deleted by damage: created anew
	log := m.LogPath(&m.Segments[1])
	if err := os.Chmod(idx, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(log, 0o640); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(idx, 4321, 4322); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(log, 4323, 4324); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(resolve(t, dir), ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	check := func(path string, mode os.FileMode, uid, gid uint32) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), fi.Mode().Perm(), mode)
		}
		if st, ok := fi.Sys().(*unix.Stat_t); root && ok && (st.Uid != uid || st.Gid != gid) {
			t.Errorf("%s: owner %d:%d, want %d:%d", filepath.Base(path), st.Uid, st.Gid, uid, gid)
		}
	}
	check(idx, 0o600, 4321, 4322)
	check(tidx, 0o640, 4323, 4324)
	if !root {
		t.Log("not root: ownership is not changed, only permission bits were checked")
	}
}

// TestAfterCutInterrupted stops --truncate-log while it sets aside the
// segments after a cut: the log is not cut yet, nothing is lost, and a
// second run finishes the job (every later segment set aside whole, the
// log cut with its tail saved).
func TestAfterCutInterrupted(t *testing.T) {
	_, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 32, Segments: 4, Batches: 30})
	s0 := &m.Segments[0]
	log0 := m.LogPath(s0)
	orig := mustRead(t, log0)
	bad := s0.Batches[10]
	damaged := append([]byte(nil), orig...)
	damaged[bad.Position+40] ^= 0xff
	mustWrite(t, log0, damaged)
	later := map[string][]byte{}
	for i := 1; i < len(m.Segments); i++ {
		later[m.LogPath(&m.Segments[i])] = mustRead(t, m.LogPath(&m.Segments[i]))
	}
	calls := 0
	hook = func(s string) error {
		if s == "aside" {
			if calls++; calls == 3 {
				return errInjected
			}
		}
		return nil
	}
	t.Cleanup(func() { hook = nil })
	opts := ApplyOptions{TruncateLog: true}
	if _, err := Run(resolve(t, dir), opts); !errors.Is(err, errInjected) {
		t.Fatalf("Run: %v, want the injected failure", err)
	}
	if !bytes.Equal(mustRead(t, log0), damaged) {
		t.Errorf("the log was cut before the later segments were set aside")
	}
	hook = nil
	res, err := Run(resolve(t, dir), opts)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	end := s0.Batches[9].LastOffset + 1
	if len(res) != 1 || res[0].AfterCut == nil || res[0].AfterCut.LogEndOffset != end {
		t.Fatalf("second run: %+v", res)
	}
	for path, b := range later {
		aside := path + CutAsideSuffix + strconv.FormatInt(end, 10)
		if exists(path) || !bytes.Equal(mustRead(t, aside), b) {
			t.Errorf("%s: not set aside whole", filepath.Base(path))
		}
	}
	got := append(mustRead(t, log0), mustRead(t, savedPath(log0, bad.Position))...)
	if !bytes.Equal(got, damaged) {
		t.Errorf("cut log + saved tail != the log before the cut")
	}
}

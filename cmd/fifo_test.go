//go:build unix

package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestFIFOsDoNotHang: a FIFO named like every kind of file kseg opens (a
// segment's four files, the partition's checkpoint, metadata and
// snapshot, the data directory's checkpoints, clean-shutdown marker and
// .lock) must not make any command that opens it block in open(2): each
// command runs as a child process with a deadline, so a regression fails
// here instead of hanging. A command naming the FIFO itself must exit 2
// with a message naming it. One walking a directory must finish, with
// exit 0 or 1, or 2 naming the FIFO (so a walker that fails for another
// reason, a mistyped flag say, checks nothing and fails the test). Each
// kind runs the walkers that open a file of that kind in a healthy
// partition (strace -e openat), on its own copy of one generated data
// directory, the kinds in parallel.
func TestFIFOsDoNotHang(t *testing.T) {
	t.Parallel()
	bin := ksegExecutable(t)
	const seg = "00000000000000000000"
	const inLog = "2023-11-14T22:13:20Z" // a time lookup answered from the first segment
	var (
		verify    = [][]string{{"verify", "P"}, {"verify", "--records", "P"}, {"verify", "D"}}
		lookups   = [][]string{{"lookup", "P", "5"}, {"lookup-time", "P", inLog}}
		rebuilds  = [][]string{{"rebuild", "--dry-run", "P"}, {"rebuild", "P"}, {"rebuild", "--truncate-log", "P"}}
		ls        = [][]string{{"ls", "P"}, {"ls", "D"}}
		dumpIndex = [][]string{{"dump-index", "P"}}
		dumpCP    = [][]string{{"dump-checkpoint", "P"}, {"dump-checkpoint", "D"}}
		dumpDirCP = [][]string{{"dump-checkpoint", "D"}}
		dumpSnap  = [][]string{{"dump-snapshot", "P"}}
	)
	all := func(groups ...[][]string) (out [][]string) {
		for _, g := range groups {
			out = append(out, g...)
		}
		return out
	}
	segmentFiles := all(verify, lookups, rebuilds, ls, dumpIndex)
	kinds := []struct {
		name    string // relative to the data directory
		named   [][]string
		walkers [][]string
	}{
		{"demo-0/" + seg + ".log", [][]string{{"dump-log"}, {"dump-log", "--salvage"}, {"verify"}, {"rebuild", "--dry-run"}}, all(verify, lookups, rebuilds, ls)},
		{"demo-0/" + seg + ".index", [][]string{{"dump-index"}, {"verify"}}, segmentFiles},
		{"demo-0/" + seg + ".timeindex", [][]string{{"dump-index"}, {"verify"}}, segmentFiles},
		{"demo-0/" + seg + ".txnindex", [][]string{{"dump-index"}, {"verify"}}, all(verify, rebuilds, dumpIndex)},
		{"demo-0/leader-epoch-checkpoint", [][]string{{"dump-checkpoint"}}, all(verify, lookups, ls, dumpCP)},
		{"demo-0/partition.metadata", [][]string{{"dump-checkpoint"}}, all(verify, dumpCP)},
		{"demo-0/" + seg + ".snapshot", [][]string{{"dump-snapshot"}}, all(verify, dumpSnap)},
		{"recovery-point-offset-checkpoint", [][]string{{"dump-checkpoint"}}, all(verify, lookups, ls, dumpDirCP)},
		{"log-start-offset-checkpoint", [][]string{{"dump-checkpoint"}}, all(verify, lookups, ls, dumpDirCP)},
		{"replication-offset-checkpoint", [][]string{{"dump-checkpoint"}}, all(verify, ls, dumpDirCP)},
		{"cleaner-offset-checkpoint", [][]string{{"dump-checkpoint"}}, all(verify, ls, dumpDirCP)},
		{".kafka_cleanshutdown", nil, all(verify, lookups, ls, dumpDirCP)},
		{".lock", nil, rebuilds[1:]},
	}
	src := filepath.Join(t.TempDir(), "demo-0")
	if _, err := kafkagen.Generate(src, kafkagen.Options{Seed: 7, Segments: 2, Batches: 20, Transactions: true}); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		t.Run(strings.ReplaceAll(k.name, "/", "_"), func(t *testing.T) {
			t.Parallel()
			dataDir := filepath.Join(t.TempDir(), "data")
			part := filepath.Join(dataDir, "demo-0")
			if err := os.CopyFS(part, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(dataDir, k.name)
			if err := os.Remove(fifo); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			namesFIFO := func(stderr string) bool {
				return strings.Contains(stderr, fifo) && strings.Contains(stderr, "not a regular file")
			}
			for _, args := range k.named {
				args = append(append([]string(nil), args...), fifo)
				errOut, code, ok := runWithDeadline(t, bin, args)
				if ok && (code != exitFailed || !namesFIFO(errOut)) {
					t.Errorf("kseg %s: exit %d, stderr %q; want exit 2 naming the FIFO as not a regular file", strings.Join(args, " "), code, errOut)
				}
			}
			for _, w := range k.walkers {
				args := make([]string, len(w))
				for i, a := range w {
					switch a {
					case "P":
						a = part
					case "D":
						a = dataDir
					}
					args[i] = a
				}
				errOut, code, ok := runWithDeadline(t, bin, args)
				if ok && code != 0 && code != 1 && (code != exitFailed || !namesFIFO(errOut)) {
					t.Errorf("kseg %s: exit %d, stderr %q; want 0, 1, or 2 naming the FIFO", strings.Join(args, " "), code, errOut)
				}
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s is no longer the FIFO (%v)", fifo, err)
			}
		})
	}
}

// runWithDeadline runs the kseg executable with args; when it has not
// finished within 20 seconds it is killed, the test fails and ok is false.
func runWithDeadline(t *testing.T, bin string, args []string) (stderr string, code int, ok bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	stderr, code = runChild(t, c)
	if ctx.Err() != nil {
		t.Errorf("kseg %s: still running after 20s (blocked opening a FIFO?)", strings.Join(args, " "))
		return stderr, code, false
	}
	return stderr, code, true
}

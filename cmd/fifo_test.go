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
// .lock)
// must not make any command that opens it block in open(2): each command
// runs as a child process with a deadline, so a regression fails here
// instead of hanging. A command naming the FIFO itself must exit 2 with a
// message naming it; one walking a directory must finish.
func TestFIFOsDoNotHang(t *testing.T) {
	bin := ksegExecutable(t)
	const seg = "00000000000000000000"
	kinds := []struct {
		name  string // relative to the data directory
		named [][]string
	}{
		{"demo-0/" + seg + ".log", [][]string{{"dump-log"}, {"dump-log", "--salvage"}, {"verify"}, {"rebuild", "--dry-run"}}},
		{"demo-0/" + seg + ".index", [][]string{{"dump-index"}, {"verify"}}},
		{"demo-0/" + seg + ".timeindex", [][]string{{"dump-index"}, {"verify"}}},
		{"demo-0/" + seg + ".txnindex", [][]string{{"dump-index"}, {"verify"}}},
		{"demo-0/leader-epoch-checkpoint", [][]string{{"dump-checkpoint"}}},
		{"demo-0/partition.metadata", [][]string{{"dump-checkpoint"}}},
		{"demo-0/" + seg + ".snapshot", [][]string{{"dump-snapshot"}}},
		{"recovery-point-offset-checkpoint", [][]string{{"dump-checkpoint"}}},
		{"log-start-offset-checkpoint", [][]string{{"dump-checkpoint"}}},
		{"replication-offset-checkpoint", [][]string{{"dump-checkpoint"}}},
		{"cleaner-offset-checkpoint", [][]string{{"dump-checkpoint"}}},
		{".kafka_cleanshutdown", nil},
		{".lock", nil},
	}
	walkers := [][]string{
		{"verify", "P"}, {"verify", "--side-files", "D"}, {"verify", "--records", "P"},
		{"dump-log", "P/" + seg + ".log"}, {"lookup", "P", "5"}, {"lookup-time", "P", "2023-11-14T22:13:21Z"},
		{"rebuild", "--dry-run", "P"}, {"rebuild", "P"}, {"rebuild", "--truncate-log", "P"},
		{"dump-index", "P/" + seg + ".index"}, {"ls", "D"}, {"ls", "P"}, {"dump-checkpoint", "P"},
	}
	for _, k := range kinds {
		t.Run(strings.ReplaceAll(k.name, "/", "_"), func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			part := filepath.Join(dataDir, "demo-0")
			if _, err := kafkagen.Generate(part, kafkagen.Options{Seed: 7, Segments: 2, Batches: 20, Transactions: true}); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(dataDir, k.name)
			if err := os.Remove(fifo); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range k.named {
				args = append(append([]string(nil), args...), fifo)
				errOut, code := runWithDeadline(t, bin, args)
				if code != exitFailed || !strings.Contains(errOut, fifo) || !strings.Contains(errOut, "not a regular file") {
					t.Errorf("kseg %s: exit %d, stderr %q; want exit 2 naming the FIFO as not a regular file", strings.Join(args, " "), code, errOut)
				}
			}
			for _, w := range walkers {
				args := make([]string, len(w))
				for i, a := range w {
					a = strings.Replace(a, "P", part, 1)
					if a == "D" {
						a = dataDir
					}
					args[i] = a
				}
				if _, code := runWithDeadline(t, bin, args); code < 0 {
					t.Errorf("kseg %s: killed", strings.Join(args, " "))
				}
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s is no longer the FIFO (%v)", fifo, err)
			}
		})
	}
}

// runWithDeadline runs the kseg executable with args, failing the test
// (and killing the child) when it has not finished within 10 seconds.
func runWithDeadline(t *testing.T, bin string, args []string) (stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	stderr, code = runChild(t, c)
	if ctx.Err() != nil {
		t.Fatalf("kseg %s: still running after 10s (blocked opening a FIFO?)", strings.Join(args, " "))
	}
	return stderr, code
}

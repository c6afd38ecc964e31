//go:build unix

package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestRebuildInterrupted: SIGINT or SIGTERM during an in-place rebuild of
// many segments stops it with exit 130 or 143, a message saying what was
// done, no temporary file left, and a second run finishes the job. (The
// signal is sent while the child is writing; should it finish first on a
// fast disk, the next attempt signals it sooner.)
func TestRebuildInterrupted(t *testing.T) {
	bin := ksegExecutable(t)
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(c.name, func(t *testing.T) {
			interrupted := false
			for _, delay := range []time.Duration{300 * time.Millisecond, 120 * time.Millisecond, 40 * time.Millisecond, 10 * time.Millisecond} {
				dir := filepath.Join(t.TempDir(), "data", "demo-0")
				if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 6, Segments: 60, Batches: 120}); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin, "rebuild", "--index-interval-bytes", "0", "-q", dir)
				var errOut strings.Builder
				cmd.Stderr = &errOut
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(delay)
				_ = cmd.Process.Signal(c.sig)
				err := cmd.Wait()
				var exit *exec.ExitError
				code := 0
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				}
				if code == 0 {
					continue // finished before the signal
				}
				if code == -1 {
					// Killed by the signal before kseg took it over (still
					// starting): try again later in the run.
					continue
				}
				interrupted = true
				if code != c.code || !strings.Contains(errOut.String(), "interrupted by "+c.name) || !strings.Contains(errOut.String(), "no temporary file is left") && !strings.Contains(errOut.String(), "nothing written") {
					t.Errorf("exit %d, stderr %q; want %d and a message saying what was done", code, errOut.String(), c.code)
				}
				if tmps, _ := filepath.Glob(filepath.Join(dir, "*kseg-tmp*")); len(tmps) != 0 {
					t.Errorf("temporary files left: %v", tmps)
				}
				if _, stderr, code := runKseg(t, nil, "rebuild", "--index-interval-bytes", "0", dir); code != 0 {
					t.Errorf("the run after: exit %d: %s", code, stderr)
				}
				out, _, _ := runKseg(t, nil, "rebuild", "--dry-run", "--index-interval-bytes", "0", "-o", "json", dir)
				if strings.Contains(out, `"changed":true`) {
					t.Errorf("segments still change after the second run")
				}
				if ents, err := os.ReadDir(dir); err != nil || len(ents) == 0 {
					t.Errorf("partition directory: %v", err)
				}
				break
			}
			if !interrupted {
				t.Errorf("no attempt caught the rebuild running: it always finished or died before taking the signal")
			}
		})
	}
}

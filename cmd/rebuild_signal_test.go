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
// done, no temporary file left, and a second run finishes the job. The
// signal is sent once the child is writing (a file has appeared in the
// partition: a temporary file or a backup), when kseg handles it, however
// slowly the child started; should it finish first, it is run again. The
// partition has 60 segments (20 under -short).
func TestRebuildInterrupted(t *testing.T) {
	t.Parallel()
	bin := ksegExecutable(t)
	segments := 60
	if testing.Short() {
		segments = 20
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(c.name, func(t *testing.T) {
			interrupted := false
			for attempt := 0; attempt < 3 && !interrupted; attempt++ {
				dir := filepath.Join(t.TempDir(), "data", "demo-0")
				if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 6, Segments: segments, Batches: 120}); err != nil {
					t.Fatal(err)
				}
				files := func() int {
					ents, _ := os.ReadDir(dir)
					return len(ents)
				}
				before := files()
				cmd := exec.Command(bin, "rebuild", "--index-interval-bytes", "0", "-q", dir)
				var errOut strings.Builder
				cmd.Stderr = &errOut
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				var err error
				tick := time.NewTicker(time.Millisecond)
			wait:
				for {
					select {
					case err = <-exited:
						break wait
					case <-tick.C:
						if files() != before {
							_ = cmd.Process.Signal(c.sig)
							err = <-exited
							break wait
						}
					}
				}
				tick.Stop()
				var exit *exec.ExitError
				code := 0
				if errors.As(err, &exit) {
					code = exit.ExitCode()
				}
				if code == 0 {
					continue // finished before it was seen writing
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
			}
			if !interrupted {
				t.Errorf("no attempt caught the rebuild writing: it always finished first")
			}
		})
	}
}

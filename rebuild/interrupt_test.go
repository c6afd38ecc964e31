package rebuild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

var errStopped = errors.New("stopped by the test")

// TestRunStopsWhenCancelled: a run whose context is cancelled while a
// file's new content is being written (the temporary file exists) stops
// there: the error wraps the context's cause, the temporary file is gone,
// the file being replaced is untouched, every file replaced before is
// whole, and a second run finishes the job. A context cancelled before
// the run writes nothing.
func TestRunStopsWhenCancelled(t *testing.T) {
	dataDir, dir, m := genPartition(t, "orders-0", kafkagen.Options{Seed: 31, Segments: 3, Batches: 40})
	damage(t, m)

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errStopped)
	before := snapshot(t, dataDir)
	if _, err := Run(resolve(t, dir), ApplyOptions{Context: ctx}); !errors.Is(err, errStopped) {
		t.Fatalf("Run with a cancelled context: %v, want the cause", err)
	}
	if !mapsEqual(snapshot(t, dataDir), before) {
		t.Fatal("a cancelled run wrote files")
	}

	for _, at := range []int{1, 2} { // the first and the second file written
		ctx, cancel := context.WithCancelCause(context.Background())
		writes := 0
		hook = func(s string) error {
			if s == "write" {
				if writes++; writes == at {
					// The temporary file exists now: Ctrl-C arrives.
					tmps, _ := filepath.Glob(filepath.Join(dir, ".*.kseg-tmp"))
					if len(tmps) != 1 {
						t.Errorf("%d temporary files at the write step, want 1", len(tmps))
					}
					cancel(errStopped)
				}
			}
			return nil
		}
		res, err := Run(resolve(t, dir), ApplyOptions{Context: ctx})
		hook = nil
		if !errors.Is(err, errStopped) {
			t.Fatalf("Run cancelled at write %d: %v, want the cause", at, err)
		}
		if tmps, _ := filepath.Glob(filepath.Join(dir, "*kseg-tmp*")); len(tmps) != 0 {
			t.Errorf("temporary files left: %v", tmps)
		}
		written := 0
		for _, r := range res {
			written += len(r.Written)
		}
		t.Logf("cancelled at write %d: %d files written before", at, written)
	}
	res, err := Run(resolve(t, dir), ApplyOptions{NoBackup: true})
	if err != nil {
		t.Fatalf("the run after: %v", err)
	}
	again, err := Run(resolve(t, dir), ApplyOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again {
		if r.Changed {
			t.Errorf("%s still changes after the run that finished the job (%d results)", r.Segment, len(res))
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) == 0 || strings.Contains(ents[0].Name(), "kseg-tmp") {
		t.Errorf("unexpected directory contents %v", ents)
	}
}

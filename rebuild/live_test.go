//go:build unix

package rebuild

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/recovery"
)

// TestApplyRefusesALogThatGrew: a broker appending to a segment between
// the plan and the writes (the lock check skipped with --force, or a
// broker that holds no lock) makes the planned cut point stale. Apply sees
// the size change before writing anything, refuses, and leaves every file
// as it was.
func TestApplyRefusesALogThatGrew(t *testing.T) {
	c := newCutCase(t)
	p := resolve(t, c.dir).Partitions[0]
	plans, err := recovery.PlanPartition(p, recovery.Options{IndexIntervalBytes: 500})
	if err != nil {
		t.Fatal(err)
	}
	// The broker appends a batch to the second segment (the active one).
	grown := append(bytes.Clone(c.orig[1]), c.orig[1][:200]...)
	mustWrite(t, c.logs[1], grown)
	before := snapshot(t, c.dir)

	_, err = Apply(p, plans, ApplyOptions{Options: recovery.Options{IndexIntervalBytes: 500}, TruncateLog: true, Force: true})
	if err == nil || !strings.Contains(err.Error(), c.logs[1]) || !strings.Contains(err.Error(), "is a broker writing to it?") {
		t.Fatalf("Apply: %v; want a refusal naming %s", err, c.logs[1])
	}
	if !mapsEqual(snapshot(t, c.dir), before) {
		t.Errorf("files changed although Apply refused")
	}
	if got := mustRead(t, c.logs[1]); !bytes.Equal(got, grown) {
		t.Errorf("the grown log was modified")
	}
}

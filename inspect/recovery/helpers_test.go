package recovery

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// planOne plans a one-segment partition at base offset 0.
func planOne(t *testing.T, log []byte, opts Options) SegmentRecovery {
	t.Helper()
	p := gentest.WriteLogs(t, filepath.Join(t.TempDir(), "t-0"), map[int64][]byte{0: log})
	plans, err := PlanPartition(p, opts)
	if err != nil {
		t.Fatalf("PlanPartition: %v", err)
	}
	if len(plans) != 1 {
		t.Fatalf("%d plans, want 1", len(plans))
	}
	return plans[0]
}

// fixturesDir locates the shared real broker data beside the module.
func fixturesDir(t *testing.T) string {
	t.Helper()
	return fixtures.Root(t)
}

//go:build linux

package rebuild

import "testing"

// TestPlanCacheNeutral: after recovery is planned (every batch of the log
// read and checked), the page cache holds exactly the pages it held before,
// as mincore sees it.
func TestPlanCacheNeutral(t *testing.T) {
	tg, files := residencyPartition(t)
	before := residency(t, files)
	plans, err := PlanPartition(tg.Partitions[0], Options{})
	if err != nil || len(plans) != 1 || plans[0].Batches < 500 {
		t.Fatalf("plan: %+v: %v", plans, err)
	}
	assertSameResidency(t, files, before, residency(t, files))
}

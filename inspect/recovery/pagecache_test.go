//go:build linux

package recovery

import (
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// TestPlanCacheNeutral: after recovery is planned (every batch of the log
// read and checked), the page cache holds exactly the pages it held before,
// as mincore sees it.
func TestPlanCacheNeutral(t *testing.T) {
	tg, files := gentest.ResidencyPartition(t, 1<<20)
	before := gentest.Residency(t, files)
	plans, err := PlanPartition(tg.Partitions[0], Options{})
	if err != nil || len(plans) != 1 || plans[0].Batches < 500 {
		t.Fatalf("plan: %+v: %v", plans, err)
	}
	gentest.AssertSameResidency(t, files, before, gentest.Residency(t, files))
}

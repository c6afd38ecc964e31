//go:build linux

package verify

import (
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// TestVerifyCacheNeutral: after verify (log, indexes, recovery emulation),
// the page cache holds exactly the pages it held before, as mincore sees it.
func TestVerifyCacheNeutral(t *testing.T) {
	tg, files := gentest.ResidencyPartition(t, 1<<20)
	before := gentest.Residency(t, files)
	sum, err := Run(tg, Options{Jobs: 1}, func(Finding) {})
	if err != nil || sum.Batches < 500 {
		t.Fatalf("verify: %d batches: %v", sum.Batches, err)
	}
	gentest.AssertSameResidency(t, files, before, gentest.Residency(t, files))
}

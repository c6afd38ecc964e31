//go:build linux

package verify

import "testing"

// TestVerifyCacheNeutral: after verify (log, indexes, recovery emulation),
// the page cache holds exactly the pages it held before, as mincore sees it.
func TestVerifyCacheNeutral(t *testing.T) {
	tg, files := residencyPartition(t, 1<<20)
	before := residency(t, files)
	sum, err := Run(tg, Options{Jobs: 1}, func(Finding) {})
	if err != nil || sum.Batches < 500 {
		t.Fatalf("verify: %d batches: %v", sum.Batches, err)
	}
	assertSameResidency(t, files, before, residency(t, files))
}

//go:build linux

package rebuild

import (
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// TestRebuildCacheNeutral: `kseg rebuild` in place on an intact partition
// (every log read, every rebuilt index compared byte for byte with the
// file on disk, nothing written) leaves the page cache as it found it.
func TestRebuildCacheNeutral(t *testing.T) {
	tg, files := gentest.ResidencyPartition(t, 0)
	before := gentest.Residency(t, files)
	res, err := Run(tg, ApplyOptions{})
	if err != nil || len(res) != 1 || res[0].Changed || len(res[0].Written) != 0 {
		t.Fatalf("rebuild: %+v: %v", res, err)
	}
	gentest.AssertSameResidency(t, files, before, gentest.Residency(t, files))
}

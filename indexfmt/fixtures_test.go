package indexfmt_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// realFixtures is the directory of real broker data beside the module.
var realFixtures = fixtures.Dir()

// fixtureIndexFiles lists every .index and .timeindex under the real
// fixtures, or nothing when the directory is absent.
func fixtureIndexFiles(tb testing.TB) []string {
	var files []string
	err := filepath.WalkDir(realFixtures, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".index") || strings.HasSuffix(p, ".timeindex")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// Index files written and closed by real brokers (Kafka 2.x to 4.x): trimmed,
// so every slot is a valid entry; they pass the sanity checks; their columns
// are ordered as the append rules require; and every search over them gives
// brute force's answer for each key and its neighbours.
func TestRealIndexes(t *testing.T) {
	if _, err := os.Stat(realFixtures); os.IsNotExist(err) {
		t.Skipf("real broker fixtures not found at %s", realFixtures)
	}
	files := fixtureIndexFiles(t)
	if len(files) == 0 {
		t.Fatalf("no index files under %s", realFixtures)
	}
	// Entry counts stated in the fixtures' provenance notes.
	golden := map[string]int{
		"kafka40-kraft-snappy-retention/oms_order_status_changed-2/00000000000000010917.index":     69,
		"kafka40-kraft-snappy-retention/oms_order_status_changed-2/00000000000000010917.timeindex": 72,
		"kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000000000.index":           86,
		"kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000005151.index":           33,
		"kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000000000.timeindex":       87,
		"kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000005151.timeindex":       35,
		"kafka361-kraft-windows-metadata/__cluster_metadata-0/00000000000000000000.index":          8,
		"cp76-kraft-lz4-logappendtime/__consumer_offsets-34/00000000000000000000.index":            1,
		"kraft-metadata-tiny/__cluster_metadata-0/00000000000000000000.index":                      0,
		"kraft-metadata-tiny/__cluster_metadata-0/00000000000000000000.timeindex":                  1,
	}
	seen := 0
	spansSplit := false
	for _, p := range files {
		rel, _ := filepath.Rel(realFixtures, p)
		rel = filepath.ToSlash(rel)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			base := baseFromName(p)
			var slots, valid int
			if strings.HasSuffix(p, ".index") {
				x := offsetIdx(data, base)
				slots = x.Slots()
				if valid, err = x.ValidEntries(); err != nil {
					t.Fatal(err)
				}
				if err := x.SanityCheck(); err != nil || x.TrailingBytes() != 0 {
					t.Fatalf("SanityCheck: %v, %d trailing bytes", err, x.TrailingBytes())
				}
				offs, poss := offsetKeys(data, base)
				if !strictlyIncreasing(offs) || !strictlyIncreasing(poss) || len(offs) > 0 && (offs[0] < base || poss[0] < 0) {
					t.Fatalf("offsets %v / positions %v not strictly increasing from the base", offs, poss)
				}
				spansSplit = spansSplit || slots > offsetWarmEntries+1
				for _, k := range offs {
					for target := k - 1; target <= k+1; target++ {
						e, slot, err := x.Lookup(target, nil)
						if want := bruteLower(offs, target); err != nil || slot != want || slot >= 0 && e.Offset != offs[slot] {
							t.Fatalf("Lookup(%d) = %+v slot %d (%v), brute force %d", target, e, slot, err, want)
						}
					}
				}
				for _, k := range poss {
					for target := k - 1; target <= k+1; target++ {
						slot, err := x.UpperBoundByPosition(target, nil)
						want := bruteUpper(poss, target)
						if target == poss[0] { // the broker's slot-0 quirk
							want = 1
							if len(poss) == 1 {
								want = -1
							}
						}
						if err != nil || slot != want {
							t.Fatalf("UpperBoundByPosition(%d) = %d (%v), want %d", target, slot, err, want)
						}
					}
				}
			} else {
				x := timeIdx(data, base)
				slots = x.Slots()
				if valid, err = x.ValidEntries(); err != nil {
					t.Fatal(err)
				}
				if err := x.SanityCheck(); err != nil || x.TrailingBytes() != 0 {
					t.Fatalf("SanityCheck: %v, %d trailing bytes", err, x.TrailingBytes())
				}
				tss, offs := timeKeys(data, base)
				for i := range tss {
					if tss[i] < 0 || offs[i] < base || i > 0 && (tss[i] <= tss[i-1] || offs[i] < offs[i-1]) {
						t.Fatalf("slot %d (%d, %d) breaks maybeAppend's order", i, tss[i], offs[i])
					}
				}
				spansSplit = spansSplit || slots > timeWarmEntries+1
				for _, k := range tss {
					for target := k - 1; target <= k+1; target++ {
						e, slot, err := x.Lookup(target, nil)
						if want := bruteLower(tss, target); err != nil || slot != want || slot >= 0 && e.Timestamp != tss[slot] {
							t.Fatalf("Lookup(%d) = %+v slot %d (%v), brute force %d", target, e, slot, err, want)
						}
					}
				}
				// Offsets may repeat, so compare the search by offset with
				// the pseudo-code rather than with brute force.
				for _, k := range offs {
					for target := k - 1; target <= k+1; target++ {
						slot, err := x.SlotByOffset(target, nil)
						if want, _ := refSearch(offs, timeWarmEntries, target, indexfmt.LargestLowerBound); err != nil || slot != want {
							t.Fatalf("SlotByOffset(%d) = %d (%v), want %d", target, slot, err, want)
						}
					}
				}
			}
			if valid != slots {
				t.Fatalf("ValidEntries %d, Slots %d: a closed index has no padding", valid, slots)
			}
			if want, ok := golden[rel]; ok {
				seen++
				if valid != want {
					t.Fatalf("%d entries, provenance says %d", valid, want)
				}
			}
		})
	}
	if seen != len(golden) {
		t.Errorf("found %d of the %d files with known entry counts", seen, len(golden))
	}
	if !spansSplit {
		t.Error("no real index is larger than its warm section")
	}
}

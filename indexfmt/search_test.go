package indexfmt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

type P = indexfmt.Probe

const (
	wc   = indexfmt.PhaseWarmCheck
	fc   = indexfmt.PhaseFirstCheck
	warm = indexfmt.PhaseWarm
	cold = indexfmt.PhaseCold
)

// Probe sequences worked out by hand from the search pseudo-code (the warm
// check, the first-entry check, then an upper-middle binary search that
// returns at once on equality).
func TestProbeSequencesByHand(t *testing.T) {
	// Ten entries: offsets 100, 110, ..., 190 (relative 0..90), positions
	// 0, 1000, ..., 9000. No cold section: firstHot = max(0, 10-1-1024) = 0.
	rel, pos := make([]int32, 10), make([]int32, 10)
	for i := range rel {
		rel[i], pos[i] = int32(10*i), int32(1000*i)
	}
	small := offsetIdx(offsetBytes(rel, pos), 100)

	// 1030 entries at offsets 0, 2, ..., 2058: firstHot = 1030-1-1024 = 5.
	rel2, pos2 := make([]int32, 1030), make([]int32, 1030)
	for i := range rel2 {
		rel2[i], pos2[i] = int32(2*i), int32(100*i)
	}
	big := offsetIdx(offsetBytes(rel2, pos2), 0)

	cases := []struct {
		name     string
		x        *indexfmt.OffsetIndex
		target   int64
		slot     int
		offset   int64
		position int32
		probes   []P
	}{
		{"between entries", small, 135, 3, 130, 3000, []P{
			{wc, 0, 100, -1}, {warm, 5, 150, 1}, {warm, 2, 120, -1}, {warm, 3, 130, -1}, {warm, 4, 140, 1}}},
		{"exact first", small, 100, 0, 100, 0, []P{
			{wc, 0, 100, 0}, {fc, 0, 100, 0}}},
		{"below first", small, 99, -1, 100, 0, []P{
			{wc, 0, 100, 1}, {fc, 0, 100, 1}}},
		{"exact last", small, 190, 9, 190, 9000, []P{
			{wc, 0, 100, -1}, {warm, 5, 150, -1}, {warm, 7, 170, -1}, {warm, 8, 180, -1}, {warm, 9, 190, 0}}},
		{"above last", small, 1000, 9, 190, 9000, []P{
			{wc, 0, 100, -1}, {warm, 5, 150, -1}, {warm, 7, 170, -1}, {warm, 8, 180, -1}, {warm, 9, 190, -1}}},
		{"cold exact", big, 4, 2, 4, 200, []P{
			{wc, 5, 10, 1}, {fc, 0, 0, -1}, {cold, 3, 6, 1}, {cold, 1, 2, -1}, {cold, 2, 4, 0}}},
		{"warm down to firstHot", big, 11, 5, 10, 500, []P{
			{wc, 5, 10, -1}, {warm, 517, 1034, 1}, {warm, 261, 522, 1}, {warm, 133, 266, 1}, {warm, 69, 138, 1},
			{warm, 37, 74, 1}, {warm, 21, 42, 1}, {warm, 13, 26, 1}, {warm, 9, 18, 1}, {warm, 7, 14, 1}, {warm, 6, 12, 1}}},
		{"firstHot itself is not warm", big, 10, 5, 10, 500, []P{
			{wc, 5, 10, 0}, {fc, 0, 0, -1}, {cold, 3, 6, -1}, {cold, 4, 8, -1}, {cold, 5, 10, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trace, got := collect()
			e, slot, err := c.x.Lookup(c.target, trace)
			if err != nil {
				t.Fatal(err)
			}
			if slot != c.slot || e.Offset != c.offset || e.Position != c.position {
				t.Fatalf("Lookup(%d) = slot %d %+v, want slot %d offset %d position %d", c.target, slot, e, c.slot, c.offset, c.position)
			}
			probesEqual(t, "Lookup", *got, c.probes)
		})
	}
}

func TestTimeProbeSequencesByHand(t *testing.T) {
	// 690 entries, timestamps 1000, 1010, ..., offsets base+i: firstHot =
	// 690-1-682 = 7.
	ts, rel := make([]int64, 690), make([]int32, 690)
	for i := range ts {
		ts[i], rel[i] = 1000+10*int64(i), int32(i)
	}
	x := timeIdx(timeBytes(ts, rel), 500)

	trace, got := collect()
	e, slot, err := x.Lookup(1075, trace)
	if err != nil || slot != 7 || e.Timestamp != 1070 || e.Offset != 507 {
		t.Fatalf("Lookup(1075) = %+v slot %d err %v", e, slot, err)
	}
	probesEqual(t, "warm", *got, []P{
		{wc, 7, 1070, -1}, {warm, 348, 4480, 1}, {warm, 177, 2770, 1}, {warm, 92, 1920, 1}, {warm, 49, 1490, 1},
		{warm, 28, 1280, 1}, {warm, 17, 1170, 1}, {warm, 12, 1120, 1}, {warm, 9, 1090, 1}, {warm, 8, 1080, 1}})

	trace, got = collect()
	e, slot, err = x.Lookup(1030, trace)
	if err != nil || slot != 3 || e.Timestamp != 1030 || e.Offset != 503 {
		t.Fatalf("Lookup(1030) = %+v slot %d err %v", e, slot, err)
	}
	probesEqual(t, "cold", *got, []P{
		{wc, 7, 1070, 1}, {fc, 0, 1000, -1}, {cold, 4, 1040, 1}, {cold, 2, 1020, -1}, {cold, 3, 1030, 0}})

	// The search by offset (TimeIndex.truncateTo) reads the value column.
	trace, got = collect()
	slot, err = x.SlotByOffset(500, trace)
	if err != nil || slot != 0 {
		t.Fatalf("SlotByOffset(500) = %d, %v", slot, err)
	}
	// Slot 0 equals the target but is not above it, so the cold search runs
	// and, never probing slot 0, ends there with lo = 0.
	probesEqual(t, "by offset", *got, []P{{wc, 7, 507, 1}, {fc, 0, 500, 0}, {cold, 4, 504, 1}, {cold, 2, 502, 1}, {cold, 1, 501, 1}})
}

func TestUpperBoundProbesByHand(t *testing.T) {
	// OffsetIndexTest.testFetchUpperBoundOffset's index: positions 0, 10, 23, 37.
	x := offsetIdx(offsetBytes([]int32{0, 1, 2, 3}, []int32{0, 10, 23, 37}), 45)
	trace, got := collect()
	slot, err := x.UpperBoundByPosition(5, trace)
	if err != nil || slot != 1 {
		t.Fatalf("UpperBoundByPosition(5) = %d, %v", slot, err)
	}
	probesEqual(t, "upper bound", *got, []P{{wc, 0, 0, -1}, {warm, 2, 23, 1}, {warm, 1, 10, 1}})

	// Broker quirk: slot 0 is never probed for equality, so a target equal
	// to slot 0's position answers slot 1.
	trace, got = collect()
	slot, err = x.UpperBoundByPosition(0, trace)
	if err != nil || slot != 1 {
		t.Fatalf("UpperBoundByPosition(0) = %d, %v; the broker answers 1", slot, err)
	}
	probesEqual(t, "slot 0 equal", *got, []P{{wc, 0, 0, 0}, {fc, 0, 0, 0}})

	// ... and -1 when slot 0 is the only one.
	one := offsetIdx(offsetBytes([]int32{0}, []int32{0}), 45)
	if slot, err := one.UpperBoundByPosition(0, nil); err != nil || slot != -1 {
		t.Fatalf("single slot UpperBoundByPosition(0) = %d, %v; the broker answers -1", slot, err)
	}
}

// OffsetIndexTest.testFetchUpperBoundOffset: fetchUpperBoundOffset(start,
// size) is the slot of the smallest position >= start.position + size.
func TestUpperBoundByPositionKafkaCases(t *testing.T) {
	empty := offsetIdx(nil, 45)
	if slot, err := empty.UpperBoundByPosition(0+5, nil); err != nil || slot != -1 {
		t.Fatalf("empty: %d, %v", slot, err)
	}
	x := offsetIdx(offsetBytes([]int32{0, 1, 2, 3}, []int32{0, 10, 23, 37}), 45)
	for _, c := range []struct {
		start, size int64
		slot        int
	}{
		{0, 5, 1}, {0, 10, 1}, {0, 23, 2}, {0, 22, 2}, {10, 24, 3}, {37, 1, -1}, {0, 200, -1}, {10, 200, -1},
	} {
		slot, err := x.UpperBoundByPosition(c.start+c.size, nil)
		if err != nil || slot != c.slot {
			t.Errorf("fetchUpperBoundOffset(position %d, size %d) = slot %d, %v; want %d", c.start, c.size, slot, err, c.slot)
		}
		if slot >= 0 {
			e, _ := x.Entry(slot)
			if e.Offset != 45+int64(slot) {
				t.Errorf("slot %d offset %d", slot, e.Offset)
			}
		}
	}
}

// A non-monotonic index: the literal search differs from "largest key <=
// target", and must match the pseudo-code, probe for probe.
func TestCorruptIndexFollowsBroker(t *testing.T) {
	t.Run("out of order entry", func(t *testing.T) {
		rel := []int32{10, 20, 60, 30, 40}
		b := offsetBytes(rel, []int32{0, 1, 2, 3, 4})
		keys, _ := offsetKeys(b, 0)
		if bruteLower(keys, 35) != 3 {
			t.Fatal("test setup: brute force should find slot 3")
		}
		trace, got := collect()
		_, slot, err := offsetIdx(b, 0).Lookup(35, trace)
		if err != nil {
			t.Fatal(err)
		}
		wantSlot, wantProbes := refSearch(keys, offsetWarmEntries, 35, indexfmt.LargestLowerBound)
		if slot != 1 || wantSlot != 1 {
			t.Fatalf("slot %d, reference %d; the broker's search answers 1", slot, wantSlot)
		}
		probesEqual(t, "corrupt", *got, wantProbes)
		probesEqual(t, "by hand", *got, []P{{wc, 0, 10, -1}, {warm, 2, 60, 1}, {warm, 1, 20, -1}})
	})
	t.Run("bad firstHot sends a warm target to the cold section", func(t *testing.T) {
		rel, pos := make([]int32, 1030), make([]int32, 1030)
		for i := range rel {
			rel[i], pos[i] = int32(2*i), int32(i)
		}
		rel[5] = 1_000_000 // slot firstHot = 1030-1-1024
		b := offsetBytes(rel, pos)
		keys, _ := offsetKeys(b, 0)
		if bruteLower(keys, 2000) != 1000 {
			t.Fatal("test setup: brute force should find slot 1000")
		}
		trace, got := collect()
		e, slot, err := offsetIdx(b, 0).Lookup(2000, trace)
		if err != nil {
			t.Fatal(err)
		}
		wantSlot, wantProbes := refSearch(keys, offsetWarmEntries, 2000, indexfmt.LargestLowerBound)
		if slot != 4 || wantSlot != 4 || e.Offset != 8 {
			t.Fatalf("slot %d entry %+v, reference %d; the broker's search answers slot 4 (offset 8)", slot, e, wantSlot)
		}
		probesEqual(t, "corrupt", *got, wantProbes)
		probesEqual(t, "by hand", *got, []P{{wc, 5, 1_000_000, 1}, {fc, 0, 0, -1}, {cold, 3, 6, -1}, {cold, 4, 8, -1}, {cold, 5, 1_000_000, 1}})
	})
}

// differentialSizes spans the warm/cold split of both index types.
func differentialSizes(rng *rand.Rand, short bool) []int {
	var sizes []int
	for n := 0; n <= 40; n++ {
		sizes = append(sizes, n)
	}
	for _, w := range []int{timeWarmEntries, offsetWarmEntries} {
		for d := -2; d <= 3; d++ {
			sizes = append(sizes, w+d)
		}
	}
	sizes = append(sizes, 2047, 2048, 2049, 3000)
	extra := 40
	if short {
		extra = 8
	}
	for range extra {
		sizes = append(sizes, rng.IntN(3001))
	}
	return sizes
}

// increasing returns n strictly increasing values from start, gaps 1..maxGap.
func increasing(rng *rand.Rand, n int, start int64, maxGap int) []int64 {
	v := make([]int64, n)
	x := start
	for i := range v {
		x += 1 + int64(rng.IntN(maxGap))
		v[i] = x
	}
	return v
}

// On a well-formed (strictly increasing) index every search equals brute
// force, for every target from below the first key to past the last; the
// smallest-upper-bound search equals it except for the broker's slot-0 quirk.
func TestSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const base = 1_000_000
	for _, n := range differentialSizes(rng, testing.Short()) {
		offs := increasing(rng, n, base-1, 3) // first may equal base
		poss := increasing(rng, n, -1, 5)     // first may be 0
		tss := increasing(rng, n, 1_600_000_000_000+int64(rng.IntN(1000)), 4)
		rel, pos := make([]int32, n), make([]int32, n)
		trel := make([]int32, n)
		for i := range n {
			rel[i], pos[i] = int32(offs[i]-base), int32(poss[i])
			trel[i] = rel[i]
		}
		ox := offsetIdx(offsetBytes(rel, pos), base)
		tx := timeIdx(timeBytes(tss, trel), base)

		type column struct {
			name   string
			keys   []int64
			mode   indexfmt.Mode
			search func(int64) (int, error)
		}
		cols := []column{
			{"offset index by offset", offs, indexfmt.LargestLowerBound, func(v int64) (int, error) {
				e, s, err := ox.Lookup(v, nil)
				if s >= 0 && (e.Offset != offs[s] || int64(e.Position) != poss[s]) {
					t.Fatalf("n=%d Lookup(%d): entry %+v does not match slot %d", n, v, e, s)
				}
				if s < 0 && (e.Offset != base || e.Position != 0) {
					t.Fatalf("n=%d Lookup(%d) below first: %+v", n, v, e)
				}
				return s, err
			}},
			{"offset index by position", poss, indexfmt.SmallestUpperBound, func(v int64) (int, error) { return ox.UpperBoundByPosition(v, nil) }},
			{"time index by timestamp", tss, indexfmt.LargestLowerBound, func(v int64) (int, error) {
				e, s, err := tx.Lookup(v, nil)
				if s >= 0 && (e.Timestamp != tss[s] || e.Offset != offs[s]) {
					t.Fatalf("n=%d Lookup(%d): entry %+v does not match slot %d", n, v, e, s)
				}
				if s < 0 && (e.Timestamp != -1 || e.Offset != base) {
					t.Fatalf("n=%d Lookup(%d) below first: %+v", n, v, e)
				}
				return s, err
			}},
			{"time index by offset", offs, indexfmt.LargestLowerBound, func(v int64) (int, error) { return tx.SlotByOffset(v, nil) }},
		}
		for _, c := range cols {
			lo, hi := int64(0), int64(10)
			if n > 0 {
				lo, hi = c.keys[0]-2, c.keys[n-1]+2
			}
			// Brute force with a pointer that only moves forward as the
			// target grows: lower = largest slot with key <= target,
			// upper = smallest slot with key >= target.
			lower, upper := -1, 0
			for target := lo; target <= hi; target++ {
				for lower+1 < n && c.keys[lower+1] <= target {
					lower++
				}
				for upper < n && c.keys[upper] < target {
					upper++
				}
				want := lower
				if c.mode == indexfmt.SmallestUpperBound {
					want = upper
					if upper == n {
						want = -1
					}
					if n > 0 && c.keys[0] == target { // broker quirk, see UpperBoundByPosition
						want = 1
						if n == 1 {
							want = -1
						}
					}
				}
				got, err := c.search(target)
				if err != nil || got != want {
					t.Fatalf("%s, %d entries, target %d: slot %d (%v), want %d", c.name, n, target, got, err, want)
				}
			}
		}
	}
}

// On arbitrary (corrupt) indexes the search must be the pseudo-code,
// answer and probes; and a largest-lower-bound answer always has key <=
// target (why a padded index still answers correctly, Appendix A).
func TestSearchMatchesPseudoCodeOnCorruptIndexes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const base = 5000
	shapes := []struct {
		name string
		gen  func(n int) []int64 // relative offsets or timestamps
	}{
		{"random", func(n int) []int64 {
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(rng.IntN(200)) - 20
			}
			return v
		}},
		{"sorted with swaps", func(n int) []int64 {
			v := increasing(rng, n, 0, 3)
			for range 1 + n/50 {
				if n > 1 {
					i, j := rng.IntN(n), rng.IntN(n)
					v[i], v[j] = v[j], v[i]
				}
			}
			return v
		}},
		{"zero-padded tail", func(n int) []int64 {
			v := increasing(rng, n, 0, 3)
			for i := rng.IntN(n + 1); i < n; i++ {
				v[i] = 0
			}
			return v
		}},
		{"duplicates", func(n int) []int64 {
			v := increasing(rng, n, 0, 3)
			for i := 1; i < n; i++ {
				if rng.IntN(4) == 0 {
					v[i] = v[i-1]
				}
			}
			return v
		}},
	}
	sizes := differentialSizes(rng, true)
	for _, sh := range shapes {
		for _, n := range sizes {
			col := sh.gen(n)
			rel, pos, ts := make([]int32, n), make([]int32, n), make([]int64, n)
			for i, v := range col {
				rel[i], pos[i], ts[i] = int32(v), int32(v), v
			}
			ob := offsetBytes(rel, pos)
			tb := timeBytes(ts, rel)
			ox, tx := offsetIdx(ob, base), timeIdx(tb, base)
			offs, poss := offsetKeys(ob, base)
			tss, _ := timeKeys(tb, base)

			targets := []int64{-100, 0, base, base + 1}
			for range 60 {
				targets = append(targets, int64(rng.IntN(260))-40, base+int64(rng.IntN(260))-40)
			}
			for _, target := range targets {
				check := func(what string, keys []int64, warmN int, mode indexfmt.Mode, got int, err error, probes []indexfmt.Probe) {
					t.Helper()
					want, wantProbes := refSearch(keys, warmN, target, mode)
					if err != nil || got != want {
						t.Fatalf("%s %s n=%d target %d: slot %d (%v), pseudo-code %d", sh.name, what, n, target, got, err, want)
					}
					probesEqual(t, sh.name+" "+what, probes, wantProbes)
					if mode == indexfmt.LargestLowerBound && got >= 0 && keys[got] > target {
						t.Fatalf("%s %s: slot %d key %d > target %d", sh.name, what, got, keys[got], target)
					}
				}
				tr, got := collect()
				_, s, err := ox.Lookup(target, tr)
				check("offset Lookup", offs, offsetWarmEntries, indexfmt.LargestLowerBound, s, err, *got)
				tr, got = collect()
				s, err = ox.UpperBoundByPosition(target, tr)
				check("UpperBoundByPosition", poss, offsetWarmEntries, indexfmt.SmallestUpperBound, s, err, *got)
				tr, got = collect()
				_, s, err = tx.Lookup(target, tr)
				check("time Lookup", tss, timeWarmEntries, indexfmt.LargestLowerBound, s, err, *got)
				tr, got = collect()
				s, err = tx.SlotByOffset(target, tr)
				check("SlotByOffset", offs, timeWarmEntries, indexfmt.LargestLowerBound, s, err, *got)
			}
		}
	}
}

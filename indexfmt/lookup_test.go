package indexfmt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

// OffsetIndexTest.lookupExtremeCases: an empty index and a target equal to
// the base offset below the first entry both answer (base offset, 0).
func TestOffsetLookupExtremeCases(t *testing.T) {
	const base = 45
	e, slot, err := offsetIdx(nil, base).Lookup(base, nil)
	if err != nil || slot != -1 || e != (indexfmt.OffsetEntry{Offset: base}) {
		t.Fatalf("empty index: %+v slot %d err %v", e, slot, err)
	}
	b := indexfmt.NewOffsetIndexBuilder(base)
	for i := range 30 {
		if err := b.Append(base+int64(i)+1, int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	x := offsetIdx(b.Bytes(), base)
	e, slot, err = x.Lookup(base, nil)
	if err != nil || slot != -1 || e != (indexfmt.OffsetEntry{Offset: base}) {
		t.Fatalf("below first: %+v slot %d err %v", e, slot, err)
	}
	e, slot, err = x.Lookup(base+30, nil)
	if err != nil || slot != 29 || e != (indexfmt.OffsetEntry{Offset: base + 30, RelativeOffset: 30, Position: 29}) {
		t.Fatalf("last: %+v slot %d err %v", e, slot, err)
	}
	e, slot, err = x.Lookup(1<<62, nil)
	if err != nil || slot != 29 || e.Offset != base+30 {
		t.Fatalf("far above last: %+v slot %d err %v", e, slot, err)
	}
}

// OffsetIndexTest.randomLookupTest: every appended offset is found exactly;
// every other offset answers the floor entry, or (base, 0) below the first.
func TestOffsetRandomLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const base = 45
	if e, slot, _ := offsetIdx(nil, base).Lookup(92, nil); slot != -1 || e.Offset != base || e.Position != 0 {
		t.Fatalf("empty: %+v slot %d", e, slot)
	}
	b := indexfmt.NewOffsetIndexBuilder(base)
	offs := increasing(rng, 30, base+1, 15)
	poss := increasing(rng, 30, 0, 15)
	for i := range offs {
		if err := b.Append(offs[i], int32(poss[i])); err != nil {
			t.Fatal(err)
		}
	}
	x := offsetIdx(b.Bytes(), base)
	for i := range offs {
		e, slot, err := x.Lookup(offs[i], nil)
		if err != nil || slot != i || e.Offset != offs[i] || int64(e.Position) != poss[i] {
			t.Fatalf("Lookup(%d) = %+v slot %d err %v", offs[i], e, slot, err)
		}
	}
	for target := int64(base); target <= offs[29]; target++ {
		e, slot, err := x.Lookup(target, nil)
		want := bruteLower(offs, target)
		if err != nil || slot != want {
			t.Fatalf("Lookup(%d): slot %d, want %d", target, slot, want)
		}
		if want < 0 && (e.Offset != base || e.Position != 0) || want >= 0 && e.Offset != offs[want] {
			t.Fatalf("Lookup(%d) = %+v", target, e)
		}
	}
}

// OffsetIndexTest.testEntry / testEntryOverflow.
func TestOffsetEntry(t *testing.T) {
	const base = 45
	b := indexfmt.NewOffsetIndexBuilder(base)
	for i := range 30 {
		if err := b.Append(base+int64(i), int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	x := offsetIdx(b.Bytes(), base)
	for i := range 30 {
		e, err := x.Entry(i)
		if err != nil || e != (indexfmt.OffsetEntry{Offset: base + int64(i), RelativeOffset: int32(i), Position: int32(i)}) {
			t.Fatalf("Entry(%d) = %+v, %v", i, e, err)
		}
	}
	for _, n := range []int{-1, 30, 31} {
		if _, err := x.Entry(n); err == nil {
			t.Errorf("Entry(%d) on 30 slots: no error", n)
		}
	}
	if _, err := offsetIdx(nil, base).Entry(0); err == nil {
		t.Error("Entry(0) on an empty index: no error")
	}
	last, err := x.LastEntry()
	if err != nil || last.Offset != base+29 || last.Position != 29 {
		t.Fatalf("LastEntry = %+v, %v", last, err)
	}
	if last, err := offsetIdx(nil, base).LastEntry(); err != nil || last != (indexfmt.OffsetEntry{Offset: base}) {
		t.Fatalf("empty LastEntry = %+v, %v", last, err)
	}
}

// OffsetIndexTest.truncate, on the bytes a closed index would hold after each
// truncateTo (the broker trims the file to the kept entries): the number of
// entries kept is derived from Lookup the way OffsetIndex.truncateTo does.
func TestOffsetLookupAfterTruncation(t *testing.T) {
	b := indexfmt.NewOffsetIndexBuilder(0)
	for i := 1; i < 10; i++ {
		if err := b.Append(int64(i), int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	full := b.Bytes()
	keep := func(data []byte, offset int64) int {
		e, slot, err := offsetIdx(data, 0).Lookup(offset, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case slot < 0:
			return 0
		case e.Offset == offset:
			return slot
		}
		return slot + 1
	}
	for _, c := range []struct {
		truncateTo, kept int64
		lookup, wantOff  int64
		wantPos          int32
	}{
		{12, 9, 10, 9, 9}, // past the end: unchanged
		{10, 9, 10, 9, 9}, // at the end: unchanged
		{9, 8, 10, 8, 8},  // drops the exact match
		{5, 4, 10, 4, 4},
		{1, 0, 10, 0, 0}, // nothing below: empty, Lookup answers (base, 0)
	} {
		n := keep(full, c.truncateTo)
		if int64(n) != c.kept {
			t.Fatalf("truncateTo(%d) keeps %d entries, want %d", c.truncateTo, n, c.kept)
		}
		e, _, err := offsetIdx(full[:n*8], 0).Lookup(c.lookup, nil)
		if err != nil || e.Offset != c.wantOff || e.Position != c.wantPos {
			t.Fatalf("after truncateTo(%d): Lookup(%d) = %+v, %v", c.truncateTo, c.lookup, e, err)
		}
	}
}

// A zero-padded offset index: the broker counts every padding slot, so the
// warm search runs into the padding and answers its last slot (base, 0), a
// correct (if useless) lower bound; targets at or below the first entry
// behave as usual.
func TestOffsetLookupPadded(t *testing.T) {
	const base = 1000
	pad := make([]byte, 5*8)
	atBase := append(offsetBytes([]int32{0, 10, 20}, []int32{0, 300, 600}), pad...)
	above := append(offsetBytes([]int32{5, 10, 20}, []int32{0, 300, 600}), pad...)
	for _, c := range []struct {
		name   string
		b      []byte
		target int64
		slot   int
		want   indexfmt.OffsetEntry
	}{
		{"real entry between", atBase, 1015, 7, indexfmt.OffsetEntry{Offset: base}},
		{"real entry exact", atBase, 1020, 7, indexfmt.OffsetEntry{Offset: base}},
		{"slot 0 exact", atBase, 1000, 0, indexfmt.OffsetEntry{Offset: base}},
		{"below first", atBase, 999, -1, indexfmt.OffsetEntry{Offset: base}},
		{"first above base, between", above, 1007, 7, indexfmt.OffsetEntry{Offset: base}},
		{"first above base, below first", above, 1003, -1, indexfmt.OffsetEntry{Offset: base}},
	} {
		e, slot, err := offsetIdx(c.b, base).Lookup(c.target, nil)
		if err != nil || slot != c.slot || e != c.want {
			t.Errorf("%s: Lookup(%d) = %+v slot %d err %v; want %+v slot %d", c.name, c.target, e, slot, err, c.want, c.slot)
		}
	}

	// Larger: 1400 slots, the first 600 real, spanning the warm/cold split.
	// Every answer is a real entry <= target or a (base, 0) slot, and is what
	// the pseudo-code gives.
	rel, pos := make([]int32, 1400), make([]int32, 1400)
	for i := range 600 {
		rel[i], pos[i] = int32(3*i+1), int32(50*i)
	}
	b := offsetBytes(rel, pos)
	keys, _ := offsetKeys(b, base)
	x := offsetIdx(b, base)
	for target := int64(base - 2); target < base+1900; target++ {
		e, slot, err := x.Lookup(target, nil)
		want, _ := refSearch(keys, offsetWarmEntries, target, indexfmt.LargestLowerBound)
		if err != nil || slot != want {
			t.Fatalf("Lookup(%d): slot %d (%v), pseudo-code %d", target, slot, err, want)
		}
		realEntry := slot >= 0 && slot < 600 && e.Offset <= target && e.Offset == keys[slot]
		padding := (slot < 0 || slot >= 600) && e.Offset == base && e.Position == 0
		if !realEntry && !padding {
			t.Fatalf("Lookup(%d) = %+v slot %d: neither a real lower bound nor (base, 0)", target, e, slot)
		}
	}
}

// TimeIndexTest.testLookUp / testEntry / testLastEntry / testTruncate.
func TestTimeLookupKafkaCases(t *testing.T) {
	const base = 45
	if e, slot, err := timeIdx(nil, base).Lookup(100, nil); err != nil || slot != -1 || e != (indexfmt.TimeEntry{Timestamp: -1, Offset: base}) {
		t.Fatalf("empty: %+v slot %d err %v", e, slot, err)
	}
	if e, err := timeIdx(nil, base).LastEntry(); err != nil || e != (indexfmt.TimeEntry{Timestamp: -1, Offset: base}) {
		t.Fatalf("empty LastEntry: %+v %v", e, err)
	}
	b := indexfmt.NewTimeIndexBuilder(base)
	for i := int64(1); i <= 29; i++ {
		if err := b.MaybeAppend(i*10, i*10+base); err != nil {
			t.Fatal(err)
		}
	}
	x := timeIdx(b.Bytes(), base)
	for _, c := range []struct {
		target int64
		want   indexfmt.TimeEntry
		slot   int
	}{
		{9, indexfmt.TimeEntry{Timestamp: -1, Offset: base}, -1},
		{25, indexfmt.TimeEntry{Timestamp: 20, Offset: 65, RelativeOffset: 20}, 1},
		{30, indexfmt.TimeEntry{Timestamp: 30, Offset: 75, RelativeOffset: 30}, 2},
		{10, indexfmt.TimeEntry{Timestamp: 10, Offset: 55, RelativeOffset: 10}, 0},
		{290, indexfmt.TimeEntry{Timestamp: 290, Offset: 335, RelativeOffset: 290}, 28},
		{1 << 62, indexfmt.TimeEntry{Timestamp: 290, Offset: 335, RelativeOffset: 290}, 28},
	} {
		e, slot, err := x.Lookup(c.target, nil)
		if err != nil || slot != c.slot || e != c.want {
			t.Errorf("Lookup(%d) = %+v slot %d err %v; want %+v slot %d", c.target, e, slot, err, c.want, c.slot)
		}
	}
	for i, want := range [][2]int64{{10, 55}, {20, 65}, {30, 75}, {40, 85}} {
		e, err := x.Entry(i)
		if err != nil || e.Timestamp != want[0] || e.Offset != want[1] {
			t.Errorf("Entry(%d) = %+v, %v", i, e, err)
		}
	}
	if _, err := x.Entry(29); err == nil {
		t.Error("Entry(29) of 29: no error")
	}
	if _, err := timeIdx(nil, base).Entry(0); err == nil {
		t.Error("Entry(0) of an empty time index: no error")
	}
	if e, err := x.LastEntry(); err != nil || e.Timestamp != 290 || e.Offset != 335 {
		t.Errorf("LastEntry = %+v, %v", e, err)
	}
	// truncateTo(10 + base): the search by offset finds slot 0 exactly, so
	// no entry is kept.
	if slot, err := x.SlotByOffset(10+base, nil); err != nil || slot != 0 {
		t.Errorf("SlotByOffset(55) = %d, %v", slot, err)
	}
	if slot, err := x.SlotByOffset(base, nil); err != nil || slot != -1 {
		t.Errorf("SlotByOffset(base) = %d, %v", slot, err)
	}
	if slot, err := x.SlotByOffset(base+123, nil); err != nil || slot != 11 {
		t.Errorf("SlotByOffset(base+123) = %d, %v", slot, err)
	}
}

// A zero-padded time index: padding reads (timestamp 0, base offset), the
// last entry is a padding slot (KAFKA-10207), and a lookup at or above the
// first timestamp runs into it.
func TestTimeLookupPadded(t *testing.T) {
	const base = 200
	b := append(timeBytes([]int64{1_700_000_000_000, 1_700_000_000_500}, []int32{3, 9}), make([]byte, 4*12)...)
	x := timeIdx(b, base)
	padding := indexfmt.TimeEntry{Timestamp: 0, Offset: base}
	if e, slot, err := x.Lookup(1_700_000_000_100, nil); err != nil || slot != 5 || e != padding {
		t.Errorf("Lookup above first = %+v slot %d err %v; want the last padding slot", e, slot, err)
	}
	if e, slot, err := x.Lookup(5, nil); err != nil || slot != -1 || e != (indexfmt.TimeEntry{Timestamp: -1, Offset: base}) {
		t.Errorf("Lookup below first = %+v slot %d err %v", e, slot, err)
	}
	if e, err := x.LastEntry(); err != nil || e != padding {
		t.Errorf("LastEntry = %+v, %v; want (0, base)", e, err)
	}
	if n, err := x.ValidEntries(); err != nil || n != 2 {
		t.Errorf("ValidEntries = %d, %v", n, err)
	}
}

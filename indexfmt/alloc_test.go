package indexfmt_test

import (
	"math/rand/v2"
	"testing"
)

// lookupTargets spreads targets over an index's key range (and a little
// beyond both ends), so that warm, cold and edge paths are all exercised.
func lookupTargets(first, last int64, n int) []int64 {
	rng := rand.New(rand.NewPCG(11, 12))
	span := last - first + 1
	t := make([]int64, n)
	for i := range t {
		t[i] = first - 2 + rng.Int64N(span+4)
	}
	// The last few slots (warm) more often, as a broker sees them.
	for i := 0; i < n; i += 4 {
		t[i] = last - rng.Int64N(min(span, 2000))
	}
	return t
}

// Lookups with no trace allocate nothing, whatever path they take.
func TestLookupDoesNotAllocate(t *testing.T) {
	ob, tb := bigIndexes()
	ox := offsetIdx(ob, 0)
	tx := timeIdx(tb, 0)
	lastOff := int64(2 * (len(ob)/8 - 1))
	lastTS := int64(1_000_000_000_000 + 3*(len(tb)/12-1))
	offTargets := lookupTargets(0, lastOff, 1024)
	tsTargets := lookupTargets(1_000_000_000_000, lastTS, 1024)

	i := 0
	var sink int
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"OffsetIndex.Lookup", func() { _, s, _ := ox.Lookup(offTargets[i%1024], nil); sink += s; i++ }},
		{"OffsetIndex.UpperBoundByPosition", func() { s, _ := ox.UpperBoundByPosition(offTargets[i%1024]*50, nil); sink += s; i++ }},
		{"TimeIndex.Lookup", func() { _, s, _ := tx.Lookup(tsTargets[i%1024], nil); sink += s; i++ }},
		{"TimeIndex.SlotByOffset", func() { s, _ := tx.SlotByOffset(offTargets[i%1024], nil); sink += s; i++ }},
		{"OffsetIndex.Entry", func() { e, _ := ox.Entry(i % 1000); sink += int(e.Position); i++ }},
		{"TimeIndex.LastEntry", func() { e, _ := tx.LastEntry(); sink += int(e.Offset); i++ }},
	} {
		if a := testing.AllocsPerRun(2000, c.f); a != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.name, a)
		}
	}
	if sink == 0 {
		t.Fatal("lookups returned nothing")
	}
}

func BenchmarkOffsetLookup(b *testing.B) {
	ob, _ := bigIndexes()
	x := offsetIdx(ob, 0)
	targets := lookupTargets(0, int64(2*(len(ob)/8-1)), 4096)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, _, err := x.Lookup(targets[i&4095], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkTimeLookup(b *testing.B) {
	_, tb := bigIndexes()
	x := timeIdx(tb, 0)
	targets := lookupTargets(1_000_000_000_000, int64(1_000_000_000_000+3*(len(tb)/12-1)), 4096)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, _, err := x.Lookup(targets[i&4095], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkValidEntries(b *testing.B) {
	ob, _ := bigIndexes()
	x := offsetIdx(ob, 0)
	b.SetBytes(int64(len(ob)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := x.ValidEntries(); err != nil || n != len(ob)/8 {
			b.Fatal(n, err)
		}
	}
}

package fileio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

// failAfter is a ReaderAt whose bytes from limit on cannot be read, as a
// mapped file cut short by another process.
type failAfter struct {
	r     io.ReaderAt
	limit int64
}

var errGone = errors.New("gone")

func (f failAfter) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.limit {
		return 0, errGone // a fault copies nothing
	}
	return f.r.ReadAt(p, off)
}

// countingReader counts the reads and bytes that go through it.
type countingReader struct {
	r            io.ReaderAt
	reads, bytes atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	c.bytes.Add(int64(len(p)))
	return c.r.ReadAt(p, off)
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestIndexSlotsInAnyOrder reads every slot in order, in reverse and at
// random, through the chunked reader, and compares each with the same
// index read from its bytes: across chunk boundaries, with a trailing
// partial slot, and with the bytes past a limit unreadable (the slots
// before it must still read, the ones after it must fail naming their
// slot and wrapping the reader's error).
func TestIndexSlotsInAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, slots := range []int{1, 2, seqChunkSlots - 1, seqChunkSlots, seqChunkSlots + 1, 3*seqChunkSlots + 7} {
		for _, trailing := range []int{0, 5} {
			data := randomBytes(r, slots*indexfmt.OffsetEntrySize+trailing)
			mem := indexfmt.NewOffsetIndex(data, 100)
			want := func(n int) indexfmt.OffsetEntry {
				e, err := mem.Entry(n)
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
			x := indexfmt.NewOffsetIndexFrom(NewIndexSlots(bytes.NewReader(data), int64(len(data))), 100)
			if x.Slots() != slots || x.TrailingBytes() != trailing {
				t.Fatalf("%d slots + %d: read as %d slots + %d", slots, trailing, x.Slots(), x.TrailingBytes())
			}
			check := func(order []int) {
				for _, n := range order {
					e, err := x.Entry(n)
					if err != nil || e != want(n) {
						t.Fatalf("%d slots: slot %d: %+v, %v; want %+v", slots, n, e, err, want(n))
					}
				}
			}
			inOrder := make([]int, slots)
			for i := range inOrder {
				inOrder[i] = i
			}
			check(inOrder)
			check(append([]int{slots - 1, 0}, inOrder...))
			reverse := make([]int, slots)
			for i := range reverse {
				reverse[i] = slots - 1 - i
			}
			check(reverse)
			check(r.Perm(slots))

			// Unreadable from the middle of a slot in the second chunk on.
			limit := int64(min(slots, seqChunkSlots+3)*indexfmt.OffsetEntrySize) - 3
			y := indexfmt.NewOffsetIndexFrom(NewIndexSlots(failAfter{bytes.NewReader(data), limit}, int64(len(data))), 100)
			for n := range slots {
				e, err := y.Entry(n)
				readable := int64(n+1)*indexfmt.OffsetEntrySize <= limit
				switch {
				case readable && (err != nil || e != want(n)):
					t.Fatalf("%d slots, limit %d: slot %d: %+v, %v; want %+v", slots, limit, n, e, err, want(n))
				case !readable && !errors.Is(err, errGone):
					t.Fatalf("%d slots, limit %d: slot %d: err %v, want %v", slots, limit, n, err, errGone)
				}
			}
			if _, err := y.ValidEntries(); slots > seqChunkSlots && !errors.Is(err, errGone) {
				t.Fatalf("%d slots, limit %d: ValidEntries: %v, want %v", slots, limit, err, errGone)
			}
		}
	}
	// Time index slots are 12 bytes: the chunk holds whole slots only.
	data := make([]byte, (seqChunkSlots+2)*indexfmt.TimeEntrySize)
	for i := range seqChunkSlots + 2 {
		binary.BigEndian.PutUint64(data[i*indexfmt.TimeEntrySize:], uint64(1000+i))
		binary.BigEndian.PutUint32(data[i*indexfmt.TimeEntrySize+8:], uint32(i))
	}
	x := indexfmt.NewTimeIndexFrom(NewIndexSlots(bytes.NewReader(data), int64(len(data))), 0)
	for i := range seqChunkSlots + 2 {
		e, err := x.Entry(i)
		if err != nil || e.Timestamp != int64(1000+i) || e.Offset != int64(i) {
			t.Fatalf("time slot %d: %+v %v", i, e, err)
		}
	}
}

// TestIndexSlotsReset: a reader reset onto another file reads that
// file's slots only (nothing of the previous file's chunk survives, though
// its buffer is reused), with the new size, and its in-order reads
// allocate nothing.
func TestIndexSlotsReset(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a := randomBytes(r, 3*seqChunkSlots*indexfmt.OffsetEntrySize)
	b := randomBytes(r, (seqChunkSlots+9)*indexfmt.OffsetEntrySize)
	var s IndexSlots // a zero value, as a worker keeps one
	x := indexfmt.NewOffsetIndexFrom(s.Reset(bytes.NewReader(a), int64(len(a))), 100)
	for n := range 100 { // the chunk holds a's slots 1..512
		if _, err := x.Entry(n); err != nil {
			t.Fatal(err)
		}
	}
	x = indexfmt.NewOffsetIndexFrom(s.Reset(bytes.NewReader(b), int64(len(b))), 7000)
	if x.Slots() != seqChunkSlots+9 || x.Size() != int64(len(b)) {
		t.Fatalf("after Reset: %d slots, size %d", x.Slots(), x.Size())
	}
	sameEntries(t, "offset index after Reset", x.Slots(), x.Entry, indexfmt.NewOffsetIndex(b, 7000).Entry)
	if _, err := x.Entry(x.Slots()); err == nil {
		t.Fatal("a slot past the new file's end reads")
	}

	// The same reader, now for 12-byte slots: nothing of the 8-byte chunk
	// is taken for them.
	c := randomBytes(r, 5*indexfmt.TimeEntrySize)
	y := indexfmt.NewTimeIndexFrom(s.Reset(bytes.NewReader(c), int64(len(c))), 50)
	sameEntries(t, "time index after Reset", y.Slots(), y.Entry, indexfmt.NewTimeIndex(c, 50).Entry)

	ra, rb := bytes.NewReader(a), bytes.NewReader(b)
	allocs := testing.AllocsPerRun(10, func() {
		for _, f := range []*bytes.Reader{ra, rb} {
			x := indexfmt.NewOffsetIndexFrom(s.Reset(f, f.Size()), 100)
			for n := range x.Slots() {
				x.Entry(n)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("reading files in order through one reset reader allocates %.0f times", allocs)
	}
}

// sortedOffsetIndex is an offset index of n entries, relative offsets
// 2i+1 and positions 100i, as a broker writes them.
func sortedOffsetIndex(n int) []byte {
	b := make([]byte, 0, n*indexfmt.OffsetEntrySize)
	for i := range n {
		b = indexfmt.AppendOffsetEntry(b, int32(2*i+1), int32(100*i))
	}
	return b
}

// TestIndexSlotsSearchAsBytes: every search gives the same answer with
// the same probes through the file reader (pread and mapped) as over the
// index's bytes, on a sorted index and on corrupt ones, and the file
// reader keeps its chunked in-order reads correct between searches.
func TestIndexSlotsSearchAsBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	files := map[string][]byte{
		"sorted":  sortedOffsetIndex(5000),
		"random":  randomBytes(r, 3000*indexfmt.OffsetEntrySize+3),
		"padded":  append(sortedOffsetIndex(1500), make([]byte, 700*indexfmt.OffsetEntrySize)...),
		"one":     sortedOffsetIndex(1),
		"warm":    sortedOffsetIndex(1025),
		"shuffle": sortedOffsetIndex(2000),
	}
	sh := files["shuffle"]
	for i := 0; i < 200; i++ {
		a, b := r.IntN(2000)*8, r.IntN(2000)*8
		for k := range 8 {
			sh[a+k], sh[b+k] = sh[b+k], sh[a+k]
		}
	}
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		mem := indexfmt.NewOffsetIndex(data, 1000)
		memTime := indexfmt.NewTimeIndex(data, 1000)
		for _, mapped := range []bool{false, true} {
			f, err := Open(path, Options{Mapped: mapped})
			if err != nil {
				t.Fatal(err)
			}
			x := indexfmt.NewOffsetIndexFrom(NewIndexSlots(f, f.Size()), 1000)
			tx := indexfmt.NewTimeIndexFrom(NewIndexSlots(f, f.Size()), 1000)
			var got, want []indexfmt.Probe
			tr := func(p *[]indexfmt.Probe) func(indexfmt.Probe) {
				return func(q indexfmt.Probe) { *p = append(*p, q) }
			}
			same := func(what string, target int64, g, w any) {
				t.Helper()
				if g != w || !slices.Equal(got, want) {
					t.Fatalf("%s mapped=%v: %s(%d): %v with probes %v; over bytes %v with probes %v", name, mapped, what, target, g, got, w, want)
				}
				got, want = got[:0], want[:0]
			}
			for i := range 400 {
				target := 1000 + r.Int64N(int64(2*mem.Slots()+4)) - 2
				_, gs, ge := x.Lookup(target, tr(&got))
				_, ws, we := mem.Lookup(target, tr(&want))
				same("Lookup", target, [2]any{gs, ge}, [2]any{ws, we})
				gp, ge := x.UpperBoundByPosition(target*50, tr(&got))
				wp, we := mem.UpperBoundByPosition(target*50, tr(&want))
				same("UpperBoundByPosition", target*50, [2]any{gp, ge}, [2]any{wp, we})
				gt, _, ge := tx.Lookup(target, tr(&got))
				wt, _, we := memTime.Lookup(target, tr(&want))
				same("TimeIndex.Lookup", target, [2]any{gt, ge}, [2]any{wt, we})
				if i%50 == 0 { // in-order reads between searches
					gv, ge := x.ValidEntries()
					wv, we := mem.ValidEntries()
					same("ValidEntries", 0, [2]any{gv, ge}, [2]any{wv, we})
					gb, ge := tx.EntriesBeforePadding()
					wb, we := memTime.EntriesBeforePadding()
					same("EntriesBeforePadding", 0, [2]any{gb, ge}, [2]any{wb, we})
					for n := range x.Slots() {
						g, ge := x.Entry(n)
						w, we := mem.Entry(n)
						same("Entry", int64(n), [2]any{g, ge}, [2]any{w, we})
					}
				}
			}
			f.Close()
		}
	}
}

// sameEntries compares slots 0..n-1 read by got with those read by want.
func sameEntries[E comparable](t *testing.T, what string, n int, got, want func(int) (E, error)) {
	t.Helper()
	for i := range n {
		g, err := got(i)
		w, werr := want(i)
		if err != nil || werr != nil || g != w {
			t.Fatalf("%s: slot %d: %+v %v, want %+v %v", what, i, g, err, w, werr)
		}
	}
}

// TestIndexLookupReadsAFewPages: a lookup in a full 10 MiB offset index
// (segment.index.bytes' default) reads a few slots, never the file: the
// broker's search touches a few pages. The bound, 1 KiB a lookup, is the
// prefetched last levels (under 64 slots, 512 bytes) and one slot per
// probe above them.
func TestIndexLookupReadsAFewPages(t *testing.T) {
	data := sortedOffsetIndex(10 << 20 / indexfmt.OffsetEntrySize)
	cr := &countingReader{r: bytes.NewReader(data)}
	x := indexfmt.NewOffsetIndexFrom(NewIndexSlots(cr, int64(len(data))), 0)
	r := rand.New(rand.NewPCG(7, 8))
	const lookups = 1000
	for range lookups {
		target := r.Int64N(int64(2 * x.Slots()))
		e, _, err := x.Lookup(target, nil)
		if err != nil || e.Offset > target || (target > 0 && e.Offset+2 <= target) {
			t.Fatalf("Lookup(%d): %+v %v", target, e, err)
		}
	}
	if per := cr.bytes.Load() / lookups; per > 1024 {
		t.Errorf("a lookup in a 10 MiB index reads %d bytes (%d reads)", per, cr.reads.Load()/lookups)
	}
	t.Logf("%.1f reads, %d bytes a lookup", float64(cr.reads.Load())/lookups, cr.bytes.Load()/lookups)
}

// bigIndexes are a full 10 MiB offset index (offsets 2i, positions 100i)
// and a full time index (timestamps 10^12+3i, offsets 2i), read through
// IndexSlots over their bytes, and targets spread over their keys (and a
// little beyond both ends), a quarter of them among the last slots, as a
// broker sees them. They match indexfmt's lookup benchmarks, which read
// the same indexes from bytes.
func bigIndexes() (*indexfmt.OffsetIndex, *indexfmt.TimeIndex, []int64, []int64) {
	const offsetSlots, timeSlots = 10 << 20 / 8, 10 << 20 / 12
	ob := make([]byte, 0, offsetSlots*8)
	for i := range offsetSlots {
		ob = indexfmt.AppendOffsetEntry(ob, int32(2*i), int32(100*i))
	}
	tb := make([]byte, 0, timeSlots*12)
	for i := range timeSlots {
		tb = indexfmt.AppendTimeEntry(tb, 1_000_000_000_000+3*int64(i), int32(2*i))
	}
	targets := func(first, last int64) []int64 {
		rng := rand.New(rand.NewPCG(11, 12))
		span := last - first + 1
		t := make([]int64, 4096)
		for i := range t {
			t[i] = first - 2 + rng.Int64N(span+4)
		}
		for i := 0; i < len(t); i += 4 {
			t[i] = last - rng.Int64N(min(span, 2000))
		}
		return t
	}
	return indexfmt.NewOffsetIndexFrom(NewIndexSlots(bytes.NewReader(ob), int64(len(ob))), 0),
		indexfmt.NewTimeIndexFrom(NewIndexSlots(bytes.NewReader(tb), int64(len(tb))), 0),
		targets(0, 2*(offsetSlots-1)), targets(1_000_000_000_000, 1_000_000_000_000+3*(timeSlots-1))
}

// Lookups through IndexSlots with no trace allocate nothing, whatever
// path they take.
func TestIndexSlotsLookupDoesNotAllocate(t *testing.T) {
	ox, tx, offTargets, tsTargets := bigIndexes()
	ops := map[string]func(i int) int{
		"OffsetIndex.Lookup":               func(i int) int { _, s, _ := ox.Lookup(offTargets[i%4096], nil); return s },
		"OffsetIndex.UpperBoundByPosition": func(i int) int { s, _ := ox.UpperBoundByPosition(offTargets[i%4096]*50, nil); return s },
		"TimeIndex.Lookup":                 func(i int) int { _, s, _ := tx.Lookup(tsTargets[i%4096], nil); return s },
		"TimeIndex.SlotByOffset":           func(i int) int { s, _ := tx.SlotByOffset(offTargets[i%4096], nil); return s },
		"OffsetIndex.Entry":                func(i int) int { e, _ := ox.Entry(i % 1000); return int(e.Position) },
		"TimeIndex.LastEntry":              func(int) int { e, _ := tx.LastEntry(); return int(e.Offset) },
		"OffsetIndex.EntriesBeforePadding": func(int) int { n, _ := ox.EntriesBeforePadding(); return n },
	}
	sink := 0
	for name, op := range ops {
		i := 0
		if a := testing.AllocsPerRun(2000, func() { sink += op(i); i++ }); a != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, a)
		}
	}
	if sink == 0 {
		t.Fatal("lookups returned nothing")
	}
}

// BenchmarkIndexSlots times the broker's searches and the padding count
// in 10 MiB indexes read through IndexSlots over a ReaderAt (what a
// lookup in a mapped index file does, less the fault guard).
func BenchmarkIndexSlots(b *testing.B) {
	ox, tx, offTargets, tsTargets := bigIndexes()
	b.Run("OffsetLookup", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, _, err := ox.Lookup(offTargets[i&4095], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("TimeLookup", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, _, err := tx.Lookup(tsTargets[i&4095], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ValidEntries", func(b *testing.B) {
		b.SetBytes(ox.Size())
		b.ReportAllocs()
		for b.Loop() {
			if n, err := ox.ValidEntries(); err != nil || n != ox.Slots() {
				b.Fatal(n, err)
			}
		}
	})
}

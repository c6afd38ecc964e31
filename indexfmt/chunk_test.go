package indexfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
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

// TestSequentialEntriesChunked reads every slot in order, in reverse and at
// random, through the chunked sequential path, and compares each with the
// file's bytes: across chunk boundaries, with a trailing partial slot, and
// with the bytes past a limit unreadable (the slots before it must still
// read, the ones after it must fail naming their slot).
func TestSequentialEntriesChunked(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, slots := range []int{1, 2, seqChunkSlots - 1, seqChunkSlots, seqChunkSlots + 1, 3*seqChunkSlots + 7} {
		for _, trailing := range []int{0, 5} {
			data := make([]byte, slots*OffsetEntrySize+trailing)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			want := func(n int) OffsetEntry { return decodeOffsetEntry(data[n*OffsetEntrySize:], 100) }
			x := NewOffsetIndex(bytes.NewReader(data), int64(len(data)), 100)
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
			limit := int64(min(slots, seqChunkSlots+3)*OffsetEntrySize) - 3
			y := NewOffsetIndex(failAfter{bytes.NewReader(data), limit}, int64(len(data)), 100)
			for n := range slots {
				e, err := y.Entry(n)
				readable := int64(n+1)*OffsetEntrySize <= limit
				switch {
				case readable && (err != nil || e != want(n)):
					t.Fatalf("%d slots, limit %d: slot %d: %+v, %v; want %+v", slots, limit, n, e, err, want(n))
				case !readable && !errors.Is(err, errGone):
					t.Fatalf("%d slots, limit %d: slot %d: err %v, want %v", slots, limit, n, err, errGone)
				}
			}
		}
	}
	// Time index slots are 12 bytes: the chunk holds whole slots only.
	data := make([]byte, (seqChunkSlots+2)*TimeEntrySize)
	for i := range seqChunkSlots + 2 {
		binary.BigEndian.PutUint64(data[i*TimeEntrySize:], uint64(1000+i))
		binary.BigEndian.PutUint32(data[i*TimeEntrySize+8:], uint32(i))
	}
	x := NewTimeIndex(bytes.NewReader(data), int64(len(data)), 0)
	for i := range seqChunkSlots + 2 {
		e, err := x.Entry(i)
		if err != nil || e.Timestamp != int64(1000+i) || e.Offset != int64(i) {
			t.Fatalf("time slot %d: %+v %v", i, e, err)
		}
	}
}

// TestResetReadsTheNewFile: an index value reset onto another file reads
// that file's slots only (nothing of the previous file's chunk survives,
// though its buffer is reused), with the new base offset and size, and
// its in-order reads allocate nothing.
func TestResetReadsTheNewFile(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	file := func(slots, size int) []byte {
		b := make([]byte, slots*size)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	a, b := file(3*seqChunkSlots, OffsetEntrySize), file(seqChunkSlots+9, OffsetEntrySize)
	x := NewOffsetIndex(bytes.NewReader(a), int64(len(a)), 100)
	for n := range 100 { // the chunk holds a's slots 1..512
		if _, err := x.Entry(n); err != nil {
			t.Fatal(err)
		}
	}
	x.Reset(bytes.NewReader(b), int64(len(b)), 7000)
	if x.Slots() != seqChunkSlots+9 || x.BaseOffset != 7000 || x.Size() != int64(len(b)) {
		t.Fatalf("after Reset: %d slots, base %d, size %d", x.Slots(), x.BaseOffset, x.Size())
	}
	for n := range x.Slots() {
		e, err := x.Entry(n)
		want := decodeOffsetEntry(b[n*OffsetEntrySize:], 7000)
		if err != nil || e != want {
			t.Fatalf("offset slot %d after Reset: %+v %v, want %+v", n, e, err, want)
		}
	}
	if _, err := x.Entry(x.Slots()); err == nil {
		t.Fatal("a slot past the new file's end reads")
	}

	c, d := file(2*seqChunkSlots, TimeEntrySize), file(5, TimeEntrySize)
	var y TimeIndex // a zero value, as a worker keeps one
	y.Reset(bytes.NewReader(c), int64(len(c)), 0)
	for n := range 3 {
		y.Entry(n)
	}
	y.Reset(bytes.NewReader(d), int64(len(d)), 50)
	if y.Slots() != 5 {
		t.Fatalf("time index reset onto 5 slots has %d", y.Slots())
	}
	for n := range y.Slots() {
		e, err := y.Entry(n)
		s := d[n*TimeEntrySize:]
		rel := int32(binary.BigEndian.Uint32(s[8:]))
		if want := (TimeEntry{Timestamp: int64(binary.BigEndian.Uint64(s)), Offset: 50 + int64(rel), RelativeOffset: rel}); err != nil || e != want {
			t.Fatalf("time slot %d after Reset: %+v %v, want %+v", n, e, err, want)
		}
	}

	ra, rb := bytes.NewReader(a), bytes.NewReader(b)
	allocs := testing.AllocsPerRun(10, func() {
		for _, f := range []*bytes.Reader{ra, rb} {
			x.Reset(f, f.Size(), 100)
			for n := range x.Slots() {
				x.Entry(n)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("reading files in order through one reset index allocates %.0f times", allocs)
	}
}

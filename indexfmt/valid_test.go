package indexfmt_test

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

// The default preallocated sizes (log.index.size.max.bytes = 10 MiB, rounded
// down to the entry size).
const (
	bigOffsetSize = 10 << 20             // 10485760 bytes, 1310720 slots
	bigTimeSize   = (10 << 20) / 12 * 12 // 10485756 bytes, 873813 slots
)

var (
	bigOnce                 sync.Once
	bigOffsetFull, bigTimes []byte // every slot a real entry
)

// bigIndexes builds, once, a full 10 MiB offset index (offsets base+2i,
// positions 100i) and a full time index (timestamps 10^12+3i, offsets base+2i).
func bigIndexes() (offset, time []byte) {
	bigOnce.Do(func() {
		bigOffsetFull = make([]byte, 0, bigOffsetSize)
		for i := range bigOffsetSize / 8 {
			bigOffsetFull = indexfmt.AppendOffsetEntry(bigOffsetFull, int32(2*i), int32(100*i))
		}
		bigTimes = make([]byte, 0, bigTimeSize)
		for i := range bigTimeSize / 12 {
			bigTimes = indexfmt.AppendTimeEntry(bigTimes, 1_000_000_000_000+3*int64(i), int32(2*i))
		}
	})
	return bigOffsetFull, bigTimes
}

// zeroTail returns a copy of b whose slots from slot n on are zero.
func zeroTail(b []byte, n, entrySize int) []byte {
	c := bytes.Clone(b)
	clear(c[n*entrySize:])
	return c
}

func TestOffsetIndexValidEntries(t *testing.T) {
	// real entries: offsets base+0 (relative 0 in slot 0), base+3, base+6, ...
	real := func(n int) []byte {
		b := []byte{}
		for i := range n {
			b = indexfmt.AppendOffsetEntry(b, int32(3*i), int32(4096*i))
		}
		return b
	}
	cases := []struct {
		name         string
		b            []byte
		slots, valid int
		trailing     int
	}{
		{"empty", nil, 0, 0, 0},
		{"shorter than a slot", []byte{0, 0, 0, 1, 0}, 0, 0, 5},
		{"one entry at the base", real(1), 1, 1, 0},
		{"exact size", real(7), 7, 7, 0},
		{"zero-padded, slot 0 relative offset 0", append(real(3), make([]byte, 5*8)...), 8, 3, 0},
		{"one real entry then padding", append(real(1), make([]byte, 8)...), 2, 1, 0},
		{"odd size: garbage after whole slots", append(real(4), 0xff, 0xff, 0xff), 4, 4, 3},
		{"odd size: padding then a torn slot", append(append(real(2), make([]byte, 16)...), 0, 0, 0, 0, 0), 4, 2, 5},
		{"all zero, one slot", make([]byte, 8), 1, 1, 0},
		{"all zero, two slots", make([]byte, 16), 2, 1, 0},
		{"all zero, odd size", make([]byte, 21), 2, 1, 5},
		// Corruption that looks like padding: a later slot at the base
		// offset ends the valid entries, as it ends DumpLogSegments' listing.
		{"relative offset 0 in the middle", append(append(real(5), indexfmt.AppendOffsetEntry(nil, 0, 77)...), real(3)[8:]...), 8, 5, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := offsetIdx(c.b, 1234)
			if x.Slots() != c.slots || x.TrailingBytes() != c.trailing || x.Size() != int64(len(c.b)) {
				t.Fatalf("Slots %d TrailingBytes %d Size %d, want %d %d %d", x.Slots(), x.TrailingBytes(), x.Size(), c.slots, c.trailing, len(c.b))
			}
			n, err := x.ValidEntries()
			if err != nil || n != c.valid {
				t.Fatalf("ValidEntries = %d, %v; want %d", n, err, c.valid)
			}
			// Every valid entry is readable and the slot after them (if any)
			// reads as the base offset.
			for i := range n {
				if _, err := x.Entry(i); err != nil {
					t.Fatal(err)
				}
			}
			if n < x.Slots() {
				e, err := x.Entry(n)
				if err != nil || e.Offset != 1234 || n == 0 {
					t.Fatalf("slot %d after the valid entries: %+v, %v", n, e, err)
				}
			}
		})
	}
}

func TestTimeIndexValidEntries(t *testing.T) {
	real := func(n int) []byte {
		b := []byte{}
		for i := range n {
			b = indexfmt.AppendTimeEntry(b, 1_700_000_000_000+int64(i), int32(i))
		}
		return b
	}
	cases := []struct {
		name             string
		b                []byte
		slots, valid, tr int
	}{
		{"empty", nil, 0, 0, 0},
		{"shorter than a slot", make([]byte, 11), 0, 0, 11},
		{"one entry", real(1), 1, 1, 0},
		{"exact size", real(9), 9, 9, 0},
		{"zero-padded, slot 0 at the base offset", append(real(4), make([]byte, 3*12)...), 7, 4, 0},
		{"odd size", append(real(3), 1, 2, 3, 4, 5, 6, 7), 3, 3, 7},
		{"all zero", make([]byte, 36), 3, 1, 0},
		// The offset is what is tested, not the timestamp: a slot with a
		// zero timestamp but a non-base offset is not padding.
		{"zero timestamp, real offset", append(real(2), indexfmt.AppendTimeEntry(nil, 0, 7)...), 3, 3, 0},
		{"timestamp set, base offset", append(real(2), indexfmt.AppendTimeEntry(nil, 9, 0)...), 3, 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := timeIdx(c.b, 99)
			if x.Slots() != c.slots || x.TrailingBytes() != c.tr || x.Size() != int64(len(c.b)) {
				t.Fatalf("Slots %d TrailingBytes %d Size %d, want %d %d %d", x.Slots(), x.TrailingBytes(), x.Size(), c.slots, c.tr, len(c.b))
			}
			n, err := x.ValidEntries()
			if err != nil || n != c.valid {
				t.Fatalf("ValidEntries = %d, %v; want %d", n, err, c.valid)
			}
		})
	}
}

func TestValidEntriesLargeIndex(t *testing.T) {
	ob, tb := bigIndexes()
	if len(ob) != bigOffsetSize || len(tb) != bigTimeSize {
		t.Fatalf("sizes %d %d", len(ob), len(tb))
	}
	x := offsetIdx(ob, 0)
	if x.Slots() != 1310720 {
		t.Fatalf("Slots = %d, want 1310720", x.Slots())
	}
	if n, err := x.ValidEntries(); err != nil || n != 1310720 {
		t.Fatalf("full offset index: ValidEntries = %d, %v", n, err)
	}
	tx := timeIdx(tb, 0)
	if tx.Slots() != 873813 {
		t.Fatalf("Slots = %d, want 873813", tx.Slots())
	}
	if n, err := tx.ValidEntries(); err != nil || n != 873813 {
		t.Fatalf("full time index: ValidEntries = %d, %v", n, err)
	}
	// Padding starting at various slots, including around the 512-slot
	// chunks the scan reads in and at the very last slot.
	for _, n := range []int{1, 2, 511, 512, 513, 1024, 1025, 654321, 873812, 1310719} {
		if n < 873813 {
			if got, err := timeIdx(zeroTail(tb, n, 12), 0).ValidEntries(); err != nil || got != n {
				t.Errorf("time index padded from slot %d: ValidEntries = %d, %v", n, got, err)
			}
		}
		if got, err := offsetIdx(zeroTail(ob, n, 8), 0).ValidEntries(); err != nil || got != n {
			t.Errorf("offset index padded from slot %d: ValidEntries = %d, %v", n, got, err)
		}
	}
	// A freshly preallocated, never written file.
	if n, err := offsetIdx(make([]byte, bigOffsetSize), 7).ValidEntries(); err != nil || n != 1 {
		t.Errorf("all-zero 10 MiB offset index: ValidEntries = %d, %v; want 1", n, err)
	}
	if n, err := timeIdx(make([]byte, bigTimeSize), 7).ValidEntries(); err != nil || n != 1 {
		t.Errorf("all-zero time index: ValidEntries = %d, %v; want 1", n, err)
	}
}

// A size larger than what the reader holds (a file truncated under us) is an
// error that says where, never a panic or a wrong count.
func TestShortReader(t *testing.T) {
	b := offsetBytes([]int32{1, 2, 3}, []int32{0, 10, 20})
	x := indexfmt.NewOffsetIndexFrom(shortReader{b, 8 * 5}, 0)
	if _, err := x.ValidEntries(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("ValidEntries over a short reader: %v", err)
	}
	if _, err := x.Entry(4); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Entry(4): %v", err)
	}
	// The search reads slot 0 (warm check, firstHot = 0), then slot 2 (the
	// upper middle of 0..4, key 3 < 100), then slot 3, which is missing.
	e, slot, err := x.Lookup(100, nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) || slot != -1 || e.Offset != 0 {
		t.Fatalf("Lookup over a short reader: %+v slot %d err %v", e, slot, err)
	}
	if want := "slot 3 at byte 24"; err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("error %q does not name %q", err, want)
	}
	tx := indexfmt.NewTimeIndexFrom(shortReader{timeBytes([]int64{5}, []int32{1}), 12 * 3}, 0)
	if _, _, err := tx.Lookup(9, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("time Lookup over a short reader: %v", err)
	}
	if _, err := tx.LastEntry(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("LastEntry over a short reader: %v", err)
	}
	if err := tx.SanityCheck(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("SanityCheck over a short reader: %v", err)
	}
	// A negative size is taken as an empty file.
	if x := indexfmt.NewOffsetIndexFrom(shortReader{b, -8}, 0); x.Slots() != 0 || x.TrailingBytes() != 0 {
		t.Fatalf("negative size: Slots %d TrailingBytes %d", x.Slots(), x.TrailingBytes())
	}
	if n, err := indexfmt.NewTimeIndexFrom(shortReader{b, -1}, 0).ValidEntries(); n != 0 || err != nil {
		t.Fatalf("negative size: ValidEntries %d, %v", n, err)
	}
	if n := indexfmt.NewTxnIndexFrom(shortReader{b, -34}).Entries(); n != 0 {
		t.Fatalf("negative size: txn Entries %d", n)
	}
}

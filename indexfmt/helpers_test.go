package indexfmt_test

import (
	"encoding/binary"
	"io"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

// The broker's warm-section sizes (AbstractIndex.warmEntries = 8192 / entry
// size), written out here rather than taken from the package under test.
const (
	offsetWarmEntries = 8192 / 8  // 1024
	timeWarmEntries   = 8192 / 12 // 682
)

// offsetIdx and timeIdx open an index over b, the whole slice being the file.
func offsetIdx(b []byte, base int64) *indexfmt.OffsetIndex {
	return indexfmt.NewOffsetIndex(b, base)
}

func timeIdx(b []byte, base int64) *indexfmt.TimeIndex {
	return indexfmt.NewTimeIndex(b, base)
}

// offsetBytes encodes (relative offset, position) pairs with the package's
// encoder and no ordering check, so corrupt shapes can be built too.
func offsetBytes(rel, pos []int32) []byte {
	var b []byte
	for i := range rel {
		b = indexfmt.AppendOffsetEntry(b, rel[i], pos[i])
	}
	return b
}

func timeBytes(ts []int64, rel []int32) []byte {
	var b []byte
	for i := range ts {
		b = indexfmt.AppendTimeEntry(b, ts[i], rel[i])
	}
	return b
}

// The key columns of an index, decoded with encoding/binary straight from
// the bytes (independently of the package's decoders). 4-byte fields are
// signed, and relative offsets get the base added, as in the broker.
func offsetKeys(b []byte, base int64) (offsets, positions []int64) {
	for i := 0; i+8 <= len(b); i += 8 {
		offsets = append(offsets, base+int64(int32(binary.BigEndian.Uint32(b[i:]))))
		positions = append(positions, int64(int32(binary.BigEndian.Uint32(b[i+4:]))))
	}
	return offsets, positions
}

func timeKeys(b []byte, base int64) (timestamps, offsets []int64) {
	for i := 0; i+12 <= len(b); i += 12 {
		timestamps = append(timestamps, int64(binary.BigEndian.Uint64(b[i:])))
		offsets = append(offsets, base+int64(int32(binary.BigEndian.Uint32(b[i+8:]))))
	}
	return timestamps, offsets
}

// refSearch is a straightforward transcription of the search pseudo-code
// (AbstractIndex.indexSlotRangeFor + binarySearch) over a slice of keys. It
// returns the slot and the probes in the order the broker makes them.
func refSearch(keys []int64, warm int, target int64, mode indexfmt.Mode) (int, []indexfmt.Probe) {
	var probes []indexfmt.Probe
	n := len(keys)
	compare := func(phase indexfmt.Phase, slot int) int {
		c := 0
		if keys[slot] < target {
			c = -1
		} else if keys[slot] > target {
			c = 1
		}
		probes = append(probes, indexfmt.Probe{Phase: phase, Slot: slot, Key: keys[slot], Cmp: c})
		return c
	}
	bsearch := func(lo, hi int, phase indexfmt.Phase) int {
		for lo < hi {
			mid := (lo + hi + 1) / 2
			c := compare(phase, mid)
			if c > 0 {
				hi = mid - 1
			} else if c < 0 {
				lo = mid
			} else {
				return mid
			}
		}
		if mode == indexfmt.LargestLowerBound {
			return lo
		}
		if lo == n-1 {
			return -1
		}
		return lo + 1
	}
	if n == 0 {
		return -1, nil
	}
	firstHot := n - 1 - warm
	if firstHot < 0 {
		firstHot = 0
	}
	if compare(indexfmt.PhaseWarmCheck, firstHot) < 0 {
		return bsearch(firstHot, n-1, indexfmt.PhaseWarm), probes
	}
	if compare(indexfmt.PhaseFirstCheck, 0) > 0 {
		if mode == indexfmt.LargestLowerBound {
			return -1, probes
		}
		return 0, probes
	}
	return bsearch(0, firstHot, indexfmt.PhaseCold), probes
}

// bruteLower is the largest slot whose key is <= target, or -1.
func bruteLower(keys []int64, target int64) int {
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i] <= target {
			return i
		}
	}
	return -1
}

// bruteUpper is the smallest slot whose key is >= target, or -1.
func bruteUpper(keys []int64, target int64) int {
	for i, k := range keys {
		if k >= target {
			return i
		}
	}
	return -1
}

// collect returns a trace sink and the slice it fills.
func collect() (func(indexfmt.Probe), *[]indexfmt.Probe) {
	var got []indexfmt.Probe
	return func(p indexfmt.Probe) { got = append(got, p) }, &got
}

func probesEqual(t *testing.T, what string, got, want []indexfmt.Probe) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d probes, want %d\n got  %v\n want %v", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: probe %d = %+v, want %+v\n got  %v\n want %v", what, i, got[i], want[i], got, want)
		}
	}
}

// shortReader is a SlotReader whose Size may say more than its bytes
// hold, as a file cut short under its reader: slots past the bytes fail
// with io.ErrUnexpectedEOF.
type shortReader struct {
	b    []byte
	size int64
}

func (s shortReader) Size() int64 { return s.size }

func (s shortReader) ReadSlots(n, lo, hi, width int) ([]byte, int, error) {
	if (n+1)*width > len(s.b) {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return s.b[n*width : (n+1)*width], n, nil
}

package indexfmt_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

func strictlyIncreasing(v []int64) bool {
	for i := 1; i < len(v); i++ {
		if v[i] <= v[i-1] {
			return false
		}
	}
	return true
}

// FuzzIndexLookup reads data both as an offset index and as a time index and
// runs every search on it. Properties: no panic; every slot in [-1, slots);
// answers and probes equal the pseudo-code's; a largest-lower-bound answer
// has key <= target; on a strictly increasing column the answer is brute
// force's. extra > 0 also declares a size larger than the data (a file cut
// short under the reader), which must give errors, not panics.
func FuzzIndexLookup(f *testing.F) {
	f.Add([]byte{}, int64(0), int64(0), uint8(0))
	f.Add(offsetBytes([]int32{0, 3, 7, 20}, []int32{0, 61, 200, 999}), int64(100), int64(105), uint8(0))
	f.Add(append(offsetBytes([]int32{0, 3, 7}, []int32{0, 61, 200}), make([]byte, 40)...), int64(100), int64(104), uint8(0))
	f.Add(offsetBytes([]int32{10, 20, 60, 30, 40}, []int32{0, 1, 2, 3, 4}), int64(0), int64(35), uint8(0))
	f.Add(timeBytes([]int64{1000, 1010, 1020}, []int32{1, 2, 3}), int64(7), int64(1015), uint8(3))
	f.Add(make([]byte, 25), int64(-1), int64(-1), uint8(9))
	rel, pos := make([]int32, 1030), make([]int32, 1030)
	for i := range rel {
		rel[i], pos[i] = int32(2*i), int32(100*i)
	}
	f.Add(offsetBytes(rel, pos), int64(0), int64(11), uint8(0))
	f.Add(offsetBytes(rel, pos), int64(0), int64(1000), uint8(0))
	ts, trel := make([]int64, 690), make([]int32, 690)
	for i := range ts {
		ts[i], trel[i] = 1000+10*int64(i), int32(i)
	}
	f.Add(timeBytes(ts, trel), int64(500), int64(1075), uint8(0))
	// The real broker index files, when they are there.
	for _, p := range fixtureIndexFiles(f) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, baseFromName(p), int64(0), uint8(0))
		}
	}

	f.Fuzz(func(t *testing.T, data []byte, base, target int64, extra uint8) {
		checkOffsetIndex(t, data, base, target)
		checkTimeIndex(t, data, base, target)
		if extra%32 != 0 {
			size := int64(len(data)) + int64(extra%32)
			ox := indexfmt.NewOffsetIndexFrom(shortReader{data, size}, base)
			tx := indexfmt.NewTimeIndexFrom(shortReader{data, size}, base)
			inRange := func(what string, slot, slots int, err error) {
				if slot < -1 || slot >= slots || err != nil && slot != -1 {
					t.Fatalf("short reader %s: slot %d of %d, err %v", what, slot, slots, err)
				}
			}
			_, s, err := ox.Lookup(target, nil)
			inRange("offset Lookup", s, ox.Slots(), err)
			s, err = ox.UpperBoundByPosition(target, nil)
			inRange("UpperBoundByPosition", s, ox.Slots(), err)
			_, s, err = tx.Lookup(target, nil)
			inRange("time Lookup", s, tx.Slots(), err)
			s, err = tx.SlotByOffset(target, nil)
			inRange("SlotByOffset", s, tx.Slots(), err)
			if n, err := ox.ValidEntries(); err == nil && (n < 0 || n > ox.Slots()) {
				t.Fatalf("short reader ValidEntries %d of %d", n, ox.Slots())
			}
			_, _ = tx.ValidEntries()
			_ = ox.SanityCheck()
			_ = tx.SanityCheck()
			_, _ = tx.LastEntry()
			_, _ = ox.LastEntry()
			ti := indexfmt.NewTxnIndexFrom(shortReader{data, size})
			_ = ti.SanityCheck(base)
		}
		ti := indexfmt.NewTxnIndex(data)
		if ti.Entries() != len(data)/34 {
			t.Fatalf("txn Entries %d", ti.Entries())
		}
		_ = ti.SanityCheck(base)
	})
}

// search runs one search with a trace and checks it against the pseudo-code.
func checkSearch(t *testing.T, what string, keys []int64, warmN int, target int64, mode indexfmt.Mode,
	run func(trace func(indexfmt.Probe)) (int, error)) int {
	t.Helper()
	trace, probes := collect()
	slot, err := run(trace)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if slot < -1 || slot >= len(keys) {
		t.Fatalf("%s: slot %d outside [-1, %d)", what, slot, len(keys))
	}
	want, wantProbes := refSearch(keys, warmN, target, mode)
	if slot != want {
		t.Fatalf("%s target %d: slot %d, pseudo-code %d", what, target, slot, want)
	}
	probesEqual(t, what, *probes, wantProbes)
	if mode == indexfmt.LargestLowerBound {
		if slot >= 0 && keys[slot] > target {
			t.Fatalf("%s: slot %d key %d above target %d", what, slot, keys[slot], target)
		}
		if strictlyIncreasing(keys) && slot != bruteLower(keys, target) {
			t.Fatalf("%s: sorted index, slot %d, brute force %d", what, slot, bruteLower(keys, target))
		}
	} else if strictlyIncreasing(keys) && (len(keys) == 0 || keys[0] != target) && slot != bruteUpper(keys, target) {
		t.Fatalf("%s: sorted index, slot %d, brute force %d", what, slot, bruteUpper(keys, target))
	}
	return slot
}

func checkOffsetIndex(t *testing.T, data []byte, base, target int64) {
	x := offsetIdx(data, base)
	offs, poss := offsetKeys(data, base)
	if x.Slots() != len(offs) || x.TrailingBytes() != len(data)%8 {
		t.Fatalf("Slots %d TrailingBytes %d for %d bytes", x.Slots(), x.TrailingBytes(), len(data))
	}
	var e indexfmt.OffsetEntry
	slot := checkSearch(t, "offset Lookup", offs, offsetWarmEntries, target, indexfmt.LargestLowerBound,
		func(tr func(indexfmt.Probe)) (int, error) {
			var s int
			var err error
			e, s, err = x.Lookup(target, tr)
			return s, err
		})
	if slot < 0 && e != (indexfmt.OffsetEntry{Offset: base}) || slot >= 0 && (e.Offset != offs[slot] || int64(e.Position) != poss[slot]) {
		t.Fatalf("Lookup(%d) entry %+v at slot %d", target, e, slot)
	}
	checkSearch(t, "UpperBoundByPosition", poss, offsetWarmEntries, target, indexfmt.SmallestUpperBound,
		func(tr func(indexfmt.Probe)) (int, error) { return x.UpperBoundByPosition(target, tr) })

	n, err := x.ValidEntries()
	if err != nil || n != scanValid(data, 8, 0) {
		t.Fatalf("ValidEntries %d, %v; scan says %d", n, err, scanValid(data, 8, 0))
	}
	err = x.SanityCheck()
	bad := len(offs) > 0 && offs[len(offs)-1] < base || len(data)%8 != 0
	if bad != (err != nil) {
		t.Fatalf("SanityCheck: %v, expected failure %v", err, bad)
	}
}

func checkTimeIndex(t *testing.T, data []byte, base, target int64) {
	x := timeIdx(data, base)
	tss, offs := timeKeys(data, base)
	if x.Slots() != len(tss) || x.TrailingBytes() != len(data)%12 {
		t.Fatalf("Slots %d TrailingBytes %d for %d bytes", x.Slots(), x.TrailingBytes(), len(data))
	}
	var e indexfmt.TimeEntry
	slot := checkSearch(t, "time Lookup", tss, timeWarmEntries, target, indexfmt.LargestLowerBound,
		func(tr func(indexfmt.Probe)) (int, error) {
			var s int
			var err error
			e, s, err = x.Lookup(target, tr)
			return s, err
		})
	if slot < 0 && (e.Timestamp != -1 || e.Offset != base) || slot >= 0 && (e.Timestamp != tss[slot] || e.Offset != offs[slot]) {
		t.Fatalf("Lookup(%d) entry %+v at slot %d", target, e, slot)
	}
	checkSearch(t, "SlotByOffset", offs, timeWarmEntries, target, indexfmt.LargestLowerBound,
		func(tr func(indexfmt.Probe)) (int, error) { return x.SlotByOffset(target, tr) })

	n, err := x.ValidEntries()
	if err != nil || n != scanValid(data, 12, 8) {
		t.Fatalf("ValidEntries %d, %v; scan says %d", n, err, scanValid(data, 12, 8))
	}
	err = x.SanityCheck()
	k := len(tss)
	bad := k > 0 && (tss[k-1] < tss[0] || offs[k-1] < base) || len(data)%12 != 0
	if bad != (err != nil) {
		t.Fatalf("SanityCheck: %v, expected failure %v", err, bad)
	}
}

// scanValid is DumpLogSegments' loop: stop at the first slot i > 0 whose
// relative offset (4 bytes at relOff) is 0.
func scanValid(data []byte, size, relOff int) int {
	n := len(data) / size
	for i := 1; i < n; i++ {
		if binary.BigEndian.Uint32(data[i*size+relOff:]) == 0 {
			return i
		}
	}
	return n
}

// baseFromName parses the 20-digit base offset of an index file name.
func baseFromName(p string) int64 {
	name := filepath.Base(p)
	var base int64
	for _, c := range name[:strings.IndexByte(name, '.')] {
		base = base*10 + int64(c-'0')
	}
	return base
}

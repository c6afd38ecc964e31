package indexfmt

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// The example of kafka-on-disk.md section 9.1: batches at 0, 3000, 5000,
// 5500, 9500, 9600 with index.interval.bytes 4096 get entries at 5000 and
// 9500 only.
func TestRecoveryIndexerSpecExample(t *testing.T) {
	starts := []int64{0, 3000, 5000, 5500, 9500, 9600, 9700}
	r := NewRecoveryIndexer(100, 4096)
	var offs []OffsetEntry
	for i := 0; i+1 < len(starts); i++ {
		last := int64(100 + 10*i + 9)
		p, err := r.Batch(starts[i], starts[i+1]-starts[i], last, 1000+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		if p.HasOffset != p.HasTime {
			t.Errorf("batch at %d: offset entry %v but time entry %v (the timestamps grow)", starts[i], p.HasOffset, p.HasTime)
		}
		if p.HasOffset {
			offs = append(offs, p.Offset)
		}
	}
	want := []OffsetEntry{{Offset: 129, RelativeOffset: 29, Position: 5000}, {Offset: 149, RelativeOffset: 49, Position: 9500}}
	if len(offs) != len(want) || offs[0] != want[0] || offs[1] != want[1] {
		t.Fatalf("offset entries %v, want %v", offs, want)
	}
	if got := r.ValidBytes(); got != 9700 {
		t.Errorf("ValidBytes = %d, want 9700", got)
	}
	e, ok, err := r.Close()
	if err != nil || !ok || e != (TimeEntry{Timestamp: 1005, Offset: 159, RelativeOffset: 59}) {
		t.Errorf("Close = %v %v %v, want the final entry (1005, 159)", e, ok, err)
	}
	if r.OffsetEntries() != 2 || r.TimeEntries() != 3 {
		t.Errorf("entries %d/%d, want 2/3", r.OffsetEntries(), r.TimeEntries())
	}
}

// recoverBrute is LogSegment.recover's index loop written out from the
// pseudo-code of kafka-on-disk.md 9.1, building bytes with the builders.
func recoverBrute(base, interval int64, pos, size, last, maxTs []int64) (off, tim []byte, err error) {
	oi, ti := NewOffsetIndexBuilder(base), NewTimeIndexBuilder(base)
	validBytes, lastIndexEntry := int64(0), int64(0)
	mts, moff := int64(-1), base
	for i := range pos {
		if maxTs[i] > mts {
			mts, moff = maxTs[i], last[i]
		}
		if validBytes-lastIndexEntry > interval {
			if err := oi.Append(last[i], int32(validBytes)); err != nil {
				return nil, nil, err
			}
			if err := ti.MaybeAppend(mts, moff); err != nil {
				return nil, nil, err
			}
			lastIndexEntry = validBytes
		}
		validBytes += size[i]
	}
	if err := ti.MaybeAppend(mts, moff); err != nil {
		return nil, nil, err
	}
	return oi.Bytes(), ti.Bytes(), nil
}

// TestRecoveryIndexerMatchesBrute feeds random segments (growing and
// shrinking timestamps, sometimes a non-increasing offset) to the indexer
// and to the loop written out, and wants the same entries and errors.
func TestRecoveryIndexerMatchesBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 34))
	invalid := 0
	var reused RecoveryPoint // odd cases go through BatchTo, into one point kept across batches and cases
	for n := 0; n < 3000; n++ {
		base := rng.Int64N(1000)
		interval := []int64{0, 1, 100, 4096}[rng.IntN(4)]
		k := rng.IntN(40)
		pos, size, last, maxTs := make([]int64, k), make([]int64, k), make([]int64, k), make([]int64, k)
		p, o := int64(0), base
		for i := range k {
			pos[i], size[i] = p, 70+rng.Int64N(300)
			p += size[i]
			o += rng.Int64N(5)
			if rng.IntN(60) == 0 {
				o -= rng.Int64N(8) // a step back: InvalidOffsetException at an index point
			}
			last[i] = o
			maxTs[i] = rng.Int64N(50) - 2
		}
		wantOff, wantTime, wantErr := recoverBrute(base, interval, pos, size, last, maxTs)

		r := NewRecoveryIndexer(base, interval)
		ob, tb := NewOffsetIndexBuilder(base), NewTimeIndexBuilder(base)
		var gotErr error
		for i := range k {
			var pt RecoveryPoint
			var err error
			if n%2 == 0 {
				pt, err = r.Batch(pos[i], size[i], last[i], maxTs[i])
			} else {
				err = r.BatchTo(&reused, pos[i], size[i], last[i], maxTs[i])
				pt = reused
			}
			if err != nil {
				gotErr = err
				break
			}
			if pt.HasOffset {
				ob.buf = AppendOffsetEntry(ob.buf, pt.Offset.RelativeOffset, pt.Offset.Position)
			}
			if pt.HasTime {
				tb.buf = AppendTimeEntry(tb.buf, pt.Time.Timestamp, pt.Time.RelativeOffset)
			}
		}
		if gotErr == nil {
			e, ok, err := r.Close()
			gotErr = err
			if ok {
				tb.buf = AppendTimeEntry(tb.buf, e.Timestamp, e.RelativeOffset)
			}
		}
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("case %d: error %v, want %v", n, gotErr, wantErr)
		}
		if wantErr != nil {
			if errors.Is(wantErr, ErrInvalidOffset) {
				invalid++
			}
			continue
		}
		if string(ob.buf) != string(wantOff) || string(tb.buf) != string(wantTime) {
			t.Fatalf("case %d (interval %d): entries differ:\noffset %x\n  want %x\ntime   %x\n  want %x", n, interval, ob.buf, wantOff, tb.buf, wantTime)
		}
		if r.OffsetEntries()*OffsetEntrySize != len(wantOff) || r.TimeEntries()*TimeEntrySize != len(wantTime) {
			t.Fatalf("case %d: counts %d/%d for %d/%d bytes", n, r.OffsetEntries(), r.TimeEntries(), len(wantOff), len(wantTime))
		}
	}
	if invalid == 0 {
		t.Error("no case reached InvalidOffsetException")
	}
}

package inspect

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// AddTraffic counts each mark's offsets from the previous mark's end (the
// offsets between segments with the next segment's first mark), its bytes
// from the previous mark of its segment, marks without a timestamp with
// the next that has one, and leaves out what falls outside the buckets.
func TestAddTraffic(t *testing.T) {
	segs := []SegmentTraffic{
		{BaseOffset: 100, Marks: []TrafficMark{
			{Timestamp: 1_000, EndOffset: 110, EndPosition: 500},
			{Timestamp: -1, EndOffset: 115, EndPosition: 700}, // no timestamp: with the next
			{Timestamp: 2_500, EndOffset: 120, EndPosition: 900},
			{Timestamp: 2_500, EndOffset: 120, EndPosition: 950}, // the tail: bytes only
		}},
		{BaseOffset: 130, Marks: []TrafficMark{ // offsets 120..129 are a gap between segments
			{Timestamp: 4_999, EndOffset: 140, EndPosition: 300},
		}},
	}
	from, to := TimeSpan(segs)
	if from != 1_000 || to != 4_999 {
		t.Fatalf("span %d..%d", from, to)
	}
	buckets := NewBuckets(from, to, 1_000)
	if len(buckets) != 4 || buckets[0].Start != 1_000 || buckets[3].End != 5_000 {
		t.Fatalf("buckets %+v", buckets)
	}
	r, b, ur, ub := AddTraffic(buckets, 1_000, segs)
	if r != 40 || b != 950+300 || ur != 0 || ub != 0 {
		t.Errorf("added %d records, %d bytes (untimed %d, %d); want 40 (the offset span 100..139) and 1250", r, b, ur, ub)
	}
	want := []struct{ records, bytes int64 }{{10, 500}, {10, 450}, {0, 0}, {20, 300}}
	for i, w := range want {
		if buckets[i].Records != w.records || buckets[i].Bytes != w.bytes {
			t.Errorf("bucket %d: %d records, %d bytes; want %d, %d", i, buckets[i].Records, buckets[i].Bytes, w.records, w.bytes)
		}
	}

	// A range that leaves the first and last buckets out.
	inner := NewBuckets(2_000, 3_999, 1_000)
	if r, b, _, _ := AddTraffic(inner, 1_000, segs); r != 10 || b != 450 || inner[0].Records != 10 || inner[1].Records != 0 {
		t.Errorf("inner range: %d records, %d bytes, %+v", r, b, inner)
	}

	// Nothing with a timestamp: all untimed, nothing added.
	untimed := []SegmentTraffic{{BaseOffset: 0, Marks: []TrafficMark{{Timestamp: -1, EndOffset: 7, EndPosition: 70}}}}
	if f, _ := TimeSpan(untimed); f != -1 {
		t.Errorf("untimed span from %d", f)
	}
	if r, b, ur, ub := AddTraffic(NewBuckets(-1, -1, 1000), 1000, untimed); r != 0 || b != 0 || ur != 7 || ub != 70 {
		t.Errorf("untimed: %d %d %d %d", r, b, ur, ub)
	}
}

// A segment's marks from its time index and from its batch headers cover
// the same offsets and bytes, and each mark's time is at or after the
// records it covers.
func TestSegmentTrafficOf(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 4, Segments: 3, Batches: 80, ValueSize: 200, CompactionGaps: true, Traffic: "burst"}); err != nil {
		t.Fatal(err)
	}
	target, err := Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range target.Partitions[0].Segments {
		st, err := SegmentTrafficOf(sf)
		if err != nil {
			t.Fatal(err)
		}
		seg, err := OpenSegment(sf, SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fromBatches, err := batchMarks(seg)
		seg.Close()
		if err != nil {
			t.Fatal(err)
		}
		last, lastB := st.Marks[len(st.Marks)-1], fromBatches[len(fromBatches)-1]
		if last.EndOffset != lastB.EndOffset || last.EndPosition != lastB.EndPosition || last.EndPosition != seg.LogSize {
			t.Errorf("%s: marks end at %+v, batch marks at %+v, log size %d", sf.Log, last, lastB, seg.LogSize)
		}
		// Every index mark ends where some batch ends, at a time no
		// earlier than that batch's largest timestamp so far.
		for _, m := range st.Marks[:len(st.Marks)-1] {
			ok := false
			for _, bm := range fromBatches {
				if bm.EndOffset == m.EndOffset && bm.EndPosition == m.EndPosition && m.Timestamp >= bm.Timestamp {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s: mark %+v ends at no batch boundary", sf.Log, m)
			}
		}
	}
}

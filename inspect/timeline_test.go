package inspect

import (
	"encoding/binary"
	"math"
	"os"
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
		var bt SegmentTraffic
		err = batchMarks(seg, &bt)
		seg.Close()
		if err != nil {
			t.Fatal(err)
		}
		fromBatches := bt.Marks
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

// writeEdgeSegment writes a segment of two batches ending at offset
// 2^63-1 (base 2^63-8: offsets 2^63-8..2^63-6, then 2^63-5..2^63-1), with
// an offset index and a time index (entries at each batch's last offset)
// when indexed; it returns the partition directory and the log size.
func writeEdgeSegment(t *testing.T, indexed bool, maxTS int64) (string, int64) {
	t.Helper()
	base := int64(math.MaxInt64 - 7)
	dir := filepath.Join(t.TempDir(), "edge-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	batch := func(first int64, n int, ts int64) []byte {
		b := kafkagen.Batch{BaseOffset: first, ProducerID: -1}
		for i := range n {
			b.Records = append(b.Records, kafkagen.Record{OffsetDelta: int32(i), Timestamp: ts, Value: []byte("v")})
		}
		return kafkagen.AppendBatch(nil, b)
	}
	b1 := batch(base, 3, 1_700_000_000_000)
	log := append(b1, batch(base+3, 5, maxTS)...)
	name := filepath.Join(dir, SegmentName(base))
	if err := os.WriteFile(name+LogSuffix, log, 0o644); err != nil {
		t.Fatal(err)
	}
	if indexed {
		idx := binary.BigEndian.AppendUint32(nil, 3) // offset base+3 at the second batch
		idx = binary.BigEndian.AppendUint32(idx, uint32(len(b1)))
		tidx := binary.BigEndian.AppendUint64(nil, 1_700_000_000_000)
		tidx = binary.BigEndian.AppendUint32(tidx, 2)
		tidx = binary.BigEndian.AppendUint64(tidx, uint64(maxTS))
		tidx = binary.BigEndian.AppendUint32(tidx, 7) // offset 2^63-1
		if err := os.WriteFile(name+IndexSuffix, idx, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name+TimeIndexSuffix, tidx, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, int64(len(log))
}

// TestTrafficAtTheInt64Edges: a batch ending at offset 2^63-1 is counted
// (its offsets up to the log end offset, which is 2^63-1 since no offset
// follows: record.OffsetAfter), from the time index and from the batch
// headers alike, never taken for offsets without a timestamp; a
// timestamp of 2^63-1 gets a bucket whose end does not wrap.
func TestTrafficAtTheInt64Edges(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		for _, maxTS := range []int64{1_700_000_000_500, math.MaxInt64} {
			dir, size := writeEdgeSegment(t, indexed, maxTS)
			p, err := ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			segs, err := p.Traffic()
			if err != nil {
				t.Fatal(err)
			}
			if segs[0].FromBatches == indexed {
				t.Errorf("indexed %v: read from batches %v", indexed, segs[0].FromBatches)
			}
			from, to := TimeSpan(segs)
			if from != 1_700_000_000_000 || to != maxTS {
				t.Errorf("indexed %v: span %d..%d", indexed, from, to)
			}
			bucket := int64(1000)
			if maxTS == math.MaxInt64 {
				bucket = 1 << 62 // two buckets
			}
			buckets := NewBuckets(from, to, bucket)
			if len(buckets) == 0 {
				t.Errorf("indexed %v, max timestamp %d: no bucket", indexed, maxTS)
				continue
			}
			for i, b := range buckets {
				if b.End <= b.Start || i > 0 && b.Start != buckets[i-1].End {
					t.Errorf("bucket %d of %d: %d..%d", i, len(buckets), b.Start, b.End)
				}
			}
			if last := buckets[len(buckets)-1]; last.End < to {
				t.Errorf("the last bucket %d..%d does not reach %d", last.Start, last.End, to)
			}
			r, b, ur, ub := AddTraffic(buckets, bucket, segs)
			if r != 7 || b != size || ur != 0 || ub != 0 {
				t.Errorf("indexed %v, max timestamp %d: %d records, %d bytes, untimed %d, %d; want 7 (2^63-8 up to the log end offset 2^63-1), %d, 0, 0",
					indexed, maxTS, r, b, ur, ub, size)
			}
		}
	}
	if got := CappedSum(math.MaxInt64-1, 5); got != math.MaxInt64 {
		t.Errorf("CappedSum = %d", got)
	}
}

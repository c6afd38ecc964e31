package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// writeEdgePartition writes dir/edge-0: one segment at base 2^63-8 of two
// batches, the second ending at offset 2^63-1 with maxTS as its records'
// timestamp and lastValue as its last record's value. It returns the log
// size.
func writeEdgePartition(t *testing.T, dir string, maxTS int64, lastValue string) int64 {
	t.Helper()
	base := int64(math.MaxInt64 - 7)
	p := filepath.Join(dir, "edge-0")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	batch := func(first int64, n int, ts int64, last string) []byte {
		b := kafkagen.Batch{BaseOffset: first, ProducerID: -1}
		for i := range n {
			v := "v"
			if i == n-1 {
				v = last
			}
			b.Records = append(b.Records, kafkagen.Record{OffsetDelta: int32(i), Timestamp: ts, Value: []byte(v)})
		}
		return kafkagen.AppendBatch(nil, b)
	}
	log := append(batch(base, 3, 1_700_000_000_000, "v"), batch(base+3, 5, maxTS, lastValue)...)
	if err := os.WriteFile(filepath.Join(p, inspect.SegmentName(base)+".log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(len(log))
}

// TestTimelineAtTheInt64Edges: a batch ending at offset 2^63-1 is
// counted (no "magic 0" warning: its records have timestamps), and a
// timestamp of 2^63-1 gets a last bucket whose end does not wrap to a
// negative number.
func TestTimelineAtTheInt64Edges(t *testing.T) {
	for _, maxTS := range []int64{1_700_000_000_500, math.MaxInt64} {
		dir := t.TempDir()
		size := writeEdgePartition(t, dir, maxTS, "v")
		out, stderr, code := runKseg(t, nil, "-o", "json", "timeline", filepath.Join(dir, "edge-0"))
		if code != 0 || strings.Contains(stderr, "timestamp") {
			t.Errorf("max timestamp %d: exit %d: %s", maxTS, code, stderr)
		}
		buckets, sum := timelineLines(t, out)
		if sum.Records != 7 || sum.Bytes != size || sum.To == nil || *sum.To != maxTS {
			t.Errorf("max timestamp %d: summary %+v; want 7 records (the offset span up to the log end offset 2^63-1), %d bytes", maxTS, sum, size)
		}
		for i, b := range buckets {
			if b.End <= b.Start || i > 0 && b.Start != buckets[i-1].End {
				t.Errorf("max timestamp %d: bucket %d: %d..%d", maxTS, i, b.Start, b.End)
			}
		}
	}
}

// TestDiffAtTheInt64Edges: replicas ending at offset 2^63-1 have that log
// end offset (the offset after it does not exist), not -2^63; identical
// ones agree with nothing past the truncation, and a conflict at the very
// last offset is a difference.
func TestDiffAtTheInt64Edges(t *testing.T) {
	root := t.TempDir()
	left, same, other := filepath.Join(root, "l"), filepath.Join(root, "s"), filepath.Join(root, "o")
	writeEdgePartition(t, left, 1_700_000_000_500, "last")
	writeEdgePartition(t, same, 1_700_000_000_500, "last")
	writeEdgePartition(t, other, 1_700_000_000_500, "LAST")
	_, div := diffJSON(t, 0, filepath.Join(left, "edge-0"), filepath.Join(same, "edge-0"))
	if div["left_log_end_offset"] != float64(math.MaxInt64) || div["right_log_end_offset"] != float64(math.MaxInt64) ||
		div["first_difference_offset"] != nil || div["left_records_past_truncation"] != 0.0 {
		t.Errorf("identical: %v", div)
	}
	lines, div := diffJSON(t, 1, filepath.Join(left, "edge-0"), filepath.Join(other, "edge-0"))
	if len(lines) != 1 || lines[0]["kind"] != "conflict" || div["first_difference_offset"] != float64(math.MaxInt64) || div["conflicts"] != 1.0 {
		t.Errorf("a conflict at 2^63-1: %v\n%v", lines, div)
	}
}

// TestGroupsLagOfANegativeOffset: a committed offset below 0 has no lag
// (kafka-consumer-groups shows none for -1, and log end offset minus
// -2^63 does not fit in a long); the log end offset is still shown.
func TestGroupsLagOfANegativeOffset(t *testing.T) {
	root := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(root, "t-0"), kafkagen.Options{Seed: 1, Batches: 3}); err != nil {
		t.Fatal(err)
	}
	writeCommits(t, filepath.Join(root, "__consumer_offsets-0"),
		kafkagen.Record{OffsetDelta: 0, Timestamp: 1000, Key: kafkagen.OffsetCommitKey("a", "t", 0), Value: kafkagen.OffsetCommitValue(3, math.MinInt64, 0, "", 1000, 0)},
		kafkagen.Record{OffsetDelta: 1, Timestamp: 1000, Key: kafkagen.OffsetCommitKey("b", "t", 0), Value: kafkagen.OffsetCommitValue(3, -1, 0, "", 1000, 0)},
		kafkagen.Record{OffsetDelta: 2, Timestamp: 1000, Key: kafkagen.OffsetCommitKey("c", "t", 0), Value: kafkagen.OffsetCommitValue(3, 2, 0, "", 1000, 0)},
	)
	out, stderr, code := runKseg(t, nil, "-o", "json", "groups", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("got\n%s", out)
	}
	for i, wantLag := range []any{nil, nil, 8.0} {
		var o map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &o); err != nil {
			t.Fatal(err)
		}
		if o["log_end_offset"] != 10.0 || o["lag"] != wantLag {
			t.Errorf("line %d: %s; want lag %v", i, lines[i], wantLag)
		}
	}
}

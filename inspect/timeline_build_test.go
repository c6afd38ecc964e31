package inspect

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// Timeline, as a Go caller sees it: every offset of partitions whose
// batches all have timestamps lands in one bucket, in the sum and per
// partition; an explicit width that makes too many buckets is refused
// with the narrowest width that fits, and the span is still returned.
func TestTimelineCountsEveryOffset(t *testing.T) {
	data := t.TempDir()
	var parts []*Partition
	var want int64
	for i, seed := range []int64{41, 42} {
		dir := filepath.Join(data, "t-"+string(rune('0'+i)))
		m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: seed, Segments: 2, Batches: 30, RecordsPerBatch: 3})
		if err != nil {
			t.Fatal(err)
		}
		want += m.LogEndOffset - m.Segments[0].BaseOffset
		tg, err := Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, tg.Partitions...)
	}
	for _, per := range []bool{false, true} {
		c, err := Timeline(parts, TimelineOptions{Buckets: 60, MaxBuckets: 1 << 20, From: -1, To: -1, PerPartition: per})
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, s := range c.Series {
			for _, b := range s.Buckets {
				sum += b.Records
			}
		}
		if sum != want || c.Records != want || c.From < 0 || c.Source != "timeindex" {
			t.Errorf("per partition %v: %d records in buckets, %d summed, want %d (from %d, source %s)", per, sum, c.Records, want, c.From, c.Source)
		}
		if n := len(c.Series); per && n != 2 || !per && n != 1 {
			t.Errorf("per partition %v: %d series", per, n)
		}
	}
	c, err := Timeline(parts, TimelineOptions{Bucket: 1, MaxBuckets: 10, From: -1, To: -1})
	var e *TooManyBucketsError
	if !errors.As(err, &e) || c == nil || c.From < 0 || BucketsOver(c.From, c.To, e.Fitting) > 10 {
		t.Fatalf("1 ms buckets, at most 10: %v (%+v)", err, e)
	}
}

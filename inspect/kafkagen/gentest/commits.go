package gentest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// ManyCommits writes dir (created) as a __consumer_offsets partition of one
// segment: n offset commits (value version 3) of group for topic's
// partitions 0..n-1, committed offset = partition, in zstd batches of 1000
// records, as a consumer of an n-partition topic commits them all at
// once. It returns the log's size. 2,000,000 commits make 7.3 MB.
func ManyCommits(t testing.TB, dir, group, topic string, n int) int64 {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, kafkagen.SegmentName(0)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size int64
	var buf []byte
	recs := make([]kafkagen.Record, 0, 1000)
	for first := 0; first < n; first += 1000 {
		recs = recs[:0]
		for p := first; p < min(first+1000, n); p++ {
			recs = append(recs, kafkagen.Record{OffsetDelta: int32(p - first), Timestamp: 1_700_000_000_000 + int64(p/1000),
				Key: kafkagen.OffsetCommitKey(group, topic, int32(p)), Value: kafkagen.OffsetCommitValue(3, int64(p), 1, "", 1_700_000_000_000, 0)})
		}
		buf = kafkagen.AppendBatch(buf[:0], kafkagen.Batch{BaseOffset: int64(first), LeaderEpoch: 0, ProducerID: -1, Compression: "zstd", Records: recs})
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
		size += int64(len(buf))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return size
}

package metadata_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/metadata"
)

// benchMetadata is the data directory the image benchmarks read:
// KSEG_BENCH_METADATA when set (a data directory holding
// __cluster_metadata-0, e.g. one kseg gen --metadata --log-bytes wrote),
// else one generated here of KSEG_BENCH_METADATA_BYTES bytes (64 MiB by
// default; kafkagen.MetadataBenchOptions).
func benchMetadata(b *testing.B) string {
	if d := os.Getenv("KSEG_BENCH_METADATA"); d != "" {
		return d
	}
	size := int64(64 << 20)
	if s := os.Getenv("KSEG_BENCH_METADATA_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1<<20 {
			b.Fatalf("KSEG_BENCH_METADATA_BYTES=%q: want a size of at least 1 MiB in bytes", s)
		}
		size = v
	}
	dir := b.TempDir()
	if _, err := kafkagen.GenerateMetadata(filepath.Join(dir, "__cluster_metadata-0"), kafkagen.MetadataBenchOptions(1, size)); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkImageLoad builds the image of a big metadata log: at its end
// (every record of the log: the generated log has no snapshot) and at its
// middle. It reports the log bytes read per second, the records applied
// per second and the largest heap in use.
func BenchmarkImageLoad(b *testing.B) {
	data := benchMetadata(b)
	gentest.Warm(b, data)
	end, err := metadata.Load(data, metadata.Options{})
	if err != nil {
		b.Fatal(err)
	}
	half := end.LogEndOffset / 2
	for _, tc := range []struct {
		name string
		o    metadata.Options
	}{
		{"end", metadata.Options{}},
		{"half", metadata.Options{Offset: &half}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var records, bytes int64
			var peak uint64
			for b.Loop() {
				stop := gentest.HeapPeak()
				im, err := metadata.Load(data, tc.o)
				inuse, _ := stop()
				if err != nil {
					b.Fatal(err)
				}
				peak = max(peak, inuse)
				records = im.Records + im.SnapshotRecords
				bytes = logBytesRead(b, data, im)
			}
			b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
		})
	}
}

// logBytesRead is the size of the log from the first segment the image
// read (its AppliedFrom) to its end: what Load read.
func logBytesRead(b *testing.B, data string, im *metadata.Image) int64 {
	var n int64
	for _, l := range gentest.LogFiles(b, filepath.Join(data, "__cluster_metadata-0")) {
		st, err := os.Stat(l)
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	if im.LogEndOffset > im.LogStartOffset && im.AppliedTo >= im.AppliedFrom {
		n = n * (im.AppliedTo - im.AppliedFrom + 1) / (im.LogEndOffset - im.LogStartOffset)
	}
	return n
}

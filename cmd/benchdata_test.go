package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kseg/kseg/rebuild/gen"
)

// Benchmark data. `make bench` writes every data set below with `kseg gen`
// into KSEG_BENCH_DATA/<set>/ (segments of KSEG_BENCH_SEGMENT_BYTES); the
// same options are used here to generate a set into the benchmark's
// temporary directory when KSEG_BENCH_DATA is not set (segments of 64 MiB
// then, unless KSEG_BENCH_SEGMENT_BYTES says otherwise). Call benchData
// from a parent benchmark, outside b.Run, so a set is written once per
// -count round.
//
//	seg       bench-0: 1 segment of S bytes (uncompressed v2, 1 KiB values)
//	part4     bench-0: 4 segments of S bytes
//	many      t-0 .. t-15: 16 partitions of one S/16 segment
//	gzip ...  bench-0: 1 segment of S/4 bytes in that codec (snappy, lz4, zstd)
//	segs      bench-0: 256 segments of 1 MiB
func benchData(b *testing.B, set string) string {
	b.Helper()
	if d := os.Getenv("KSEG_BENCH_DATA"); d != "" {
		dir := filepath.Join(d, set)
		if _, err := os.Stat(dir); err != nil {
			b.Fatalf("KSEG_BENCH_DATA=%s has no data set %s (make bench writes it): %v", d, set, err)
		}
		return dir
	}
	size := int64(64 << 20)
	if s := os.Getenv("KSEG_BENCH_SEGMENT_BYTES"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1<<20 {
			b.Fatalf("KSEG_BENCH_SEGMENT_BYTES=%q: want a size of at least 1 MiB in bytes", s)
		}
		size = v
	}
	dir := filepath.Join(b.TempDir(), set)
	write := func(name string, o gen.Options) {
		if _, err := gen.Generate(filepath.Join(dir, name), o); err != nil {
			b.Fatal(err)
		}
	}
	switch set {
	case "seg":
		write("bench-0", gen.BenchOptions(1, 1, size))
	case "part4":
		write("bench-0", gen.BenchOptions(2, 4, size))
	case "many":
		for i := range 16 {
			write(fmt.Sprintf("t-%d", i), gen.BenchOptions(int64(10+i), 1, size/16))
		}
	case "gzip", "snappy", "lz4", "zstd":
		o := gen.BenchOptions(3, 1, size/4)
		o.Compression = set
		write("bench-0", o)
	case "segs":
		write("bench-0", gen.BenchOptions(4, 256, 1<<20))
	default:
		b.Fatalf("no benchmark data set %q", set)
	}
	return dir
}

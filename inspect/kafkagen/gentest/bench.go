// Package gentest holds what the benchmarks and page-cache tests of several
// packages share: the benchmark data sets written with package gen, the
// machine's own read+CRC32C limit, heap and CPU-time meters, and page-cache
// residency helpers, hand-built log entries for the tests of recovery
// and rebuild, and damaged indexes over intact logs for the tests of the
// rule for misleading index entries. It is support code for tests; kseg
// itself never imports it.
package gentest

import (
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// Benchmark data. `make bench` writes every data set below with `kseg gen`
// into KSEG_BENCH_DATA/<set>/ (segments of KSEG_BENCH_SEGMENT_BYTES); the
// same options are used here to generate a set into the benchmark's
// temporary directory when KSEG_BENCH_DATA is not set (segments of 64 MiB
// then, unless KSEG_BENCH_SEGMENT_BYTES says otherwise). Call BenchData
// from a parent benchmark, outside b.Run, so a set is written once per
// -count round.
//
//	seg       bench-0: 1 segment of S bytes (uncompressed v2, 1 KiB values)
//	part4     bench-0: 4 segments of S bytes
//	many      t-0 .. t-15: 16 partitions of one S/16 segment
//	gzip ...  bench-0: 1 segment of S/4 bytes in that codec (snappy, lz4, zstd)
//	segs      bench-0: 256 segments of 1 MiB
//	parts     p-0 .. p-63: 64 partitions of 3 segments of 2 MiB
//	small     bench-0: 1 segment of S, batches of 1-2 records of 150 bytes (~0.4 KiB)
//	kib       bench-0: 1 segment of S, batches of one 1 KiB record (~1.1 KiB)
//	datadir   d-0 .. d-(P-1): P partitions of 3 segments of 1 MiB, P from
//	          KSEG_BENCH_PARTITIONS (make bench: BENCH_PARTITIONS, 2000;
//	          generated here: 200 unless set)
func BenchData(b *testing.B, set string) string {
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
	write := func(name string, o kafkagen.Options) {
		if _, err := kafkagen.Generate(filepath.Join(dir, name), o); err != nil {
			b.Fatal(err)
		}
	}
	switch set {
	case "seg":
		write("bench-0", kafkagen.BenchOptions(1, 1, size))
	case "part4":
		write("bench-0", kafkagen.BenchOptions(2, 4, size))
	case "many":
		for i := range 16 {
			write(fmt.Sprintf("t-%d", i), kafkagen.BenchOptions(int64(10+i), 1, size/16))
		}
	case "gzip", "snappy", "lz4", "zstd":
		o := kafkagen.BenchOptions(3, 1, size/4)
		o.Compression = set
		write("bench-0", o)
	case "segs":
		write("bench-0", kafkagen.BenchOptions(4, 256, 1<<20))
	case "parts":
		for i := range 64 {
			write(fmt.Sprintf("p-%d", i), kafkagen.BenchOptions(int64(100+i), 3, 2<<20))
		}
	case "small", "kib":
		o := kafkagen.BenchOptions(5, 1, size)
		o.RecordsPerBatch, o.ValueSize = SmallBatchShape(set)
		write("bench-0", o)
	case "datadir":
		for i := range BenchPartitions(b, 200) {
			write(fmt.Sprintf("d-%d", i), kafkagen.BenchOptions(int64(1000+i), 3, 1<<20))
		}
	default:
		b.Fatalf("no benchmark data set %q", set)
	}
	return dir
}

// SmallBatchShape is the records per batch (at most) and value size of the
// small-batch data sets: "small" holds 1 or 2 records of 150 bytes (about
// 0.4 KiB a batch), "kib" one record of 1 KiB (about 1.1 KiB). The
// Makefile writes the same shapes.
func SmallBatchShape(set string) (recordsPerBatch, valueSize int) {
	if set == "small" {
		return 2, 150
	}
	return 1, 1024
}

// BenchPartitions is the number of partitions of the "datadir" set:
// KSEG_BENCH_PARTITIONS, or def.
func BenchPartitions(b *testing.B, def int) int {
	s := os.Getenv("KSEG_BENCH_PARTITIONS")
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		b.Fatalf("KSEG_BENCH_PARTITIONS=%q: want a number of partitions", s)
	}
	return v
}

// BaselineCRC is the machine's own limit for a pass over a file: read it
// once with pread into a 1 MiB buffer (allocated once for all calls) and
// compute its CRC-32C, nothing else. It returns the bytes read.
func BaselineCRC(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := baselineBuf
	var c uint32
	var n int64
	for {
		k, err := f.ReadAt(buf, n)
		c = crc32.Update(c, Castagnoli, buf[:k])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	BaselineSink = c
	return n
}

var (
	// Castagnoli is the CRC-32C table the limit uses.
	Castagnoli = crc32.MakeTable(crc32.Castagnoli)
	// BaselineSink keeps the last checksum, so the compiler cannot drop the pass.
	BaselineSink uint32
	baselineBuf  = make([]byte, 1<<20) // one buffer, as a minimal program has
)

// VsBaseline alternates the machine's limit (BaselineCRC over every one of
// logs) and op, which returns the bytes of log it checked, in each
// iteration of b, with warm run before each (outside the timer). It
// reports both throughputs and op's share of the limit ("x-baseline"), and
// the same share in CPU time ("cpu-x-baseline"), which other processes
// competing for the cores do not distort.
func VsBaseline(b *testing.B, warm func(), logs []string, op func() int64) {
	var base, elapsed, baseCPU, workCPU time.Duration
	var bytes int64
	for b.Loop() {
		b.StopTimer()
		warm()
		b.StartTimer()
		c0, t0 := CPUTime(), time.Now()
		for _, l := range logs {
			BaselineCRC(b, l)
		}
		c1, t1 := CPUTime(), time.Now()
		bytes = op()
		elapsed += time.Since(t1)
		workCPU += CPUTime() - c1
		base += t1.Sub(t0)
		baseCPU += c1 - c0
	}
	n := float64(b.N)
	b.ReportMetric(float64(bytes)*n/base.Seconds()/1e6, "baseline-MB/s")
	b.ReportMetric(float64(bytes)*n/elapsed.Seconds()/1e6, "MB/s")
	b.ReportMetric(base.Seconds()/elapsed.Seconds(), "x-baseline")
	if workCPU > 0 {
		b.ReportMetric(baseCPU.Seconds()/workCPU.Seconds(), "cpu-x-baseline")
	}
}

// WarmDirs warms (Warm) the directories holding logs, each once: their
// indexes too.
func WarmDirs(b *testing.B, logs []string) {
	seen := map[string]bool{}
	for _, l := range logs {
		if d := filepath.Dir(l); !seen[d] {
			seen[d] = true
			Warm(b, d)
		}
	}
}

// LogFiles lists the .log files under dir (a data set), in walk order.
func LogFiles(b *testing.B, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".log") {
			out = append(out, path)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		b.Fatalf("no .log files under %s: %v", dir, err)
	}
	return out
}

// HeapPeak samples runtime.MemStats every 2 ms while it runs, keeping the
// largest HeapInuse and HeapAlloc seen; stop returns them in bytes.
func HeapPeak() (stop func() (inuse, alloc uint64)) {
	done := make(chan struct{})
	res := make(chan [2]uint64)
	go func() {
		var ms runtime.MemStats
		var peak [2]uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak[0], peak[1] = max(peak[0], ms.HeapInuse), max(peak[1], ms.HeapAlloc)
			select {
			case <-done:
				res <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		p := <-res
		return p[0], p[1]
	}
}

// CPUTime is the CPU time (user + system) this process has used so far:
// under other load on the machine a run's wall time measures the machine,
// its CPU time measures the code.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Warm reads every file under dir (or the file dir) once through the page cache, so that the
// benchmark that follows reads cached data. Needed before every timed pass
// that does not read the files itself first: this machine's kernel
// reclaims cold page-cache pages within minutes (DAMON), and kseg's
// cache-neutral reading would then keep them out.
func Warm(b *testing.B, dir string) {
	b.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		for off := int64(0); ; {
			n, err := f.ReadAt(baselineBuf, off)
			off += int64(n)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
}

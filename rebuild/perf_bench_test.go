package rebuild

import (
	"github.com/kseg/kseg/inspect/kafkagen/gentest"

	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
)

func benchTarget(b *testing.B, dir string) *inspect.Target {
	b.Helper()
	tg, err := inspect.Resolve(dir)
	if err != nil {
		b.Fatal(err)
	}
	return tg
}

// rebuildInPlace is `kseg rebuild PATH` on an intact partition: every
// segment recovered as the broker would, compared with the files on disk,
// nothing to write. It returns the log bytes read.
func rebuildInPlace(b *testing.B, t *inspect.Target) int64 {
	res, err := Run(t, ApplyOptions{})
	if err != nil || len(res) == 0 {
		b.Fatalf("rebuild: %d segments: %v", len(res), err)
	}
	var n int64
	for _, r := range res {
		if r.Changed || len(r.Written) > 0 || r.StopErr != nil {
			b.Fatalf("rebuild changed an intact segment: %+v", r)
		}
		n += r.ValidBytes
	}
	return n
}

// BenchmarkRebuildSegment rebuilds the indexes of one uncompressed segment
// (the "seg" data set) and, alternately, runs the machine's own limit
// (gentest.BaselineCRC) over the same log; it reports both throughputs and
// rebuild's share of the limit ("x-baseline"). "out" writes the rebuilt
// files to another directory (--out) as well.
func BenchmarkRebuildSegment(b *testing.B) {
	dir := gentest.BenchData(b, "seg")
	tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
	warm := func() { gentest.Warm(b, dir) }
	b.Run("in-place", func(b *testing.B) {
		gentest.VsBaseline(b, warm, logs, func() int64 { return rebuildInPlace(b, tg) })
	})
	b.Run("out", func(b *testing.B) {
		out := b.TempDir()
		gentest.VsBaseline(b, warm, logs, func() int64 {
			res, err := Run(tg, ApplyOptions{OutDir: filepath.Join(out, "o")})
			if err != nil || len(res) == 0 {
				b.Fatal(err)
			}
			var n int64
			for _, r := range res {
				n += r.ValidBytes
			}
			b.StopTimer()
			if err := os.RemoveAll(filepath.Join(out, "o")); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			return n
		})
	})
}

// BenchmarkRebuildHeap rebuilds the 4-segment partition ("part4": 4 GiB
// with 1 GiB segments) and reports the peak Go heap seen
// (runtime.MemStats, sampled every 2 ms).
func BenchmarkRebuildHeap(b *testing.B) {
	dir := gentest.BenchData(b, "part4")
	tg := benchTarget(b, dir)
	b.Run("part4", func(b *testing.B) {
		var inuse, alloc uint64
		var bytes int64
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			gentest.Warm(b, dir)
			b.StartTimer()
			stop := gentest.HeapPeak()
			bytes = rebuildInPlace(b, tg)
			i, a := stop()
			inuse, alloc = max(inuse, i), max(alloc, a)
		}
		b.ReportMetric(float64(bytes)/(1<<20), "partition-MiB")
		b.ReportMetric(float64(inuse)/(1<<20), "peak-heap-inuse-MiB")
		b.ReportMetric(float64(alloc)/(1<<20), "peak-heap-alloc-MiB")
	})
}

// BenchmarkRebuildBatches rebuilds (in place, nothing to write) one
// segment of small batches ("small", ~0.4 KiB), of 1 KiB batches ("kib")
// and of ~9 KiB batches ("seg"), against the single-goroutine per-batch
// read+CRC-32C limit (gentest.BaselineBatchCRC) measured in the same
// iterations ("x-batch-limit", wall time).
func BenchmarkRebuildBatches(b *testing.B) {
	for _, set := range []string{"small", "kib", "seg"} {
		dir := gentest.BenchData(b, set)
		tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
		b.Run(set, func(b *testing.B) {
			gentest.VsBatchLimit(b, func() { gentest.Warm(b, dir) }, logs, func() int64 { return rebuildInPlace(b, tg) })
		})
	}
}

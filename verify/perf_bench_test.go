package verify

import (
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"math"

	"hash/crc32"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
)

func benchTarget(b *testing.B, dir string) *inspect.Target {
	b.Helper()
	tg, err := inspect.Resolve(dir)
	if err != nil {
		b.Fatal(err)
	}
	return tg
}

// verifyClean runs verify over t as the command does (side files too)
// and fails on any finding (the data sets are clean). It returns the
// bytes of log checked.
func verifyClean(b *testing.B, t *inspect.Target, o Options) int64 {
	o.SideFiles = true
	sum, err := Run(t, o, func(f Finding) { b.Fatalf("finding %+v", f) })
	if err != nil || sum.Batches == 0 {
		b.Fatalf("verify: %d batches: %v", sum.Batches, err)
	}
	return sum.Bytes
}

// BenchmarkVerifySegment verifies one uncompressed segment (the "seg" data
// set), against the machine's limit measured in the same iterations.
func BenchmarkVerifySegment(b *testing.B) {
	dir := gentest.BenchData(b, "seg")
	tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
	b.Run("headers", func(b *testing.B) {
		gentest.VsBaseline(b, func() { gentest.WarmDirs(b, logs) }, logs, func() int64 { return verifyClean(b, tg, Options{Jobs: 1}) })
	})
	// The same work spread over 256 segments of 1 MiB ("segs"): what the
	// per-segment costs (opening, mapping, index checks) add.
	sdir := gentest.BenchData(b, "segs")
	stg, slogs := benchTarget(b, sdir), gentest.LogFiles(b, sdir)
	b.Run("256-segments", func(b *testing.B) {
		gentest.VsBaseline(b, func() { gentest.WarmDirs(b, slogs) }, slogs, func() int64 { return verifyClean(b, stg, Options{Jobs: 1}) })
	})
}

// BenchmarkVerifyRecords is verify --records (every record decoded) per
// codec, against the machine's limit over the same bytes on disk.
func BenchmarkVerifyRecords(b *testing.B) {
	for _, set := range []string{"seg", "gzip", "snappy", "lz4", "zstd"} {
		dir := gentest.BenchData(b, set)
		tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
		name := set
		if set == "seg" {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			gentest.VsBaseline(b, func() { gentest.WarmDirs(b, logs) }, logs, func() int64 { return verifyClean(b, tg, Options{Jobs: 1, Records: true}) })
		})
	}
}

// BenchmarkVerifyJobs verifies a data dir of many partitions with -j 1 and
// -j 2 alternately and reports the speedup of -j 2: 16 partitions of one
// large segment (the "many" data set), and 64 partitions of three 2 MiB
// segments ("parts"), where the per-segment costs weigh more.
func BenchmarkVerifyJobs(b *testing.B) {
	many, parts := gentest.BenchData(b, "many"), gentest.BenchData(b, "parts")
	b.Run("j1-vs-j2", func(b *testing.B) { jobsSpeedup(b, many) })
	b.Run("parts-j1-vs-j2", func(b *testing.B) { jobsSpeedup(b, parts) })
}

// jobsSpeedup times verify of the data set dir with -j 1 and -j 2, and
// the machine's own limit (the read+CRC32C pass over every log by one
// goroutine, then by two), in the same iterations.
func jobsSpeedup(b *testing.B, dir string) {
	tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
	var d1, d2, c2, l1, l2 time.Duration
	var bytes int64
	for b.Loop() {
		b.StopTimer()
		gentest.Warm(b, dir)
		b.StartTimer()
		t := time.Now()
		for _, l := range logs {
			gentest.BaselineCRC(b, l)
		}
		l1 += time.Since(t)
		b.StopTimer()
		gentest.Warm(b, dir)
		b.StartTimer()
		t = time.Now()
		var wg sync.WaitGroup
		for half := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 1<<20)
				for i := half; i < len(logs); i += 2 {
					crcWith(b, logs[i], buf)
				}
			}()
		}
		wg.Wait()
		l2 += time.Since(t)

		b.StopTimer()
		gentest.Warm(b, dir)
		b.StartTimer()
		t0 := time.Now()
		bytes = verifyClean(b, tg, Options{Jobs: 1})
		d1 += time.Since(t0)
		b.StopTimer()
		gentest.Warm(b, dir)
		b.StartTimer()
		cpu, t1 := gentest.CPUTime(), time.Now()
		verifyClean(b, tg, Options{Jobs: 2})
		d2 += time.Since(t1)
		c2 += gentest.CPUTime() - cpu
	}
	n := float64(b.N)
	// Cores kept busy by -j 2 (2 at best): below that, the scheduler
	// did not give the run two cores, or the jobs waited on each other.
	b.ReportMetric(c2.Seconds()/d2.Seconds(), "j2-cores")
	b.ReportMetric(float64(bytes)*n/d1.Seconds()/1e6, "j1-MB/s")
	b.ReportMetric(float64(bytes)*n/d2.Seconds()/1e6, "j2-MB/s")
	b.ReportMetric(d1.Seconds()/d2.Seconds(), "speedup")
	b.ReportMetric(l1.Seconds()/l2.Seconds(), "limit-speedup")
}

// BenchmarkVerifyHeap verifies the 4-segment partition ("part4": 4 GiB
// with 1 GiB segments) with the default jobs and reports the peak Go heap
// seen (runtime.MemStats, sampled every 2 ms).
func BenchmarkVerifyHeap(b *testing.B) {
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
			bytes = verifyClean(b, tg, Options{})
			i, a := stop()
			inuse, alloc = max(inuse, i), max(alloc, a)
		}
		b.ReportMetric(float64(bytes)/(1<<20), "partition-MiB")
		b.ReportMetric(float64(inuse)/(1<<20), "peak-heap-inuse-MiB")
		b.ReportMetric(float64(alloc)/(1<<20), "peak-heap-alloc-MiB")
	})
}

// crcWith is gentest.BaselineCRC with the caller's buffer (one per goroutine).
func crcWith(b *testing.B, path string, buf []byte) {
	f, err := os.Open(path)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	var c uint32
	for off := int64(0); ; {
		k, err := f.ReadAt(buf, off)
		c = crc32.Update(c, gentest.Castagnoli, buf[:k])
		off += int64(k)
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Error(err)
			return
		}
	}
}

// BenchmarkVerifyBatches verifies one segment of small batches ("small",
// ~0.4 KiB), of 1 KiB batches ("kib", ~1.1 KiB) and of ~9 KiB batches
// ("seg") as `kseg verify` does by default (-j the number of cores),
// against the single-goroutine per-batch read+CRC-32C limit measured in
// the same iterations.
func BenchmarkVerifyBatches(b *testing.B) {
	for _, set := range []string{"small", "kib", "seg"} {
		dir := gentest.BenchData(b, set)
		tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
		b.Run(set, func(b *testing.B) {
			gentest.VsBatchLimit(b, func() { gentest.WarmDirs(b, logs) }, logs, func() int64 { return verifyClean(b, tg, Options{}) })
		})
	}
}

// BenchmarkVerifyDataDir verifies the data dir of many partitions of three
// 1 MiB segments ("datadir") with -j 1 and with the default -j, against
// the per-batch limit (one goroutine) in the same iterations:
// "j1-x-batch-limit" is -j 1's share of the limit, "speedup" the default
// -j over -j 1.
func BenchmarkVerifyDataDir(b *testing.B) {
	dir := gentest.BenchData(b, "datadir")
	tg, logs := benchTarget(b, dir), gentest.LogFiles(b, dir)
	b.Run("j1-vs-default", func(b *testing.B) {
		var base, d1, dj time.Duration
		var bytes int64
		for b.Loop() {
			b.StopTimer()
			gentest.Warm(b, dir)
			b.StartTimer()
			t0 := time.Now()
			for _, l := range logs {
				gentest.BaselineBatchCRC(b, l)
			}
			t1 := time.Now()
			bytes = verifyClean(b, tg, Options{Jobs: 1})
			t2 := time.Now()
			verifyClean(b, tg, Options{})
			dj += time.Since(t2)
			d1 += t2.Sub(t1)
			base += t1.Sub(t0)
		}
		n := float64(b.N)
		b.ReportMetric(float64(bytes)*n/base.Seconds()/1e6, "batch-limit-MB/s")
		b.ReportMetric(float64(bytes)*n/d1.Seconds()/1e6, "j1-MB/s")
		b.ReportMetric(float64(bytes)*n/dj.Seconds()/1e6, "jdefault-MB/s")
		b.ReportMetric(base.Seconds()/d1.Seconds(), "j1-x-batch-limit")
		b.ReportMetric(d1.Seconds()/dj.Seconds(), "speedup")
	})
}

// BenchmarkSegmentBatches is verify's per-batch work after the checksum
// that needs no index file: the offset tracker, the segment statistics
// and the recovery emulation, over 4096 headers of ~0.3 KiB batches fed
// again and again with their offsets moved on (in cache, one goroutine).
// It reports "ns/batch".
func BenchmarkSegmentBatches(b *testing.B) {
	const size, rounds = 320, 64
	batches := make([]record.Batch, 4096)
	for i := range batches {
		bt := &batches[i]
		bt.Magic, bt.Position, bt.Size = 2, int64(i)*size, size
		bt.BaseOffset, bt.LastOffset, bt.MaxTimestamp = int64(2*i), int64(2*i+1), 1_700_000_000_000+int64(i)
	}
	span, bytes := int64(2*len(batches)), int64(len(batches))*size
	n := 0
	for b.Loop() {
		o := Options{}.resolved()
		c := &segChecker{opts: &o, job: &segmentJob{}, sink: newSink(o.MaxFindingsPerCheck),
			emu: newRecoveryEmu(0, DefaultIndexIntervalBytes), track: offsetTracker{limit: math.MaxInt64}}
		for r := range int64(rounds) {
			for i := range batches {
				bt := batches[i]
				bt.Position += r * bytes
				bt.BaseOffset += r * span
				bt.LastOffset += r * span
				c.batch(&bt, true, -1)
			}
		}
		c.track.flush(c)
		if c.sink.list != nil || c.emu.broken {
			b.Fatalf("findings %v, recovery emulation broken %v", c.sink.list, c.emu.broken)
		}
		n += rounds * len(batches)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/batch")
}

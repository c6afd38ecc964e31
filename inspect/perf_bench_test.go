package inspect_test

import (
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"

	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/exp/mmap"
	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// benchLog returns the .log of the "seg" data set and its size.
func benchLog(b *testing.B) (string, int64) {
	b.Helper()
	p := benchPartition(b, "seg")
	st, err := os.Stat(p.Segments[0].Log)
	if err != nil {
		b.Fatal(err)
	}
	return p.Segments[0].Log, st.Size()
}

func benchPartition(b *testing.B, set string) *inspect.Partition {
	b.Helper()
	tg, err := inspect.Resolve(filepath.Join(gentest.BenchData(b, set), "bench-0"))
	if err != nil {
		b.Fatal(err)
	}
	return tg.Partitions[0]
}

// BenchmarkReadLog compares the ways of reading a page-cached .log once
// while computing its CRC-32C (the work verify and rebuild do per byte):
// pread into buffers of several sizes, walking a mapping (with and without
// MADV_SEQUENTIAL), and golang.org/x/exp/mmap's ReadAt (a copy out of the
// mapping). docs/performance.md records the choice these numbers made.
func BenchmarkReadLog(b *testing.B) {
	path, size := benchLog(b)
	gentest.Warm(b, path)
	for _, w := range []int{64 << 10, 256 << 10, 1 << 20, 4 << 20} {
		b.Run("pread-"+sizeName(w), func(b *testing.B) {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, w)
			b.SetBytes(size)
			for b.Loop() {
				var c uint32
				for off := int64(0); off < size; {
					n, err := f.ReadAt(buf, off)
					if n == 0 && err != nil {
						b.Fatal(err)
					}
					c = crc32.Update(c, castagnoli, buf[:n])
					off += int64(n)
				}
				sinkCRC = c
			}
		})
	}
	for _, advice := range []struct {
		name string
		adv  int
	}{{"mmap-walk", unix.MADV_NORMAL}, {"mmap-walk-sequential", unix.MADV_SEQUENTIAL}} {
		b.Run(advice.name, func(b *testing.B) {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
			if err != nil {
				b.Fatal(err)
			}
			defer unix.Munmap(m)
			if err := unix.Madvise(m, advice.adv); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			for b.Loop() {
				var c uint32
				for off := 0; off < len(m); off += 1 << 20 {
					c = crc32.Update(c, castagnoli, m[off:min(off+1<<20, len(m))])
				}
				sinkCRC = c
			}
		})
	}
	b.Run("x-exp-mmap-ReadAt-1MiB", func(b *testing.B) {
		m, err := mmap.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		buf := make([]byte, 1<<20)
		b.SetBytes(size)
		for b.Loop() {
			var c uint32
			for off := int64(0); off < size; {
				n, err := m.ReadAt(buf, off)
				if n == 0 && err != nil {
					b.Fatal(err)
				}
				c = crc32.Update(c, castagnoli, buf[:n])
				off += int64(n)
			}
			sinkCRC = c
		}
	})
}

var sinkCRC uint32

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}

// scanLog is verify's and rebuild's pass over a log: every entry through
// the entry scanner, every CRC checked.
func scanLog(b *testing.B, f *fileio.File) {
	s := inspect.NewLogIterator(inspect.IterOptions{})
	s.Reset(f, nil, 0)
	n := 0
	for s.Next() {
		if _, ok, err := s.CheckCRC(); err != nil || !ok {
			b.Fatalf("batch %d: crc ok=%v err=%v", n, ok, err)
		}
		n++
	}
	if err := s.Err(); err != nil || n == 0 {
		b.Fatalf("scan ended after %d batches: %v", n, err)
	}
}

// BenchmarkScanLog is the entry scanner with CRC checks over a page-cached
// .log, keeping the page cache and cache-neutral: on cached data the
// difference is the cost of sampling residency (mincore) and bookkeeping.
func BenchmarkScanLog(b *testing.B) {
	path, size := benchLog(b)
	for _, neutral := range []bool{false, true} {
		b.Run(map[bool]string{false: "keep-cache", true: "cache-neutral"}[neutral], func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				b.StopTimer()
				gentest.Warm(b, path)
				b.StartTimer()
				f, err := fileio.Open(path, fileio.Options{CacheNeutral: neutral})
				if err != nil {
					b.Fatal(err)
				}
				scanLog(b, f)
				f.Close()
			}
		})
	}
}

// BenchmarkScanLogCold is BenchmarkScanLog with the .log evicted from the
// page cache before each pass, so it is read from the disk. It reports
// resident-frac, the fraction of the file's pages in the page cache after
// the pass: what a cache-neutral read leaves behind (0) against an
// ordinary one. The file is read back into the cache at the end.
func BenchmarkScanLogCold(b *testing.B) {
	path, size := benchLog(b)
	evict := func() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
	}
	defer func() {
		f, err := os.Open(path)
		if err == nil {
			io.Copy(io.Discard, f)
			f.Close()
		}
	}()
	for _, neutral := range []bool{false, true} {
		b.Run(map[bool]string{false: "keep-cache", true: "cache-neutral"}[neutral], func(b *testing.B) {
			b.SetBytes(size)
			var resident, pages int
			for b.Loop() {
				b.StopTimer()
				evict()
				b.StartTimer()
				f, err := fileio.Open(path, fileio.Options{CacheNeutral: neutral})
				if err != nil {
					b.Fatal(err)
				}
				scanLog(b, f)
				f.Close()
				b.StopTimer()
				r, err := fileio.ResidentPages(path)
				if err != nil {
					b.Fatal(err)
				}
				pages = len(r)
				resident = 0
				for _, in := range r {
					if in {
						resident++
					}
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(resident)/float64(max(pages, 1)), "resident-frac")
		})
	}
}

// lookupTargets are offsets spread at random over the segment, the same
// in every run.
func lookupTargets(b *testing.B, seg *inspect.Segment) []int64 {
	leo, err := seg.NextOffset()
	if err != nil || leo <= seg.BaseOffset {
		b.Fatalf("log end offset %d: %v", leo, err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	t := make([]int64, 4096)
	for i := range t {
		t[i] = seg.BaseOffset + r.Int64N(leo-seg.BaseOffset)
	}
	return t
}

// timeTargets are timestamps spread at random between the segment's first
// and largest timestamps.
func timeTargets(b *testing.B, seg *inspect.Segment) []int64 {
	first, err := seg.TimeIndex.Entry(0)
	if err != nil {
		b.Fatal(err)
	}
	last, err := seg.TimeIndex.LastEntry()
	if err != nil || last.Timestamp <= first.Timestamp {
		b.Fatalf("time index spans %d..%d: %v", first.Timestamp, last.Timestamp, err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	t := make([]int64, 4096)
	for i := range t {
		t[i] = first.Timestamp - 1000 + r.Int64N(last.Timestamp-first.Timestamp+1000)
	}
	return t
}

// lookupSegments opens the segment of a data set ("seg" unless named),
// warmed, twice: with the log mapped (SegmentOptions.Log mapped, a
// long-lived process) and read with pread (OpenSegment, what the one-shot
// commands use). Both are closed when the benchmark ends.
func lookupSegments(b *testing.B, set ...string) (p *inspect.Partition, mapped, pread *inspect.Segment) {
	p = benchPartition(b, append(set, "seg")[0])
	gentest.Warm(b, filepath.Dir(p.Segments[0].Log))
	mapped, err := inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{Log: fileio.Options{Mapped: true}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mapped.Close() })
	pread, err = inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pread.Close() })
	return p, mapped, pread
}

// BenchmarkLookupOffset is an offset lookup in an opened segment of the
// "seg" data set (default index density: index.interval.bytes 4096):
// the offset index's warm/cold binary search and the header scan, for
// random offsets, with the log mapped (SegmentOptions.Log mapped, a long-lived
// process) and, "segment-pread-log", read with pread (OpenSegment, what
// the one-shot commands use). "latency" times each lookup alone and
// reports the median and 99th percentile.
func BenchmarkLookupOffset(b *testing.B) {
	p, seg, pseg := lookupSegments(b)
	targets := lookupTargets(b, seg)
	b.Run("segment-pread-log", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, _, found, err := pseg.LookupOffset(targets[i&4095]); err != nil || !found {
				b.Fatalf("offset %d: found=%v: %v", targets[i&4095], found, err)
			}
		}
	})
	lookup := func(b *testing.B, i int) {
		bt, _, found, err := seg.LookupOffset(targets[i&4095])
		if err != nil || !found || bt.LastOffset < targets[i&4095] {
			b.Fatalf("offset %d: found=%v batch %+v: %v", targets[i&4095], found, bt, err)
		}
	}
	b.Run("segment", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			lookup(b, i)
		}
	})
	b.Run("segment-latency", func(b *testing.B) {
		latency(b, func(i int) { lookup(b, i) })
	})
	b.Run("partition-open-per-lookup", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r, err := p.LookupOffset(targets[i&4095], inspect.LookupOptions{})
			if err != nil || !r.Found {
				b.Fatalf("offset %d: %+v %v", targets[i&4095], r, err)
			}
		}
	})
}

// BenchmarkLookupTimestamp is a timestamp lookup (ListOffsets) in an
// opened segment: time index search, offset index search, header scan and
// the decoding of the one batch holding the answer.
func BenchmarkLookupTimestamp(b *testing.B) {
	p, seg, pseg := lookupSegments(b)
	targets := timeTargets(b, seg)
	b.Run("segment-pread-log", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if a, err := pseg.LookupTimestamp(targets[i&4095], pseg.BaseOffset); err != nil || !a.Found {
				b.Fatalf("timestamp %d: %+v: %v", targets[i&4095], a, err)
			}
		}
	})
	lookup := func(b *testing.B, i int) {
		a, err := seg.LookupTimestamp(targets[i&4095], seg.BaseOffset)
		if err != nil || !a.Found || a.Timestamp < targets[i&4095] {
			b.Fatalf("timestamp %d: %+v: %v", targets[i&4095], a, err)
		}
	}
	b.Run("segment", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			lookup(b, i)
		}
	})
	b.Run("segment-latency", func(b *testing.B) {
		latency(b, func(i int) { lookup(b, i) })
	})
	b.Run("partition-open-per-lookup", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r, err := p.LookupTime(targets[i&4095], inspect.LookupOptions{})
			if err != nil || !r.Found {
				b.Fatalf("timestamp %d: %+v %v", targets[i&4095], r, err)
			}
		}
	})
}

// BenchmarkLookupSmallBatches is an offset and a timestamp lookup in the
// segment of ~0.3 KiB batches ("small"), log mapped and read with pread:
// the scan from the index entry passes about a dozen batches, whose
// headers headers-only reading takes from 4 KiB reads.
func BenchmarkLookupSmallBatches(b *testing.B) {
	_, seg, pseg := lookupSegments(b, "small")
	offsets, times := lookupTargets(b, seg), timeTargets(b, seg)
	for _, s := range []struct {
		name string
		seg  *inspect.Segment
	}{{"mapped", seg}, {"pread-log", pseg}} {
		b.Run(s.name+"/offset", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, _, found, err := s.seg.LookupOffset(offsets[i&4095]); err != nil || !found {
					b.Fatalf("offset %d: found=%v: %v", offsets[i&4095], found, err)
				}
			}
		})
		b.Run(s.name+"/time", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if a, err := s.seg.LookupTimestamp(times[i&4095], s.seg.BaseOffset); err != nil || !a.Found {
					b.Fatalf("timestamp %d: %+v: %v", times[i&4095], a, err)
				}
			}
		})
	}
}

// BenchmarkLookupTimestampParts times a timestamp lookup's steps
// cumulatively, for the same random targets as BenchmarkLookupTimestamp
// and through the same readers (WithFastReaders): 1 the time index search,
// 2 and the offset index search, 3 and the header scan to the first batch
// that can hold the answer, 4 and the records of that batch decoded up to
// the answer (the whole lookup). The medians show where the time goes;
// docs/performance.md has them.
func BenchmarkLookupTimestampParts(b *testing.B) {
	_, seg, _ := lookupSegments(b)
	targets := timeTargets(b, seg)
	steps := []string{"1-time-index", "2-offset-index", "3-header-scan", "4-records"}
	headers := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
	for n, name := range steps {
		b.Run(name, func(b *testing.B) {
			latency(b, func(i int) {
				target := targets[i&4095]
				if n == len(steps)-1 {
					if a, err := seg.LookupTimestamp(target, seg.BaseOffset); err != nil || !a.Found {
						b.Fatalf("timestamp %d: %+v: %v", target, a, err)
					}
					return
				}
				seg.WithFastReaders(func(log io.ReaderAt, idx *indexfmt.OffsetIndex, tidx *indexfmt.TimeIndex) {
					e, _, err := tidx.Lookup(target, nil)
					if err != nil || n == 0 {
						return
					}
					oe, _, err := idx.Lookup(e.Offset, nil)
					if err != nil || n == 1 {
						return
					}
					sc := headers
					sc.ResetReader(log, seg.LogName, seg.LogSize, int64(oe.Position))
					for sc.Next() && sc.Batch().MaxTimestamp < target {
					}
				})
			})
		})
	}
}

// latency runs op b.N times, timing each call, and reports the median and
// the 99th percentile in ns. Each call is timed with two readings of the
// monotonic clock only (time.Since of a fixed start): time.Now reads the
// wall clock as well, and on this VM the pair Now/Since costs 84 ns, half
// of which would land inside the interval measured.
func latency(b *testing.B, op func(i int)) {
	d := make([]time.Duration, 0, 1<<16)
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		t0 := time.Since(start)
		op(i)
		if t1 := time.Since(start); len(d) < cap(d) {
			d = append(d, t1-t0)
		}
	}
	slices.Sort(d)
	if len(d) > 0 {
		b.ReportMetric(float64(d[len(d)/2]), "p50-ns")
		b.ReportMetric(float64(d[len(d)*99/100]), "p99-ns")
	}
}

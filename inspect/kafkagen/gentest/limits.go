package gentest

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The minimal programs of the performance targets for small batches and
// many partitions: what the hardware allows for the same job without any
// of kseg's checks. They parse only what they must (the length field, the
// magic byte) and are written for clean data: anything else fails the
// benchmark.

// v2 batch layout (DefaultRecordBatch): baseOffset 8, length 4, partition
// leader epoch 4, magic 1, crc 4; the CRC-32C covers the bytes from the
// attributes field (byte 21) to the end of the batch.
const (
	logOverhead = 12
	magicAt     = 16
	crcAt       = 17
	crcFrom     = 21
)

// BaselineBatchCRC is the per-batch read+CRC-32C limit of one .log: read
// the file once with pread into a 1 MiB buffer (allocated once for all
// calls), walk the batch headers (length field, magic) and compute the
// CRC-32C of each v2 batch over its bytes, comparing it with the stored
// one. A batch cut by the end of the buffer is read again at the start of
// the next read. It returns the bytes read and the batches checked.
func BaselineBatchCRC(b *testing.B, path string) (bytes, batches int64) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size()
	buf := batchBuf
	for at := int64(0); at < size; {
		k, err := f.ReadAt(buf, at)
		if err != nil && err != io.EOF {
			b.Fatal(err)
		}
		p := buf[:k]
		bytes += int64(k)
		i := 0
		for i+crcFrom <= len(p) {
			n := logOverhead + int(binary.BigEndian.Uint32(p[i+8:]))
			if i+n > len(p) {
				if i == 0 {
					b.Fatalf("%s: batch at %d larger than the 1 MiB buffer", path, at)
				}
				break
			}
			if p[i+magicAt] == 2 && crc32.Checksum(p[i+crcFrom:i+n], Castagnoli) != binary.BigEndian.Uint32(p[i+crcAt:]) {
				b.Fatalf("%s: batch at position %d: CRC mismatch", path, at+int64(i))
			}
			batches++
			i += n
		}
		if i == 0 {
			b.Fatalf("%s: no batch at position %d", path, at)
		}
		at += int64(i)
	}
	return bytes, batches
}

var batchBuf = make([]byte, 1<<20)

// Segments lists the segments under dir (a data set) as the base paths of
// their files (the .log path without ".log"), in walk order.
func Segments(b *testing.B, dir string) []string {
	logs := LogFiles(b, dir)
	for i, l := range logs {
		logs[i] = strings.TrimSuffix(l, ".log")
	}
	return logs
}

// MinimalListing is the minimal listing of segments: for each, open its
// .log, .index and .timeindex, read the first batch header and the last
// 8 KiB of the log and the last entry of each index, on two goroutines
// (half the segments each). It returns the bytes read.
func MinimalListing(b *testing.B, segments []string) int64 {
	var wg sync.WaitGroup
	var total [2]int64
	for half := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 8<<10)
			for i := half; i < len(segments); i += 2 {
				total[half] += listSegment(b, segments[i], buf)
			}
		}()
	}
	wg.Wait()
	return total[0] + total[1]
}

// listSegment reads what MinimalListing reads of one segment.
func listSegment(b *testing.B, base string, buf []byte) int64 {
	var n int64
	read := func(suffix string, first int, last int64) {
		f, err := os.Open(base + suffix)
		if err != nil {
			b.Error(err)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			b.Error(err)
			return
		}
		if first > 0 {
			k, _ := f.ReadAt(buf[:first], 0)
			n += int64(k)
		}
		if l := min(last, st.Size()); l > 0 {
			k, _ := f.ReadAt(buf[:l], st.Size()-l)
			n += int64(k)
		}
	}
	read(".log", 61, 8<<10)
	read(".index", 0, 8)
	read(".timeindex", 0, 12)
	return n
}

// VsBatchLimit alternates the per-batch read+CRC-32C limit
// (BaselineBatchCRC over every one of logs, one goroutine) and op, which
// returns the bytes of log it checked, in each iteration of b, with warm
// run before each (outside the timer). It reports op's share of the limit
// in wall time ("x-batch-limit": op may use every core, the limit one),
// both throughputs and the average batch size.
func VsBatchLimit(b *testing.B, warm func(), logs []string, op func() int64) {
	var base, elapsed time.Duration
	var bytes, batches int64
	for b.Loop() {
		b.StopTimer()
		warm()
		b.StartTimer()
		t0 := time.Now()
		batches = 0
		for _, l := range logs {
			_, n := BaselineBatchCRC(b, l)
			batches += n
		}
		t1 := time.Now()
		bytes = op()
		elapsed += time.Since(t1)
		base += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(bytes)*n/base.Seconds()/1e6, "batch-limit-MB/s")
	b.ReportMetric(float64(bytes)*n/elapsed.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(bytes)/float64(max(batches, 1)), "bytes/batch")
	b.ReportMetric(base.Seconds()/elapsed.Seconds(), "x-batch-limit")
}

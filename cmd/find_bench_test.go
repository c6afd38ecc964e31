package cmd

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// logBytes is the size of the .log files under dir.
func logBytes(b *testing.B, dir string) int64 {
	var n int64
	for _, f := range gentest.LogFiles(b, dir) {
		fi, err := os.Stat(f)
		if err != nil {
			b.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// runInProcess runs kseg with args, output to a discarding buffer, and
// fails unless it exits with code.
func runInProcess(b *testing.B, code int, args ...string) {
	ios, _, _, errOut := Test()
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	ios.Out = w
	if got := execute(NewRootCommand(ios), ios, args); got != code {
		b.Fatalf("%v: exit %d: %s", args, got, errOut)
	}
	w.Flush()
}

// BenchmarkFind compares find with dump-log --records on the same bytes
// (MB/s of .log per run; find is the search, dump-log the listing an
// operator would grep): a value substring that never matches over one
// large segment ("seg") and over 16 partitions searched in parallel
// ("many"), and find with bounds over four segments ("part4": the last 1%
// of offsets, the last 1% of time), where only the bytes in range are read.
func BenchmarkFind(b *testing.B) {
	seg := filepath.Join(gentest.BenchData(b, "seg"), "bench-0")
	many := gentest.BenchData(b, "many")
	part4 := filepath.Join(gentest.BenchData(b, "part4"), "bench-0")
	report := func(b *testing.B, bytes int64) {
		b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
	}
	b.Run("dump-log-records-seg", func(b *testing.B) {
		n := logBytes(b, seg)
		gentest.Warm(b, seg)
		for b.Loop() {
			runInProcess(b, 0, "-o", "json", "dump-log", "--records", seg)
		}
		report(b, n)
	})
	b.Run("find-value-seg", func(b *testing.B) {
		n := logBytes(b, seg)
		gentest.Warm(b, seg)
		for b.Loop() {
			runInProcess(b, 1, "-o", "json", "find", "--value-contains", "no such text", seg)
		}
		report(b, n)
	})
	b.Run("find-value-many", func(b *testing.B) {
		n := logBytes(b, many)
		gentest.Warm(b, many)
		for b.Loop() {
			runInProcess(b, 1, "-o", "json", "find", "--value-contains", "no such text", many)
		}
		report(b, n)
	})
	off, ts := middle(b, part4)
	// middle is the halfway point; the last 1% is 99/50 of the way there.
	leo := 2 * off
	last := leo - leo/100
	b.Run("find-from-offset-part4", func(b *testing.B) {
		n := logBytes(b, part4)
		gentest.Warm(b, part4)
		for b.Loop() {
			runInProcess(b, 1, "-o", "json", "find", "--from-offset", strconv.FormatInt(last, 10), "--value-contains", "no such text", part4)
		}
		report(b, n)
	})
	b.Run("find-from-time-part4", func(b *testing.B) {
		n := logBytes(b, part4)
		gentest.Warm(b, part4)
		// Timestamps increase with offsets in bench data: 2*ts-start is
		// about the end; the last 1% of the span is from here.
		end := ts + (ts - 1700000000000)
		from := end - (end-1700000000000)/100
		for b.Loop() {
			runInProcess(b, 1, "-o", "json", "find", "--from-time", strconv.FormatInt(from, 10), "--value-contains", "no such text", part4)
		}
		report(b, n)
	})
}

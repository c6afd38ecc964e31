package cmd

import (
	"github.com/kseg/kseg/inspect/kafkagen/gentest"

	"bufio"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
)

// benchBinary is the kseg binary the process benchmarks run: KSEG_BIN
// (make bench passes the one it built), or one built into a temporary
// directory.
func benchBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("KSEG_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			b.Fatal(err)
		}
		return abs
	}
	bin := filepath.Join(b.TempDir(), "kseg")
	out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runProcess runs the binary with args, output discarded, and fails unless
// it exits 0.
func runProcess(b *testing.B, bin string, args ...string) {
	c := exec.Command(bin, args...)
	if err := c.Run(); err != nil {
		b.Fatalf("%s %v: %v", bin, args, err)
	}
}

// middle returns an offset and a timestamp in the middle of a partition
// (the first segment's last time-index entry halved), found through
// inspect as a script would not need to.
func middle(b *testing.B, dir string) (offset, timestamp int64) {
	tg, err := inspect.Resolve(dir)
	if err != nil {
		b.Fatal(err)
	}
	p := tg.Partitions[0]
	last, err := inspect.OpenSegment(p.Segments[len(p.Segments)-1], inspect.SegmentOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer last.Close()
	leo, err := last.NextOffset()
	if err != nil {
		b.Fatal(err)
	}
	mid := p.Segments[0].BaseOffset + (leo-p.Segments[0].BaseOffset)/2
	r, err := p.LookupOffset(mid, inspect.LookupOptions{})
	if err != nil || !r.Found {
		b.Fatalf("offset %d: %+v %v", mid, r, err)
	}
	return mid, r.Batch.MaxTimestamp
}

// BenchmarkProcess times whole kseg processes, each against `kseg
// --version` run alternately in the same iterations (start-up is the cost
// of a lookup): lookup and lookup-time in a partition of one large segment
// ("seg") and in one of 256 segments ("segs"). x-version is the command's
// wall time over --version's.
func BenchmarkProcess(b *testing.B) {
	bin := benchBinary(b)
	for _, set := range []string{"seg", "segs"} {
		dir := filepath.Join(gentest.BenchData(b, set), "bench-0")
		gentest.Warm(b, dir)
		off, ts := middle(b, dir)
		for _, cmd := range []struct {
			name string
			args []string
		}{
			{"lookup", []string{"lookup", "-o", "json", dir, strconv.FormatInt(off, 10)}},
			{"lookup-time", []string{"lookup-time", "-o", "json", dir, strconv.FormatInt(ts, 10)}},
		} {
			b.Run(cmd.name+"-"+set, func(b *testing.B) {
				var dv, dc time.Duration
				for b.Loop() {
					t0 := time.Now()
					runProcess(b, bin, "--version")
					t1 := time.Now()
					runProcess(b, bin, cmd.args...)
					dc += time.Since(t1)
					dv += t1.Sub(t0)
				}
				n := float64(b.N)
				b.ReportMetric(dv.Seconds()*1e3/n, "version-ms")
				b.ReportMetric(dc.Seconds()*1e3/n, "cmd-ms")
				b.ReportMetric(dc.Seconds()/dv.Seconds(), "x-version")
			})
		}
	}
}

// BenchmarkDumpIndexJSON dumps a full 10 MiB offset index (1310720
// entries, segment.index.bytes' default size) as JSON Lines, in process to
// a buffered discarding writer and as a whole process to /dev/null, and
// reports entries per second.
func BenchmarkDumpIndexJSON(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "idx-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	const entries = 10 << 20 / indexfmt.OffsetEntrySize
	buf := make([]byte, 0, entries*indexfmt.OffsetEntrySize)
	for i := range entries {
		buf = binary.BigEndian.AppendUint32(buf, uint32(i+1))
		buf = binary.BigEndian.AppendUint32(buf, uint32(i*4096))
	}
	path := filepath.Join(dir, inspect.SegmentName(0)+inspect.IndexSuffix)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			ios, _, _, errOut := Test()
			w := bufio.NewWriterSize(io.Discard, 64<<10)
			ios.Out = w
			if code := execute(NewRootCommand(ios), ios, []string{"-o", "json", "dump-index", path}); code != 0 {
				b.Fatalf("exit %d: %s", code, errOut)
			}
			w.Flush()
		}
		b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
	b.Run("process", func(b *testing.B) {
		bin := benchBinary(b)
		for b.Loop() {
			runProcess(b, bin, "-o", "json", "dump-index", path)
		}
		b.ReportMetric(float64(entries)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// BenchmarkListDataDir runs `kseg ls -o json` over the data dir of many
// partitions of three 1 MiB segments ("datadir") as a whole process, and
// in the same iterations the minimal listing (gentest.MinimalListing: per
// segment, open the .log, .index and .timeindex, read the first batch
// header, the last 8 KiB of the log and the last index entries, on two
// goroutines). x-listing is ls's wall time over the minimal listing's.
// The data are warmed once: neither reads more than a few pages per file.
func BenchmarkListDataDir(b *testing.B) {
	bin := benchBinary(b)
	dir := gentest.BenchData(b, "datadir")
	segs := gentest.Segments(b, dir)
	gentest.Warm(b, dir)
	b.Run("ls", func(b *testing.B) {
		var dl, dm time.Duration
		for b.Loop() {
			t0 := time.Now()
			gentest.MinimalListing(b, segs)
			t1 := time.Now()
			runProcess(b, bin, "ls", "-o", "json", dir)
			dl += time.Since(t1)
			dm += t1.Sub(t0)
		}
		n := float64(b.N)
		b.ReportMetric(dl.Seconds()*1e6/n/float64(len(segs)), "us/segment")
		b.ReportMetric(dm.Seconds()*1e6/n/float64(len(segs)), "listing-us/segment")
		b.ReportMetric(dl.Seconds()/dm.Seconds(), "x-listing")
	})
}

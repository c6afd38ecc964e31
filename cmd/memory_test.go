package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/rebuild/gen"
)

// peakHeap runs kseg in process with args (stdout counted and discarded)
// and returns its exit code, the bytes it wrote, and the peak of the live
// heap above what was live before the run, sampled every 200 µs from
// runtime/metrics (/memory/classes/heap/objects:bytes). Go releases
// nothing it still holds, so a structure as large as the input's decoded
// form shows as such a peak.
func peakHeap(t *testing.T, args ...string) (code int, written, peak int64) {
	t.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	runtime.GC()
	base := read()
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		var max int64
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > max {
				max = v
			}
			select {
			case <-stop:
				done <- max
				return
			case <-tick.C:
			}
		}
	}()
	cw := &countingWriter{}
	_, _, code = runKseg(t, func(ios *IOStreams) { ios.Out = cw }, args...)
	close(stop)
	return code, cw.n, max(<-done-base, 0)
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// memoryBase is the live heap allowed any kseg run whatever its input
// (buffers of fixed size: read windows, output buffers).
const memoryBase = 16 << 20

// TestManyEmptyHeadersMemory: one record of 2 million empty headers (2
// bytes each on disk, 4 MB) is counted, validated and printed without
// materialising the headers: ls, verify --records and dump-log --records
// (table and JSON, the JSON line streamed header by header) stay within
// memoryBase + 4 × the decoded batch. (Held as a list the headers took 48
// bytes each, 96 MB here, and a JSON line of them 3.6 GB for 10 million.)
func TestManyEmptyHeadersMemory(t *testing.T) {
	const headers = 2_000_000
	for _, codec := range []string{"none", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo-0")
			// The manifest (which lists every header) is dropped at once.
			if _, err := gen.Generate(dir, gen.Options{Seed: 1, Segments: 1, Batches: 3, Compression: codec, EmptyHeaders: headers}); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(dir, gen.SegmentName(0)+".log"))
			if err != nil {
				t.Fatal(err)
			}
			decoded := int64(2 * headers) // the batch inflated: at least its headers' bytes
			limit := memoryBase + 4*decoded
			for _, args := range [][]string{
				{"ls", "-o", "json", dir},
				{"verify", "--records", "-o", "json", dir},
				{"dump-log", "-o", "json", dir},
				{"dump-log", "--records", "-o", "json", dir},
				{"dump-log", "--records", dir},
			} {
				code, written, peak := peakHeap(t, args...)
				t.Logf("%s (log %d bytes): exit %d, %d bytes out, peak heap +%d KiB (limit %d KiB)", strings.Join(args, " "), st.Size(), code, written, peak>>10, limit>>10)
				if code != 0 {
					t.Errorf("kseg %s: exit %d", strings.Join(args, " "), code)
				}
				if peak > limit {
					t.Errorf("kseg %s: peak live heap %d bytes, over %d (%d + 4 × %d decoded bytes)", strings.Join(args, " "), peak, limit, memoryBase, decoded)
				}
				if args[0] == "dump-log" && strings.Contains(strings.Join(args, " "), "--records -o json") {
					if min := int64(headers) * int64(len(`{"key":"","value":null},`)); written < min {
						t.Errorf("dump-log --records -o json wrote %d bytes, fewer than the %d its headers take", written, min)
					}
				}
			}
		})
	}
}

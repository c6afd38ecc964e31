package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// peakHeap runs kseg in process with args (stdout counted and discarded)
// and returns its exit code, the bytes it wrote, and the peak of the live
// heap above what was live before the run: the bytes the collector marked
// (runtime/metrics /gc/heap/live:bytes), sampled every 200 µs while the
// collector is made to run each time the heap grows by 5% (so that a
// transient structure is marked while it exists, and garbage, which other
// tests of this process may leave room for, is not counted).
func peakHeap(t *testing.T, args ...string) (code int, written, peak int64) {
	t.Helper()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() int64 { metrics.Read(sample); return int64(sample[0].Value.Uint64()) }
	runtime.GC()
	base := read()
	defer debug.SetGCPercent(debug.SetGCPercent(5))
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
	runtime.GC() // marks what the run still held at its end
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
// memoryBase + 2 × the decoded batch (its read buffer and its
// decompression buffer). (Held as a list the headers took 48
// bytes each, 96 MB here, and a JSON line of them 3.6 GB for 10 million.)
func TestManyEmptyHeadersMemory(t *testing.T) {
	const headers = 2_000_000
	for _, codec := range []string{"none", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo-0")
			// The manifest (which lists every header) is dropped at once.
			if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Segments: 1, Batches: 3, Compression: codec, EmptyHeaders: headers}); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(dir, kafkagen.SegmentName(0)+".log"))
			if err != nil {
				t.Fatal(err)
			}
			decoded := int64(2 * headers) // the batch inflated: at least its headers' bytes
			limit := memoryBase + 2*decoded
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
					t.Errorf("kseg %s: peak live heap %d bytes, over %d (%d + 2 × %d decoded bytes)", strings.Join(args, " "), peak, limit, memoryBase, decoded)
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

// TestLongLeaderEpochCheckpointMemory: a leader-epoch-checkpoint of a
// million entries (every one kept by the broker's cache, or every one
// dropped as a repeat) costs lookups, dump-checkpoint and verify its own
// bytes plus 20 bytes per entry (the parsed entry and the cache's index
// of it), never a copy per lookup answer (a 64 MiB file took 2.4 GB for lookup); verify lists at most 100
// findings per check and says how many more there were.
func TestLongLeaderEpochCheckpointMemory(t *testing.T) {
	const entries = 1_000_000
	for _, shape := range []string{"increasing", "repeated"} {
		t.Run(shape, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo-0")
			if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 2, Segments: 1, Batches: 20}); err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 0, 24*entries)
			b = append(b, "0\n1000000\n"...)
			for i := range entries {
				if shape == "increasing" {
					b = strconv.AppendInt(append(strconv.AppendInt(b, int64(i), 10), ' '), int64(i), 10)
				} else {
					b = append(b, "0 0"...)
				}
				b = append(b, '\n')
			}
			cp := filepath.Join(dir, "leader-epoch-checkpoint")
			if err := os.WriteFile(cp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			size := int64(len(b))
			b = nil
			limit := memoryBase + size + 20*entries
			for _, args := range [][]string{
				{"lookup", "-o", "json", dir, "5"},
				{"lookup-time", "-o", "json", dir, "2023-11-14T22:13:21Z"},
				{"dump-checkpoint", "-o", "json", cp},
				{"verify", "-o", "json", dir},
			} {
				code, written, peak := peakHeap(t, args...)
				t.Logf("%s (%d bytes, %d entries): exit %d, %d bytes out, peak heap +%d KiB (limit %d KiB)", strings.Join(args, " "), size, entries, code, written, peak>>10, limit>>10)
				if peak > limit {
					t.Errorf("kseg %s: peak live heap %d bytes, over %d (%d + %d file bytes + 20 × %d entries)", strings.Join(args, " "), peak, limit, memoryBase, size, entries)
				}
			}
			out, _, _ := runKseg(t, nil, "verify", "-o", "json", dir)
			if n := strings.Count(out, `"check":"leader-epoch.range"`); shape == "repeated" && (n != 101 || !strings.Contains(out, "more leader-epoch.range findings")) {
				t.Errorf("verify: %d leader_epoch.range findings, want 100 and one saying how many more\n%.2000s", n, out)
			}
		})
	}
}

package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// heapReportEnv, when set, makes the kseg of the test binary (TestMain)
// measure its live heap while the command runs and write the figures to
// the file it names: see peakHeap.
const heapReportEnv = "KSEG_TEST_HEAP_REPORT"

// ksegMain is the kseg executable of the test binary: Execute, measured
// when heapReportEnv is set.
func ksegMain() int {
	report := os.Getenv(heapReportEnv)
	if report == "" {
		return Execute()
	}
	var code int
	base, peak := liveHeapPeak(func() { code = Execute() })
	if err := os.WriteFile(report, fmt.Appendf(nil, "%d %d\n", base, peak), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitFailed
	}
	return code
}

// liveHeapPeak runs fn and returns the live heap before it and the peak of
// the live heap while it ran: the bytes the collector marked
// (runtime/metrics /gc/heap/live:bytes), read after every collection and
// every 200 µs, while a collection runs each time the heap grows by 5%,
// so that a transient structure is marked while it exists.
func liveHeapPeak(fn func()) (base, peak int64) {
	var mu sync.Mutex
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() {
		mu.Lock()
		defer mu.Unlock()
		metrics.Read(sample)
		peak = max(peak, int64(sample[0].Value.Uint64()))
	}
	runtime.GC()
	read()
	base = peak
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	var stopped atomic.Bool
	var afterGC func()
	afterGC = func() { // a cleanup of garbage runs once per collection
		if !stopped.Load() {
			read()
			runtime.AddCleanup(new([64]byte), func(struct{}) { afterGC() }, struct{}{})
		}
	}
	afterGC()
	done, ticked := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ticked)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				read()
			case <-done:
				return
			}
		}
	}()
	fn()
	runtime.GC() // marks what fn still held at its end
	read()
	stopped.Store(true)
	close(done)
	<-ticked
	mu.Lock()
	defer mu.Unlock()
	return base, peak
}

// peakHeap runs kseg with args as a child process (the test binary, so
// that no other test's goroutines or garbage share its heap) and returns
// its exit code, the first 1 MiB of its stdout, how many bytes it wrote
// there, and the peak of its live heap above the live heap before the
// command ran (liveHeapPeak).
func peakHeap(t *testing.T, args ...string) (code int, out []byte, written, peak int64) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "heap")
	c := exec.Command(ksegExecutable(t), args...)
	c.Env = append(os.Environ(), heapReportEnv+"="+report)
	w := &headWriter{max: 1 << 20}
	c.Stdout = w
	errOut, code := runChild(t, c)
	b, err := os.ReadFile(report)
	var base int64
	if err == nil {
		_, err = fmt.Sscan(string(b), &base, &peak)
	}
	if err != nil {
		t.Fatalf("kseg %s: no heap figures (%v); exit %d, stderr: %s", strings.Join(args, " "), err, code, errOut)
	}
	return code, w.head, w.n, max(peak-base, 0)
}

// headWriter counts the bytes written and keeps the first max of them.
type headWriter struct {
	n    int64
	max  int
	head []byte
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if room := w.max - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

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
	t.Parallel()
	const headers = 2_000_000
	for _, codec := range []string{"none", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			t.Parallel()
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
				code, _, written, peak := peakHeap(t, args...)
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
// of it), never a copy per lookup answer (a 64 MiB file took 2.4 GB for
// lookup); verify lists at most 100 findings per check and says how many
// more there were. Both lookups answer from the first batch, whose
// epoch_entry the loaded checkpoint gives: a lookup that did not load it
// would measure nothing.
func TestLongLeaderEpochCheckpointMemory(t *testing.T) {
	t.Parallel()
	const entries = 1_000_000
	for _, shape := range []string{"increasing", "repeated"} {
		t.Run(shape, func(t *testing.T) {
			t.Parallel()
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
			// Offset 5 lies in epoch 5 (increasing) or 0 (the one entry a
			// broker keeps of the repeats); the time is the first batch's.
			entry := `"epoch_entry":{"epoch":5,"start_offset":5}`
			if shape == "repeated" {
				entry = `"epoch_entry":{"epoch":0,"start_offset":0}`
			}
			for _, c := range []struct {
				args []string
				want string // in stdout
			}{
				{[]string{"lookup", "-o", "json", dir, "5"}, entry},
				{[]string{"lookup-time", "-o", "json", dir, "2023-11-14T22:13:20Z"}, `"epoch_entry":{"epoch":0,"start_offset":0}`},
				{[]string{"dump-checkpoint", "-o", "json", cp}, `"kind":"leader_epoch"`},
				{[]string{"verify", "-o", "json", dir}, `"kind":"summary"`},
			} {
				code, out, written, peak := peakHeap(t, c.args...)
				t.Logf("%s (%d bytes, %d entries): exit %d, %d bytes out, peak heap +%d KiB (limit %d KiB)", strings.Join(c.args, " "), size, entries, code, written, peak>>10, limit>>10)
				if peak > limit {
					t.Errorf("kseg %s: peak live heap %d bytes, over %d (%d + %d file bytes + 20 × %d entries)", strings.Join(c.args, " "), peak, limit, memoryBase, size, entries)
				}
				if code != 0 || !strings.Contains(string(out), c.want) {
					t.Errorf("kseg %s: exit %d, want 0 and %s in\n%.1000s", strings.Join(c.args, " "), code, c.want, out)
				}
				if c.args[0] != "verify" {
					continue
				}
				if n := strings.Count(string(out), `"check":"leader-epoch.range"`); shape == "repeated" && (n != 101 || !strings.Contains(string(out), "more leader-epoch.range findings")) {
					t.Errorf("verify: %d leader_epoch.range findings, want 100 and one saying how many more\n%.2000s", n, out)
				}
			}
		})
	}
}

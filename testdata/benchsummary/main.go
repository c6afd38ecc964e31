// Command benchsummary reads the output of `go test -bench` as `make bench`
// runs it and prints the performance targets of docs/performance.md with
// the median of each figure over the runs (-count) and whether it meets
// its goal. It lives under testdata so that ./... leaves it out of the
// module's packages; run it with `go run ./testdata/benchsummary FILE`.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// samples[benchmark][unit] holds one value per run.
type samples map[string]map[string][]float64

var procSuffix = regexp.MustCompile(`-\d+$`)

func parse(path string) (samples, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := samples{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue
		}
		name := procSuffix.ReplaceAllString(strings.TrimPrefix(fields[0], "Benchmark"), "")
		if s[name] == nil {
			s[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			s[name][fields[i+1]] = append(s[name][fields[i+1]], v)
		}
	}
	return s, sc.Err()
}

// median of the runs of name's unit, and how many runs there were.
func (s samples) median(name, unit string) (float64, int, bool) {
	v := slices.Clone(s[name][unit])
	if len(v) == 0 {
		return 0, 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], len(v), true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, len(v), true
}

type row struct {
	what, bench, unit string
	format            string
	goal              func(float64) bool
	goalText          string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchsummary BENCH-OUTPUT")
		os.Exit(2)
	}
	s, err := parse(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	below := func(x float64) func(float64) bool { return func(v float64) bool { return v < x } }
	atLeast := func(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
	rows := []row{
		{"lookup in process, mean", "LookupOffset/segment", "ns/op", "%.0f ns", below(2000), "< 2000 ns"},
		{"lookup in process, median", "LookupOffset/segment-latency", "p50-ns", "%.0f ns", below(2000), "< 2000 ns"},
		{"lookup in process, allocations", "LookupOffset/segment", "allocs/op", "%.0f allocs/op", below(0.5), "0"},
		{"lookup in process, log read with pread, mean", "LookupOffset/segment-pread-log", "ns/op", "%.0f ns", nil, ""},
		{"lookup-time in process, mean", "LookupTimestamp/segment", "ns/op", "%.0f ns", below(2000), "< 2000 ns"},
		{"lookup-time in process, median", "LookupTimestamp/segment-latency", "p50-ns", "%.0f ns", below(2000), "< 2000 ns"},
		{"lookup-time in process, allocations", "LookupTimestamp/segment", "allocs/op", "%.0f allocs/op", below(0.5), "0"},
		{"lookup-time in process, log read with pread, mean", "LookupTimestamp/segment-pread-log", "ns/op", "%.0f ns", nil, ""},
		{"  lookup-time steps, median: time index search", "LookupTimestampParts/1-time-index", "p50-ns", "%.0f ns", nil, ""},
		{"    + offset index search", "LookupTimestampParts/2-offset-index", "p50-ns", "%.0f ns", nil, ""},
		{"    + header scan", "LookupTimestampParts/3-header-scan", "p50-ns", "%.0f ns", nil, ""},
		{"    + records up to the answer (the whole lookup)", "LookupTimestampParts/4-records", "p50-ns", "%.0f ns", nil, ""},
		{"lookup opening the segment each time, mean", "LookupOffset/partition-open-per-lookup", "ns/op", "%.0f ns", nil, ""},
		{"kseg lookup / kseg --version (1 segment)", "Process/lookup-seg", "x-version", "%.2fx", below(1.5), "<= 1.5x"},
		{"kseg lookup-time / kseg --version (1 segment)", "Process/lookup-time-seg", "x-version", "%.2fx", below(1.5), "<= 1.5x"},
		{"kseg lookup / kseg --version (256 segments)", "Process/lookup-segs", "x-version", "%.2fx", below(1.5), "<= 1.5x"},
		{"kseg lookup-time / kseg --version (256 segments)", "Process/lookup-time-segs", "x-version", "%.2fx", below(1.5), "<= 1.5x"},
		{"kseg --version wall time", "Process/lookup-seg", "version-ms", "%.1f ms", nil, ""},
		{"verify, share of read+CRC32C limit", "VerifySegment/headers", "x-baseline", "%.2f", atLeast(0.8), ">= 0.80"},
		{"verify, share of the limit in CPU time", "VerifySegment/headers", "cpu-x-baseline", "%.2f", nil, ""},
		{"verify throughput", "VerifySegment/headers", "MB/s", "%.0f MB/s", nil, ""},
		{"verify of 256 x 1 MiB segments, share of limit", "VerifySegment/256-segments", "x-baseline", "%.2f", nil, ""},
		{"read+CRC32C limit (same runs)", "VerifySegment/headers", "baseline-MB/s", "%.0f MB/s", nil, ""},
		{"rebuild (in place), share of limit", "RebuildSegment/in-place", "x-baseline", "%.2f", atLeast(0.8), ">= 0.80"},
		{"rebuild (in place), share of the limit in CPU time", "RebuildSegment/in-place", "cpu-x-baseline", "%.2f", nil, ""},
		{"rebuild (in place) throughput", "RebuildSegment/in-place", "MB/s", "%.0f MB/s", nil, ""},
		{"rebuild --out, share of limit", "RebuildSegment/out", "x-baseline", "%.2f", nil, ""},
		{"verify --records none, share of limit", "VerifyRecords/none", "x-baseline", "%.2f", nil, ""},
		{"verify --records gzip, share of limit", "VerifyRecords/gzip", "x-baseline", "%.2f", nil, ""},
		{"verify --records snappy, share of limit", "VerifyRecords/snappy", "x-baseline", "%.2f", nil, ""},
		{"verify --records lz4, share of limit", "VerifyRecords/lz4", "x-baseline", "%.2f", nil, ""},
		{"verify --records zstd, share of limit", "VerifyRecords/zstd", "x-baseline", "%.2f", nil, ""},
		{"verify -j 2 speedup over -j 1 (16 partitions)", "VerifyJobs/j1-vs-j2", "speedup", "%.2fx", atLeast(1.8), ">= 1.80x"},
		{"  cores busy during -j 2 (CPU time / wall time)", "VerifyJobs/j1-vs-j2", "j2-cores", "%.2f", nil, ""},
		{"  the machine's own limit: read+CRC32C by 2 goroutines over 1", "VerifyJobs/j1-vs-j2", "limit-speedup", "%.2fx", nil, ""},
		{"verify -j 2 speedup over -j 1 (64 partitions of 3 x 2 MiB)", "VerifyJobs/parts-j1-vs-j2", "speedup", "%.2fx", atLeast(1.8), ">= 1.80x"},
		{"  cores busy during -j 2 (CPU time / wall time)", "VerifyJobs/parts-j1-vs-j2", "j2-cores", "%.2f", nil, ""},
		{"  the machine's own limit: read+CRC32C by 2 goroutines over 1", "VerifyJobs/parts-j1-vs-j2", "limit-speedup", "%.2fx", nil, ""},
		{"verify, ~0.4 KiB batches / per-batch read+CRC limit", "VerifyBatches/small", "x-batch-limit", "%.2f", atLeast(1.0), ">= 1.00"},
		{"verify, ~1.1 KiB batches / per-batch limit", "VerifyBatches/kib", "x-batch-limit", "%.2f", atLeast(1.0), ">= 1.00"},
		{"verify, ~9 KiB batches / per-batch limit", "VerifyBatches/seg", "x-batch-limit", "%.2f", atLeast(1.0), ">= 1.00"},
		{"  per-batch limit, ~0.4 KiB batches", "VerifyBatches/small", "batch-limit-MB/s", "%.0f MB/s", nil, ""},
		{"  verify throughput, ~0.4 KiB batches", "VerifyBatches/small", "MB/s", "%.0f MB/s", nil, ""},
		{"rebuild, ~0.4 KiB batches / per-batch limit", "RebuildBatches/small", "x-batch-limit", "%.2f", atLeast(1.0), ">= 1.00"},
		{"rebuild, ~1.1 KiB batches / per-batch limit", "RebuildBatches/kib", "x-batch-limit", "%.2f", atLeast(1.0), ">= 1.00"},
		{"rebuild, ~9 KiB batches / per-batch limit", "RebuildBatches/seg", "x-batch-limit", "%.2f", atLeast(1.0), ">= 1.00"},
		{"verify -j 1, data dir of partitions of 3 x 1 MiB / per-batch limit", "VerifyDataDir/j1-vs-default", "j1-x-batch-limit", "%.2f", atLeast(0.9), ">= 0.90"},
		{"verify default -j over -j 1, same data dir", "VerifyDataDir/j1-vs-default", "speedup", "%.2fx", atLeast(1.8), ">= 1.80x"},
		{"kseg ls of that data dir / minimal listing", "ListDataDir/ls", "x-listing", "%.2fx", below(1.5), "<= 1.5x"},
		{"  kseg ls per segment", "ListDataDir/ls", "us/segment", "%.0f us", nil, ""},
		{"  minimal listing per segment", "ListDataDir/ls", "listing-us/segment", "%.0f us", nil, ""},
		{"verify peak Go heap (HeapInuse)", "VerifyHeap/part4", "peak-heap-inuse-MiB", "%.1f MiB", below(64), "< 64 MiB"},
		{"rebuild peak Go heap (HeapInuse)", "RebuildHeap/part4", "peak-heap-inuse-MiB", "%.1f MiB", below(64), "< 64 MiB"},
		{"  of a partition of", "VerifyHeap/part4", "partition-MiB", "%.0f MiB", nil, ""},
		{"dump-index -o json, 10 MiB index, in process", "DumpIndexJSON/in-process", "entries/s", "%.0f entries/s", atLeast(1e6), "> 1000000"},
		{"dump-index -o json, 10 MiB index, process", "DumpIndexJSON/process", "entries/s", "%.0f entries/s", atLeast(1e6), "> 1000000"},
		{"sequential scan, keeping the cache", "ScanLog/keep-cache", "MB/s", "%.0f MB/s", nil, ""},
		{"sequential scan, cache-neutral", "ScanLog/cache-neutral", "MB/s", "%.0f MB/s", nil, ""},
		{"cold scan, keeping the cache", "ScanLogCold/keep-cache", "MB/s", "%.0f MB/s", nil, ""},
		{"cold scan, cache-neutral", "ScanLogCold/cache-neutral", "MB/s", "%.0f MB/s", nil, ""},
		{"  pages left cached by a cold cache-neutral scan", "ScanLogCold/cache-neutral", "resident-frac", "%.3f", below(0.001), "0"},
	}
	for _, r := range []string{"pread-64KiB", "pread-256KiB", "pread-1MiB", "pread-4MiB", "mmap-walk", "mmap-walk-sequential", "x-exp-mmap-ReadAt-1MiB"} {
		rows = append(rows, row{"read+CRC32C via " + r, "ReadLog/" + r, "MB/s", "%.0f MB/s", nil, ""})
	}
	fmt.Printf("kseg performance summary: median of the runs, %d cores (runtime.NumCPU)\n\n", runtime.NumCPU())
	fmt.Printf("%-64s %20s %6s  %-12s %s\n", "figure", "measured", "runs", "goal", "")
	failed := 0
	for _, r := range rows {
		v, n, ok := s.median(r.bench, r.unit)
		if !ok {
			fmt.Printf("%-64s %20s %6s  %-12s %s\n", r.what, "(not run)", "", r.goalText, "")
			continue
		}
		verdict := ""
		if r.goal != nil {
			verdict = "ok"
			if !r.goal(v) {
				verdict, failed = "MISSED", failed+1
			}
		}
		fmt.Printf("%-64s %20s %6d  %-12s %s\n", r.what, fmt.Sprintf(r.format, v), n, r.goalText, verdict)
	}
	if failed > 0 {
		fmt.Printf("\n%d figure(s) missed their goal on this run (see docs/performance.md for the recorded figures and what they depend on)\n", failed)
	}
}

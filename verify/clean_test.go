package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/recovery"
)

// shapes are generated partitions of every kind gen can write. Each is a
// partition a broker would leave after a clean shutdown, so verify must
// find nothing (with the same index.interval.bytes).
var shapes = []struct {
	name string
	o    kafkagen.Options
}{
	{"v2 none", kafkagen.Options{Seed: 1, Segments: 3, Batches: 80}},
	{"v2 gzip", kafkagen.Options{Seed: 2, Segments: 2, Batches: 60, Compression: "gzip"}},
	{"v2 snappy", kafkagen.Options{Seed: 3, Segments: 2, Batches: 60, Compression: "snappy"}},
	{"v2 snappy-raw", kafkagen.Options{Seed: 4, Batches: 60, Compression: "snappy-raw"}},
	{"v2 lz4", kafkagen.Options{Seed: 5, Batches: 60, Compression: "lz4"}},
	{"v2 zstd", kafkagen.Options{Seed: 6, Batches: 60, Compression: "zstd"}},
	{"v1 none", kafkagen.Options{Seed: 7, Segments: 2, Batches: 120, Magic: 1}},
	{"v1 gzip", kafkagen.Options{Seed: 8, Batches: 60, Magic: 1, Compression: "gzip"}},
	{"v1 lz4 log append time", kafkagen.Options{Seed: 9, Batches: 60, Magic: 1, Compression: "lz4", LogAppendTime: 0.5}},
	{"v0 none", kafkagen.Options{Seed: 10, Segments: 2, Batches: 150, Magic: kafkagen.MagicV0}},
	{"v0 snappy", kafkagen.Options{Seed: 11, Batches: 60, Magic: kafkagen.MagicV0, Compression: "snappy"}},
	{"v0 gzip compacted", kafkagen.Options{Seed: 12, Batches: 60, Magic: kafkagen.MagicV0, Compression: "gzip", CompactionGaps: true}},
	{"v2 compacted", kafkagen.Options{Seed: 13, Segments: 3, Batches: 80, CompactionGaps: true}},
	{"v2 transactions", kafkagen.Options{Seed: 14, Segments: 3, Batches: 150, Transactions: true}},
	{"v2 transactions lz4 compacted", kafkagen.Options{Seed: 15, Segments: 2, Batches: 150, Transactions: true, Compression: "lz4", CompactionGaps: true}},
	{"timestamps jumping", kafkagen.Options{Seed: 16, Segments: 2, Batches: 100, Timestamps: "jumping"}},
	{"timestamps random", kafkagen.Options{Seed: 17, Segments: 2, Batches: 100, Timestamps: "random"}},
	{"timestamps equal", kafkagen.Options{Seed: 18, Batches: 100, Timestamps: "equal"}},
	{"log append time", kafkagen.Options{Seed: 19, Batches: 100, LogAppendTime: 0.5, Timestamps: "random"}},
	{"index every batch", kafkagen.Options{Seed: 20, Segments: 2, Batches: 100, IndexIntervalBytes: kafkagen.IndexEveryBatch}},
	{"index interval 1000", kafkagen.Options{Seed: 21, Batches: 100, IndexIntervalBytes: 1000}},
	{"empty active segment", kafkagen.Options{Seed: 22, Segments: 2, Batches: 50, EmptyActiveSegment: true}},
	{"high start offset", kafkagen.Options{Seed: 23, Segments: 2, Batches: 50, StartOffset: 1 << 40}},
	{"big values", kafkagen.Options{Seed: 24, Batches: 30, ValueSize: 200000, RecordsPerBatch: 3}},
	{"one batch", kafkagen.Options{Seed: 25, Batches: 1}},
}

// verifyInterval is the Options.IndexIntervalBytes matching a shape.
func verifyInterval(o kafkagen.Options) int {
	switch o.IndexIntervalBytes {
	case kafkagen.IndexEveryBatch:
		return IndexEveryBatch
	default:
		return o.IndexIntervalBytes
	}
}

func TestCleanShapes(t *testing.T) {
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			m := generate(t, sh.o)
			for _, deep := range []bool{false, true} {
				got, sum := verifyPath(t, m.Dir, Options{IndexIntervalBytes: verifyInterval(sh.o), Records: deep})
				expect(t, got)
				if sum.Batches != int64(totalBatches(m)) || sum.Segments != len(m.Segments) || sum.Partitions != 1 {
					t.Errorf("summary %+v: want %d batches in %d segments", sum, totalBatches(m), len(m.Segments))
				}
				var bytes int64
				for _, s := range m.Segments {
					bytes += s.LogSize
				}
				if sum.Bytes != bytes {
					t.Errorf("summary bytes %d, want %d", sum.Bytes, bytes)
				}
			}
		})
	}
}

// A running broker's active segment after an unclean shutdown:
// preallocated indexes with zero tails and no final time-index entry.
// Only the padding is reported, as info: recovery rebuilds both files (no
// recovery point checkpoint: the broker's next start recovers every
// segment), and a running broker searches only the entries before it.
func TestPreallocatedActiveSegment(t *testing.T) {
	for _, size := range []int64{4096, 10485760} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m := generate(t, kafkagen.Options{Seed: 30, Segments: 2, Batches: 100, PreallocatedIndexBytes: size})
			s, _, idx, tidx := segFiles(m, 1)
			got, _ := verifyPath(t, m.Dir, Options{})
			expect(t, got, want{IndexPadding, base(idx), int64(s.IndexEntries) * 8}, want{TimeIndexPadding, base(tidx), int64(s.TimeIndexEntries) * 12})
			for _, f := range got {
				if f.Severity != SeverityInfo {
					t.Errorf("%s: severity %s, want info (the next start recovers the active segment)", f.Check, f.Severity)
				}
			}
		})
	}
}

// The *.stale checks agree with recovery.PlanPartition: whatever interval
// the files were written with and verify assumes, a segment gets
// index.stale (timeindex.stale) exactly when its file differs from the
// planned bytes. This also proves that the cheap streaming comparison in
// front of PlanPartition never misses a difference.
func TestStaleAgreesWithPlan(t *testing.T) {
	intervals := []int{0, IndexEveryBatch, 700, 3000, 1 << 20}
	for _, sh := range shapes {
		m := generate(t, sh.o)
		p, err := inspect.ReadPartition(m.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, iv := range intervals {
			ropts := recovery.Options{IndexIntervalBytes: int64(iv)}
			plans, err := recovery.PlanPartition(p, ropts)
			if err != nil {
				t.Fatal(err)
			}
			var wants []string
			for i, plan := range plans {
				s := &m.Segments[i]
				if !bytes.Equal(plan.Index, readFile(t, m.IndexPath(s))) {
					wants = append(wants, IndexStale+" "+base(m.IndexPath(s)))
				}
				if !bytes.Equal(plan.TimeIndex, readFile(t, m.TimeIndexPath(s))) {
					wants = append(wants, TimeIndexStale+" "+base(m.TimeIndexPath(s)))
				}
			}
			got, _ := verifyPath(t, m.Dir, Options{IndexIntervalBytes: iv})
			var gots []string
			for _, f := range got {
				gots = append(gots, f.Check+" "+base(f.File))
			}
			if !slices.Equal(gots, wants) {
				t.Errorf("%s, interval %d: findings %v, want %v%s", sh.name, iv, gots, wants, describe(got))
			}
		}
	}
}

// Every real broker fixture verifies without an error finding; the
// warnings are the kinds a healthy broker directory can show.
func TestRealFixtures(t *testing.T) {
	allowed := map[string]bool{IndexMissing: true, TimeIndexMissing: true, IndexStale: true, TimeIndexStale: true}
	var checks []string
	for _, dir := range fixtures.Dirs(t) { // at least one, or the test fails
		name := filepath.Base(dir)
		for _, deep := range []bool{false, true} {
			got, sum := verifyPath(t, dir, Options{Records: deep})
			if sum.Errors != 0 || sum.Batches == 0 {
				t.Errorf("%s: summary %+v%s", name, sum, describe(got))
			}
			for _, f := range got {
				if !allowed[f.Check] {
					t.Errorf("%s: unexpected %s%s", name, f.Check, describe([]Finding{f}))
				}
				if !deep {
					checks = append(checks, f.Check+" "+strings.TrimPrefix(f.File, realFixtures+string(filepath.Separator)))
				}
			}
		}
	}
	// Facts from the fixtures' provenance notes, each a reason for a
	// warning: indexes missing where they were preallocated and not
	// retrievable, the 2.x time index naming records inside batches.
	for _, w := range []string{
		"index.missing kafkalite-magic0-none-gzip-snappy/hamlet-gzip-0/00000000000000000000.index",
		"timeindex.missing cp51-zk-lz4-unclean-noindex/__consumer_offsets-13/00000000000000000000.timeindex",
		"index.missing zk-kafka26-unclean-noindex/first_topic-0/00000000000000000004.index",
		"timeindex.stale zk-kafka2x-clean/__consumer_offsets-18/00000000000000000000.timeindex",
	} {
		if !slices.Contains(checks, w) {
			t.Errorf("missing warning %q in %v", w, checks)
		}
	}
	got, _ := verifyPath(t, filepath.Join(realFixtures, "zk-kafka2x-clean", "__consumer_offsets-18"), Options{})
	for _, f := range got {
		if f.Check == TimeIndexStale && !strings.Contains(f.Message, "7 of 10 entries name a record inside the batch") {
			t.Errorf("2.x time index: %s", f.Message)
		}
	}
}

// Output does not depend on the number of jobs.
func TestJobsDeterministic(t *testing.T) {
	data := t.TempDir()
	for i, sh := range shapes[:8] {
		generateAt(t, filepath.Join(data, fmt.Sprintf("topic%d-%d", i, i)), sh.o)
	}
	// Damage some of them.
	flipByte(t, filepath.Join(data, "topic0-0", "00000000000000000000.log"), 5000)
	appendBytes(t, filepath.Join(data, "topic1-1", "00000000000000000000.index"), []byte{1})
	os.Remove(filepath.Join(data, "topic2-2", "00000000000000000000.timeindex"))
	writeFile(t, filepath.Join(data, "topic3-3", "00000000000000000000.log.cleaned"), []byte("x"))
	paths := []string{data}
	if _, err := os.Stat(realFixtures); err == nil {
		paths = append(paths, filepath.Join(realFixtures, "kafka40-kraft-snappy-retention"), filepath.Join(realFixtures, "cp-kraft-multiseg-compacted"))
	}
	for _, path := range paths {
		var first string
		for _, jobs := range []int{1, 2, 3, 8} {
			got, sum := verifyPath(t, path, Options{Jobs: jobs})
			var b strings.Builder
			for _, f := range got {
				line, _ := json.Marshal(f)
				b.Write(line)
				b.WriteByte('\n')
			}
			line, _ := json.Marshal(sum)
			b.Write(line)
			if jobs == 1 {
				first = b.String()
				if path == data && sum.Errors == 0 {
					t.Fatalf("the damaged data dir has no errors:\n%s", first)
				}
				continue
			}
			if b.String() != first {
				t.Errorf("%s: -j %d output differs from -j 1:\n%s\nvs\n%s", path, jobs, b.String(), first)
			}
		}
	}
}

func TestChecksHaveSeverities(t *testing.T) {
	for _, c := range Checks() {
		if Severity(c) == "" {
			t.Errorf("check %s has no severity", c)
		}
	}
}

// The contract's table and the project's copy of it list every check id.
func TestChecksDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cli-contract.md"))
	if err != nil {
		t.Skip("docs/cli-contract.md not found")
	}
	for _, c := range Checks() {
		if !bytes.Contains(doc, []byte("`"+c+"`")) {
			t.Errorf("check %s is not in docs/cli-contract.md", c)
		}
	}
}

// Random damage to random files never makes Run fail, hang or panic, and
// every finding is well formed: 40 damaged partitions, 16 under -short.
func TestRandomDamage(t *testing.T) {
	checks := map[string]bool{}
	for _, c := range Checks() {
		checks[c] = true
	}
	seeds := uint64(40)
	if testing.Short() {
		seeds = 16
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 99))
		sh := shapes[rng.IntN(len(shapes))]
		m := generate(t, sh.o)
		files, _ := filepath.Glob(filepath.Join(m.Dir, "0*"))
		for range 1 + rng.IntN(4) {
			path := files[rng.IntN(len(files))]
			data := readFile(t, path)
			if len(data) == 0 {
				continue
			}
			switch rng.IntN(4) {
			case 0:
				data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			case 1:
				data = data[:rng.IntN(len(data))]
			case 2:
				at := rng.IntN(len(data))
				n := min(len(data)-at, 1+rng.IntN(64))
				copy(data[at:], make([]byte, n))
			case 3:
				at := rng.IntN(len(data))
				for i := at; i < min(len(data), at+16); i++ {
					data[i] = byte(rng.Uint32())
				}
			}
			writeFile(t, path, data)
		}
		tg, err := inspect.Resolve(m.Dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []Finding
		sum, err := Run(tg, Options{Jobs: 2, Records: seed%2 == 0}, func(f Finding) { got = append(got, f) })
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if sum.Errors+sum.Warnings+sum.Infos != len(got) {
			t.Errorf("seed %d: summary counts %d findings, %d emitted", seed, sum.Errors+sum.Warnings+sum.Infos, len(got))
		}
		for _, f := range got {
			if !checks[f.Check] || f.File == "" || f.Message == "" || !ValidSeverity(f.Check, f.Severity) {
				t.Errorf("seed %d: malformed finding %+v", seed, f)
			}
		}
	}
}

// Memory does not grow with the segment: verifying a segment four times
// larger allocates about as often.
func TestAllocationsFlat(t *testing.T) {
	allocs := func(batches int) float64 {
		m := generate(t, kafkagen.Options{Seed: 50, Batches: batches, IndexIntervalBytes: kafkagen.IndexEveryBatch})
		tg, err := inspect.Resolve(m.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(3, func() {
			if _, err := Run(tg, Options{Jobs: 1, IndexIntervalBytes: IndexEveryBatch}, func(Finding) { t.Fatal("finding") }); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(500), allocs(2000)
	if large > small+40 {
		t.Errorf("%.0f allocations for 2000 batches, %.0f for 500: allocation grows with the segment", large, small)
	}
}

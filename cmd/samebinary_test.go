package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestSameOutputAsBaseBinary is the differential check for a change that
// must not change any output (a refactoring): every read-only command, in
// every output format, run by this build and by the kseg binary named in
// KSEG_BASE_BIN (built from the commit before the change), on every real
// fixture (each data directory, partition and segment file) and on
// generated partitions, pristine and damaged by the mangling test's
// damage (KSEG_SAME_MUTATIONS of them, 300 unless set). Both must write the
// same stdout and stderr, byte for byte, exit with the same code, and
// write the same SVG. Without KSEG_BASE_BIN there is nothing to compare
// with and the test skips; KSEG_BIN names this build's binary (default:
// the test binary, which is kseg: see TestMain).
//
//	git worktree add /somewhere/base BASE && (cd /somewhere/base && go build -o /somewhere/kseg-base .)
//	KSEG_BASE_BIN=/somewhere/kseg-base go test ./cmd -run TestSameOutputAsBaseBinary -count=1 -v
func TestSameOutputAsBaseBinary(t *testing.T) {
	base := os.Getenv("KSEG_BASE_BIN")
	if base == "" {
		t.Skip("KSEG_BASE_BIN is not set: no binary to compare this build's output with")
	}
	cur := os.Getenv("KSEG_BIN")
	if cur == "" {
		cur = ksegExecutable(t)
	}
	mutations := 300
	if s := os.Getenv("KSEG_SAME_MUTATIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("KSEG_SAME_MUTATIONS=%q: %v", s, err)
		}
		mutations = n
	}
	jobs := 4
	if s := os.Getenv("KSEG_SAME_JOBS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KSEG_SAME_JOBS=%q: want a number of at least 1", s)
		}
		jobs = n
	}
	d := &sameDiff{t: t, base: base, cur: cur, svgDir: t.TempDir()}
	total, totalDiffer := 0, 0
	report := func(what string) {
		n, differ := d.compare(0, jobs)
		t.Logf("%s: %d runs of each binary, %d differ", what, n, differ)
		total, totalDiffer = total+n, totalDiffer+differ
	}

	if fi, err := os.Stat(realFixtures); err == nil && fi.IsDir() {
		before := hashTree(t, realFixtures)
		ents, err := os.ReadDir(realFixtures)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() {
				d.dataDir(filepath.Join(realFixtures, e.Name()), sameFormats)
			}
		}
		report("real fixtures")
		assertTreeUnchanged(t, realFixtures, before)
	} else {
		t.Logf("real broker fixtures not found at %s: generated partitions only", realFixtures)
	}

	// Generated partitions of every shape the generator writes.
	work := t.TempDir()
	for i, o := range []kafkagen.Options{
		{Segments: 3, Batches: 20, RecordsPerBatch: 3, ValueSize: 30, IndexIntervalBytes: 300},
		{Segments: 2, Batches: 30, RecordsPerBatch: 4, Compression: "lz4", Transactions: true, CompactionGaps: true, IndexIntervalBytes: kafkagen.IndexEveryBatch},
		{Segments: 2, Batches: 12, RecordsPerBatch: 3, Magic: 1, Compression: "gzip", Timestamps: "jumping", IndexIntervalBytes: 100},
		{Segments: 1, Batches: 12, RecordsPerBatch: 3, Magic: kafkagen.MagicV0, Compression: "snappy"},
		{Segments: 2, Batches: 10, RecordsPerBatch: 2, Compression: "zstd", LogAppendTime: 0.5, PreallocatedIndexBytes: 256, EmptyActiveSegment: true, IndexIntervalBytes: 100},
		{Segments: 4, Batches: 40, RecordsPerBatch: 5, Traffic: "stop", IndexIntervalBytes: 512},
	} {
		o.Seed = int64(500 + i)
		dir := filepath.Join(work, "gen", "orders-"+strconv.Itoa(i))
		if _, err := kafkagen.Generate(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	d.dataDir(filepath.Join(work, "gen"), sameFormats)
	report("generated partitions")

	// Damaged partitions: the mangling test's sources and damage, each
	// in one output format (in turn), in a data directory of its own.
	sources := mangleSources(t)
	rng := rand.New(rand.NewPCG(29, 2026))
	for i := range mutations {
		src := sources[i%len(sources)]
		files := map[string][]byte{}
		for name, b := range src.files {
			files[name] = append([]byte(nil), b...)
		}
		did := mangle(rng, files, src.names)
		dataDir := filepath.Join(work, "m"+strconv.Itoa(i))
		dir := filepath.Join(dataDir, src.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		format := sameFormats[i%len(sameFormats) : i%len(sameFormats)+1]
		target := strconv.FormatInt(rng.Int64N(src.last+10)-5, 10)
		d.what = fmt.Sprintf("mutation %d of %s (%s)", i, src.name, strings.Join(did, "; "))
		d.partition(dir, format, []string{target})
		d.dataDirOnly(dataDir, format)
	}
	report(fmt.Sprintf("%d damaged partitions", mutations))
	t.Logf("in all: %d runs of each binary, %d differ", total, totalDiffer)
}

var sameFormats = []string{"table", "wide", "json", "csv"}

// sameDiff collects the runs, then runs each under both binaries on
// several goroutines and counts what differs.
type sameDiff struct {
	t         *testing.T
	base, cur string
	svgDir    string
	what      string
	runs      []sameRun
}

// sameRun is one command line, with the environment it adds and what it
// is run on (for messages).
type sameRun struct {
	what string
	env  []string
	args []string
}

// run adds args, run with env added to the environment.
func (d *sameDiff) run(env []string, args ...string) {
	d.runs = append(d.runs, sameRun{what: d.what, env: env, args: args})
}

// compare runs the runs from index from on, jobs at a time, and returns
// how many there were and how many differ.
func (d *sameDiff) compare(from, jobs int) (runs, differ int) {
	runs = len(d.runs) - from
	d.t.Logf("%d runs to compare", runs)
	var mu sync.Mutex
	next := from
	var wg sync.WaitGroup
	for w := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svg := filepath.Join(d.svgDir, strconv.Itoa(w)+".svg")
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(d.runs) {
					return
				}
				r := d.runs[i]
				args := slices.Clone(r.args)
				for k, a := range args {
					if a == "--svg" {
						args[k+1] = svg
					}
				}
				if msg := d.one(r.env, args, svg); msg != "" {
					mu.Lock()
					differ++
					if differ <= 20 {
						d.t.Errorf("%s: kseg %s (env %v) differs:\n%s", r.what, strings.Join(args, " "), r.env, msg)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	d.runs = d.runs[:from]
	return runs, differ
}

// one runs args under both binaries and says how their results differ
// ("" when they do not).
func (d *sameDiff) one(env, args []string, svg string) string {
	do := func(bin string) (string, string, int, []byte) {
		os.Remove(svg)
		c := exec.Command(bin, args...)
		c.Env = append(os.Environ(), "NO_COLOR=", "COLUMNS=")
		c.Env = append(c.Env, env...)
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		code := 0
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			return "", err.Error(), -1, nil
		}
		img, _ := os.ReadFile(svg)
		return sameTimings(out.String()), sameTimings(errOut.String()), code, img
	}
	bo, be, bc, bs := do(d.base)
	co, ce, cc, cs := do(d.cur)
	if bo == co && be == ce && bc == cc && bytes.Equal(bs, cs) {
		return ""
	}
	return fmt.Sprintf("exit %d -> %d\nstdout: %s\nstderr: %s\nsvg equal: %v",
		bc, cc, firstDiff(bo, co), firstDiff(be, ce), bytes.Equal(bs, cs))
}

// timingPatterns match what verify measures as it runs (its time and read
// rate, and the recovery plan's estimates from that rate), which differ
// from run to run of the same binary.
var timingPatterns = []*regexp.Regexp{
	regexp.MustCompile(`checked in [^ ]+ \([^)]*\)`),
	regexp.MustCompile(`time="[0-9.]+"`),
	regexp.MustCompile(`"(scan_rate_bytes_per_second|seconds)":[0-9.e+-]+`),
	regexp.MustCompile(`read rate in this run: [0-9]+ bytes/s`),
	regexp.MustCompile(`about [0-9.]+ s at [0-9]+ bytes/s`),
	regexp.MustCompile(`(?m)[0-9]+\.[0-9]{3}$`),       // estimate.seconds, the last column
	regexp.MustCompile(`(?m),[0-9.e+-]+,[0-9.e+-]+$`), // the estimate's CSV columns
	regexp.MustCompile(`"generated":[0-9]+`),          // when report ran
}

// sameTimings replaces verify's measurements with a placeholder.
func sameTimings(s string) string {
	if !strings.Contains(s, "checked in") && !strings.Contains(s, "recovery") && !strings.Contains(s, "testsuite") && !strings.Contains(s, `"kind":"report"`) {
		return s
	}
	for _, re := range timingPatterns {
		s = re.ReplaceAllString(s, "<timing>")
	}
	return s
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	if a == b {
		return "(same)"
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %q\n+ %q", i+1, x, y)
		}
	}
	return "(differ in line ends)"
}

// each runs args in every format given.
func (d *sameDiff) each(formats []string, args ...string) {
	d.t.Helper()
	for _, f := range formats {
		d.run(nil, append([]string{"-o", f}, args...)...)
	}
}

// dataDir runs the commands over a data directory, then over each of its
// partitions.
func (d *sameDiff) dataDir(dir string, formats []string) {
	d.what = dir
	d.dataDirOnly(dir, formats)
	ents, err := os.ReadDir(dir)
	if err != nil {
		d.t.Fatal(err)
	}
	var parts []string
	for _, e := range ents {
		if e.IsDir() {
			parts = append(parts, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(parts)
	for _, p := range parts {
		d.what = p
		d.partition(p, formats, []string{"0", "1", "7", "50", "1000", "99999"})
		files, _ := filepath.Glob(filepath.Join(p, "*"))
		for _, f := range files {
			switch filepath.Ext(f) {
			case ".log":
				d.each(formats, "dump-log", f)
				d.each(formats, "dump-log", "--records", f)
				d.each(formats, "ls", f)
				d.each(formats, "verify", "-v", f)
			case ".index", ".timeindex", ".txnindex":
				d.each(formats, "dump-index", "--all", f)
				d.each(formats, "verify", f)
			case ".snapshot":
				d.each(formats, "dump-snapshot", f)
				d.each(formats, "dump-log", "--records", f)
			case ".checkpoint":
				d.each(formats, "dump-log", "--records", f)
			}
		}
	}
}

// dataDirOnly runs the commands that take a whole data directory.
func (d *sameDiff) dataDirOnly(dir string, formats []string) {
	d.t.Helper()
	at := []string{"--at", "1800000000000"}
	for _, args := range [][]string{
		{"ls", dir},
		{"ls", "--segments", "--deep", dir},
		{"verify", "-v", "--records", dir},
		{"verify", "--recovery-plan", "-j", "1", dir},
		{"rebuild", "--dry-run", dir},
		{"timeline", dir},
		{"timeline", "--per-partition", dir},
		{"find", "--value-contains", "e", dir},
		{"find", "--key-prefix", "a", "--salvage", dir},
		{"groups", dir},
		{"metadata", dir},
		{"dump-checkpoint", dir},
		append([]string{"txns", dir}, at...),
		append([]string{"retention", dir}, at...),
		append([]string{"cleaner", dir}, at...),
		{"retention", "--at", "1600000000000", "--config", "retention.ms=1000", dir},
	} {
		d.each(formats, args...)
	}
	d.run(nil, "-o", "junit", "verify", "--strict", dir)
	d.run(nil, "-o", "json", "report", "--at", "1800000000000", dir)
	d.run([]string{"COLUMNS=70"}, "ls", "--segments", dir)
	d.run([]string{"TZ=America/New_York"}, "--local", "timeline", "--svg", filepath.Join(d.svgDir, "t.svg"), dir)
}

// partition runs the commands that take a partition directory.
func (d *sameDiff) partition(p string, formats []string, offsets []string) {
	d.t.Helper()
	at := []string{"--at", "1800000000000"}
	runs := [][]string{
		{"ls", p},
		{"ls", "--segments", "--deep", p},
		{"dump-log", p},
		{"dump-log", "--records", p},
		{"dump-log", "--records", "--salvage", p},
		{"dump-log", "--records", "--encoding", "hex", "--decoder", "none", p},
		{"dump-log", "--records", "--from-time", "1700000000000", "--to-time", "1800000000000", p},
		{"dump-index", p},
		{"dump-index", "--all", p},
		{"lookup-time", p, "earliest"},
		{"lookup-time", p, "latest"},
		{"lookup-time", "--trace", p, "max"},
		{"lookup-time", "--trace", p, "1700000000005"},
		{"lookup-time", p, "2023-11-14T22:13:20Z"},
		{"lookup-time", p, "0"},
		{"timeline", p},
		{"timeline", "--bucket", "1h", p},
		{"verify", "-v", "--records", p},
		{"verify", "--recovery-plan", p},
		{"rebuild", "--dry-run", p},
		{"dump-snapshot", p},
		{"dump-checkpoint", p},
		{"find", "--value-contains", "a", p},
		{"find", "--from-offset", "3", "--to-offset", "20", "--salvage", p},
		{"find", "--from-time", "1700000000000", "--max", "5", p},
		{"diff", "--records", p, p},
		{"groups", p},
		append([]string{"txns", p}, at...),
		append([]string{"retention", p}, at...),
		append([]string{"cleaner", p}, at...),
	}
	for _, off := range offsets {
		runs = append(runs,
			[]string{"lookup", p, off},
			[]string{"lookup", "--trace", p, off},
			[]string{"dump-log", "--from-offset", off, "--max-batches", "3", p},
		)
	}
	for _, args := range runs {
		d.each(formats, args...)
	}
	d.run([]string{"COLUMNS=60"}, "dump-log", "--records", p)
	d.run([]string{"TZ=Asia/Kolkata"}, "--local", "lookup-time", "--trace", p, "latest")
	d.run(nil, "timeline", "--svg", filepath.Join(d.svgDir, "p.svg"), p)
	d.run(nil, "-o", "json", "report", "--at", "1800000000000", p)
}

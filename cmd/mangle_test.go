package cmd

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/rebuild"
)

// The mangling test: partitions, generated and written by real brokers,
// damaged thousands of ways (byte flips, overwritten length fields, cuts,
// extensions, deleted files), with every read command run on each. Every
// run must end (within a bound far above its normal time: a hang detector,
// not a speed test) with exit code 0, 1 or 2, no panic or goroutine trace,
// JSON output that is JSON Lines, and its input unchanged. Every tenth
// damaged partition is also rebuilt, with --out (which writes only there)
// and in place (which writes only index files and their backups).

// mangleSource is one pristine partition, as its files' bytes.
type mangleSource struct {
	name  string
	files map[string][]byte // by base name
	names []string          // sorted
	last  int64             // an offset past the data, for lookup targets
}

func loadMangleSource(t *testing.T, name, dir string, last int64) mangleSource {
	t.Helper()
	s := mangleSource{name: name, files: map[string][]byte{}, last: last}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s.files[e.Name()] = b
		s.names = append(s.names, e.Name())
	}
	sort.Strings(s.names)
	return s
}

// mangleSources generates the tiny partitions and loads a few small real
// ones (read in place; their bytes are only written to the test's
// temporary directory).
func mangleSources(t *testing.T) []mangleSource {
	t.Helper()
	work := t.TempDir()
	var out []mangleSource
	for i, o := range []kafkagen.Options{
		{Segments: 2, Batches: 8, RecordsPerBatch: 3, ValueSize: 20, IndexIntervalBytes: 200},
		{Segments: 2, Batches: 10, RecordsPerBatch: 4, ValueSize: 20, Compression: "lz4", Transactions: true, CompactionGaps: true, IndexIntervalBytes: kafkagen.IndexEveryBatch},
		{Segments: 1, Batches: 8, RecordsPerBatch: 3, ValueSize: 20, Magic: 1, Compression: "gzip", Timestamps: "jumping", IndexIntervalBytes: 100},
		{Segments: 1, Batches: 8, RecordsPerBatch: 3, ValueSize: 20, Magic: kafkagen.MagicV0, Compression: "snappy"},
		{Segments: 2, Batches: 6, RecordsPerBatch: 2, ValueSize: 20, Compression: "zstd", LogAppendTime: 0.5, PreallocatedIndexBytes: 256, EmptyActiveSegment: true, IndexIntervalBytes: 100},
	} {
		o.Seed = int64(100 + i)
		name := "gen" + strconv.Itoa(i) + "-0"
		dir := filepath.Join(work, name)
		m, err := kafkagen.Generate(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, loadMangleSource(t, name, dir, m.LogEndOffset+5))
	}
	if fi, err := os.Stat(realFixtures); err == nil && fi.IsDir() {
		for _, rel := range []string{
			"kraft-metadata-tiny/__cluster_metadata-0",
			"zk-kafka26-unclean-noindex/__consumer_offsets-21",
			"cp-kraft-snappy-small/wallet_event-0",
			"cp76-kraft-lz4-logappendtime/_confluent-command-0",
			"cp-kraft-multiseg-compacted/postCreated-0",
			"cp-kraft-ksql-txn-committed/__transaction_state-44",
		} {
			dir := filepath.Join(realFixtures, filepath.FromSlash(rel))
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("real fixture %s: %v", rel, err)
			}
			out = append(out, loadMangleSource(t, filepath.Base(dir), dir, 100))
		}
	} else {
		t.Logf("real broker fixtures not found at %s: mangling generated partitions only", realFixtures)
	}
	return out
}

// mangle applies 1 to 4 random kinds of damage to the files and returns
// what it did, for failure messages.
func mangle(rng *rand.Rand, files map[string][]byte, names []string) []string {
	var did []string
	for n := 1 + rng.IntN(4); n > 0; n-- {
		name := names[rng.IntN(len(names))]
		b, ok := files[name]
		if !ok {
			continue
		}
		switch op := rng.IntN(10); {
		case op < 4 && len(b) > 0: // flip bytes, often in the first batch header
			for k := 1 + rng.IntN(8); k > 0; k-- {
				i := rng.IntN(len(b))
				if rng.IntN(2) == 0 {
					i = rng.IntN(min(len(b), 64))
				}
				b[i] ^= byte(1 + rng.IntN(255))
				did = append(did, fmt.Sprintf("flip %s[%d]", name, i))
			}
		case op < 5 && len(b) >= 4: // a hostile 32-bit field: huge, negative or zero
			i := rng.IntN(len(b) - 3)
			if rng.IntN(2) == 0 && len(b) >= 12 {
				i = 8 // the first entry's length field, in a .log
			}
			v := []uint32{0x7fffffff, 0xffffffff, 0x80000000, 0, 13, 0x7ffffff0}[rng.IntN(6)]
			b[i], b[i+1], b[i+2], b[i+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
			did = append(did, fmt.Sprintf("set %s[%d:%d] = %#x", name, i, i+4, v))
		case op < 7: // cut
			k := rng.IntN(len(b) + 1)
			files[name] = b[:k]
			did = append(did, fmt.Sprintf("cut %s at %d of %d", name, k, len(b)))
		case op < 8: // extend with zeros (preallocation) or garbage
			ext := make([]byte, 1+rng.IntN(300))
			if rng.IntN(2) == 0 {
				for i := range ext {
					ext[i] = byte(rng.Uint32())
				}
			}
			files[name] = append(b, ext...)
			did = append(did, fmt.Sprintf("extend %s by %d", name, len(ext)))
		default: // delete
			delete(files, name)
			did = append(did, "delete "+name)
		}
	}
	return did
}

// mangleRun runs kseg in process and checks what every run must satisfy.
// The bound is a hang detector: runs take milliseconds.
func mangleRun(t *testing.T, what string, args ...string) (stdout string, code int) {
	t.Helper()
	const bound = 2 * time.Minute
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.stdout, r.stderr, r.code = runKseg(t, nil, args...)
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(bound):
		t.Fatalf("%s: kseg %s did not finish within %v", what, strings.Join(args, " "), bound)
	}
	if r.code < 0 || r.code > 2 {
		t.Fatalf("%s: kseg %s: exit code %d", what, strings.Join(args, " "), r.code)
	}
	for _, bad := range []string{"panic", "goroutine ", "internal error", "runtime error", "SIGBUS", "SIGSEGV"} {
		if strings.Contains(r.stderr, bad) {
			t.Fatalf("%s: kseg %s: stderr shows %q:\n%s", what, strings.Join(args, " "), bad, r.stderr)
		}
	}
	if r.code == 2 && strings.TrimSpace(r.stderr) == "" {
		t.Fatalf("%s: kseg %s: exit 2 without a message", what, strings.Join(args, " "))
	}
	if len(args) > 1 && args[0] == "-o" && args[1] == "json" {
		for i, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
			if line != "" && !json.Valid([]byte(line)) {
				t.Fatalf("%s: kseg %s: stdout line %d is not JSON: %q", what, strings.Join(args, " "), i+1, line)
			}
		}
	}
	return r.stdout, r.code
}

func TestMangledPartitions(t *testing.T) {
	t.Parallel()
	sources := mangleSources(t)
	mutations := 400
	if testing.Short() {
		mutations = 100
	}
	rng := rand.New(rand.NewPCG(2024, 5))
	work := t.TempDir()
	codes := map[int]int{}
	damage := 0
	for i := 0; i < mutations; i++ {
		src := sources[i%len(sources)]
		files := map[string][]byte{}
		for name, b := range src.files {
			files[name] = append([]byte(nil), b...)
		}
		did := mangle(rng, files, src.names)
		damage += len(did)
		dataDir := filepath.Join(work, strconv.Itoa(i))
		dir := filepath.Join(dataDir, src.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		what := fmt.Sprintf("mutation %d of %s (%s)", i, src.name, strings.Join(did, "; "))
		before := hashTree(t, dataDir)

		format := []string{"table", "json", "csv"}[i%3]
		target := strconv.FormatInt(rng.Int64N(src.last+10)-5, 10)
		ts := []string{"earliest", "latest", "max", "1700000000005", "2023-11-14T22:13:20Z", "0"}[rng.IntN(6)]
		runs := [][]string{
			{"ls", "--segments", "--deep", dir},
			{"dump-index", dir},
			{"dump-log", dir},
			{"dump-log", "--records", "--encoding", "hex", dir},
			{"lookup", "--trace", dir, target},
			{"lookup-time", "--trace", dir, ts},
			{"verify", "--records", dir},
			{"rebuild", "--dry-run", dir},
			{"timeline", dir},
		}
		if i%4 == 0 {
			runs = append(runs,
				[]string{"ls", dataDir},
				[]string{"dump-log", "--salvage", "--records", dir},
				[]string{"dump-log", "--from-offset", target, "--max-batches", "3", dataDir},
				[]string{"verify", "-j", "2", dataDir},
				[]string{"dump-snapshot", dir},
				[]string{"dump-checkpoint", dir},
			)
		}
		if i%5 == 0 {
			for _, name := range src.names {
				if isIndexName(name) {
					runs = append(runs, []string{"dump-index", "--all", filepath.Join(dir, name)})
				}
			}
		}
		for _, args := range runs {
			_, code := mangleRun(t, what, append([]string{"-o", format}, args...)...)
			codes[code]++
		}
		assertTreeUnchangedAs(t, what, dataDir, before)

		if i%10 == 0 {
			mangleRebuild(t, what, dataDir, dir, before)
		}
		if err := os.RemoveAll(dataDir); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d damaged partitions from %d sources (%d byte flips, overwritten fields, cuts, extensions and deletions); exit codes: %v",
		mutations, len(sources), damage, codes)
	for _, c := range []int{0, 1, 2} {
		if codes[c] == 0 {
			t.Errorf("no run exited %d: the damage is not varied enough to exercise every outcome", c)
		}
	}
}

// assertTreeUnchangedAs is assertTreeUnchanged with the mutation named.
func assertTreeUnchangedAs(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	r := &tbRecorder{TB: t}
	assertTreeUnchanged(r, dir, before)
	if len(r.failures) > 0 {
		t.Fatalf("%s: a read-only command changed its input: %s", what, strings.Join(r.failures, "; "))
	}
}

// mangleRebuild rebuilds a damaged partition with --out, then in place,
// and checks where each wrote.
func mangleRebuild(t *testing.T, what, dataDir, dir string, before map[string]string) {
	t.Helper()
	out := dataDir + "-out"
	mangleRun(t, what, "rebuild", "--out", out, dir)
	assertTreeUnchangedAs(t, what+", rebuild --out", dataDir, before)
	if err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(out, path); filepath.Dir(rel) != filepath.Base(dir) || !isIndexName(d.Name()) {
			t.Errorf("%s: rebuild --out wrote %s", what, rel)
		}
		return nil
	}); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.RemoveAll(out)

	_, code := mangleRun(t, what, "rebuild", dir)
	after := hashTree(t, dataDir)
	for name, sum := range after {
		old, existed := before[name]
		if existed && old == sum {
			continue
		}
		base := filepath.Base(name)
		switch {
		case strings.HasSuffix(base, rebuild.BackupSuffix):
			// A backup holds exactly the file it replaced.
			if before[strings.TrimSuffix(name, rebuild.BackupSuffix)] != sum {
				t.Errorf("%s: %s is not the replaced file's old content", what, name)
			}
		case isIndexName(base):
		default:
			t.Errorf("%s: rebuild (exit %d) changed or created %s", what, code, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("%s: rebuild (exit %d) removed %s", what, code, name)
		}
	}
}

func isIndexName(name string) bool {
	for _, s := range []string{".index", ".timeindex", ".txnindex"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// readOnlyRuns are the read-only commands run over a partition directory,
// in each of formats.
func readOnlyRuns(dir string, formats []string) [][]string {
	var runs [][]string
	for _, o := range formats {
		runs = append(runs,
			[]string{"-o", o, "timeline", dir},
			[]string{"-o", o, "timeline", "--bucket", "1h", "--per-partition", dir},
			[]string{"-o", o, "dump-index", dir},
			[]string{"-o", o, "dump-index", "--all", dir},
			[]string{"-o", o, "dump-log", "--max-batches", "50", dir},
			[]string{"-o", o, "lookup", "--trace", dir, "0"},
			[]string{"-o", o, "lookup", dir, "1000000"},
			[]string{"-o", o, "lookup-time", "--trace", dir, "earliest"},
			[]string{"-o", o, "lookup-time", dir, "latest"},
			[]string{"-o", o, "lookup-time", "--trace", dir, "max"},
			[]string{"-o", o, "lookup-time", dir, "1700000000500"},
			[]string{"-o", o, "find", "--from-offset", "0", "--salvage", dir},
			[]string{"-o", o, "diff", "--records", dir, dir},
		)
	}
	return append(runs, []string{"-o", "json", "dump-log", "--records", dir})
}

// TestReadOnlyCommandsChangeNothing hashes every input file before and after
// each read-only command, on generated partitions (healthy and damaged) and
// on every real broker fixture, and requires the exit code to be 0 or 1 on
// healthy data (2 only where the data is damaged). Every command runs in
// every output format on each partition; -short runs one format a
// partition, in turn (every format still runs, on a quarter of them).
func TestReadOnlyCommandsChangeNothing(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	var dirs []string
	for _, g := range []struct {
		name string
		opts kafkagen.Options
	}{
		{"plain-0", kafkagen.Options{Seed: 1, Segments: 2, Batches: 30}},
		{"lz4txn-0", kafkagen.Options{Seed: 2, Segments: 2, Batches: 30, Compression: "lz4", Transactions: true}},
		{"legacy-0", kafkagen.Options{Seed: 3, Magic: kafkagen.MagicV0, Compression: "gzip", Batches: 20}},
		{"crashed-0", kafkagen.Options{Seed: 4, Batches: 30, PreallocatedIndexBytes: 4096, EmptyActiveSegment: true}},
	} {
		dir := filepath.Join(work, g.name)
		if _, err := kafkagen.Generate(dir, g.opts); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	if fi, err := os.Stat(realFixtures); err == nil && fi.IsDir() {
		ents, _ := os.ReadDir(realFixtures)
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			tg, err := inspect.Resolve(filepath.Join(realFixtures, e.Name()))
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			for _, p := range tg.Partitions {
				dirs = append(dirs, p.Dir)
			}
		}
	} else {
		t.Logf("real broker fixtures not found at %s: only generated partitions checked", realFixtures)
	}
	formats := []string{"table", "wide", "json", "csv"}
	for i, dir := range dirs {
		before := hashTree(t, dir)
		runs := readOnlyRuns(dir, formats)
		if testing.Short() {
			runs = readOnlyRuns(dir, formats[i%len(formats):][:1])
		}
		for _, args := range runs {
			_, stderr, code := runKseg(t, nil, args...)
			if code == exitFailed || strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("kseg %s: exit %d: %s", strings.Join(args, " "), code, stderr)
			}
		}
		assertTreeUnchanged(t, dir, before)
	}
}

// TestRealFixturesDecodeEveryCodecAndMagic: dumping the records of every
// real partition succeeds and meets every codec and magic the fixtures hold.
func TestRealFixturesDecodeEveryCodecAndMagic(t *testing.T) {
	t.Parallel()
	root := requireRealFixtures(t)
	seen := map[string]bool{}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		tg, err := inspect.Resolve(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tg.Partitions {
			out, stderr, code := runKseg(t, nil, "-o", "json", "dump-log", "--records", p.Dir)
			if code != exitOK {
				t.Fatalf("dump-log %s: exit %d: %s", p.Dir, code, stderr)
			}
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, `{"kind":"batch"`) {
					continue
				}
				for _, key := range []string{`"magic":0`, `"magic":1`, `"magic":2`, `"compression":"none"`, `"compression":"gzip"`, `"compression":"snappy"`, `"compression":"lz4"`, `"timestamp_type":"log_append"`, `"is_control":true`} {
					if strings.Contains(line, key) {
						seen[key] = true
					}
				}
				if !strings.Contains(line, `"crc_valid":true`) {
					t.Errorf("%s: batch with a bad CRC in real broker data: %s", p.Dir, line)
				}
			}
		}
	}
	for _, key := range []string{`"magic":0`, `"magic":2`, `"compression":"none"`, `"compression":"gzip"`, `"compression":"snappy"`, `"compression":"lz4"`, `"timestamp_type":"log_append"`, `"is_control":true`} {
		if !seen[key] {
			t.Errorf("no real batch with %s was dumped", key)
		}
	}
}

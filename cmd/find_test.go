package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
)

// TestFindMatchesDumpLogOnRealFixtures: on every real partition (every
// magic and codec a broker wrote), find --from-offset 0 prints exactly the
// data records dump-log --records prints, field for field, each with the
// base offset and position of the batch dump-log lists it under; a find
// for one of those keys finds the records with that key.
func TestFindMatchesDumpLogOnRealFixtures(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, p := range realPartitions(t) {
		out, stderr, code := runKseg(t, nil, "-o", "json", "dump-log", "--records", p.Dir)
		if code != 0 {
			t.Fatalf("dump-log %s: exit %d: %s", p.Dir, code, stderr)
		}
		var want []string
		keys := map[string]int{}
		var batch map[string]any
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			var o map[string]any
			if err := json.Unmarshal([]byte(l), &o); err != nil {
				t.Fatal(err)
			}
			if o["kind"] == "batch" {
				batch = o
				continue
			}
			if batch["is_control"] == true {
				continue
			}
			o["partition_dir"], o["topic"], o["partition"] = p.Name(), p.Topic, float64(p.Partition)
			o["segment"], o["batch_position"], o["batch_base_offset"] = batch["segment"], batch["position"], batch["base_offset"]
			b, _ := json.Marshal(o)
			want = append(want, string(b))
			if k, ok := o["key"].(string); ok && o["key_encoding"] == "utf8" {
				keys[k]++
			}
		}
		out, stderr, code = runKseg(t, nil, "-o", "json", "find", "--from-offset", "0", p.Dir)
		wantCode := 0
		if len(want) == 0 {
			wantCode = 1
		}
		if code != wantCode || stderr != "" {
			t.Fatalf("find %s: exit %d: %s", p.Dir, code, stderr)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l == "" {
				continue
			}
			var o map[string]any
			if err := json.Unmarshal([]byte(l), &o); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(o)
			got = append(got, string(b))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: find printed %d records, dump-log %d; first lines:\n got  %.300s\n want %.300s", p.Dir, len(got), len(want), first(got), first(want))
		}
		for k, n := range keys {
			out, _, code := runKseg(t, nil, "-o", "json", "find", "--key", k, p.Dir)
			if code != 0 || strings.Count(out, "\n") != n {
				t.Errorf("%s: find --key %q: exit %d, %d lines, want %d", p.Dir, k, code, strings.Count(out, "\n"), n)
			}
			break // one key per partition
		}
		checked++
	}
	if checked < 15 {
		t.Errorf("only %d real partitions checked", checked)
	}
}

// realPartitions resolves every real broker data directory and returns
// their partitions (skipping the test when the fixtures are absent).
func realPartitions(t *testing.T) []*inspect.Partition {
	t.Helper()
	real := requireRealFixtures(t)
	ents, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	var out []*inspect.Partition
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		tg, err := inspect.Resolve(filepath.Join(real, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tg.Partitions...)
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

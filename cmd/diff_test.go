package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
)

// copyPartition copies a partition directory's files into dir/<name>.
func copyPartition(t *testing.T, src, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func diffJSON(t *testing.T, wantCode int, args ...string) (lines []map[string]any, div map[string]any) {
	t.Helper()
	out, stderr, code := runKseg(t, nil, append([]string{"-o", "json", "diff", "--records"}, args...)...)
	if code != wantCode {
		t.Fatalf("diff %v: exit %d, want %d: %s", args, code, wantCode, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if o["kind"] == "divergence" {
			div = o
		} else {
			lines = append(lines, o)
		}
	}
	if div == nil {
		t.Fatalf("diff %v: no divergence line", args)
	}
	return lines, div
}

// TestDiffRealFixtures: every real partition against itself agrees (exit
// 0, nothing listed), and against a copy whose last batch was cut off:
// the copy as follower lags and discards nothing, the original as
// follower discards exactly the cut records (when the partition has
// leader epochs and the copy still knows the original's latest one; else
// it truncates to its high watermark), which are listed as only on the
// original's side.
func TestDiffRealFixtures(t *testing.T) {
	t.Parallel()
	// zeroOrNullPast: no record discarded, or no truncation offset at all
	// (then the count is null, and truncation_offset too).
	zeroOrNullPast := func(div map[string]any) bool {
		if div["truncation_offset"] == nil {
			return div["left_records_past_truncation"] == nil
		}
		return div["left_records_past_truncation"] == 0.0
	}
	cuts := 0
	for _, p := range realPartitions(t) {
		before := hashTree(t, p.Dir)
		lines, div := diffJSON(t, 0, p.Dir, p.Dir)
		if len(lines) != 0 || div["first_difference_offset"] != nil || !zeroOrNullPast(div) {
			t.Errorf("%s against itself: %v %v", p.Dir, lines, div)
		}
		assertTreeUnchanged(t, p.Dir, before)
		// Cut the last batch of the last segment holding one.
		var last inspect.SegmentFiles
		var cutAt int64 = -1
		var cutRecords int
		for _, s := range p.Segments {
			out, _, code := runKseg(t, nil, "-o", "json", "dump-log", "--records", s.Log)
			if code != 0 {
				continue
			}
			pos, n := int64(-1), 0
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var o map[string]any
				if json.Unmarshal([]byte(l), &o) != nil {
					continue
				}
				switch o["kind"] {
				case "batch":
					pos, n = int64(o["position"].(float64)), 0
				case "record":
					n++
				}
			}
			if pos > 0 && n > 0 {
				last, cutAt, cutRecords = s, pos, n
			}
		}
		if cutAt < 0 || last.BaseOffset != p.Segments[len(p.Segments)-1].BaseOffset && len(p.Segments) > 1 {
			continue // no batch to cut, or the last segment is empty (the cut would not move the end)
		}
		cuts++
		cp := copyPartition(t, p.Dir, t.TempDir())
		cutLog := filepath.Join(cp, filepath.Base(last.Log))
		if err := os.Truncate(cutLog, cutAt); err != nil {
			t.Fatal(err)
		}
		for _, idx := range []string{last.Index, last.TimeIndex} {
			if idx != "" {
				os.Remove(filepath.Join(cp, filepath.Base(idx))) // rebuilt as the broker would
			}
		}
		lines, div = diffJSON(t, 1, cp, p.Dir)
		if len(lines) != cutRecords || div["first_difference_offset"] != nil || !zeroOrNullPast(div) {
			t.Errorf("%s cut against it: %d lines (cut %d records) %v", p.Dir, len(lines), cutRecords, div)
		}
		for _, l := range lines {
			if l["kind"] != "only_right" || l["removed_by_compaction"] != false {
				t.Errorf("%s: %v", p.Dir, l)
			}
		}
		if tr, ok := div["truncation_offset"].(float64); ok && tr != div["left_log_end_offset"].(float64) {
			t.Errorf("%s: the cut copy as follower truncates to %v, not its log end %v", p.Dir, tr, div["left_log_end_offset"])
		}
		lines, div = diffJSON(t, 1, p.Dir, cp)
		if len(lines) != cutRecords || div["only_left"].(float64) != float64(cutRecords) {
			t.Errorf("%s against the cut: %d lines, %v", p.Dir, len(lines), div)
		}
		// The cut copy's epochs end before the original's latest when
		// the cut removed that epoch's only batch: then it cannot
		// answer, and the original truncates to its high watermark.
		if tr, ok := div["truncation_offset"].(float64); ok {
			want := -1
			switch tr {
			case div["right_log_end_offset"].(float64):
				want = cutRecords
			case div["left_log_end_offset"].(float64):
				want = 0
			}
			if got, _ := div["left_records_past_truncation"].(float64); got != float64(want) {
				t.Errorf("%s against the cut: %v records past truncation, want %d (%v)", p.Dir, div["left_records_past_truncation"], want, div)
			}
		}
	}
	if cuts < 10 {
		t.Errorf("only %d real partitions were cut and compared", cuts)
	}
}

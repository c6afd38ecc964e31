package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/sidefile"
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

// TestDiffCorruptBatchIsDamage: one flipped byte in a record of a
// replica's batch is damage, never a conflict. Without --salvage: exit 2,
// the file and the batch's byte position on stderr, no conflict line;
// with --salvage: that batch's range skipped (said as dump-log --salvage
// says it), the records after it compared, exit 1 (the batch's records are
// on the other side only), still no conflict.
func TestDiffCorruptBatchIsDamage(t *testing.T) {
	root := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(root, "left", "orders-0"), kafkagen.Options{Seed: 5, Segments: 2, Batches: 10})
	if err != nil {
		t.Fatal(err)
	}
	right := copyPartition(t, m.Dir, filepath.Join(root, "right"))
	seg := m.Segments[0]
	b := seg.Batches[4]
	log := filepath.Join(right, filepath.Base(m.LogPath(&seg)))
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	value := b.Records[len(b.Records)-1].Value
	v := bytes.Index(data[b.Position:b.Position+b.Size], []byte(value))
	if v < 0 {
		t.Fatalf("value %q not in its batch", value)
	}
	data[b.Position+int64(v)+int64(len(value))/2] ^= 0x20 // the records still decode
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runKseg(t, nil, "-o", "json", "diff", "--records", m.Dir, right)
	if code != 2 || strings.Contains(out, `"conflict"`) || !strings.Contains(stderr, fmt.Sprintf("%s: byte position %d: crc mismatch", log, b.Position)) {
		t.Errorf("without --salvage: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runKseg(t, nil, "-o", "json", "diff", "--records", "--salvage", m.Dir, right)
	want := fmt.Sprintf("%s: bytes %d..%d (%d bytes) skipped: crc mismatch", log, b.Position, b.Position+b.Size-1, b.Size)
	if code != 1 || strings.Contains(out, `"conflict"`) || !strings.Contains(stderr, want) {
		t.Errorf("--salvage: exit %d\n%s\n%s\nwant %q", code, out, stderr, want)
	}
	onlyLeft := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatal(err)
		}
		if o["kind"] == "only_left" {
			onlyLeft++
			if off := int64(o["offset"].(float64)); off < b.BaseOffset || off > b.LastOffset {
				t.Errorf("--salvage: only_left at %d, outside the skipped batch %d..%d", off, b.BaseOffset, b.LastOffset)
			}
		}
	}
	if onlyLeft != len(b.Records) {
		t.Errorf("--salvage: %d only_left lines, want the skipped batch's %d records", onlyLeft, len(b.Records))
	}
}

// writeEpochLadder writes dir/t-0: a log of offsets 0..2n+9 (one batch,
// compacted down to its first and last record) and a
// leader-epoch-checkpoint of the epochs first, first+2, ... up to 2n,
// each from the offset of its number.
func writeEpochLadder(t testing.TB, dir string, n, first int) string {
	t.Helper()
	p := filepath.Join(dir, "t-0")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	log := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1, LeaderEpoch: 0, Records: []kafkagen.Record{
		{OffsetDelta: 0, Timestamp: 1000, Value: []byte("a")}, {OffsetDelta: int32(2*n + 9), Timestamp: 1000, Value: []byte("b")}}})
	if err := os.WriteFile(filepath.Join(p, inspect.SegmentName(0)+".log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	var cp []sidefile.EpochEntry
	for e := first; e <= 2*n; e += 2 {
		cp = append(cp, sidefile.EpochEntry{Epoch: int32(e), StartOffset: int64(e)})
	}
	if err := os.WriteFile(filepath.Join(p, sidefile.LeaderEpochCheckpointFile), sidefile.AppendLeaderEpochCheckpoint(nil, cp), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffCapsTheRoundsPrinted: a follower whose 1,000 epochs the leader
// never had goes through 1,000 truncation rounds; diff prints the first
// and last 10 and says how many it left out, in every form.
func TestDiffCapsTheRoundsPrinted(t *testing.T) {
	root := t.TempDir()
	left := writeEpochLadder(t, filepath.Join(root, "l"), 1000, 1)  // 1, 3, ... 1999
	right := writeEpochLadder(t, filepath.Join(root, "r"), 1000, 0) // 0, 2, ... 2000
	_, div := diffJSON(t, 0, left, right)
	rounds, _ := div["truncation_rounds"].([]any)
	if len(rounds) != 20 || div["truncation_rounds_omitted"] != 980.0 || div["truncation_offset"] != 1.0 {
		t.Fatalf("%d rounds printed, %v omitted, truncation %v", len(rounds), div["truncation_rounds_omitted"], div["truncation_offset"])
	}
	first, last := rounds[0].(map[string]any), rounds[19].(map[string]any)
	if first["requested_epoch"] != 1999.0 || first["truncate_to"] != 1999.0 || last["requested_epoch"] != 1.0 || last["final"] != true || last["truncate_to"] != 1.0 {
		t.Errorf("first round %v, last %v", first, last)
	}
	out, _, code := runKseg(t, nil, "diff", left, right)
	if code != 0 || !strings.Contains(out, "(980 rounds omitted)") || len(out) > 4000 {
		t.Errorf("table: exit %d, %d bytes\n%s", code, len(out), out)
	}
}

// TestDiffListsTheUndefinedRound: LEFT's latest epoch (5) is newer than
// any RIGHT knows (3), so RIGHT answers UNDEFINED and LEFT would truncate
// to its high watermark, which no replication-offset-checkpoint gives:
// the round is listed all the same, with a null truncate_to, and the
// truncation offset is null.
func TestDiffListsTheUndefinedRound(t *testing.T) {
	root := t.TempDir()
	left, err := kafkagen.Generate(filepath.Join(root, "l", "t-0"), kafkagen.Options{Seed: 1, Batches: 5, LeaderEpoch: 5})
	if err != nil {
		t.Fatal(err)
	}
	right, err := kafkagen.Generate(filepath.Join(root, "r", "t-0"), kafkagen.Options{Seed: 1, Batches: 5, LeaderEpoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, div := diffJSON(t, 0, left.Dir, right.Dir)
	rounds, _ := div["truncation_rounds"].([]any)
	if div["truncation_offset"] != nil || len(rounds) != 1 {
		t.Fatalf("truncation %v after rounds %v", div["truncation_offset"], rounds)
	}
	r := rounds[0].(map[string]any)
	if r["requested_epoch"] != 5.0 || r["leader_epoch"] != -1.0 || r["leader_end_offset"] != -1.0 || r["truncate_to"] != nil || r["final"] != true {
		t.Errorf("round %v", r)
	}
	out, _, _ := runKseg(t, nil, "diff", left.Dir, right.Dir)
	if !strings.Contains(out, "epoch 5 -> (-1, -1): truncate to the high watermark, not known") {
		t.Errorf("table:\n%s", out)
	}
}

// TestDiffWideShowsBothSidesEncodings: -o wide is every field of the JSON
// form: a conflict line's right record, its key and value encodings
// included, as right.* columns, each cell what the JSON says.
func TestDiffWideShowsBothSidesEncodings(t *testing.T) {
	root := t.TempDir()
	left, err := kafkagen.Generate(filepath.Join(root, "l", "t-0"), kafkagen.Options{Seed: 1, Batches: 3})
	if err != nil {
		t.Fatal(err)
	}
	right, err := kafkagen.Generate(filepath.Join(root, "r", "t-0"), kafkagen.Options{Seed: 2, Batches: 3})
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := runKseg(t, nil, "-o", "json", "diff", "--records", "--encoding", "hex", left.Dir, right.Dir)
	var conflict map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatal(err)
		}
		if o["kind"] == "conflict" {
			if rk, _ := o["right"].(map[string]any); rk["key_encoding"] != nil {
				conflict = o
				break
			}
		}
	}
	if code != 1 || conflict == nil {
		t.Fatalf("exit %d, no conflict with a right key:\n%s", code, out)
	}
	wide, _, _ := runKseg(t, nil, "-o", "wide", "diff", "--records", "--encoding", "hex", left.Dir, right.Dir)
	head := strings.Fields(strings.SplitN(wide, "\n", 2)[0])
	for name, v := range conflict {
		names := []string{name}
		if name == "right" {
			names = nil
			for k := range v.(map[string]any) {
				if k != "kind" && k != "offset" { // the line's own
					names = append(names, "right."+k)
				}
			}
		}
		for _, n := range names {
			if n != "kind" && !slices.Contains(head, n) {
				t.Errorf("-o wide has no column %s (header %v)", n, head)
			}
		}
	}
	b, _ := json.Marshal(conflict)
	var line diffRecordJSON
	if err := json.Unmarshal(b, &line); err != nil {
		t.Fatal(err)
	}
	rj := conflict["right"].(map[string]any)
	for _, c := range diffRecordColumns {
		if strings.HasSuffix(c.name, "_encoding") && strings.HasPrefix(c.name, "right.") {
			if got := c.cell(&line); got != rj[strings.TrimPrefix(c.name, "right.")] {
				t.Errorf("column %s: %q, the JSON says %v", c.name, got, rj[strings.TrimPrefix(c.name, "right.")])
			}
		}
	}
}

// TestDiffSaysACheckpointContradictsTheBatches: RIGHT's
// leader-epoch-checkpoint says epoch 4 began about 20 offsets (at a batch)
// before its batches of epoch 4 do: diff warns on stderr (the file, the offsets, both
// epochs), counts the run in right_epoch_mismatches, and truncates by the
// checkpoint as the broker would.
func TestDiffSaysACheckpointContradictsTheBatches(t *testing.T) {
	root := t.TempDir()
	shape := kafkagen.Options{Seed: 3, Segments: 3, Batches: 20, LeaderEpoch: 2, LeaderEpochBumps: true}
	left, err := kafkagen.Generate(filepath.Join(root, "l", "t-0"), shape)
	if err != nil {
		t.Fatal(err)
	}
	right, err := kafkagen.Generate(filepath.Join(root, "r", "t-0"), shape)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := right.Segments[1].BaseOffset, right.Segments[2].BaseOffset
	early := int64(-1) // a batch's base offset about 20 before s2
	for _, b := range right.Batches() {
		if b.BaseOffset >= s2-20 {
			early = b.BaseOffset
			break
		}
	}
	cp := sidefile.AppendLeaderEpochCheckpoint(nil, []sidefile.EpochEntry{{Epoch: 2, StartOffset: 0}, {Epoch: 3, StartOffset: s1}, {Epoch: 4, StartOffset: early}})
	if err := os.WriteFile(filepath.Join(right.Dir, sidefile.LeaderEpochCheckpointFile), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runKseg(t, nil, "-o", "json", "diff", left.Dir, right.Dir)
	if code != 0 || !strings.Contains(out, `"left_epoch_mismatches":0,"right_epoch_mismatches":1,`) {
		t.Errorf("exit %d: %s", code, out)
	}
	want := fmt.Sprintf("%s contradicts the batches once: offsets %d..%d", filepath.Join(right.Dir, sidefile.LeaderEpochCheckpointFile), early, s2-1)
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, fmt.Sprintf("written in leader epoch 3, but the checkpoint puts offset %d in epoch 4", early)) {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

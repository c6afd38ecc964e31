package cmd

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/rebuild"
)

// The corruption matrix of issue #3, end to end through the real commands:
// for each kind of damage on a generated partition, `verify` names the
// right check, file and position with the right exit code; `rebuild` (with
// --truncate-log where the log is damaged) leaves a partition `verify
// --strict` passes; and every log it cut is the old log minus exactly the
// bytes it saved beside it.

// repairFinding is the part of a verify finding the matrix pins.
type repairFinding struct {
	check, file string
	pos         int64 // -1: null
}

func (f repairFinding) String() string { return fmt.Sprintf("%s %s @%d", f.check, f.file, f.pos) }

// repairCase damages a partition and says what verify must report and
// where rebuild --truncate-log must cut.
type repairCase struct {
	name string
	// damage mangles m's files; it returns the findings verify must make
	// (exactly these, in order) and, per segment index, the position where
	// its log must be cut (none: the logs stay as they are).
	damage func(t *testing.T, m *kafkagen.Manifest) (want []repairFinding, cuts map[int]int64)
	// warnings: every finding is a warning (exit 0 without --strict).
	warnings bool
	// info: every finding is info (exit 0 with --strict too).
	info bool
}

// repairShape is the partition every case starts from: two segments of 100
// uncompressed v2 batches, indexed every 4096 bytes (about 20 entries each).
var repairShape = kafkagen.Options{Seed: 11, Segments: 2, Batches: 100}

// unindexedMiddle is a batch of segment 0 near its middle that no index
// entry names, so damaging it touches the .log alone.
func unindexedMiddle(t *testing.T, s *kafkagen.SegmentManifest) kafkagen.BatchManifest {
	t.Helper()
	named := map[int64]bool{}
	for _, e := range s.OffsetIndex {
		named[int64(e.Position)] = true
	}
	for _, e := range s.TimeIndex {
		for _, b := range s.Batches {
			if b.LastOffset == e.Offset {
				named[b.Position] = true
			}
		}
	}
	for k := len(s.Batches) / 2; k < len(s.Batches)-1; k++ {
		if !named[s.Batches[k].Position] {
			return s.Batches[k]
		}
	}
	t.Fatal("no unindexed batch")
	return kafkagen.BatchManifest{}
}

func repairEdit(t *testing.T, path string, fn func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func repairSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func logName(s *kafkagen.SegmentManifest) string { return kafkagen.SegmentName(s.BaseOffset) + ".log" }
func indexName(s *kafkagen.SegmentManifest) string {
	return kafkagen.SegmentName(s.BaseOffset) + ".index"
}
func timeName(s *kafkagen.SegmentManifest) string {
	return kafkagen.SegmentName(s.BaseOffset) + ".timeindex"
}

var repairCases = []repairCase{
	{name: "flipped byte in a record", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[0]
		b := unindexedMiddle(t, s)
		repairEdit(t, m.LogPath(s), func(d []byte) []byte { d[b.Position+b.Size-3] ^= 0x20; return d })
		return []repairFinding{{"log.crc", logName(s), b.Position}}, map[int]int64{0: b.Position}
	}},
	{name: "flipped CRC", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[0]
		b := unindexedMiddle(t, s)
		repairEdit(t, m.LogPath(s), func(d []byte) []byte { d[b.Position+18] ^= 0x01; return d })
		return []repairFinding{{"log.crc", logName(s), b.Position}}, map[int]int64{0: b.Position}
	}},
	{name: "torn last batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[1]
		b := s.Batches[len(s.Batches)-1]
		repairEdit(t, m.LogPath(s), func(d []byte) []byte { return d[:b.Position+b.Size/2] })
		// A broker that dies in the middle of a write takes no producer
		// snapshot at the log end (the generator's clean shutdown did).
		snap := filepath.Join(m.Dir, kafkagen.SegmentName(m.LogEndOffset)+".snapshot")
		if err := os.Remove(snap); err != nil {
			t.Fatal(err)
		}
		return []repairFinding{{"log.truncated", logName(s), b.Position}}, map[int]int64{1: b.Position}
	}},
	{name: "huge length field mid-file", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[0]
		b := unindexedMiddle(t, s)
		repairEdit(t, m.LogPath(s), func(d []byte) []byte {
			binary.BigEndian.PutUint32(d[b.Position+8:], 0x7ffffff0)
			return d
		})
		return []repairFinding{{"log.corrupt-header", logName(s), b.Position}}, map[int]int64{0: b.Position}
	}},
	{name: "index entry past the end", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[0]
		repairEdit(t, m.IndexPath(s), func(d []byte) []byte {
			binary.BigEndian.PutUint32(d[2*indexfmt.OffsetEntrySize+4:], uint32(s.LogSize+100))
			return d
		})
		return []repairFinding{{"index.position", indexName(s), 2 * indexfmt.OffsetEntrySize}}, nil
	}},
	{name: "unsorted time index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[0]
		const n = indexfmt.TimeEntrySize
		repairEdit(t, m.TimeIndexPath(s), func(d []byte) []byte {
			e1 := slices.Clone(d[1*n : 2*n])
			copy(d[1*n:], d[2*n:3*n])
			copy(d[2*n:], e1)
			return d
		})
		return []repairFinding{{"timeindex.order", timeName(s), 2 * n}}, nil
	}},
	{name: "stray bytes after an index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[1]
		size := repairSize(t, m.IndexPath(s))
		repairEdit(t, m.IndexPath(s), func(d []byte) []byte { return append(d, 7, 7, 7) })
		return []repairFinding{{"index.size", indexName(s), size}}, nil
	}},
	// Padding on the active segment: its next start recovers it (no
	// recovery point checkpoint), so info.
	{name: "zero-padded index", warnings: true, info: true, damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[1]
		size := repairSize(t, m.IndexPath(s))
		repairEdit(t, m.IndexPath(s), func(d []byte) []byte { return append(d, make([]byte, 10*indexfmt.OffsetEntrySize)...) })
		return []repairFinding{{"index.padding", indexName(s), size}}, nil
	}},
	{name: "missing index", warnings: true, damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		s := &m.Segments[0]
		if err := os.Remove(m.IndexPath(s)); err != nil {
			t.Fatal(err)
		}
		return []repairFinding{{"index.missing", indexName(s), -1}}, nil
	}},
	{name: "overlapping segments", damage: func(t *testing.T, m *kafkagen.Manifest) ([]repairFinding, map[int]int64) {
		// Segment 0 ends with a copy of segment 1's first three batches: a
		// log that ran on past the roll (the same offsets in both).
		s0, s1 := &m.Segments[0], &m.Segments[1]
		next, err := os.ReadFile(m.LogPath(s1))
		if err != nil {
			t.Fatal(err)
		}
		repairEdit(t, m.LogPath(s0), func(d []byte) []byte { return append(d, next[:s1.Batches[3].Position]...) })
		return []repairFinding{{"segment.overlap", logName(s1), 0}}, map[int]int64{0: s0.LogSize}
	}},
}

// verifyFindings runs kseg verify with args and returns its exit code and
// findings.
func verifyFindings(t *testing.T, args ...string) (int, []repairFinding, string) {
	t.Helper()
	out, errOut, code := runKseg(t, nil, append([]string{"-o", "json", "verify", "--verbose"}, args...)...)
	if errOut != "" {
		t.Errorf("verify %v: stderr %q", args, errOut)
	}
	var got []repairFinding
	var text strings.Builder
	for _, l := range jsonLines(t, out) {
		if l["kind"] != "finding" {
			continue
		}
		f := repairFinding{check: l["check"].(string), file: filepath.Base(l["file"].(string)), pos: -1}
		if p, ok := l["position"].(float64); ok {
			f.pos = int64(p)
		}
		got = append(got, f)
		fmt.Fprintf(&text, "\n  %v: %s", f, l["message"])
	}
	return code, got, text.String()
}

func TestRepairMatrix(t *testing.T) {
	for _, tc := range repairCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data", "demo-0")
			m, err := kafkagen.Generate(dir, repairShape)
			if err != nil {
				t.Fatal(err)
			}
			want, cuts := tc.damage(t, m)
			original := map[int][]byte{}
			for i := range m.Segments {
				b, err := os.ReadFile(m.LogPath(&m.Segments[i]))
				if err != nil {
					t.Fatal(err)
				}
				original[i] = b
			}

			// verify: exactly the expected findings, and the exit codes.
			code, got, text := verifyFindings(t, dir)
			if !slices.Equal(got, want) {
				t.Fatalf("verify findings:%s\nwant %v", text, want)
			}
			wantCode := exitNegative
			if tc.warnings {
				wantCode = exitOK
			}
			if code != wantCode {
				t.Errorf("verify: exit %d, want %d", code, wantCode)
			}
			wantStrict := exitNegative
			if tc.info {
				wantStrict = exitOK
			}
			if code, _, _ := verifyFindings(t, "--strict", dir); code != wantStrict {
				t.Errorf("verify --strict: exit %d, want %d", code, wantStrict)
			}

			// rebuild: without --truncate-log a damaged log stays damaged.
			args := []string{"-o", "json", "rebuild"}
			if cuts != nil {
				_, errOut, code := runKseg(t, nil, "-o", "json", "rebuild", "--no-backup", dir)
				if code != exitOK || errOut == "" {
					t.Fatalf("rebuild without --truncate-log: exit %d, stderr %q (want a warning)", code, errOut)
				}
				if code, got, text := verifyFindings(t, dir); code != exitNegative || len(got) == 0 || got[0] != want[0] {
					t.Fatalf("after rebuild without --truncate-log: exit %d, findings:%s\nwant %v first", code, text, want[0])
				}
				args = append(args, "--truncate-log")
			}
			out, errOut, code := runKseg(t, nil, append(args, dir)...)
			if code != exitOK {
				t.Fatalf("rebuild: exit %d, stderr %q", code, errOut)
			}
			rows := map[string]rebuildJSON{}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				var r rebuildJSON
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("rebuild line %q: %v", line, err)
				}
				rows[r.Segment] = r
			}

			// The repaired partition passes verify --strict.
			if code, got, text := verifyFindings(t, "--strict", dir); code != exitOK || len(got) != 0 {
				t.Fatalf("after rebuild: verify --strict exit %d, findings:%s", code, text)
			}

			// A segment cut for invalid bytes (not an overlap) ends the
			// partition: broker recovery deletes the segments after it, and
			// --truncate-log sets them aside whole (after_cut).
			asideAfter := len(m.Segments)
			for i := range m.Segments {
				if ac := rows[logName(&m.Segments[i])].AfterCut; ac != nil && asideAfter == len(m.Segments) {
					asideAfter = i
					for k := i + 1; k < len(m.Segments); k++ {
						aside := m.LogPath(&m.Segments[k]) + rebuild.CutAsideSuffix + strconv.FormatInt(ac.LogEndOffset, 10)
						if b, err := os.ReadFile(aside); err != nil || !bytes.Equal(b, original[k]) {
							t.Errorf("segment %d after the cut: not set aside whole as %s (%v)", k, aside, err)
						}
					}
				}
			}

			// Logs: cut ones are the old log minus exactly the saved bytes;
			// the others are untouched.
			for i := range m.Segments {
				if i > asideAfter {
					break
				}
				s := &m.Segments[i]
				log := m.LogPath(s)
				now, err := os.ReadFile(log)
				if err != nil {
					t.Fatal(err)
				}
				saved, _ := filepath.Glob(log + ".truncated-at-*")
				r := rows[logName(s)]
				pos, cut := cuts[i]
				if !cut {
					if !bytes.Equal(now, original[i]) || len(saved) != 0 || r.TruncatedBytes != 0 {
						t.Errorf("segment %d: log changed (%d -> %d bytes), saved %v, truncated_bytes %d", i, len(original[i]), len(now), saved, r.TruncatedBytes)
					}
					continue
				}
				wantSaved := log + ".truncated-at-" + strconv.FormatInt(pos, 10)
				if len(saved) != 1 || saved[0] != wantSaved {
					t.Fatalf("segment %d: saved tails %v, want %s", i, saved, wantSaved)
				}
				tail, err := os.ReadFile(wantSaved)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(now)) != pos || !bytes.Equal(slices.Concat(now, tail), original[i]) {
					t.Errorf("segment %d: cut log (%d bytes) + saved tail (%d bytes) is not the old log (%d bytes) cut at %d", i, len(now), len(tail), len(original[i]), pos)
				}
				if r.ValidBytes != pos || r.TruncatedBytes != int64(len(original[i]))-pos || !slices.Contains(r.Written, wantSaved) {
					t.Errorf("segment %d: rebuild line %+v, want valid_bytes %d and %s written", i, r, pos, wantSaved)
				}
				if !strings.Contains(errOut, fmt.Sprintf("%s: %d bytes cut at byte %d: ", logName(s), int64(len(original[i]))-pos, pos)) {
					t.Errorf("segment %d: stderr %q does not say where the log was cut", i, errOut)
				}
			}

			// What is left is what was generated, up to each cut.
			var wantBatches []string
			for i := range m.Segments {
				s := &m.Segments[i]
				for _, b := range s.Batches {
					if pos, cut := cuts[i]; i <= asideAfter && (!cut || b.Position < pos) {
						wantBatches = append(wantBatches, fmt.Sprintf("%s@%d:%d", logName(s), b.Position, b.LastOffset))
					}
				}
			}
			out, _, code = runKseg(t, nil, "-o", "json", "dump-log", dir)
			var gotBatches []string
			for _, l := range jsonLines(t, out) {
				gotBatches = append(gotBatches, fmt.Sprintf("%s@%d:%d", l["segment"], int64(l["position"].(float64)), int64(l["last_offset"].(float64))))
			}
			if code != exitOK || !slices.Equal(gotBatches, wantBatches) {
				t.Errorf("dump-log after repair: exit %d, %d batches, want the %d generated ones before the cuts", code, len(gotBatches), len(wantBatches))
			}
		})
	}
}

// TestRepairOverlapWithoutTruncateLog: rebuild without --truncate-log
// leaves overlapping segments as they are and says so.
func TestRepairOverlapWithoutTruncateLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "demo-0")
	m, err := kafkagen.Generate(dir, repairShape)
	if err != nil {
		t.Fatal(err)
	}
	var tc repairCase
	for _, c := range repairCases {
		if c.name == "overlapping segments" {
			tc = c
		}
	}
	tc.damage(t, m)
	s0 := &m.Segments[0]
	before, err := os.ReadFile(m.LogPath(s0))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runKseg(t, nil, "-o", "json", "rebuild", "--no-backup", dir)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := fmt.Sprintf("kseg: warning: %s: %s: byte position %d (offset %d): offsets reach the next segment's base offset: ",
		logName(s0), m.LogPath(s0), s0.LogSize, m.Segments[1].Batches[0].LastOffset)
	if !strings.HasPrefix(errOut, want) || !strings.HasSuffix(errOut, "; --truncate-log would cut the log there\n") {
		t.Errorf("stderr %q, want a warning starting %q", errOut, want)
	}
	if !strings.Contains(out, fmt.Sprintf(`{"segment":"%s","index_entries":`, logName(s0))) || !strings.Contains(out, `"truncated_bytes":0,`) {
		t.Errorf("output %q", out)
	}
	after, err := os.ReadFile(m.LogPath(s0))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the log changed")
	}
	if code, got, text := verifyFindings(t, dir); code != exitNegative || len(got) != 1 || got[0].check != "segment.overlap" {
		t.Errorf("verify after: exit %d, findings:%s", code, text)
	}
}

package cmd

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// salvageLine is any dump-log JSON line: batch, record or damage.
type salvageLine struct {
	Kind     string  `json:"kind"`
	Segment  string  `json:"segment"`
	Position int64   `json:"position"`
	End      int64   `json:"end"`
	Bytes    int64   `json:"bytes"`
	Error    string  `json:"error"`
	CRCValid bool    `json:"crc_valid"`
	Offset   int64   `json:"offset"`
	Stamp    int64   `json:"timestamp"`
	Key      *string `json:"key"`
	Value    *string `json:"value"`
	Headers  []struct {
		Key   string  `json:"key"`
		Value *string `json:"value"`
	} `json:"headers"`
}

func parseSalvageLines(t *testing.T, out string) []salvageLine {
	t.Helper()
	var lines []salvageLine
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		var s salvageLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		if s.Kind == "damage" {
			// Exactly the contract's fields, in its order.
			var keys []string
			dec := json.NewDecoder(strings.NewReader(l))
			dec.Token()
			for dec.More() {
				k, _ := dec.Token()
				keys = append(keys, k.(string))
				var skip json.RawMessage
				dec.Decode(&skip)
			}
			if got := strings.Join(keys, " "); got != "kind segment position end bytes error" {
				t.Errorf("damage line fields %q", got)
			}
		}
		lines = append(lines, s)
	}
	return lines
}

// b64 renders manifest bytes as dump-log --encoding base64 does.
func b64(b []byte) *string {
	if b == nil {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

// recordText is a record line or a manifest record, as one comparable string.
func recordText(offset, ts int64, key, value *string, headers [][2]*string) string {
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%q", *p)
	}
	var hs []string
	for _, h := range headers {
		hs = append(hs, *h[0]+"="+str(h[1]))
	}
	return fmt.Sprintf("%d@%d %s=%s [%s]", offset, ts, str(key), str(value), strings.Join(hs, " "))
}

func manifestRecords(bs []kafkagen.BatchManifest) []string {
	var out []string
	for _, b := range bs {
		for _, r := range b.Records {
			var hs [][2]*string
			for _, h := range r.Headers {
				hs = append(hs, [2]*string{&h.Key, b64(h.Value)})
			}
			out = append(out, recordText(r.Offset, r.Timestamp, b64(r.Key), b64(r.Value), hs))
		}
	}
	return out
}

func linesRecords(lines []salvageLine) []string {
	var out []string
	for _, l := range lines {
		if l.Kind != "record" {
			continue
		}
		var hs [][2]*string
		for _, h := range l.Headers {
			hs = append(hs, [2]*string{&h.Key, h.Value})
		}
		out = append(out, recordText(l.Offset, l.Stamp, l.Key, l.Value, hs))
	}
	return out
}

func editFile(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDumpLogSalvage damages a batch in the middle of a segment in several
// ways, on partitions of every magic: dump-log stops at the damage (exit
// 2); with --salvage it reports the damaged range and prints every record
// after it, exactly the manifest's records except the damaged batch's
// (exit 1).
func TestDumpLogSalvage(t *testing.T) {
	shapes := map[string]kafkagen.Options{
		"v2":          {Seed: 21, Segments: 2, Batches: 30},
		"v2-zstd-txn": {Seed: 22, Segments: 2, Batches: 30, Compression: "zstd", Transactions: true},
		"v1-gzip":     {Seed: 23, Segments: 2, Batches: 20, Magic: 1, Compression: "gzip"},
		"v0":          {Seed: 24, Segments: 2, Batches: 30, Magic: kafkagen.MagicV0},
	}
	damages := map[string]func(log []byte, b, next kafkagen.BatchManifest) (out []byte, end int64){
		"length field huge": func(log []byte, b, next kafkagen.BatchManifest) ([]byte, int64) {
			binary.BigEndian.PutUint32(log[b.Position+8:], 0x7ffffff0)
			return log, next.Position
		},
		"length field below 14": func(log []byte, b, next kafkagen.BatchManifest) ([]byte, int64) {
			binary.BigEndian.PutUint32(log[b.Position+8:], 5)
			return log, next.Position
		},
		"length field shortened": func(log []byte, b, next kafkagen.BatchManifest) ([]byte, int64) {
			binary.BigEndian.PutUint32(log[b.Position+8:], uint32(b.Size-12-9))
			return log, next.Position
		},
		"bytes overwritten across two batches": func(log []byte, b, next kafkagen.BatchManifest) ([]byte, int64) {
			// From the middle of b into next's header: both are lost.
			for p := b.Position + b.Size/2; p < next.Position+20; p++ {
				log[p] = 0xee
			}
			return log, next.Position + next.Size
		},
	}
	for sname, shape := range shapes {
		for dname, damage := range damages {
			t.Run(sname+"/"+dname, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "demo-0")
				m, err := kafkagen.Generate(dir, shape)
				if err != nil {
					t.Fatal(err)
				}
				s0 := &m.Segments[0]
				k := len(s0.Batches) / 2
				b, next := s0.Batches[k], s0.Batches[k+1]
				var end int64
				editFile(t, m.LogPath(s0), func(log []byte) []byte {
					log, end = damage(log, b, next)
					return log
				})
				lost := map[int64]bool{b.Position: true}
				if end > next.Position {
					lost[next.Position] = true
				}
				var kept []kafkagen.BatchManifest
				for si, s := range m.Segments {
					for _, x := range s.Batches {
						if si != 0 || !lost[x.Position] {
							kept = append(kept, x)
						}
					}
				}

				out, errOut, code := runKseg(t, nil, "-o", "json", "dump-log", "--records", "--encoding", "base64", "--salvage", dir)
				if code != 1 {
					t.Fatalf("--salvage: exit %d, want 1; stderr %q", code, errOut)
				}
				lines := parseSalvageLines(t, out)
				if got, want := linesRecords(lines), manifestRecords(kept); !slices.Equal(got, want) {
					t.Fatalf("--salvage printed %d records, want the %d of the manifest's undamaged batches\ngot  %q\nwant %q", len(got), len(want), got, want)
				}
				var dmg []salvageLine
				for _, l := range lines {
					if l.Kind == "damage" {
						dmg = append(dmg, l)
					}
				}
				seg := kafkagen.SegmentName(s0.BaseOffset) + ".log"
				if len(dmg) != 1 || dmg[0].Segment != seg || dmg[0].Position != b.Position || dmg[0].End != end || dmg[0].Bytes != end-b.Position || dmg[0].Error == "" {
					t.Errorf("damage lines %+v, want one: %s [%d, %d)", dmg, seg, b.Position, end)
				}
				wantWarn := fmt.Sprintf("kseg: warning: %s: bytes %d..%d (%d bytes) skipped: ", m.LogPath(s0), b.Position, end-1, end-b.Position)
				if !strings.HasPrefix(errOut, wantWarn) || strings.Count(errOut, "\n") != 1 {
					t.Errorf("stderr %q, want one warning starting %q", errOut, wantWarn)
				}

				// Table: the same batches, the damage on stderr and in the footer.
				tout, terr, code := runKseg(t, nil, "dump-log", "--salvage", dir)
				if code != 1 || terr != errOut {
					t.Errorf("table: exit %d, stderr %q", code, terr)
				}
				if !strings.HasSuffix(tout, fmt.Sprintf("%d batches\n1 damaged range (%d bytes) skipped\n", len(kept), end-b.Position)) {
					t.Errorf("table footer: %q", tout[max(0, len(tout)-200):])
				}

				// Without --salvage: exit 2. Where the damage stops the
				// scan, segment 0 up to it, then segment 1.
				out, errOut, code = runKseg(t, nil, "-o", "json", "dump-log", "--records", "--encoding", "base64", dir)
				if code != 2 || !strings.Contains(errOut, fmt.Sprintf("%s: byte position ", m.LogPath(s0))) {
					t.Fatalf("without --salvage: exit %d, stderr %q", code, errOut)
				}
				if !strings.HasPrefix(dname, "length field") || dname == "length field shortened" {
					return // the damaged batch is listed, and its records stop the dump
				}
				want := manifestRecords(slices.Concat(s0.Batches[:k], m.Segments[1].Batches))
				if got := linesRecords(parseSalvageLines(t, out)); !slices.Equal(got, want) {
					t.Errorf("without --salvage: %d records, want %d", len(got), len(want))
				}
				if strings.Contains(out, `"kind":"damage"`) {
					t.Error("damage line without --salvage")
				}
			})
		}
	}
}

// TestDumpLogSalvageRecords: a compressed batch whose payload is damaged
// keeps its framing, so it is listed (crc_valid false); its records do not
// decode, which --salvage reports as damage covering the batch.
func TestDumpLogSalvageRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 25, Batches: 20, Compression: "gzip", RecordsPerBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := &m.Segments[0]
	b := s.Batches[7]
	editFile(t, m.LogPath(s), func(log []byte) []byte {
		for p := b.Position + 61 + 12; p < b.Position+b.Size-12; p++ {
			log[p] ^= 0x5a
		}
		return log
	})
	out, errOut, code := runKseg(t, nil, "-o", "json", "dump-log", "--records", "--salvage", "--encoding", "base64", dir)
	if code != 1 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := parseSalvageLines(t, out)
	var order []string
	for _, l := range lines {
		switch {
		case l.Kind == "batch" && l.Position == b.Position:
			order = append(order, fmt.Sprintf("batch crc_valid=%v", l.CRCValid))
		case l.Kind == "damage":
			order = append(order, fmt.Sprintf("damage %d..%d", l.Position, l.End))
		case l.Kind == "batch" && l.Position == s.Batches[8].Position:
			order = append(order, "next batch")
		}
	}
	want := []string{"batch crc_valid=false", fmt.Sprintf("damage %d..%d", b.Position, b.Position+b.Size), "next batch"}
	if !slices.Equal(order, want) {
		t.Errorf("lines around the damaged batch: %q, want %q", order, want)
	}
	kept := slices.Concat(s.Batches[:7], s.Batches[8:])
	if got := linesRecords(lines); !slices.Equal(got, manifestRecords(kept)) {
		t.Errorf("records: %d, want %d", len(got), len(manifestRecords(kept)))
	}
	// Without --salvage the undecodable records stop the dump (exit 2),
	// and without --records the batch is just listed (exit 0).
	if _, _, code := runKseg(t, nil, "-o", "json", "dump-log", "--records", dir); code != 2 {
		t.Errorf("without --salvage: exit %d", code)
	}
	if _, _, code := runKseg(t, nil, "-o", "json", "dump-log", "--salvage", dir); code != 0 {
		t.Errorf("--salvage without --records: exit %d", code)
	}
}

// TestDumpLogSalvageRealFixtures: on partitions written by real brokers,
// --salvage finds no damage and lists exactly the batches dump-log lists
// (its salvage path judges the framing of every batch).
func TestDumpLogSalvageRealFixtures(t *testing.T) {
	t.Parallel()
	root := requireRealFixtures(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*-[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		n++
		plain, _, code := runKseg(t, nil, "-o", "json", "dump-log", dir)
		if code != exitOK {
			t.Errorf("%s: dump-log exit %d", dir, code)
			continue
		}
		salvaged, errOut, code := runKseg(t, nil, "-o", "json", "dump-log", "--salvage", dir)
		if code != exitOK || errOut != "" || salvaged != plain {
			t.Errorf("%s: --salvage exit %d, stderr %q, same output: %v", dir, code, errOut, salvaged == plain)
		}
	}
	if n < 10 {
		t.Errorf("only %d partition directories found under %s", n, root)
	}
}

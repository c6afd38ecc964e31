package verify

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// realFixtures is where the project keeps real broker data (present or
// not; fixtures.Root and Dirs skip a test when it is absent).
var realFixtures = fixtures.Dir()

// generate writes a partition named demo-0 under a fresh temporary
// directory and returns its manifest.
func generate(t *testing.T, o kafkagen.Options) *kafkagen.Manifest {
	t.Helper()
	return generateAt(t, filepath.Join(t.TempDir(), "demo-0"), o)
}

func generateAt(t *testing.T, dir string, o kafkagen.Options) *kafkagen.Manifest {
	t.Helper()
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatalf("kafkagen.Generate: %v", err)
	}
	return m
}

// verifyPath resolves path and runs Run over it.
func verifyPath(t *testing.T, path string, o Options) ([]Finding, Summary) {
	t.Helper()
	tg, err := inspect.Resolve(path)
	if err != nil {
		t.Fatalf("inspect.Resolve(%s): %v", path, err)
	}
	var got []Finding
	sum, err := Run(tg, o, func(f Finding) { got = append(got, f) })
	if err != nil {
		t.Fatalf("Run(%s): %v", path, err)
	}
	return got, sum
}

// want is an expected finding: its check, the base name of its file and
// its position (-1: null).
type want struct {
	check string
	file  string
	pos   int64
}

func (w want) String() string { return fmt.Sprintf("%s %s @%d", w.check, w.file, w.pos) }

func asWant(f Finding) want {
	w := want{check: f.Check, file: filepath.Base(f.File), pos: -1}
	if f.Position != nil {
		w.pos = *f.Position
	}
	return w
}

func describe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		w := asWant(f)
		fmt.Fprintf(&b, "\n  %v: %s", w, f.Message)
	}
	return b.String()
}

// expect requires exactly the findings wanted, in that order.
func expect(t *testing.T, got []Finding, wants ...want) {
	t.Helper()
	var g []want
	for _, f := range got {
		g = append(g, asWant(f))
	}
	if !slices.Equal(g, wants) {
		t.Fatalf("findings:%s\nwant: %v", describe(got), wants)
	}
	for _, f := range got {
		if !ValidSeverity(f.Check, f.Severity) {
			t.Errorf("%v: severity %q, want %q", asWant(f), f.Severity, Severity(f.Check))
		}
		if f.Message == "" {
			t.Errorf("%v: empty message", asWant(f))
		}
	}
}

// File surgery.

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, path string, fn func(b []byte) []byte) {
	t.Helper()
	writeFile(t, path, fn(readFile(t, path)))
}

func flipByte(t *testing.T, path string, pos int64) {
	t.Helper()
	edit(t, path, func(b []byte) []byte { b[pos] ^= 0xff; return b })
}

func putU32(t *testing.T, path string, pos int64, v uint32) {
	t.Helper()
	edit(t, path, func(b []byte) []byte { binary.BigEndian.PutUint32(b[pos:], v); return b })
}

func putU64(t *testing.T, path string, pos int64, v uint64) {
	t.Helper()
	edit(t, path, func(b []byte) []byte { binary.BigEndian.PutUint64(b[pos:], v); return b })
}

func appendBytes(t *testing.T, path string, extra []byte) {
	t.Helper()
	edit(t, path, func(b []byte) []byte { return append(b, extra...) })
}

func truncateFile(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func swapSlots(t *testing.T, path string, size, i, j int) {
	t.Helper()
	edit(t, path, func(b []byte) []byte {
		a := slices.Clone(b[i*size : (i+1)*size])
		copy(b[i*size:], b[j*size:(j+1)*size])
		copy(b[j*size:], a)
		return b
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// fixCRC recomputes the CRC of the v2 batch at pos after an edit.
func fixCRC(t *testing.T, path string, b kafkagen.BatchManifest) {
	t.Helper()
	edit(t, path, func(data []byte) []byte {
		entry := data[b.Position : b.Position+b.Size]
		binary.BigEndian.PutUint32(entry[17:], crc32.Checksum(entry[21:], crc32.MakeTable(crc32.Castagnoli)))
		return data
	})
}

// indexed reports whether an index entry of the segment names an offset of
// batch b or points at it.
func indexed(s *kafkagen.SegmentManifest, b kafkagen.BatchManifest) bool {
	for _, e := range s.OffsetIndex {
		if int64(e.Position) == b.Position || (e.Offset >= b.BaseOffset && e.Offset <= b.LastOffset) {
			return true
		}
	}
	for _, e := range s.TimeIndex {
		if e.Offset >= b.BaseOffset && e.Offset <= b.LastOffset {
			return true
		}
	}
	return false
}

// batchAt returns the index of the batch starting at pos.
func batchAt(t *testing.T, s *kafkagen.SegmentManifest, pos int64) int {
	t.Helper()
	for i, b := range s.Batches {
		if b.Position == pos {
			return i
		}
	}
	t.Fatalf("no batch at position %d", pos)
	return -1
}

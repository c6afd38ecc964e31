package inspect_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestLogEndWhenTheEntryLeadsNowhere: an offset index whose last entry
// points inside a batch leads readNextOffset's scan nowhere. The broker's
// answer (ReadNextOffset, Segment.NextOffset) is then the base offset;
// LogEnd, the one fallback (verify's side-file checks, ls's summaries),
// scans from position 0 and finds the real end.
func TestLogEndWhenTheEntryLeadsNowhere(t *testing.T) {
	m, err := kafkagen.Generate(t.TempDir()+"/orders-0", kafkagen.Options{Seed: 11, Batches: 200, IndexIntervalBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	s := &m.Segments[0]
	log, err := os.ReadFile(m.LogPath(s))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(m.IndexPath(s))
	if err != nil {
		t.Fatal(err)
	}
	idx = idx[:s.IndexEntries*8]
	if s.IndexEntries < 2 {
		t.Fatalf("%d index entries", s.IndexEntries)
	}
	last := s.Batches[len(s.Batches)-1]
	want := last.LastOffset + 1

	end := func(idx []byte) (broker int64, real inspect.SegmentEnd) {
		x := indexfmt.NewOffsetIndex(idx, s.BaseOffset)
		it := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
		b, _, err := inspect.ReadNextOffset(it, bytes.NewReader(log), "x.log", int64(len(log)), s.BaseOffset, x)
		if err != nil && !errors.As(err, new(*fileio.CorruptError)) {
			t.Fatal(err)
		}
		r, err := inspect.LogEnd(it, bytes.NewReader(log), "x.log", int64(len(log)), s.BaseOffset, x)
		if err != nil && !errors.As(err, new(*fileio.CorruptError)) {
			t.Fatal(err)
		}
		return b.Next, r
	}
	if b, r := end(idx); b != want || r.Next != want || !r.HasBatch {
		t.Fatalf("intact: broker %d, LogEnd %+v; want %d", b, r, want)
	}
	bad := append([]byte(nil), idx...)
	at := len(bad) - 4
	binary.BigEndian.PutUint32(bad[at:], uint32(last.Position+5)) // inside the last batch
	b, r := end(bad)
	if r.Next != want || !r.HasBatch {
		t.Errorf("entry inside a batch: LogEnd %+v, want next offset %d", r, want)
	}
	if b == want {
		t.Errorf("entry inside a batch: the broker's readNextOffset found %d; the test does not lead it astray", b)
	}
}

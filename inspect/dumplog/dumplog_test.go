package dumplog_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumplog"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
)

func open(t *testing.T, dir string) *inspect.Partition {
	t.Helper()
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tg.Partitions[0]
}

// dumpAll lists p's records' offsets, and its batches (position, first
// offset, record count) and damaged ranges (position, end, -1) in order.
func dumpAll(t *testing.T, p *inspect.Partition, opts dumplog.Options) ([]int64, [][3]int64, dumplog.Result, error) {
	t.Helper()
	var recs []int64
	var batches [][3]int64 // position, first offset, record count; damage: position, end, -1
	res, err := dumplog.Dump(p, opts, func(e dumplog.Event) error {
		switch {
		case e.Damage != nil:
			batches = append(batches, [3]int64{e.Damage.Position, e.Damage.End, -1})
		case e.Record != nil:
			recs = append(recs, e.Record.Offset)
		default:
			batches = append(batches, [3]int64{e.Batch.Batch.Position, e.Batch.FirstOffset, e.Batch.RecordCount})
		}
		return nil
	})
	return recs, batches, res, err
}

// A legacy wrapper's first offset and record count come from its inner
// messages (its header holds the last offset only), as the generator
// wrote them; its records follow it.
func TestDumpLegacyCounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "old-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Batches: 12, RecordsPerBatch: 4, Magic: 1, Compression: "gzip"})
	if err != nil {
		t.Fatal(err)
	}
	recs, batches, res, err := dumpAll(t, open(t, dir), dumplog.Options{Records: true})
	if err != nil {
		t.Fatal(err)
	}
	var want [][3]int64
	var wantRecs []int64
	for _, s := range m.Segments {
		for _, b := range s.Batches {
			want = append(want, [3]int64{b.Position, b.BaseOffset, int64(b.RecordCount)})
			for _, r := range b.Records {
				wantRecs = append(wantRecs, r.Offset)
			}
		}
	}
	if !slices.Equal(batches, want) {
		t.Errorf("batches (position, first offset, count):\n%v\nwant\n%v", batches, want)
	}
	if !slices.Equal(recs, wantRecs) {
		t.Errorf("records %v, want %v", recs, wantRecs)
	}
	if res.Batches != len(want) || res.DamagedRanges != 0 {
		t.Errorf("result %+v, want %d batches and no damage", res, len(want))
	}
}

// A batch whose records do not decode is damage under Salvage (the walk's
// rule, WalkBatch.Records): listed, then reported as a damaged range of
// its bytes, and the listing goes on; without Salvage it ends the walk
// with the *CorruptError naming the file.
func TestDumpUndecodableRecordsAreDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 25, Batches: 20, Compression: "gzip", RecordsPerBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := &m.Segments[0]
	b := s.Batches[7]
	log := m.LogPath(s)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for p := b.Position + 61 + 12; p < b.Position+b.Size-12; p++ {
		data[p] ^= 0x5a
	}
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p := open(t, dir)
	recs, batches, res, err := dumpAll(t, p, dumplog.Options{Records: true, Salvage: true})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(batches, [3]int64{b.Position, b.BaseOffset, int64(b.RecordCount)})
	if i < 0 || i+2 >= len(batches) || batches[i+1] != [3]int64{b.Position, b.Position + b.Size, -1} || batches[i+2][0] != s.Batches[8].Position {
		t.Fatalf("around the damaged batch: %v", batches)
	}
	var want []int64
	for _, k := range slices.Concat(s.Batches[:7], s.Batches[8:]) {
		for _, r := range k.Records {
			want = append(want, r.Offset)
		}
	}
	if !slices.Equal(recs, want) {
		t.Errorf("records %v, want %v", recs, want)
	}
	if res.DamagedRanges != 1 || res.DamagedBytes != b.Size {
		t.Errorf("result %+v, want one damaged range of %d bytes", res, b.Size)
	}
	_, _, _, err = dumpAll(t, p, dumplog.Options{Records: true})
	var ce *fileio.CorruptError
	if !fileio.IsCorrupt(err) || !errors.As(err, &ce) || ce.File != log || ce.Position != b.Position {
		t.Errorf("without Salvage: %v, want a *CorruptError at %s position %d", err, log, b.Position)
	}
	// Without Records the batch is only listed: nothing is wrong.
	if _, _, res, err := dumpAll(t, p, dumplog.Options{}); err != nil || res.DamagedRanges != 0 {
		t.Errorf("without Records: %+v, %v", res, err)
	}
}

package record_test

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// BatchCount gives every batch's first offset and record count as the
// generator wrote them: from the header for v2 and uncompressed legacy
// messages, from the inner messages of compressed wrappers.
func TestBatchCountMatchesManifest(t *testing.T) {
	for name, o := range map[string]kafkagen.Options{
		"v2-gzip":   {Seed: 51, Batches: 9, Compression: "gzip"},
		"v1":        {Seed: 52, Batches: 7, Magic: 1},
		"v1-snappy": {Seed: 53, Batches: 7, Magic: 1, Compression: "snappy"},
		"v0-lz4":    {Seed: 54, Batches: 6, Magic: kafkagen.MagicV0, Compression: "lz4", CompactionGaps: true},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := kafkagen.Generate(filepath.Join(t.TempDir(), "bc-0"), o)
			if err != nil {
				t.Fatal(err)
			}
			seg, err := inspect.OpenSegment(inspect.SegmentFiles{BaseOffset: m.Segments[0].BaseOffset, Log: m.LogPath(&m.Segments[0])}, inspect.SegmentOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer seg.Close()
			var dec record.RecordDecoder
			sc := seg.Batches(0)
			i, fromRecords := 0, 0
			for sc.Next() {
				b := sc.Batch()
				want := m.Segments[0].Batches[i]
				i++
				c := record.HeaderCount(b)
				if c.FromRecords() {
					fromRecords++
					entry, err := seg.ReadEntry(b, nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := dec.Records(seg.LogName, entry, b, func(r *record.Record) error { c.Record(r); return nil }); err != nil {
						t.Fatal(err)
					}
				}
				if c.FirstOffset != want.BaseOffset || c.RecordCount != int64(want.RecordCount) {
					t.Errorf("batch at %d: first offset %d, %d records; want %d, %d", b.Position, c.FirstOffset, c.RecordCount, want.BaseOffset, want.RecordCount)
				}
				d, err := seg.Detail(*b, &dec)
				if err != nil || d.FirstOffset != c.FirstOffset || d.RecordCount != c.RecordCount {
					t.Errorf("batch at %d: Detail %d, %d (%v); BatchCount %d, %d", b.Position, d.FirstOffset, d.RecordCount, err, c.FirstOffset, c.RecordCount)
				}
			}
			if err := sc.Err(); err != nil || i != len(m.Segments[0].Batches) {
				t.Fatalf("%d batches, %v", i, err)
			}
			legacyCompressed := o.Magic != 2 && o.Magic != 0 && o.Compression != ""
			if wantFrom := map[bool]int{true: i}[legacyCompressed]; fromRecords != wantFrom {
				t.Errorf("%d batches counted from records, want %d", fromRecords, wantFrom)
			}
		})
	}
}

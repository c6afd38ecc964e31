package dumpindex_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumpindex"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// Dump, as a Go caller sees it: a preallocated offset index lists its
// written entries (every slot with all), and says where the padding
// starts; a .txnindex far larger than its log could justify lists only
// the bound; trailing bytes are measured.
func TestDumpPaddingBoundAndTrailing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 9, Segments: 1, Batches: 40, IndexIntervalBytes: 100, PreallocatedIndexBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	s := &m.Segments[0]
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := dumpindex.Files(tg)
	if len(files) < 2 || files[0].Kind != inspect.IndexSuffix || files[0].Path != m.IndexPath(s) {
		t.Fatalf("files %+v", files)
	}
	var offsets []int64
	res, err := dumpindex.Dump(files[0], false, dumpindex.Visit{Offset: func(_ int, e indexfmt.OffsetEntry) { offsets = append(offsets, e.Offset) }})
	if err != nil || len(offsets) != len(s.OffsetIndex) || res.Valid != len(s.OffsetIndex) || res.Slots != 4096/indexfmt.OffsetEntrySize {
		t.Fatalf("offset index: %d listed of %+v, want %d entries in %d slots (%v)", len(offsets), res, len(s.OffsetIndex), 4096/indexfmt.OffsetEntrySize, err)
	}
	for i, e := range s.OffsetIndex {
		if offsets[i] != e.Offset {
			t.Fatalf("entry %d: offset %d, want %d", i, offsets[i], e.Offset)
		}
	}
	if res, err := dumpindex.Dump(files[0], true, dumpindex.Visit{Offset: func(int, indexfmt.OffsetEntry) {}}); err != nil || res.Listed != res.Slots {
		t.Errorf("all: %+v %v", res, err)
	}

	txn := filepath.Join(dir, inspect.SegmentName(s.BaseOffset)+inspect.TxnIndexSuffix)
	if err := os.WriteFile(txn, make([]byte, 1_000_000*indexfmt.TxnEntrySize+5), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	res, err = dumpindex.Dump(dumpindex.File{Path: txn, BaseOffset: s.BaseOffset, Kind: inspect.TxnIndexSuffix, Log: m.LogPath(s)}, false,
		dumpindex.Visit{Txn: func(int, indexfmt.AbortedTxn) { n++ }})
	if err != nil || res.TxnBound < 0 || int64(n) != res.TxnBound || res.Slots != 1_000_000 || res.Trailing != 5 {
		t.Errorf("txnindex of a million entries beside a %d-byte log: %d listed, %+v, %v", s.LogSize, n, res, err)
	}
}

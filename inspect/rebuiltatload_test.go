package inspect_test

import (
	"os"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestRebuiltAtLoad pins the one rule for the segments the broker's
// loader rebuilds at every start (LogLoader.loadSegmentFiles): a missing
// .index, a .txnindex whose sanity check fails (an entry below the base
// offset), and nothing else; and the lookup asks recovery for the indexes
// of exactly those segments.
func TestRebuiltAtLoad(t *testing.T) {
	dir := t.TempDir() + "/orders-0"
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 7, Segments: 3, Batches: 60})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.IndexPath(&m.Segments[0])); err != nil {
		t.Fatal(err)
	}
	// One aborted transaction whose last offset, 0, is below the base.
	if err := os.WriteFile(m.TxnIndexPath(&m.Segments[1]), make([]byte, 34), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := tg.Partitions[0]
	want := []string{inspect.RebuildIndexMissing, inspect.RebuildTxnIndexBelowBase, ""}
	for i, sf := range p.Segments {
		got, err := inspect.RebuiltAtLoad(sf)
		if err != nil || got != want[i] {
			t.Errorf("segment %d: %q, %v; want %q", i, got, err, want[i])
		}
	}
	var asked []int64
	opts := inspect.LookupOptions{Trace: true, RecoveredIndexes: func(sf inspect.SegmentFiles) ([]byte, []byte, error) {
		asked = append(asked, sf.BaseOffset)
		return []byte{}, []byte{}, nil
	}}
	for _, sf := range p.Segments {
		if _, err := p.LookupOffset(sf.BaseOffset, opts); err != nil {
			t.Fatal(err)
		}
	}
	if len(asked) != 2 || asked[0] != p.Segments[0].BaseOffset || asked[1] != p.Segments[1].BaseOffset {
		t.Errorf("recovered indexes asked for segments %v, want the first two", asked)
	}
}

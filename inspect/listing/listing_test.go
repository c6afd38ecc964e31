package listing_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/listing"
)

// List, as a Go caller sees it: partitions in name order, each line the
// sum of what the generator wrote (deep: batches and records counted),
// segments listed one entry per partition, and a broker's data directory
// (it has meta.properties) named with how its broker stopped.
func TestListSumsWhatWasWritten(t *testing.T) {
	data := t.TempDir()
	want := map[string]*kafkagen.Manifest{}
	for _, name := range []string{"b-1", "a-0", "b-0"} {
		m, err := kafkagen.Generate(filepath.Join(data, name), kafkagen.Options{Seed: int64(len(want) + 7), Segments: 3, Batches: 24, RecordsPerBatch: 2})
		if err != nil {
			t.Fatal(err)
		}
		want[name] = m
	}
	if err := os.WriteFile(filepath.Join(data, "meta.properties"), []byte("version=1\nnode.id=1\ncluster.id=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(data)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	res, err := listing.List([]*inspect.Target{tg}, listing.Options{Deep: true}, func(e listing.Entry) error {
		name := e.Partition.Name()
		order = append(order, name)
		m, l := want[name], e.Line
		var batches, records int64
		for _, s := range m.Segments {
			batches += int64(len(s.Batches))
			for _, b := range s.Batches {
				records += int64(len(b.Records))
			}
		}
		if l == nil || l.Segments != 3 || l.NextOffset != m.LogEndOffset || l.Batches == nil || *l.Batches != batches || *l.Records != records {
			t.Errorf("%s: %+v, want 3 segments to %d, %d batches, %d records", name, l, m.LogEndOffset, batches, records)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.Join(order...); got != filepath.Join("a-0", "b-0", "b-1") {
		t.Errorf("order %v", order)
	}
	if len(res.Shutdowns) != 1 || res.Shutdowns[0].Clean || res.Uncounted || res.Newest < 0 {
		t.Errorf("result %+v", res)
	}
	n := 0
	if _, err := listing.List([]*inspect.Target{tg}, listing.Options{Segments: true}, func(e listing.Entry) error {
		n += len(e.Segments)
		if e.Line != nil {
			t.Errorf("a line when listing segments")
		}
		return nil
	}); err != nil || n != 9 {
		t.Errorf("segments: %d, %v", n, err)
	}
}

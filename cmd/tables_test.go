package cmd

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// The default and -o wide tables of lookup and dump-log at 80 and 160
// columns (ls and verify have theirs in ls_test.go and verify_test.go).
func TestTableGoldensLookupDumpLog(t *testing.T) {
	dir := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(dir, "orders-0"), kafkagen.Options{Seed: 11, Segments: 2, Batches: 12, RecordsPerBatch: 3, ValueSize: 90}); err != nil {
		t.Fatal(err)
	}
	assertTableGoldens(t, dir, "tables-lookup", 0, "lookup", "--trace", "orders-0", "20")
	assertTableGoldens(t, dir, "tables-dump-log", 0, "dump-log", "--max-batches", "3", "orders-0")
	outs := assertTableGoldens(t, dir, "tables-dump-log-records", 0, "dump-log", "--records", "--max-batches", "2", "orders-0")
	for _, w := range []int{80, 160} {
		assertLinesFit(t, "dump-log --records", outs[w], w)
	}
}

// groups on a real broker's __consumer_offsets (its footer's counts in
// the singular where they are 1) and that partition's group metadata
// record (subscription and assignment decoded), at 80 and 160 columns.
func TestTableGoldensConsumerOffsets(t *testing.T) {
	dir := filepath.Join(fixtures.Root(t), "zk-kafka2x-clean")
	assertTableGoldens(t, dir, "tables-groups-real", 0, "groups", ".")
	assertTableGoldens(t, dir, "tables-dump-log-group-metadata", 0, "dump-log", "--records", "--max-batches", "1", "__consumer_offsets-18")
}

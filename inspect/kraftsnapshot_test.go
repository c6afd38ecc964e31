package inspect_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

func TestParseMetadataSnapshotName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ok     bool
		end    int64
		epoch  int32
		bootst bool
	}{
		{"00000000000000078270-0000000035.checkpoint", true, 78270, 35, false},
		{"00000000000000000000-0000000000.checkpoint", true, 0, 0, false},
		{"bootstrap.checkpoint", true, 0, 0, true},
		{"00000000000000078270-0000000035.checkpoint.deleted", false, 0, 0, false},
		{"00000000000000078270-0000000035.checkpoint.part", false, 0, 0, false},
		{"0000000000000007827-0000000035.checkpoint", false, 0, 0, false},  // 19 digits
		{"00000000000000078270_0000000035.checkpoint", false, 0, 0, false}, // not '-'
		{"0000000000000007827x-0000000035.checkpoint", false, 0, 0, false},
		{"00000000000000078270-000000003x.checkpoint", false, 0, 0, false},
		{"00000000000000078270-9999999999.checkpoint", false, 0, 0, false}, // epoch over int32
		{"99999999999999999999-0000000001.checkpoint", false, 0, 0, false}, // offset over int64
		{"recovery-point-offset-checkpoint", false, 0, 0, false},
	} {
		s, ok := inspect.ParseMetadataSnapshotName(tc.name)
		if ok != tc.ok || ok && (s.EndOffset != tc.end || s.Epoch != tc.epoch || s.Bootstrap != tc.bootst) {
			t.Errorf("%s: %+v, %v; want end %d epoch %d bootstrap %v ok %v", tc.name, s, ok, tc.end, tc.epoch, tc.bootst, tc.ok)
		}
	}
}

func TestLatestMetadataSnapshot(t *testing.T) {
	snaps := []inspect.MetadataSnapshot{{EndOffset: 100, Path: "a"}, {EndOffset: 200, Path: "b"}, {EndOffset: 300, Path: "c"}}
	for _, tc := range []struct {
		upTo int64
		want string
	}{{0, ""}, {98, ""}, {99, "a"}, {100, "a"}, {198, "a"}, {199, "b"}, {299, "c"}, {1 << 40, "c"}} {
		got := ""
		if s := inspect.LatestMetadataSnapshot(snaps, tc.upTo); s != nil {
			got = s.Path
		}
		if got != tc.want {
			t.Errorf("up to %d: %q, want %q (a snapshot ending at E holds the records below E)", tc.upTo, got, tc.want)
		}
	}
}

// TestMetadataSnapshotsDiscovered: the real KRaft snapshots of
// cp-kraft-multiseg-compacted (named in PROVENANCE.md) are listed, the
// .checkpoint.deleted ones set aside, the data directory's
// bootstrap.checkpoint found, and a snapshot named alone resolves to a
// partition whose one segment is it.
func TestMetadataSnapshotsDiscovered(t *testing.T) {
	dir := filepath.Join(fixtures.Root(t), "cp-kraft-multiseg-compacted")
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Bootstrap == nil || tg.Bootstrap.Path != filepath.Join(dir, "bootstrap.checkpoint") || !tg.Bootstrap.Bootstrap {
		t.Errorf("bootstrap %+v", tg.Bootstrap)
	}
	var meta *inspect.Partition
	for _, p := range tg.Partitions {
		if p.Topic == inspect.MetadataTopic {
			meta = p
		} else if len(p.MetadataSnapshots) > 0 {
			t.Errorf("%s lists metadata snapshots", p.Dir)
		}
	}
	if meta == nil {
		t.Fatal("no __cluster_metadata-0")
	}
	var got []inspect.MetadataSnapshot
	for _, s := range meta.MetadataSnapshots {
		got = append(got, inspect.MetadataSnapshot{EndOffset: s.EndOffset, Epoch: s.Epoch, Path: filepath.Base(s.Path)})
	}
	want := []inspect.MetadataSnapshot{
		{EndOffset: 70179, Epoch: 34, Path: "00000000000000070179-0000000034.checkpoint"},
		{EndOffset: 78270, Epoch: 35, Path: "00000000000000078270-0000000035.checkpoint"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("metadata snapshots %+v, want %+v", got, want)
	}
	deleted := 0
	for _, s := range meta.Skipped {
		if filepath.Ext(s.Path) == ".deleted" {
			deleted++
		}
	}
	if deleted != 2 {
		t.Errorf("%d .checkpoint.deleted files set aside, want 2: %+v", deleted, meta.Skipped)
	}
	for _, s := range meta.Segments {
		if s.Snapshot != nil {
			t.Errorf("a snapshot among the log's segments: %+v", s)
		}
	}

	one, err := inspect.Resolve(meta.MetadataSnapshots[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	p := one.Partitions[0]
	if one.Kind != "segment" || len(p.Segments) != 1 || p.Segments[0].Snapshot == nil || p.Segments[0].Snapshot.EndOffset != 78270 ||
		p.Topic != inspect.MetadataTopic || p.Segments[0].Name() != "00000000000000078270-0000000035.checkpoint" {
		t.Errorf("snapshot resolved to %+v / %+v", one, p)
	}
	var batches, records int
	err = p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		batches++
		records += int(w.Batch.RecordCount)
		if !w.CRCValid {
			t.Errorf("batch at %d: bad CRC", w.Batch.Position)
		}
		return nil
	})
	// PROVENANCE.md: 3 record batches whose offsets restart at 0 (0-67).
	if err != nil || batches != 3 || records != 68 {
		t.Errorf("walk: %d batches, %d records, %v; want 3 and 68", batches, records, err)
	}
	if b, err := inspect.Resolve(filepath.Join(dir, "bootstrap.checkpoint")); err != nil || b.Partitions[0].Segments[0].Snapshot == nil || !b.Partitions[0].Segments[0].Snapshot.Bootstrap {
		t.Errorf("bootstrap.checkpoint resolved to %+v, %v", b, err)
	}
}

func TestMetadataSnapshotBadName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snap.checkpoint")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := inspect.Resolve(path); !errors.Is(err, fileio.ErrNotKafka) {
		t.Errorf("Resolve(%s): %v, want ErrNotKafka", path, err)
	}
}

package metadata_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/metadata"
	"github.com/kseg/kseg/inspect/record"
)

// loggedRecord is a record of a metadata log or snapshot, with its offset
// and timestamp.
type loggedRecord struct {
	offset, ts int64
	value      []byte
}

// readRecords reads the data records of a partition's batches (the batch
// codec is record's, tested on its own; the values are decoded by hand).
func readRecords(t *testing.T, p *inspect.Partition) []loggedRecord {
	t.Helper()
	var out []loggedRecord
	var dec record.RecordDecoder
	err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		if w.Batch.IsControl() {
			return nil
		}
		return dec.Records(w.Segment.Log, w.Entry, w.Batch, func(r *record.Record) error {
			out = append(out, loggedRecord{r.Offset, r.Timestamp, append([]byte(nil), r.Value...)})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshotsIn lists dir's <end offset>-<epoch>.checkpoint files by end
// offset, read from the names with fmt.
func snapshotsIn(t *testing.T, dir string) (ends []int64, paths map[int64]string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths = map[int64]string{}
	for _, e := range ents {
		var end, epoch int64
		var rest string
		if n, _ := fmt.Sscanf(e.Name(), "%20d-%10d%s", &end, &epoch, &rest); n == 3 && rest == ".checkpoint" {
			ends = append(ends, end)
			paths[end] = filepath.Join(dir, e.Name())
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	return ends, paths
}

// expectedImage builds the model of the image at target: the records of
// the latest snapshot ending at or before target+1, then the log's records
// from its end (or the log's start) to target.
func expectedImage(t *testing.T, dir string, log []loggedRecord, target int64) (*model, string) {
	m := newModel()
	from := int64(-1)
	snap := ""
	ends, paths := snapshotsIn(t, dir)
	for _, e := range ends {
		if e <= target+1 {
			from, snap = e, paths[e]
		}
	}
	if snap != "" {
		tg, err := inspect.Resolve(snap)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range readRecords(t, tg.Partitions[0]) {
			m.apply(handRecord(r.value))
		}
	}
	for _, r := range log {
		if r.offset >= from && r.offset <= target {
			m.logRecord(handRecord(r.value))
		}
	}
	return m, snap
}

// TestImageRealFixtures: the image of every real fixture's metadata log,
// at its end and at earlier offsets (and times), equals what the hand
// decoder's records build; every record of the logs and snapshots decodes
// and applies (nothing unapplied), except in cp-kraft-multiseg-compacted
// below its first snapshot, where the log starts at 32026 and the topics
// its partition changes name were created before: the image says so
// (Incomplete) and lists each such record as unapplied, as many as the
// model refuses.
func TestImageRealFixtures(t *testing.T) {
	root := fixtures.Root(t)
	for _, tc := range []struct {
		dir     string
		targets []int64
		// topics the fixture's metadata holds at its end (PROVENANCE.md)
		topics []string
	}{
		{"kafka40-kraft-snappy-retention", []int64{0, 4, 40, 300, 1000, 2500, 5150, 5151, 6500}, []string{"__consumer_offsets", "oms_order_created", "oms_order_status_changed"}},
		{"cp-kraft-multiseg-compacted", []int64{32026, 40000, 70177, 70178, 70179, 75000, 78269, 78270, 79480, 79481}, []string{"__consumer_offsets", "postCreated"}},
		{"kafka361-kraft-windows-metadata", []int64{0, 1, 5, 100}, nil},
		{"kraft-metadata-tiny", []int64{0, 1, 2, 3}, nil},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			data := filepath.Join(root, tc.dir)
			dir := filepath.Join(data, "__cluster_metadata-0")
			p, err := inspect.ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			log := readRecords(t, p)
			for _, r := range log {
				if h := handRecord(r.value); h.h.bad {
					t.Fatalf("offset %d: the hand decoder cannot read the record header", r.offset)
				}
			}
			end, err := metadata.Load(data, metadata.Options{})
			if err != nil {
				t.Fatal(err)
			}
			last := log[len(log)-1].offset
			if end.Target != end.LogEndOffset-1 || end.LogEndOffset < last+1 {
				t.Errorf("end image at %d, log end %d; the last record is at %d", end.Target, end.LogEndOffset, last)
			}
			if len(end.Unapplied) > 0 || end.Incomplete != "" || end.Damage != nil || len(end.Strays) > 0 {
				t.Errorf("end image: unapplied %v, incomplete %q, damage %v, strays %v", end.Unapplied, end.Incomplete, end.Damage, end.Strays)
			}
			if got := end.TopicNames(); fmt.Sprint(got) != fmt.Sprint(tc.topics) && !(len(got) == 0 && tc.topics == nil) {
				t.Errorf("topics at the end %v, want %v", got, tc.topics)
			}
			for _, target := range append(tc.targets, end.Target) {
				im, err := metadata.Load(dir, metadata.Options{Offset: &target})
				if err != nil {
					t.Fatalf("offset %d: %v", target, err)
				}
				want, snap := expectedImage(t, dir, log, target)
				failDiffs(t, fmt.Sprintf("offset %d", target), want.compare(im))
				gotSnap := ""
				if im.Snapshot != nil {
					gotSnap = im.Snapshot.Path
				}
				if gotSnap != snap {
					t.Errorf("offset %d: snapshot %q, want %q", target, gotSnap, snap)
				}
				if len(im.Unapplied) != want.refused {
					t.Errorf("offset %d: %d records unapplied, the model refuses %d", target, len(im.Unapplied), want.refused)
				}
				// Incomplete: no snapshot, and a log that does not start at 0.
				if wantIncomplete := snap == "" && p.Segments[0].BaseOffset > 0; wantIncomplete != (im.Incomplete != "") {
					t.Errorf("offset %d: incomplete %q, want %v", target, im.Incomplete, wantIncomplete)
				}
			}
			// --at T: the last record with a timestamp <= T, found here
			// from the records.
			for _, i := range []int{0, len(log) / 3, len(log) / 2, len(log) - 1} {
				ts := log[i].ts
				want := int64(-1)
				for _, r := range log {
					if r.ts <= ts {
						want = max(want, r.offset)
					}
				}
				im, err := metadata.Load(dir, metadata.Options{Time: &ts})
				if err != nil {
					t.Fatal(err)
				}
				// A control batch after the record (a leader change) may
				// carry the same time: the target then moves onto it,
				// which changes no record applied.
				if im.Target < want {
					t.Errorf("--at %d: target %d, want %d", ts, im.Target, want)
				}
				m, _ := expectedImage(t, dir, log, want)
				failDiffs(t, fmt.Sprintf("--at %d", ts), m.compare(im))
			}
		})
	}
}

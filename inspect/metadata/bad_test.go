package metadata_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/metadata"
)

// handLog writes a __cluster_metadata-0 directory whose one segment holds
// the given batches of metadata records, and returns the directory, the
// .log's path and each batch's position.
func handLog(t *testing.T, batches ...[]kafkagen.MetadataEvent) (dir, log string, positions []int64) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "__cluster_metadata-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b []byte
	off := int64(0)
	for _, batch := range batches {
		hb := kafkagen.Batch{BaseOffset: off, LeaderEpoch: 1, ProducerID: -1}
		for i, e := range batch {
			v, err := kafkagen.AppendMetadataRecord(nil, e)
			if err != nil {
				t.Fatal(err)
			}
			hb.Records = append(hb.Records, kafkagen.Record{OffsetDelta: int32(i), Timestamp: 1700000000000 + off, Value: v})
		}
		positions = append(positions, int64(len(b)))
		b = kafkagen.AppendBatch(b, hb)
		off += int64(len(batch))
	}
	log = filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, log, positions
}

const topicA = "AAAAAAAAAAAAAAAAAAAAAg" // Uuid(0, 2)

func topicBatch() []kafkagen.MetadataEvent {
	return []kafkagen.MetadataEvent{
		{Type: kafkagen.TopicRecord, Topic: "a", TopicID: topicA},
		{Type: kafkagen.PartitionRecord, TopicID: topicA, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1, Directories: []string{}},
	}
}

// TestImageUnappliedRecords: records the rules refuse, or that do not
// decode, are skipped and named with their file, batch position and
// offset; the others apply.
func TestImageUnappliedRecords(t *testing.T) {
	ghost := "AAAAAAAAAAAAAAAAAAAACQ"
	// Frame 1, api key 99 (no such record type), version 0, no tagged fields.
	unknownKey := []byte{1, 99, 0, 0}
	// A TopicRecord of version 7, which no Kafka writes.
	unknownVersion := []byte{1, 2, 7, 2, 'x', 0}
	// A TopicRecord whose name runs past the value.
	truncated := []byte{1, 2, 0, 9, 'x'}
	dir, log, pos := handLog(t,
		topicBatch(),
		[]kafkagen.MetadataEvent{
			{Type: kafkagen.PartitionChangeRecord, TopicID: ghost, Partition: 0, Leader: 2},
			{Type: kafkagen.PartitionChangeRecord, TopicID: topicA, Partition: 5, Leader: 2},
			{Type: kafkagen.PartitionChangeRecord, TopicID: topicA, Partition: 0, Leader: 2},
		},
		[]kafkagen.MetadataEvent{{Raw: unknownKey}, {Raw: unknownVersion}, {Raw: truncated}},
		[]kafkagen.MetadataEvent{
			{Type: kafkagen.FenceBrokerRecord, Broker: 4, BrokerEpoch: 1},
			{Type: kafkagen.RemoveTopicRecord, TopicID: ghost},
			{Type: kafkagen.EndTransactionRecord},
		},
	)
	im, err := metadata.Load(dir, metadata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		pos    int64
		offset int64
		typ    string
		reason string
	}{
		{pos[1], 2, "PartitionChangeRecord", "unable to find partition " + ghost + ":0: the topic id is not in the image"},
		{pos[1], 3, "PartitionChangeRecord", "topic a has no partition 5"},
		{pos[2], 5, "unknown", "api key 99 is not a metadata record type"},
		{pos[2], 6, "TopicRecord", "TopicRecord version 7 is not one this decoder knows"},
		{pos[2], 7, "TopicRecord", "bytes needed"},
		{pos[3], 8, "FenceBrokerRecord", "tried to fence broker 4, but that broker was not registered"},
		{pos[3], 9, "RemoveTopicRecord", "unable to delete topic with id " + ghost + ": no such topic found"},
		{pos[3], 10, "EndTransactionRecord", "EndTransactionRecord without having seen a BeginTransactionRecord"},
	}
	if len(im.Unapplied) != len(want) {
		t.Fatalf("%d unapplied, want %d: %+v", len(im.Unapplied), len(want), im.Unapplied)
	}
	for i, w := range want {
		u := im.Unapplied[i]
		if u.File != log || u.Position != w.pos || u.Offset != w.offset || u.Type != w.typ || !strings.Contains(u.Reason, w.reason) {
			t.Errorf("unapplied %d: %+v, want position %d offset %d type %s reason with %q", i, u, w.pos, w.offset, w.typ, w.reason)
		}
	}
	// The one change that applies did.
	p := im.Topics["a"].Partitions[0]
	if p.Leader != 2 || p.LeaderEpoch != 1 || p.PartitionEpoch != 1 || im.Records != 3 {
		t.Errorf("partition a-0 %+v, %d records applied; want leader 2, epochs 1 and 1, 3 records", p, im.Records)
	}
}

// TestImageDamagedLog: a batch whose CRC fails, or a log cut inside a
// batch, ends the image there with the file and byte position (what
// recovery keeps); nothing panics.
func TestImageDamagedLog(t *testing.T) {
	changes := []kafkagen.MetadataEvent{{Type: kafkagen.PartitionChangeRecord, TopicID: topicA, Partition: 0, ISR: []int32{1}, Leader: kafkagen.NoLeaderChange}}
	more := []kafkagen.MetadataEvent{{Type: kafkagen.PartitionChangeRecord, TopicID: topicA, Partition: 0, Leader: 2}}
	for _, tc := range []struct {
		name   string
		damage func(b []byte, pos []int64) []byte
		kind   error
	}{
		{"a flipped byte", func(b []byte, pos []int64) []byte { b[pos[2]+70] ^= 0xff; return b }, fileio.ErrCRC},
		{"cut inside the last batch", func(b []byte, pos []int64) []byte { return b[:pos[2]+30] }, fileio.ErrTorn},
		{"a zeroed header", func(b []byte, pos []int64) []byte {
			for i := pos[2] + 8; i < pos[2]+12; i++ {
				b[i] = 0
			}
			return b
		}, fileio.ErrCorruptHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, log, pos := handLog(t, topicBatch(), changes, more)
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(log, tc.damage(b, pos), 0o644); err != nil {
				t.Fatal(err)
			}
			im, err := metadata.Load(dir, metadata.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var ce *fileio.CorruptError
			if !errors.As(im.Damage, &ce) || ce.File != log || ce.Position != pos[2] || !errors.Is(im.Damage, tc.kind) {
				t.Fatalf("damage %v, want %v in %s at position %d", im.Damage, tc.kind, log, pos[2])
			}
			p := im.Topics["a"].Partitions[0]
			if p.Leader != 1 || len(p.ISR) != 1 || im.AppliedTo != 2 {
				t.Errorf("partition %+v applied to %d; want the ISR change applied and the leader change not", p, im.AppliedTo)
			}
		})
	}
}

// TestImageBadSnapshots: a snapshot without its header cannot be loaded
// (a broker refuses it: an error naming the file); one without its footer
// loads, marked incomplete; one whose CRC fails is an error with its byte
// position.
func TestImageBadSnapshots(t *testing.T) {
	gen := func(t *testing.T) (string, *kafkagen.MetadataManifest) {
		dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
		m, err := kafkagen.GenerateMetadata(dir, kafkagen.MetadataOptions{Seed: 5, Changes: 60})
		if err != nil {
			t.Fatal(err)
		}
		return dir, m
	}
	rewrite := func(t *testing.T, path string, f func([]byte) []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("no header", func(t *testing.T) {
		dir, m := gen(t)
		s := m.Snapshot
		rewrite(t, s.Path, func(b []byte) []byte { return b[s.HeaderEnd:] })
		_, err := metadata.Load(dir, metadata.Options{})
		if err == nil || !strings.Contains(err.Error(), s.Path) || !strings.Contains(err.Error(), "refuses to load it") {
			t.Errorf("Load: %v, want the snapshot refused", err)
		}
		// Below the snapshot, the log alone serves.
		before := s.EndOffset - 2
		if im, err := metadata.Load(dir, metadata.Options{Offset: &before}); err != nil || im.Snapshot != nil {
			t.Errorf("below the snapshot: %v", err)
		}
	})
	t.Run("no footer", func(t *testing.T) {
		dir, m := gen(t)
		s := m.Snapshot
		rewrite(t, s.Path, func(b []byte) []byte { return b[:s.FooterPosition] })
		im, err := metadata.Load(dir, metadata.Options{})
		if err != nil || im.Snapshot == nil || !strings.Contains(im.Incomplete, "not one ending with a SnapshotFooter") {
			t.Errorf("Load: %v, incomplete %q; want the snapshot loaded and the image marked", err, im.Incomplete)
		}
		want := foldEvents(m.Events, m.Log.LogEndOffset-1)
		failDiffs(t, "no footer", want.asModel().compare(im))
	})
	t.Run("bad CRC", func(t *testing.T) {
		dir, m := gen(t)
		s := m.Snapshot
		rewrite(t, s.Path, func(b []byte) []byte { b[s.HeaderEnd+100] ^= 1; return b })
		_, err := metadata.Load(dir, metadata.Options{})
		var ce *fileio.CorruptError
		if !errors.As(err, &ce) || ce.File != s.Path || ce.Position != s.HeaderEnd || !errors.Is(err, fileio.ErrCRC) {
			t.Errorf("Load: %v, want a CRC error in %s at %d", err, s.Path, s.HeaderEnd)
		}
	})
}

func TestLoadNoMetadataLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Batches: 3}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Dir(dir), t.TempDir()} {
		if _, err := metadata.Load(path, metadata.Options{}); !errors.Is(err, metadata.ErrNoMetadataLog) {
			t.Errorf("%s: %v, want ErrNoMetadataLog", path, err)
		}
	}
	off, ts := int64(1), int64(1)
	if _, err := metadata.Load(dir, metadata.Options{Offset: &off, Time: &ts}); err == nil {
		t.Error("an offset and a time: no error")
	}
}

// TestImageIgnoresSnapshotsBelowLogStart: a snapshot ending below the log
// start offset is one the broker deletes at load
// (KafkaMetadataLog.recoverSnapshots): the image does not start from it,
// and says it is incomplete.
func TestImageIgnoresSnapshotsBelowLogStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	m, err := kafkagen.GenerateMetadata(dir, kafkagen.MetadataOptions{Seed: 8, SnapshotAt: 30, SegmentBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	// Delete the segments up to one starting after the snapshot's end.
	var start int64
	for _, s := range m.Log.Segments {
		if s.BaseOffset > m.Snapshot.EndOffset {
			start = s.BaseOffset
			break
		}
		for _, sfx := range []string{".log", ".index", ".timeindex"} {
			if err := os.Remove(filepath.Join(dir, kafkagen.SegmentName(s.BaseOffset)+sfx)); err != nil {
				t.Fatal(err)
			}
		}
	}
	im, err := metadata.Load(dir, metadata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if im.Snapshot != nil || im.LogStartOffset != start || !strings.Contains(im.Incomplete, "no snapshot") {
		t.Errorf("snapshot %v, log start %d (want %d), incomplete %q", im.Snapshot, im.LogStartOffset, start, im.Incomplete)
	}
}

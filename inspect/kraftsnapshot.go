package inspect

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// KRaft metadata snapshots: files of record batches like a .log, whose
// offsets restart at 0, holding the metadata image at a log offset. A
// controller or broker keeps them in __cluster_metadata-0, named
// <20-digit end offset>-<10-digit epoch>.checkpoint (raft Snapshots:
// filenameFromSnapshotId, parse); `kafka-storage format` writes
// bootstrap.checkpoint in the data directory (BootstrapDirectory), in the
// same format with the snapshot id (0, 0).
const (
	// CheckpointSuffix ends a metadata snapshot's name (Snapshots.SUFFIX).
	CheckpointSuffix = ".checkpoint"
	// BootstrapCheckpointFile is the controller's bootstrap metadata
	// (BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME).
	BootstrapCheckpointFile = "bootstrap.checkpoint"
	// MetadataTopic is the KRaft metadata log's topic; its one partition
	// is __cluster_metadata-0.
	MetadataTopic = "__cluster_metadata"
)

// MetadataSnapshot is one KRaft snapshot file.
type MetadataSnapshot struct {
	Path string
	// EndOffset and Epoch are the snapshot id its name holds: the log
	// offset it covers up to, exclusive (the last record it holds the
	// effect of is EndOffset-1, RecordsSnapshotReader.lastContainedLogOffset),
	// and that record's epoch. Both 0 for bootstrap.checkpoint
	// (Snapshots.BOOTSTRAP_SNAPSHOT_ID).
	EndOffset int64
	Epoch     int32
	Bootstrap bool
}

// Name is the file's base name.
func (s *MetadataSnapshot) Name() string { return filepath.Base(s.Path) }

// ParseMetadataSnapshotName reads a snapshot id from a file name: exactly
// 20 digits, '-', 10 digits, ".checkpoint" (Snapshots.parse reads those
// two fields of any name ending in .checkpoint; kseg insists on the whole
// shape), or bootstrap.checkpoint.
func ParseMetadataSnapshotName(name string) (MetadataSnapshot, bool) {
	if name == BootstrapCheckpointFile {
		return MetadataSnapshot{Bootstrap: true}, true
	}
	const offsetWidth, epochWidth = 20, 10
	if len(name) != offsetWidth+1+epochWidth+len(CheckpointSuffix) || !strings.HasSuffix(name, CheckpointSuffix) || name[offsetWidth] != '-' {
		return MetadataSnapshot{}, false
	}
	off, err1 := strconv.ParseInt(name[:offsetWidth], 10, 64)
	epoch, err2 := strconv.ParseInt(name[offsetWidth+1:offsetWidth+1+epochWidth], 10, 32)
	if err1 != nil || err2 != nil || off < 0 || epoch < 0 || !allDigits(name[:offsetWidth]) || !allDigits(name[offsetWidth+1:offsetWidth+1+epochWidth]) {
		return MetadataSnapshot{}, false
	}
	return MetadataSnapshot{EndOffset: off, Epoch: int32(epoch)}, true
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Segment is the snapshot as a segment whose .log it is: base offset 0,
// no indexes. Walks, summaries and lookups read it as they read a log.
func (s MetadataSnapshot) Segment() SegmentFiles {
	return SegmentFiles{Log: s.Path, Snapshot: &s}
}

// Partition is a partition of the snapshot file alone (Only), whose
// records are metadata records: the __cluster_metadata-0 partition it
// belongs to, with the snapshot as its one segment.
func (s MetadataSnapshot) Partition() *Partition {
	dir := filepath.Dir(s.Path)
	p := &Partition{Dir: dir, Topic: MetadataTopic, Partition: 0, Segments: []SegmentFiles{s.Segment()}, SingleSegment: true}
	if !s.Bootstrap {
		p.DataDir = dataDirOf(dir)
	} else {
		p.DataDir = dir
	}
	return p
}

// snapshotFile reports whether p is one metadata snapshot file (Partition
// of a MetadataSnapshot).
func (p *Partition) snapshotFile() bool {
	return len(p.Segments) == 1 && p.Segments[0].Snapshot != nil
}

func sortMetadataSnapshots(s []MetadataSnapshot) {
	sort.Slice(s, func(i, j int) bool { return s[i].EndOffset < s[j].EndOffset })
}

// LatestMetadataSnapshot is the snapshot a broker would load for a log
// read up to and including offset upTo: the one with the largest end
// offset at most upTo+1 (KafkaRaftClient loads the latest snapshot, and a
// snapshot ending at E holds the effect of the records below E). nil when
// none does.
func LatestMetadataSnapshot(snaps []MetadataSnapshot, upTo int64) *MetadataSnapshot {
	var best *MetadataSnapshot
	for i := range snaps {
		if s := &snaps[i]; !s.Bootstrap && s.EndOffset <= upTo+1 && (best == nil || s.EndOffset >= best.EndOffset) {
			best = s
		}
	}
	return best
}

// bootstrapIn is the data directory's bootstrap.checkpoint, when it is a
// regular file.
func bootstrapIn(dir string) *MetadataSnapshot {
	path := filepath.Join(dir, BootstrapCheckpointFile)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return &MetadataSnapshot{Path: path, Bootstrap: true}
}

// resolveSnapshotFile is Resolve of a .checkpoint file.
func resolveSnapshotFile(path string) (*Target, error) {
	s, ok := ParseMetadataSnapshotName(filepath.Base(path))
	if !ok {
		return nil, fmt.Errorf("%s: %w: expected <20-digit offset>-<10-digit epoch>.checkpoint or bootstrap.checkpoint (a KRaft metadata snapshot)", path, fileio.ErrNotKafka)
	}
	s.Path = path
	p := s.Partition()
	return &Target{Path: path, Kind: "segment", DataDir: p.DataDir, File: path, Partitions: []*Partition{p}}, nil
}

// SnapshotFraming follows a metadata snapshot's batches, in file order,
// and says whether they are framed as a snapshot must be: the first batch
// a control batch whose first record is a SnapshotHeader (else
// RecordsSnapshotReader.nextBatch refuses the snapshot), the last batch
// ending with a SnapshotFooter (the writers append it last:
// RecordsSnapshotWriter, BatchFileWriter.close; readers do not check it).
type SnapshotFraming struct {
	batches int
	header  string // what the first batch holds instead of a header; "" when it holds one
	lastPos int64
	last    string // what the last batch ends with; "" when a footer
}

// Add takes the next batch and the types of its control records (none
// for a data batch).
func (f *SnapshotFraming) Add(b *record.Batch, control []record.ControlType) {
	what := "a data batch"
	if b.IsControl() {
		what = "a control batch of no record"
	}
	if f.batches == 0 {
		switch {
		case b.IsControl() && len(control) > 0 && control[0] == record.ControlSnapshotHeader:
		case b.IsControl() && len(control) > 0:
			f.header = "a control batch starting with a " + control[0].String() + " record"
		default:
			f.header = what
		}
	}
	f.batches++
	f.lastPos, f.last = b.Position, what
	if n := len(control); b.IsControl() && n > 0 {
		f.last = ""
		if control[n-1] != record.ControlSnapshotFooter {
			f.last = "a control batch ending with a " + control[n-1].String() + " record"
		}
	}
}

// HeaderProblem says how the snapshot's start differs from a
// SnapshotHeader ("" when it has one).
func (f *SnapshotFraming) HeaderProblem() string {
	if f.batches == 0 {
		return "no batch"
	}
	if f.header == "" {
		return ""
	}
	return "the first batch is " + f.header + ", not a control batch whose first record is a SnapshotHeader"
}

// FooterProblem says how the snapshot's end differs from a SnapshotFooter
// ("" when it has one, or holds no batch) and the last batch's position.
func (f *SnapshotFraming) FooterProblem() (string, int64) {
	if f.batches == 0 || f.last == "" {
		return "", f.lastPos
	}
	return "the last batch is " + f.last + ", not one ending with a SnapshotFooter record", f.lastPos
}

// ControlTypes appends to dst the types of the control records of a
// control batch (its entry bytes), as ControlRecordType.parse reads their
// keys; a key that does not parse ends the list with its error.
func ControlTypes(dst []record.ControlType, dec *record.RecordDecoder, file string, entry []byte, b *record.Batch) ([]record.ControlType, error) {
	err := dec.Records(file, entry, b, func(r *record.Record) error {
		_, t, err := record.ParseControlKey(r.Key)
		if err != nil {
			return err
		}
		dst = append(dst, t)
		return nil
	})
	return dst, err
}

// Package dumpsnapshot lists producer state snapshots (<offset>.snapshot,
// ProducerSnapshot version 1) and their producers as the broker reads them
// (ProducerStateManager.readSnapshot): the library behind
// `kseg dump-snapshot`. Files says which snapshots a path names (a
// partition's as inspect.Resolve lists them), Dump reads one
// (sidefile.ReadProducerSnapshot) into its snapshot line and a line per
// producer, and says whether its CRC matches.
package dumpsnapshot

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Files are the snapshots path names: path itself when it is a .snapshot
// file; for a directory, its own snapshots by offset when it has any (a
// partition directory, even one whose segments are gone), else, when
// inspect.Resolve takes it for a data directory, its partitions'
// snapshots, partition by partition in Resolve's order. A partition
// directory without snapshots names none; a directory Resolve takes for
// neither and without snapshots is Resolve's error.
func Files(path string) ([]inspect.SnapshotFile, error) {
	st, err := inspect.StatPath(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		name := filepath.Base(path)
		if !strings.HasSuffix(name, inspect.SnapshotSuffix) {
			return nil, fmt.Errorf("%s: %w: expected a .snapshot file, a partition directory or a data directory", path, fileio.ErrNotKafka)
		}
		off, err := inspect.ParseBaseOffset(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return []inspect.SnapshotFile{{Offset: off, Path: path}}, nil
	}
	t, rerr := inspect.Resolve(path)
	if rerr == nil && t.Kind == "partition" {
		return t.Partitions[0].Snapshots, nil
	}
	// A data directory, or a directory Resolve refuses: its own snapshots
	// first (the one directory Resolve's answer does not list them for).
	own, err := inspect.ListSnapshots(path)
	if err != nil {
		return nil, err
	}
	if len(own) > 0 {
		return own, nil
	}
	if rerr != nil {
		return nil, rerr
	}
	var out []inspect.SnapshotFile
	for _, p := range t.Partitions {
		out = append(out, p.Snapshots...)
	}
	return out, nil
}

// Line is one line of dump-snapshot, the contract's JSON line: a snapshot
// (Kind "snapshot", the snapshot fields set) or one of its producers (Kind
// "producer", Producer set, whose fields follow offset in the JSON).
type Line struct {
	Kind   string `json:"kind"`
	File   string `json:"file"`
	Offset int64  `json:"offset"` // the name's offset: the exclusive end offset the snapshot covers
	// snapshot lines
	Version       *int16  `json:"version,omitempty"`
	CRC           *uint32 `json:"crc,omitempty"` // as stored: CRC-32C of bytes 6 to the end
	CRCValid      *bool   `json:"crc_valid,omitempty"`
	Producers     *int    `json:"producers,omitempty"`
	TrailingBytes *int64  `json:"trailing_bytes,omitempty"`
	// producer lines
	*Producer
}

// Producer is a producer entry as stored, and the first sequence and
// offset of its last data batch (nil when it has none: LastOffset -1).
type Producer struct {
	ProducerID            int64  `json:"producer_id"`
	ProducerEpoch         int16  `json:"producer_epoch"`
	CoordinatorEpoch      int32  `json:"coordinator_epoch"`
	CurrentTxnFirstOffset int64  `json:"current_txn_first_offset"` // -1: no open transaction
	LastTimestamp         int64  `json:"last_timestamp"`
	LastSequence          int32  `json:"last_sequence"`
	LastOffset            int64  `json:"last_offset"`
	OffsetDelta           int32  `json:"offset_delta"`
	FirstSequence         *int32 `json:"first_sequence"`
	FirstOffset           *int64 `json:"first_offset"`
}

// Result is what Dump found in a snapshot besides its lines.
type Result struct {
	// Read is false when the file could not be read at all (nothing is
	// listed; Dump's error says why).
	Read        bool
	Producers   int // the producer lines listed
	StoredCRC   uint32
	ComputedCRC uint32
	// CRCMismatch is set when the file is sound but for its CRC: all of
	// it is listed, and a broker deletes it at load and rebuilds producer
	// state from an older snapshot or the log. It is not an error of
	// Dump's: judging the file is verify's job.
	CRCMismatch bool
}

// Dump reads the snapshot f and calls fn with its snapshot line, then a
// line per producer in the file's order (the broker's hash map order).
// The error is nil for a snapshot a broker loads and for one whose only
// fault is its CRC (Result.CRCMismatch). For a file the broker refuses
// otherwise (an unknown version, an entry array that does not fit) fn has
// seen what could be decoded, and the error, a *fileio.CorruptError of
// kind sidefile.ErrCorruptSnapshot, names the byte position.
func Dump(f inspect.SnapshotFile, fn func(Line)) (Result, error) {
	s, err := sidefile.ReadProducerSnapshot(f.Path)
	if s == nil {
		return Result{}, err
	}
	res := Result{Read: true, Producers: len(s.Entries), StoredCRC: s.StoredCRC, ComputedCRC: s.ComputedCRC}
	valid, n := s.CRCValid(), len(s.Entries)
	fn(Line{Kind: "snapshot", File: f.Path, Offset: f.Offset, Version: &s.Version, CRC: &s.StoredCRC,
		CRCValid: &valid, Producers: &n, TrailingBytes: &s.TrailingBytes})
	for i := range s.Entries {
		e := &s.Entries[i]
		p := &Producer{ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, CoordinatorEpoch: e.CoordinatorEpoch,
			CurrentTxnFirstOffset: e.CurrentTxnFirstOffset, LastTimestamp: e.Timestamp, LastSequence: e.LastSequence,
			LastOffset: e.LastOffset, OffsetDelta: e.OffsetDelta}
		if e.HasBatchMetadata() {
			seq, off := e.FirstSequence(), e.FirstOffset()
			p.FirstSequence, p.FirstOffset = &seq, &off
		}
		fn(Line{Kind: "producer", File: f.Path, Offset: f.Offset, Producer: p})
	}
	if errors.Is(err, sidefile.ErrSnapshotCRC) {
		res.CRCMismatch = true
		return res, nil
	}
	return res, err
}

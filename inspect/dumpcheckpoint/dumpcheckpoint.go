// Package dumpcheckpoint lists the entries of the small files a broker
// keeps beside the segments: the offset checkpoints, meta.properties and
// .kafka_cleanshutdown of a data directory, the leader-epoch-checkpoint,
// partition.metadata and quorum-state of a partition directory. It is the
// library behind `kseg dump-checkpoint`: Files says which of them a path
// names (through inspect.Resolve for a data directory's partitions), Dump
// reads one with the broker's strict reader (inspect/sidefile) and hands
// out its lines as it goes.
package dumpcheckpoint

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/sidefile"
)

// The kinds of file, as File.Kind names them. An offset checkpoint's kind
// is also its lines' Checkpoint field.
const (
	RecoveryPoint     = "recovery_point"
	LogStart          = "log_start"
	HighWatermark     = "high_watermark"
	Cleaner           = "cleaner"
	LeaderEpoch       = "leader_epoch"
	PartitionMetadata = "partition_metadata"
	MetaProperties    = "meta_properties"
	CleanShutdown     = "clean_shutdown"
	QuorumState       = "quorum_state"
)

// File is one file to dump and the kind of file its name says it is.
type File struct {
	Path string
	Kind string
}

type named struct{ name, kind string }

// dataDirFiles and partitionFiles are the files Files looks for in a
// directory, in the order it lists them.
var (
	dataDirFiles = []named{
		{sidefile.RecoveryPointCheckpointFile, RecoveryPoint},
		{sidefile.LogStartOffsetCheckpointFile, LogStart},
		{sidefile.ReplicationCheckpointFile, HighWatermark},
		{sidefile.CleanerCheckpointFile, Cleaner},
		{sidefile.MetaPropertiesFile, MetaProperties},
		{sidefile.CleanShutdownFile, CleanShutdown},
	}
	partitionFiles = []named{
		{sidefile.LeaderEpochCheckpointFile, LeaderEpoch},
		{sidefile.PartitionMetadataFile, PartitionMetadata},
		{sidefile.QuorumStateFile, QuorumState},
	}
)

// kindOf is the kind of the file called name, false for any other name.
func kindOf(name string) (string, bool) {
	for _, l := range [][]named{dataDirFiles, partitionFiles} {
		for _, n := range l {
			if n.name == name {
				return n.kind, true
			}
		}
	}
	return "", false
}

// Files are the files path names: path itself when it is one of them (by
// its name); for a directory, those of a data directory, then those of a
// partition directory that are in it, then, when inspect.Resolve takes it
// for a data directory, each of its partitions' in Resolve's order. A
// directory Resolve takes for neither (a partition whose segments are all
// gone, a data directory with nothing but meta.properties) still has its
// own files listed. A directory with none of them is an error.
func Files(path string) ([]File, error) {
	st, err := inspect.StatPath(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		kind, ok := kindOf(filepath.Base(path))
		if !ok {
			return nil, fmt.Errorf("%s: %w: expected a checkpoint file (%s, ...), a partition directory or a data directory",
				path, fileio.ErrNotKafka, sidefile.RecoveryPointCheckpointFile)
		}
		return []File{{path, kind}}, nil
	}
	out := present(nil, path, dataDirFiles)
	out = present(out, path, partitionFiles)
	if t, err := inspect.Resolve(path); err == nil && t.Kind == "data_dir" {
		for _, p := range t.Partitions {
			out = present(out, p.Dir, partitionFiles)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no checkpoint, epoch, partition metadata or properties files", path)
	}
	return out, nil
}

// present appends the files of names that are regular files in dir (a
// directory of the same name is not one).
func present(out []File, dir string, names []named) []File {
	for _, n := range names {
		p := filepath.Join(dir, n.name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			out = append(out, File{p, n.kind})
		}
	}
	return out
}

// Line is one line of dump-checkpoint, the contract's JSON line: Kind
// "offset", "leader_epoch", "partition_metadata", "property",
// "clean_shutdown" or "quorum_state", and the fields of that kind (the
// others are nil and left out).
type Line struct {
	Kind        string  `json:"kind"`
	File        string  `json:"file"`
	Checkpoint  string  `json:"checkpoint,omitempty"` // offset lines: the checkpoint's kind (RecoveryPoint, ...)
	Topic       *string `json:"topic,omitempty"`
	Partition   *int32  `json:"partition,omitempty"`
	Offset      *int64  `json:"offset,omitempty"`
	Epoch       *int32  `json:"epoch,omitempty"`
	StartOffset *int64  `json:"start_offset,omitempty"`
	// InCache is false for an entry the broker's epoch cache drops when it
	// loads the file (LeaderEpochCheckpoint.Kept).
	InCache     *bool   `json:"in_cache,omitempty"`
	Version     *int32  `json:"version,omitempty"`
	TopicID     *string `json:"topic_id,omitempty"`
	Key         *string `json:"key,omitempty"`
	Value       *string `json:"value,omitempty"`
	BrokerEpoch *int64  `json:"broker_epoch,omitempty"` // nil in the empty marker of Kafka 3.6 and older
	// quorum_state lines (QuorumStateData, at the file's data_version).
	DataVersion      *int16   `json:"data_version,omitempty"`
	ClusterID        *string  `json:"cluster_id,omitempty"`
	LeaderID         *int32   `json:"leader_id,omitempty"`
	LeaderEpoch      *int32   `json:"leader_epoch,omitempty"`
	VotedID          *int32   `json:"voted_id,omitempty"`
	VotedDirectoryID *string  `json:"voted_directory_id,omitempty"`
	AppliedOffset    *int64   `json:"applied_offset,omitempty"`
	CurrentVoters    *[]int32 `json:"current_voters,omitempty"` // data_version 0, nil when null
}

// Dump reads f and calls fn with each of its lines in file order, as it
// goes (a leader-epoch-checkpoint of millions of entries is not held
// first). A file its broker reader refuses is listed as far as it parses;
// the error then says why, naming the file and byte position. A file no
// longer there lists nothing.
func Dump(f File, fn func(Line)) error {
	base := Line{File: f.Path}
	switch f.Kind {
	case LeaderEpoch:
		r := sidefile.ReadLeaderEpochCheckpoint(f.Path)
		if r.Value != nil {
			r.Value.Kept(func(_ int, e sidefile.EpochEntry, kept bool) bool {
				l := base
				l.Kind, l.Epoch, l.StartOffset, l.InCache = "leader_epoch", &e.Epoch, &e.StartOffset, &kept
				fn(l)
				return true
			})
		}
		return r.Err
	case PartitionMetadata:
		r := sidefile.ReadPartitionMetadata(f.Path)
		if r.Err == nil && r.Value != nil {
			l := base
			l.Kind, l.Version, l.TopicID = "partition_metadata", &r.Value.Version, &r.Value.TopicID
			fn(l)
		}
		return r.Err
	case MetaProperties:
		r := sidefile.ReadMetaProperties(f.Path)
		if r.Value != nil {
			for _, k := range r.Value.Keys {
				l := base
				v := r.Value.Values[k]
				l.Kind, l.Key, l.Value = "property", &k, &v
				fn(l)
			}
		}
		return r.Err
	case QuorumState:
		r := sidefile.ReadQuorumState(f.Path)
		if q := r.Value; q != nil {
			fn(quorumStateLine(base, q))
		}
		return r.Err
	case CleanShutdown:
		r := sidefile.ReadCleanShutdown(f.Path)
		if r.Value != nil {
			l := base
			l.Kind, l.BrokerEpoch = "clean_shutdown", r.Value.BrokerEpoch
			fn(l)
		}
		return r.Err
	case RecoveryPoint, LogStart, HighWatermark, Cleaner:
		r := sidefile.ReadOffsetCheckpoint(f.Path)
		if r.Value != nil {
			for _, e := range r.Value.Entries {
				l := base
				l.Kind, l.Checkpoint, l.Topic, l.Partition, l.Offset = "offset", f.Kind, &e.Topic, &e.Partition, &e.Offset
				fn(l)
			}
		}
		return r.Err
	}
	return fmt.Errorf("%s: unknown kind of file %q", f.Path, f.Kind)
}

// quorumStateLine is a quorum-state file's line (base names the file).
func quorumStateLine(base Line, q *sidefile.QuorumState) Line {
	l := base
	l.Kind, l.DataVersion, l.ClusterID, l.VotedDirectoryID, l.AppliedOffset = "quorum_state", &q.DataVersion, q.ClusterID, q.VotedDirectoryID, q.AppliedOffset
	l.LeaderID, l.LeaderEpoch, l.VotedID = &q.LeaderID, &q.LeaderEpoch, &q.VotedID
	if q.DataVersion == 0 && !q.CurrentVotersNull {
		voters := q.CurrentVoters
		if voters == nil {
			voters = []int32{}
		}
		l.CurrentVoters = &voters
	}
	return l
}

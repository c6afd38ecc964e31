package inspect

import (
	"errors"
	"os"
	"path/filepath"
)

// SideFile is one small file beside the segments, read and parsed. Path is
// "" when the file does not exist. Err is a read error, or the parse
// problem (a *CorruptError of kind ErrCheckpointFormat or
// ErrCorruptSnapshot); Value then holds what could be parsed before it, or
// is nil when nothing could be read.
type SideFile[T any] struct {
	Path  string
	Value *T
	Err   error
}

// Present reports whether the file exists.
func (f *SideFile[T]) Present() bool { return f.Path != "" }

// OK reports whether the file exists and parsed without a problem.
func (f *SideFile[T]) OK() bool { return f.Path != "" && f.Err == nil && f.Value != nil }

func readSide[T any](path string, parse func(string, []byte) (*T, error)) SideFile[T] {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return SideFile[T]{}
		}
		return SideFile[T]{Path: path, Err: err}
	}
	if st.IsDir() {
		return SideFile[T]{}
	}
	b, err := readSmallFile(path, MaxCheckpointBytes)
	if err != nil {
		return SideFile[T]{Path: path, Err: err}
	}
	v, err := parse(path, b)
	return SideFile[T]{Path: path, Value: v, Err: err}
}

// ReadOffsetCheckpoint reads one of a data directory's offset checkpoints.
func ReadOffsetCheckpoint(path string) SideFile[OffsetCheckpoint] {
	return readSide(path, ParseOffsetCheckpoint)
}

// ReadLeaderEpochCheckpoint reads a partition's leader-epoch-checkpoint.
func ReadLeaderEpochCheckpoint(path string) SideFile[LeaderEpochCheckpoint] {
	return readSide(path, ParseLeaderEpochCheckpoint)
}

// ReadPartitionMetadata reads a partition's partition.metadata.
func ReadPartitionMetadata(path string) SideFile[PartitionMetadata] {
	return readSide(path, ParsePartitionMetadata)
}

// ReadMetaProperties reads a data directory's meta.properties.
func ReadMetaProperties(path string) SideFile[MetaProperties] {
	return readSide(path, ParseMetaProperties)
}

// ReadCleanShutdown reads a data directory's .kafka_cleanshutdown.
func ReadCleanShutdown(path string) SideFile[CleanShutdown] {
	return readSide(path, func(file string, b []byte) (*CleanShutdown, error) {
		cs, err := ParseCleanShutdown(file, b)
		return &cs, err
	})
}

// PartitionSideFiles are the files of a partition directory that are not
// segments: the leader epoch checkpoint, partition.metadata and the
// producer snapshots (listed, not read).
type PartitionSideFiles struct {
	Dir               string
	LeaderEpochs      SideFile[LeaderEpochCheckpoint]
	PartitionMetadata SideFile[PartitionMetadata]
	Snapshots         []SnapshotFile
}

// ReadPartitionSideFiles reads the side files of a partition directory.
// Problems with single files are in their SideFile; the error is for a
// directory that cannot be listed.
func ReadPartitionSideFiles(dir string) (*PartitionSideFiles, error) {
	snaps, err := ListSnapshots(dir)
	if err != nil {
		return nil, err
	}
	return &PartitionSideFiles{
		Dir:               dir,
		LeaderEpochs:      ReadLeaderEpochCheckpoint(filepath.Join(dir, LeaderEpochCheckpointFile)),
		PartitionMetadata: ReadPartitionMetadata(filepath.Join(dir, PartitionMetadataFile)),
		Snapshots:         snaps,
	}, nil
}

// DataDirFiles are a data directory's own files: the four offset
// checkpoints, meta.properties and the clean shutdown marker.
type DataDirFiles struct {
	Dir            string
	RecoveryPoints SideFile[OffsetCheckpoint] // recovery-point-offset-checkpoint
	LogStarts      SideFile[OffsetCheckpoint] // log-start-offset-checkpoint
	HighWatermarks SideFile[OffsetCheckpoint] // replication-offset-checkpoint
	CleanerOffsets SideFile[OffsetCheckpoint] // cleaner-offset-checkpoint
	Meta           SideFile[MetaProperties]
	CleanShutdown  SideFile[CleanShutdown] // Present: the last shutdown was clean
}

// ReadDataDirFiles reads the files of a data directory (any that exist).
func ReadDataDirFiles(dir string) *DataDirFiles {
	j := func(name string) string { return filepath.Join(dir, name) }
	return &DataDirFiles{
		Dir:            dir,
		RecoveryPoints: ReadOffsetCheckpoint(j(RecoveryPointCheckpointFile)),
		LogStarts:      ReadOffsetCheckpoint(j(LogStartOffsetCheckpointFile)),
		HighWatermarks: ReadOffsetCheckpoint(j(ReplicationCheckpointFile)),
		CleanerOffsets: ReadOffsetCheckpoint(j(CleanerCheckpointFile)),
		Meta:           ReadMetaProperties(j(MetaPropertiesFile)),
		CleanShutdown:  ReadCleanShutdown(j(CleanShutdownFile)),
	}
}

// CheckpointedOffset is what one offset checkpoint says about a partition,
// read the broker's way: an unreadable file counts as empty
// (LogManager.loadLogs warns and uses an empty map), so ok is false then
// as for a partition the file does not list.
func CheckpointedOffset(f *SideFile[OffsetCheckpoint], topic string, partition int32) (offset int64, ok bool) {
	if !f.OK() {
		return 0, false
	}
	return f.Value.Lookup(topic, partition)
}

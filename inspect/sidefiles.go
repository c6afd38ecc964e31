package inspect

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kseg/kseg/inspect/sidefile"
)

// PartitionSideFiles are the files of a partition directory that are not
// segments: the leader epoch checkpoint, partition.metadata and the
// producer snapshots (listed, not read).
type PartitionSideFiles struct {
	Dir               string
	LeaderEpochs      sidefile.SideFile[sidefile.LeaderEpochCheckpoint]
	PartitionMetadata sidefile.SideFile[sidefile.PartitionMetadata]
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
	return readSideFiles(dir, snaps), nil
}

// SideFiles reads the side files of p, a partition ReadPartition listed
// (not one segment file, SingleSegment): the snapshots are those its listing
// found, and the directory is not listed again.
func (p *Partition) SideFiles() *PartitionSideFiles {
	return readSideFiles(p.Dir, p.Snapshots)
}

// LeaderEpochCheckpoint reads p's leader-epoch-checkpoint: the one read of
// that file of a partition (ls, SideFiles for verify, diff, lookup's epoch
// entry).
func (p *Partition) LeaderEpochCheckpoint() sidefile.SideFile[sidefile.LeaderEpochCheckpoint] {
	return readLeaderEpochs(p.Dir)
}

func readLeaderEpochs(dir string) sidefile.SideFile[sidefile.LeaderEpochCheckpoint] {
	return sidefile.ReadLeaderEpochCheckpoint(filepath.Join(dir, sidefile.LeaderEpochCheckpointFile))
}

func readSideFiles(dir string, snaps []SnapshotFile) *PartitionSideFiles {
	return &PartitionSideFiles{
		Dir:               dir,
		LeaderEpochs:      readLeaderEpochs(dir),
		PartitionMetadata: sidefile.ReadPartitionMetadata(filepath.Join(dir, sidefile.PartitionMetadataFile)),
		Snapshots:         snaps,
	}
}

// SnapshotFile is one producer snapshot file of a partition directory.
type SnapshotFile struct {
	// Offset is the name's offset: the exclusive end offset the snapshot
	// covers.
	Offset int64
	Path   string
}

// ListSnapshots lists the producer snapshot files of a partition
// directory by offset, as the broker finds them
// (ProducerStateManager.listSnapshotFiles: regular files whose name ends
// with ".snapshot"; the offset is the digits before the first '.').
// Names that do not start with an offset are skipped.
func ListSnapshots(dir string) ([]SnapshotFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []SnapshotFile
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if off, ok := snapshotOffset(e.Name()); ok {
			out = append(out, SnapshotFile{Offset: off, Path: filepath.Join(dir, e.Name())})
		}
	}
	sortSnapshots(out)
	return out, nil
}

// snapshotOffset is the offset a producer state snapshot's file name
// carries; false when name is not one.
func snapshotOffset(name string) (int64, bool) {
	if !strings.HasSuffix(name, SnapshotSuffix) {
		return 0, false
	}
	off, err := ParseBaseOffset(name)
	return off, err == nil
}

// sortSnapshots orders snapshots by offset, two names of one offset
// (00070.snapshot and 00000000000000000070.snapshot) by name, whatever
// order the directory was listed in.
func sortSnapshots(s []SnapshotFile) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Offset != s[j].Offset {
			return s[i].Offset < s[j].Offset
		}
		return s[i].Path < s[j].Path
	})
}

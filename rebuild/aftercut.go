package rebuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/recovery"
	"github.com/kseg/kseg/inspect/sidefile"
)

// AfterCut is what broker recovery does beyond a segment it cuts (invalid
// bytes, or an index append that empties it), and so what --truncate-log
// does beyond a segment it cuts the same way:
//
//   - every later segment is deleted: LogLoader.recoverLog removes all
//     remaining recovery candidates once a segment lost bytes
//     ("truncatedBytes > 0": removeAndDeleteSegmentsAsync), and every later
//     segment is a candidate, since the cut one is;
//   - the log end offset becomes the cut segment's next offset, and the
//     producer snapshots beyond it are deleted
//     (ProducerStateManager.truncateAndReload removes the snapshots whose
//     offset is above the log end offset, then producer state is rebuilt
//     from the newest one left: UnifiedLog.rebuildProducerState);
//   - the leader epoch entries starting at or beyond it are dropped
//     (LeaderEpochFileCache.truncateFromEnd(logEndOffset), called by the
//     loader, and the checkpoint is rewritten from what is left).
//
// A cut of overlapping batches (recovery.ErrOverlap) is not recovery's: the later
// segments hold those offsets, and nothing beyond the segment changes.
type AfterCut struct {
	Segment       string   `json:"segment"`        // the cut segment's .log name
	LogEndOffset  int64    `json:"log_end_offset"` // the partition's, after the cut
	LaterSegments []string `json:"later_segments"` // .log names of the segments deleted
	// Snapshots are the producer snapshots beyond the new log end offset.
	Snapshots []string `json:"snapshots"`
	// EpochEntries are the leader-epoch-checkpoint entries dropped;
	// EpochKept the entries the checkpoint keeps (nil: no checkpoint, or
	// one the broker cannot read, left as it is).
	EpochEntries []EpochEntry          `json:"leader_epoch_entries"`
	EpochKept    []sidefile.EpochEntry `json:"-"`

	later []inspect.SegmentFiles
	snaps []string // paths
	epoch string   // the checkpoint's path, "" when it is left as it is
}

// EpochEntry is a leader epoch entry as the contract's JSON names it.
type EpochEntry struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"start_offset"`
}

// cutForRecovery returns the index of the first plan recovery cuts for
// invalid bytes (not an overlap), -1 when there is none.
func cutForRecovery(plans []recovery.SegmentRecovery) int {
	for i := range plans {
		if plans[i].StopErr != nil && !errors.Is(plans[i].StopErr, recovery.ErrOverlap) && plans[i].TruncatedBytes > 0 {
			return i
		}
	}
	return -1
}

// afterCutOf says what recovery does beyond the cut segment cut of p
// (p.Segments may be the one segment named: the directory is listed
// again for the later ones).
func afterCutOf(p *inspect.Partition, cut *recovery.SegmentRecovery) (*AfterCut, error) {
	all := p.Segments
	if p.SingleSegment {
		full, err := inspect.ReadPartition(p.Dir)
		if err != nil {
			return nil, err
		}
		all = full.Segments
	}
	ac := &AfterCut{Segment: cut.Segment.Name(), LogEndOffset: cut.NextOffset,
		LaterSegments: []string{}, Snapshots: []string{}, EpochEntries: []EpochEntry{}}
	for _, sf := range all {
		if sf.BaseOffset > cut.Segment.BaseOffset {
			ac.later = append(ac.later, sf)
			ac.LaterSegments = append(ac.LaterSegments, sf.Name())
		}
	}
	side, err := inspect.ReadPartitionSideFiles(p.Dir)
	if err != nil {
		return nil, err
	}
	for _, s := range side.Snapshots {
		if s.Offset > ac.LogEndOffset {
			ac.snaps = append(ac.snaps, s.Path)
			ac.Snapshots = append(ac.Snapshots, filepath.Base(s.Path))
		}
	}
	if le := &side.LeaderEpochs; le.OK() {
		cache, err := le.Value.Cache()
		if err == nil {
			// truncateFromEnd(endOffset): entries with startOffset >=
			// endOffset go.
			var kept []sidefile.EpochEntry
			for _, e := range cache {
				if e.StartOffset >= ac.LogEndOffset {
					ac.EpochEntries = append(ac.EpochEntries, EpochEntry{e.Epoch, e.StartOffset})
				} else {
					kept = append(kept, e)
				}
			}
			if len(ac.EpochEntries) > 0 {
				ac.EpochKept, ac.epoch = kept, le.Path
			}
		}
	}
	return ac, nil
}

// Empty reports whether the cut changes nothing beyond its segment.
func (ac *AfterCut) Empty() bool {
	return len(ac.LaterSegments) == 0 && len(ac.Snapshots) == 0 && len(ac.EpochEntries) == 0
}

// CutAsideSuffix starts the suffix of the files --truncate-log sets aside
// beyond a cut (later segments, snapshots, the old leader epoch
// checkpoint): <name>.cut-at-<new log end offset>. The broker ignores
// them.
const CutAsideSuffix = ".cut-at-"

// apply does what afterCutOf planned: the later segments' files and the
// snapshots are renamed to <name>.cut-at-<log end offset> (removed with
// noBackup), and the leader epoch checkpoint is replaced, the old one kept
// under the same kind of name. A name that exists already is never
// overwritten: the file is then left alone and the error says so.
func (ac *AfterCut) apply(noBackup bool) ([]string, error) {
	var written []string
	var files []string
	for _, sf := range ac.later {
		for _, f := range []string{sf.Log, sf.Index, sf.TimeIndex, sf.TxnIndex} {
			if f != "" {
				files = append(files, f)
			}
		}
	}
	files = append(files, ac.snaps...)
	sort.Strings(files)
	aside := func(f string) string { return fmt.Sprintf("%s%s%d", f, CutAsideSuffix, ac.LogEndOffset) }
	for _, f := range files {
		if err := step("aside"); err != nil {
			return written, err
		}
		if noBackup {
			if err := os.Remove(f); err != nil {
				return written, err
			}
			continue
		}
		to := aside(f)
		if _, err := os.Lstat(to); err == nil {
			return written, fmt.Errorf("%s: not set aside: %s exists (remove or keep it elsewhere, then run again)", f, to)
		}
		if err := os.Rename(f, to); err != nil {
			return written, err
		}
		written = append(written, to)
	}
	if len(files) > 0 {
		if err := syncDir(filepath.Dir(files[0])); err != nil {
			return written, err
		}
	}
	if ac.epoch != "" {
		fi, err := os.Stat(ac.epoch)
		if err != nil {
			return written, err
		}
		if !noBackup {
			to := aside(ac.epoch)
			if err := keepBackup(ac.epoch, to); err != nil {
				return written, err
			}
			written = append(written, to)
		}
		w, err := replaceFile(ac.epoch, bytesSource(sidefile.AppendLeaderEpochCheckpoint(nil, ac.EpochKept)), fi.Mode().Perm(), ownerOf(fi), false)
		written = append(written, w...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// Describe says in one sentence what the broker's next start does beyond
// the cut, and so what --truncate-log does.
func (ac *AfterCut) Describe() string {
	s := fmt.Sprintf("the log end offset becomes %d", ac.LogEndOffset)
	if ac.Empty() {
		return s + "; no later segment, producer snapshot or leader epoch lies beyond it"
	}
	switch n := len(ac.LaterSegments); {
	case n == 1:
		s += fmt.Sprintf("; the later segment %v is deleted (LogLoader.recoverLog deletes every segment after one it truncates)", ac.LaterSegments)
	case n > 1:
		s += fmt.Sprintf("; the %d later segments %v are deleted (LogLoader.recoverLog deletes every segment after one it truncates)", n, ac.LaterSegments)
	}
	switch n := len(ac.Snapshots); {
	case n == 1:
		s += fmt.Sprintf("; the producer snapshot beyond it %v is deleted (ProducerStateManager.truncateAndReload) and producer state is rebuilt from an older one and the log", ac.Snapshots)
	case n > 1:
		s += fmt.Sprintf("; the %d producer snapshots beyond it %v are deleted (ProducerStateManager.truncateAndReload) and producer state is rebuilt from an older one and the log", n, ac.Snapshots)
	}
	if n := len(ac.EpochEntries); n > 0 {
		s += fmt.Sprintf("; %d leader-epoch-checkpoint entries starting at or beyond it are dropped (LeaderEpochFileCache.truncateFromEnd)", n)
	}
	return s
}

package producerstate

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// LoadOptions say what Load needs beyond the partition.
type LoadOptions struct {
	// Now is the load's clock (producer expiration of snapshot entries).
	Now int64
	// ProducerIDExpirationMs is producer.id.expiration.ms.
	ProducerIDExpirationMs int64
	// DataDir holds the data directory's checkpoints and clean shutdown
	// marker, read once for all its partitions (nil: none).
	DataDir *sidefile.DataDirFiles
}

// SkippedSnapshot is a snapshot file the load did not use, and why.
type SkippedSnapshot struct {
	Path   string
	Offset int64
	Reason string
	// Abnormal: corrupt, or beyond the log end offset (strays and
	// snapshots below the log start offset are routine).
	Abnormal bool
}

// Loaded is a partition as its leader holds it after LogLoader.load and
// the high watermark's initialisation.
type Loaded struct {
	State          *State
	LogStartOffset int64
	LogStartSource string
	LogEndOffset   int64
	// End is what the scan of the last segment for the log end offset
	// found (Partition.LogEnd).
	End           inspect.SegmentEnd
	HighWatermark int64
	// HighWatermarkSource is inspect.HighWatermarkFromCheckpoint, ...Absent
	// or ...Unreadable.
	HighWatermarkSource string
	LastStableOffset    int64
	// Snapshot is the snapshot loaded (nil: none; the state was rebuilt
	// from the log, or not at all, see NotLoaded).
	Snapshot *inspect.SnapshotFile
	Skipped  []SkippedSnapshot
	// NotLoaded: a clean shutdown and no snapshot, so the broker skips
	// rebuilding producer state (UnifiedLog.rebuildProducerState) and
	// starts with none.
	NotLoaded bool
	// ReplayFrom is where the replay of the log began (the snapshot's
	// offset, else the log start offset); Batches and Bytes what it read.
	ReplayFrom     int64
	Batches, Bytes int64
}

// From is the contract's producer_state_from: the snapshot file's name,
// "log" when the state was rebuilt from the log alone, "none" when the
// broker does not rebuild it.
func (l *Loaded) From() string {
	switch {
	case l.Snapshot != nil:
		return fileName(l.Snapshot.Path)
	case l.NotLoaded:
		return "none"
	}
	return "log"
}

func fileName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' || path[i] == '\\' {
			return path[i+1:]
		}
	}
	return path
}

// Load rebuilds p's producer state as LogLoader.load does, and takes the
// high watermark and last stable offset a restarting leader gives it:
//
//   - the log start offset is max(log-start-offset-checkpoint entry, first
//     segment's base offset); the log end offset is the last segment's
//     readNextOffset;
//   - snapshots: ProducerStateManager.removeStraySnapshots keeps those at
//     a segment's base offset and the largest other one when it is at or
//     above the last segment's base offset; with none left after a clean
//     shutdown the state is not rebuilt at all; truncateAndReload drops
//     those above the log end offset or at or below the log start offset;
//     loadFromSnapshot takes the latest, falling back to the next older
//     when one is corrupt (CorruptSnapshotException), and drops expired
//     producers without an open transaction;
//   - the batches from the snapshot's offset (else the log start offset)
//     to the log end are replayed (UnifiedLog.rebuildProducerState: in each
//     segment from the batch holding max(base, snapshot offset, log
//     start); only v2 batches with a producer id);
//   - the high watermark is the replication-offset-checkpoint entry
//     clamped to [log start, log end] (UnifiedLog.updateHighWatermark),
//     which also acknowledges the completed transactions whose marker is
//     below it (onHighWatermarkUpdated); the last stable offset follows.
//
// Damage that ends a segment's log early ends its replay there, as the
// broker's recovery would have truncated it; other damage is an error.
func Load(p *inspect.Partition, opts LoadOptions) (*Loaded, error) {
	if p.SingleSegment {
		full, err := inspect.ReadPartition(p.Dir)
		if err != nil {
			return nil, err
		}
		full.DataDir = p.DataDir
		p = full
	}
	if len(p.Segments) == 0 {
		return nil, fmt.Errorf("%s: no segments", p.Dir)
	}
	bs := inspect.BrokerStateFrom(p, opts.DataDir)
	l := &Loaded{State: New(), LogStartOffset: bs.LogStart, LogStartSource: bs.LogStartSource}
	end, err := p.LogEnd()
	if err != nil {
		return nil, err
	}
	leo := end.Next
	l.LogEndOffset, l.End = leo, end

	snaps := liveSnapshots(p, l)
	clean := opts.DataDir != nil && opts.DataDir.CleanShutdown.Present()
	var mapEnd int64
	if snaps == nil && clean {
		l.NotLoaded, mapEnd = true, leo
	} else {
		mapEnd = l.loadSnapshot(snaps, opts)
	}
	l.ReplayFrom = mapEnd
	if leo > mapEnd {
		if err := l.replay(p, mapEnd); err != nil {
			return l, err
		}
	}
	l.HighWatermark, l.HighWatermarkSource = inspect.HighWatermark(opts.DataDir, p.Topic, p.Partition, l.LogStartOffset, leo)
	l.State.OnHighWatermark(l.LogStartOffset) // UnifiedLog's constructor: updateLogStartOffset
	l.State.OnHighWatermark(l.HighWatermark)
	l.LastStableOffset = l.State.LastStableOffset(l.HighWatermark, l.LogStartOffset)
	return l, nil
}

// liveSnapshots are the snapshots removeStraySnapshots and
// truncateAndReload leave, oldest first; the others go to l.Skipped.
func liveSnapshots(p *inspect.Partition, l *Loaded) []inspect.SnapshotFile {
	bases := make(map[int64]bool, len(p.Segments))
	for _, s := range p.Segments {
		bases[s.BaseOffset] = true
	}
	maxBase := p.Segments[len(p.Segments)-1].BaseOffset
	var kept []inspect.SnapshotFile
	stray := -1 // index in kept of the latest stray snapshot
	for _, s := range p.Snapshots {
		if bases[s.Offset] {
			kept = append(kept, s)
			continue
		}
		if stray >= 0 {
			l.Skipped = append(l.Skipped, SkippedSnapshot{kept[stray].Path, kept[stray].Offset, "stray: at no segment's base offset, and a later stray snapshot exists (removeStraySnapshots)", false})
			kept = slices.Delete(kept, stray, stray+1)
		}
		stray = len(kept)
		kept = append(kept, s)
	}
	if stray >= 0 && kept[stray].Offset < maxBase {
		l.Skipped = append(l.Skipped, SkippedSnapshot{kept[stray].Path, kept[stray].Offset, fmt.Sprintf("stray: at no segment's base offset and below the last segment's %d (removeStraySnapshots)", maxBase), false})
		kept = slices.Delete(kept, stray, stray+1)
	}
	if len(kept) == 0 {
		return nil
	}
	// truncateAndReload's range; its absence is checked above by the
	// clean-shutdown rule, which looks before this pruning.
	out := kept[:0:0]
	for _, s := range kept {
		switch {
		case s.Offset > l.LogEndOffset:
			l.Skipped = append(l.Skipped, SkippedSnapshot{s.Path, s.Offset, fmt.Sprintf("beyond the log end offset %d (truncateAndReload)", l.LogEndOffset), true})
		case s.Offset <= l.LogStartOffset:
			l.Skipped = append(l.Skipped, SkippedSnapshot{s.Path, s.Offset, fmt.Sprintf("at or below the log start offset %d (truncateAndReload)", l.LogStartOffset), false})
		default:
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []inspect.SnapshotFile{} // some existed: not the clean-shutdown case
	}
	return out
}

// loadSnapshot is loadFromSnapshot over the live snapshots: the latest
// that reads, its producers loaded; it returns the map end offset (the
// snapshot's, else the log start offset).
func (l *Loaded) loadSnapshot(snaps []inspect.SnapshotFile, opts LoadOptions) int64 {
	for i := len(snaps) - 1; i >= 0; i-- {
		s := snaps[i]
		snap, err := sidefile.ReadProducerSnapshot(s.Path)
		if err != nil {
			l.Skipped = append(l.Skipped, SkippedSnapshot{s.Path, s.Offset, fmt.Sprintf("unreadable, the next older is tried (loadFromSnapshot): %v", err), true})
			continue
		}
		l.State.LoadSnapshot(snap.Entries, opts.Now, opts.ProducerIDExpirationMs)
		sc := s
		l.Snapshot = &sc
		return s.Offset
	}
	return l.LogStartOffset
}

// replay reads the batches from offset from to the log end.
func (l *Loaded) replay(p *inspect.Partition, from int64) error {
	first := 0
	for i, s := range p.Segments { // segments.values(from, end): from the floor segment of from
		if s.BaseOffset <= from {
			first = i
		}
	}
	var dec record.RecordDecoder
	var buf []byte
	for _, sf := range p.Segments[first:] {
		if sf.BaseOffset >= l.LogEndOffset {
			break
		}
		start := max(sf.BaseOffset, from, l.LogStartOffset)
		if err := l.replaySegment(sf, start, &dec, &buf); err != nil {
			return err
		}
	}
	return nil
}

func (l *Loaded) replaySegment(sf inspect.SegmentFiles, start int64, dec *record.RecordDecoder, buf *[]byte) error {
	seg, err := inspect.OpenSegment(sf, inspect.SegmentOptions{})
	if err != nil {
		return err
	}
	defer seg.Close()
	b0, _, found, err := seg.LookupOffset(start)
	if err != nil {
		return err
	}
	if !found {
		return nil
	}
	it := seg.Batches(b0.Position)
	defer it.Close()
	for it.Next() {
		b := it.Batch()
		l.Batches++
		l.Bytes += b.Size
		if b.Magic < 2 || b.ProducerID < 0 { // RecordBatch.hasProducerId
			continue
		}
		if err := l.apply(seg, b, dec, buf); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
		return err
	}
	return nil
}

// apply replays one batch with a producer id (UnifiedLog.updateProducers).
func (l *Loaded) apply(seg *inspect.Segment, b *record.Batch, dec *record.RecordDecoder, buf *[]byte) error {
	at := func(err error) error {
		return &fileio.CorruptError{File: seg.LogName, Position: b.Position, Offset: b.BaseOffset, Err: fmt.Errorf("%w: %w", fileio.ErrCorruptRecords, err)}
	}
	if !b.IsControl() {
		if err := l.State.DataBatch(b.ProducerID, b.ProducerEpoch, b.BaseOffset, b.LastOffset, b.MaxTimestamp, b.IsTransactional()); err != nil {
			return at(err)
		}
		return nil
	}
	entry, err := seg.ReadEntry(b, *buf)
	if err != nil {
		return err
	}
	*buf = entry
	m, ok, err := ReadMarker(dec, seg.LogName, entry, b)
	if err != nil {
		return err
	}
	if !ok {
		return nil // an empty control batch: its transaction was cleaned away
	}
	if !m.IsEnd() {
		return at(fmt.Errorf("control batch of producer %d holds a %s record, not a transaction marker (broker: IllegalArgumentException)", b.ProducerID, m.Type))
	}
	if _, err := l.State.EndMarker(b.ProducerID, b.ProducerEpoch, m.CoordinatorEpoch, b.BaseOffset, m.Timestamp, m.Type == record.ControlAbort); err != nil {
		return at(err)
	}
	return nil
}

package verify

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/recovery"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Check ids of the files beside the segments (producer snapshots,
// checkpoints) and of the transaction index against the log. Severities
// follow what a broker does with the file: an error when it fails to load
// or serves wrong answers, a warning when it repairs or ignores the file.
const (
	// SnapshotCRC (warning): a producer snapshot whose CRC does not match
	// its bytes. The broker deletes it at load and rebuilds producer state
	// from an older snapshot or the log.
	SnapshotCRC = "snapshot.crc"
	// SnapshotFormat (warning): a producer snapshot the broker cannot
	// parse (unknown version, truncated or negative entry array); same
	// consequence as SnapshotCRC.
	SnapshotFormat = "snapshot.format"
	// SnapshotOffset (warning): a producer snapshot named with an offset
	// beyond the log end offset (the broker deletes it at load; the log is
	// shorter than when the snapshot was taken), or inside the log but not
	// at a batch boundary (no broker takes a snapshot there).
	SnapshotOffset = "snapshot.offset"
	// CheckpointFormat (error): a checkpoint or properties file its broker
	// reader refuses (CheckpointFile's strict rules, partition.metadata,
	// meta.properties): the broker cannot load the partition or the data
	// directory, or falls back (recovery point 0, first segment as log
	// start) while reporting the directory to its failure channel.
	CheckpointFormat = "checkpoint.format"
	// CheckpointRecoveryPoint (warning): a partition's recovery point is
	// beyond its log end offset: the log lost data the broker had flushed
	// (the broker clamps the recovery point to the log end).
	CheckpointRecoveryPoint = "checkpoint.recovery-point"
	// CheckpointLogStart (error): a partition's checkpointed log start
	// offset is beyond its log end offset, inside no segment: at load the
	// broker deletes every segment of the partition (LogLoader).
	CheckpointLogStart = "checkpoint.log-start"
	// LeaderEpochRange (warning): leader-epoch-checkpoint entries the
	// broker drops or that disagree with the log: a start offset beyond the
	// log end offset, epochs or start offsets not strictly increasing, or a
	// last batch written in an epoch newer than the checkpoint's latest.
	LeaderEpochRange = "leader-epoch.range"
	// TxnIndexMismatch (error): a .txnindex that differs from what broker
	// recovery derives from the ABORT markers in the log (entries missing,
	// extra, or with other offsets): read_committed consumers are served
	// aborted records, or lose committed ones. Checked when the producer
	// state at the partition's first segment is known (see the contract).
	TxnIndexMismatch = "txnindex.mismatch"
)

func init() {
	for id, sev := range map[string]string{
		SnapshotCRC: SeverityWarning, SnapshotFormat: SeverityWarning, SnapshotOffset: SeverityWarning,
		CheckpointFormat: SeverityError, CheckpointRecoveryPoint: SeverityWarning, CheckpointLogStart: SeverityError,
		LeaderEpochRange: SeverityWarning, TxnIndexMismatch: SeverityError,
	} {
		severityOf[id] = sev
	}
}

// SideFileChecks lists the check ids of this file, in the contract's order
// (verify.Checks lists the segment checks).
func SideFileChecks() []string {
	return []string{SnapshotCRC, SnapshotFormat, SnapshotOffset, CheckpointFormat, CheckpointRecoveryPoint,
		CheckpointLogStart, LeaderEpochRange, LeaderEpochMismatch, TxnIndexMismatch}
}

// sideChecker checks the side files of the partitions of one target. The
// data directory's files are read once.
type sideChecker struct {
	t       *inspect.Target
	opts    *Options
	dataDir *sidefile.DataDirFiles
}

func newSideChecker(t *inspect.Target, o *Options) *sideChecker {
	s := &sideChecker{t: t, opts: o}
	if o.SideFiles && t.DataDir != "" {
		s.dataDir = sidefile.ReadDataDirFiles(t.DataDir)
	}
	return s
}

func sideFinding(check, file string, seg, pos, off *int64, format string, args ...any) Finding {
	return Finding{Severity: Severity(check), Check: check, File: file, SegmentBaseOffset: seg, Position: pos, Offset: off, Message: fmt.Sprintf(format, args...)}
}

// formatFinding turns a side file's parse problem into a checkpoint.format
// finding, or returns the read error. what says what the broker does.
func formatFinding[T any](f *sidefile.SideFile[T], what string) (*Finding, error) {
	if !f.Present() || f.Err == nil {
		return nil, nil
	}
	var ce *fileio.CorruptError
	if !errors.As(f.Err, &ce) {
		return nil, f.Err
	}
	var pos *int64
	if ce.Position >= 0 {
		pos = ptr(ce.Position)
	}
	fd := sideFinding(CheckpointFormat, f.Path, nil, pos, nil, "%v: %s", ce.Err, what)
	return &fd, nil
}

// dataDirFindings checks the data directory's own files once per run:
// the four offset checkpoints and meta.properties.
func (s *sideChecker) dataDirFindings() ([]Finding, error) {
	d := s.dataDir
	if d == nil {
		return nil, nil
	}
	var out []Finding
	for _, c := range []struct {
		f    *sidefile.SideFile[sidefile.OffsetCheckpoint]
		what string
	}{
		{&d.RecoveryPoints, "the broker resets every recovery point to 0 (full recovery after an unclean shutdown) and reports the read failure for the data directory (CheckpointFileWithFailureHandler)"},
		{&d.LogStarts, "the broker takes each partition's first segment as its log start and reports the read failure for the data directory"},
		{&d.HighWatermarks, "the broker cannot read the high watermarks (KafkaStorageException): the data directory goes offline"},
		{&d.CleanerOffsets, "the log cleaner ignores the file and cleans compacted partitions from their start"},
	} {
		fd, err := formatFinding(c.f, c.what)
		if err != nil {
			return nil, err
		}
		if fd != nil {
			out = append(out, *fd)
		}
	}
	fd, err := formatFinding(&d.Meta, "the broker refuses to start on this data directory (MetaProperties)")
	if err != nil {
		return nil, err
	}
	if fd != nil {
		out = append(out, *fd)
	}
	return out, nil
}

// run is partitionFindings as a worker's job: a panic (a bug, never an
// answer) becomes an error naming the partition, as runJob's does.
func (s *sideChecker) run(p *inspect.Partition, last *segmentEnd, ps *partitionSide) (res *segmentResult) {
	defer func() {
		if r := recover(); r != nil {
			res = &segmentResult{err: fmt.Errorf("internal error checking the side files of %s: %v", p.Dir, r)}
		}
	}()
	fs, err := s.partitionFindings(p, last, ps)
	return &segmentResult{findings: fs, err: err}
}

// partitionFindings checks one partition's side files (those ps read,
// when given) against its segments (last as partitionEnds takes it).
// Workers call it concurrently: it only reads the checker.
func (s *sideChecker) partitionFindings(p *inspect.Partition, last *segmentEnd, ps *partitionSide) ([]Finding, error) {
	if !s.opts.SideFiles {
		return nil, nil
	}
	if p.SingleSegment {
		// A single segment file: only what concerns that segment.
		return s.txnIndexFindings(p, nil)
	}
	var side *inspect.PartitionSideFiles
	if ps != nil {
		side = ps.load().side
	} else {
		side = p.SideFiles()
	}
	snaps := &snapshotSet{files: side.Snapshots}
	ends, err := partitionEnds(p, last)
	if err != nil {
		return nil, err
	}
	var out []Finding
	add := func(fs []Finding, err error) error {
		out = append(out, fs...)
		return err
	}
	if err := add(s.checkpointFindings(p, side, ends)); err != nil {
		return nil, err
	}
	if err := add(s.snapshotFindings(p, snaps, ends)); err != nil {
		return nil, err
	}
	if err := add(s.txnIndexFindings(p, snaps)); err != nil {
		return nil, err
	}
	return out, nil
}

// logEnds are the offsets a partition's checks compare against.
type logEnds struct {
	firstBase int64
	end       int64 // log end offset: the last segment's next offset
	lastEpoch int32 // partition leader epoch of the last batch, -1 if none
	bases     map[int64]bool
}

// partitionEnds finds the log end offset (LogSegment.readNextOffset of the
// last segment) and the last batch's leader epoch. last, when not nil, is
// what lastBatchOf found in the last segment while its checks had it open
// (segmentJob.last); otherwise the segment is opened again.
func partitionEnds(p *inspect.Partition, last *segmentEnd) (logEnds, error) {
	e := logEnds{lastEpoch: -1, bases: map[int64]bool{}}
	if len(p.Segments) == 0 {
		return e, nil
	}
	e.firstBase = p.Segments[0].BaseOffset
	for _, sf := range p.Segments {
		e.bases[sf.BaseOffset] = true
	}
	e.end = p.Segments[len(p.Segments)-1].BaseOffset
	// The last segment holding a batch gives the epoch; the last segment
	// gives the log end offset (an empty active segment: its base).
	for i := len(p.Segments) - 1; i >= 0; i-- {
		var end segmentEnd
		if i == len(p.Segments)-1 && last != nil {
			end = *last
		} else {
			end = segmentEndOf(p.Segments[i])
		}
		if end.err != nil {
			return e, end.err
		}
		if i == len(p.Segments)-1 {
			e.end = end.Next
		}
		if end.HasBatch {
			e.lastEpoch = end.Epoch
			break
		}
	}
	return e, nil
}

// segmentEnd is what lastBatchOf finds in a segment, or the error that
// stopped it.
type segmentEnd struct {
	inspect.SegmentEnd
	err error
}

// segmentEndOf opens the segment (unmapped: workers run this beside
// others) and runs lastBatchOf.
func segmentEndOf(sf inspect.SegmentFiles) segmentEnd {
	seg, err := inspect.OpenSegment(sf, inspect.SegmentOptions{Unmapped: true})
	if err != nil {
		return segmentEnd{err: err}
	}
	defer seg.Close()
	return lastBatchOf(seg.Log, seg.LogName, seg.LogSize, seg.BaseOffset, seg.Index)
}

// lastBatchOf is where a segment's log (size bytes, based at base, named
// name in errors) ends, found as readNextOffset finds it
// (inspect.ReadNextOffset) but for two things the side checks need of the
// log itself, not of a broker reading it: damage ends the scan without an
// error (the log checks report it), and an index entry that leads to no
// batch is not taken as an empty segment: the whole log is scanned. idx
// may be nil (no offset index).
func lastBatchOf(log io.ReaderAt, name string, size, base int64, idx *indexfmt.OffsetIndex) segmentEnd {
	it := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
	var ce *fileio.CorruptError
	end, start, err := inspect.ReadNextOffset(it, log, name, size, base, idx)
	if errors.As(err, &ce) || start < 0 {
		err = nil // damage: the log checks report it; an unreadable index: its checks do
	}
	if err == nil && !end.HasBatch && start != 0 {
		if end, err = inspect.ScanEnd(it, log, name, size, base, 0); errors.As(err, &ce) {
			err = nil
		}
	}
	return segmentEnd{end, err}
}

// checkpointFindings checks the partition's recovery point and log start
// (from the data directory's checkpoints) and its leader-epoch-checkpoint
// and partition.metadata.
func (s *sideChecker) checkpointFindings(p *inspect.Partition, side *inspect.PartitionSideFiles, e logEnds) ([]Finding, error) {
	var out []Finding
	if d := s.dataDir; d != nil && p.Topic != "" {
		if rp, ok := sidefile.CheckpointedOffset(&d.RecoveryPoints, p.Topic, p.Partition); ok && rp > e.end {
			out = append(out, sideFinding(CheckpointRecoveryPoint, d.RecoveryPoints.Path, nil, nil, ptr(rp),
				"%s: recovery point %d is beyond the log end offset %d: the log lost data the broker had flushed (deleted or truncated outside the broker); the broker clamps the recovery point to the log end", p.Name(), rp, e.end))
		}
		if ls, ok := sidefile.CheckpointedOffset(&d.LogStarts, p.Topic, p.Partition); ok && ls > e.end {
			out = append(out, sideFinding(CheckpointLogStart, d.LogStarts.Path, nil, nil, ptr(ls),
				"%s: log start offset %d is beyond the log end offset %d, inside no segment: at its next start the broker deletes every segment of the partition (LogLoader)", p.Name(), ls, e.end))
		}
	}
	fd, err := formatFinding(&side.LeaderEpochs, "the broker cannot read the partition's leader epoch cache (KafkaStorageException): the data directory goes offline")
	if err != nil {
		return nil, err
	}
	if fd != nil {
		out = append(out, *fd)
	} else if side.LeaderEpochs.OK() {
		out = append(out, leaderEpochFindings(p, side.LeaderEpochs.Path, side.LeaderEpochs.Value, e, s.opts.MaxFindingsPerCheck)...)
	}
	fd, err = formatFinding(&side.PartitionMetadata, "the broker cannot read the partition's topic id and fails to load it")
	if err != nil {
		return nil, err
	}
	if fd != nil {
		out = append(out, *fd)
	}
	return out, nil
}

// leaderEpochFindings compares leader-epoch-checkpoint with what the
// broker's LeaderEpochFileCache makes of it (inspect's Cache): entries
// assign drops (epochs and start offsets must both increase), entries
// starting beyond the log end offset (truncated at load; an entry starting
// at the log end is an epoch that has not written yet), a last batch
// written in an epoch the cache lacks. A negative value makes the load
// fail: checkpoint.format.
//
// At most max findings are listed, then one says how many more there were
// (the sink's rule for every file).
func leaderEpochFindings(p *inspect.Partition, path string, c *sidefile.LeaderEpochCheckpoint, e logEnds, max int) []Finding {
	snk := newSink(max)
	add := func(off int64, format string, args ...any) {
		snk.add(sideFinding(LeaderEpochRange, path, nil, nil, ptr(off), format, args...))
	}
	if err := c.LoadErr(); err != nil {
		return []Finding{sideFinding(CheckpointFormat, path, nil, nil, nil,
			"%v: the broker's leader epoch cache refuses it (IllegalArgumentException) and the partition does not load", err)}
	}
	c.Kept(func(i int, x sidefile.EpochEntry, kept bool) bool {
		switch {
		case !kept:
			add(x.StartOffset, "entry %d: epoch %d from offset %d is dropped by the broker's cache: epochs and start offsets must both increase (a later entry conflicts with it, or it repeats an epoch)",
				i, x.Epoch, x.StartOffset)
		case x.StartOffset > e.end:
			add(x.StartOffset, "entry %d: epoch %d starts at offset %d, beyond the log end offset %d: the log lost the epoch's records; the broker truncates the entry at load",
				i, x.Epoch, x.StartOffset, e.end)
		}
		return true
	})
	if last, ok := c.Latest(); e.lastEpoch >= 0 && (!ok || e.lastEpoch > last.Epoch) {
		latest := "none"
		if ok {
			latest = fmt.Sprint(last.Epoch)
		}
		add(e.end-1, "%s: the last batch was written in leader epoch %d, newer than the checkpoint's latest epoch (%s): the broker answers OffsetsForLeaderEpoch without it unless recovery re-adds it",
			p.Name(), e.lastEpoch, latest)
	}
	return snk.findings()
}

// snapshotFindings decodes every producer snapshot and checks where its
// offset falls.
func (s *sideChecker) snapshotFindings(p *inspect.Partition, snaps *snapshotSet, e logEnds) ([]Finding, error) {
	var out []Finding
	for i, sf := range snaps.files {
		_, err := snaps.snapshot(i)
		var ce *fileio.CorruptError
		switch {
		case err == nil:
		case errors.As(err, &ce) && errors.Is(err, sidefile.ErrCorruptSnapshot):
			check := SnapshotFormat
			if errors.Is(err, sidefile.ErrSnapshotCRC) {
				check = SnapshotCRC
			}
			out = append(out, sideFinding(check, sf.Path, nil, ptr(ce.Position), ptr(sf.Offset),
				"%v: the broker deletes this snapshot at load and rebuilds the producer state from an older snapshot or the log", ce.Err))
		default:
			return nil, err
		}
		switch {
		case sf.Offset > e.end:
			out = append(out, sideFinding(SnapshotOffset, sf.Path, nil, nil, ptr(sf.Offset),
				"snapshot at offset %d is beyond the log end offset %d: the log is shorter than when the snapshot was taken; the broker deletes the snapshot at load", sf.Offset, e.end))
		case sf.Offset == e.end || e.bases[sf.Offset] || sf.Offset < e.firstBase:
			// At the log end, at a segment boundary, or below the log
			// (deleted at load with the segments it belonged to).
		default:
			ok, err := atBatchBoundary(p, sf.Offset)
			if err != nil {
				return nil, err
			}
			if !ok {
				out = append(out, sideFinding(SnapshotOffset, sf.Path, nil, nil, ptr(sf.Offset),
					"snapshot at offset %d is neither a segment base offset nor the log end offset (%d), and no batch ends before it: a broker takes snapshots only between batches", sf.Offset, e.end))
			}
		}
	}
	return out, nil
}

// atBatchBoundary reports whether some batch of the segment holding offset
// ends just before it.
func atBatchBoundary(p *inspect.Partition, offset int64) (bool, error) {
	i := sort.Search(len(p.Segments), func(i int) bool { return p.Segments[i].BaseOffset > offset }) - 1
	if i < 0 {
		return false, nil
	}
	seg, err := inspect.OpenSegment(p.Segments[i], inspect.SegmentOptions{Unmapped: true})
	if err != nil {
		return false, err
	}
	defer seg.Close()
	sc := seg.Batches(0)
	for sc.Next() {
		if sc.Batch().LastOffset+1 == offset {
			return true, nil
		}
	}
	var ce *fileio.CorruptError
	if err := sc.Err(); err != nil && !errors.As(err, &ce) {
		return false, err
	}
	return false, nil
}

// txnIndexFindings compares each segment's .txnindex with what broker
// recovery writes (recovery.PlanPartition, transactions tracked from the
// partition's first segment). The comparison is made only when that
// replay starts from the broker's own state: the partition starts at
// offset 0, or a producer snapshot at its first segment's base offset loads
// and shows no open transaction. It is skipped for partitions that show no
// sign of transactions (no .txnindex file, no snapshot naming a
// transaction coordinator), and from the first segment whose log recovery
// would cut, where the log checks report the damage.
func (s *sideChecker) txnIndexFindings(p *inspect.Partition, snaps *snapshotSet) ([]Finding, error) {
	full := p
	if p.SingleSegment {
		var err error
		if full, err = inspect.ReadPartition(p.Dir); err != nil {
			return nil, err
		}
	}
	if len(full.Segments) == 0 {
		return nil, nil
	}
	if snaps == nil {
		files, err := inspect.ListSnapshots(full.Dir)
		if err != nil {
			return nil, err
		}
		snaps = &snapshotSet{files: files}
	}
	if !hasTransactions(full, snaps) || !knownStartState(full, snaps) {
		return nil, nil
	}
	// The transaction index does not depend on index.interval.bytes.
	plans, err := recovery.PlanPartition(full, recovery.Options{})
	if err != nil && len(plans) == 0 {
		return nil, nil // recovery itself fails: the log checks say why
	}
	var out []Finding
	for i := range plans {
		pl := &plans[i]
		if pl.StopErr != nil {
			break
		}
		if p.SingleSegment && pl.Segment.BaseOffset != p.Segments[0].BaseOffset {
			continue
		}
		fd, err := compareTxnIndex(full, pl)
		if err != nil {
			return nil, err
		}
		if fd != nil {
			out = append(out, *fd)
		}
	}
	return out, nil
}

// hasTransactions: a .txnindex exists, or a snapshot names a producer that
// wrote a transaction marker or has an open transaction.
func hasTransactions(p *inspect.Partition, snaps *snapshotSet) bool {
	for _, sf := range p.Segments {
		if sf.TxnIndex != "" {
			return true
		}
	}
	for i := range snaps.files {
		s, err := snaps.snapshot(i)
		if err != nil {
			continue
		}
		for _, e := range s.Entries {
			if e.CoordinatorEpoch >= 0 || e.HasOpenTransaction() {
				return true
			}
		}
	}
	return false
}

// knownStartState: nothing precedes the first segment, or the snapshot at
// its base offset shows no open transaction.
func knownStartState(p *inspect.Partition, snaps *snapshotSet) bool {
	base := p.Segments[0].BaseOffset
	if base == 0 {
		return true
	}
	for i, sf := range snaps.files {
		if sf.Offset != base {
			continue
		}
		s, err := snaps.snapshot(i)
		return err == nil && len(s.OpenTransactions()) == 0
	}
	return false
}

// snapshotSet is a partition's producer snapshot files, each read and
// parsed at most once for the checks that look at them.
type snapshotSet struct {
	files  []inspect.SnapshotFile
	read   []bool
	parsed []*sidefile.ProducerSnapshot
	errs   []error
}

// snapshot is the parsed snapshot files[i] (ReadProducerSnapshot).
func (s *snapshotSet) snapshot(i int) (*sidefile.ProducerSnapshot, error) {
	if s.read == nil {
		n := len(s.files)
		s.read, s.parsed, s.errs = make([]bool, n), make([]*sidefile.ProducerSnapshot, n), make([]error, n)
	}
	if !s.read[i] {
		s.read[i] = true
		s.parsed[i], s.errs[i] = sidefile.ReadProducerSnapshot(s.files[i].Path)
	}
	return s.parsed[i], s.errs[i]
}

// compareTxnIndex compares one segment's .txnindex with the planned
// entries, as the broker reads them (the version field's first byte only).
// A file with a structural problem (trailing bytes, a version byte, last
// offsets out of order or outside the segment, a first offset above its
// last) is left to txnindex.size, .version, .order and .range, the more
// specific findings.
func compareTxnIndex(p *inspect.Partition, pl *recovery.SegmentRecovery) (*Finding, error) {
	// The file is read entry by entry, never whole: a file of more entries
	// than its log could justify is left to txnindex.size.
	have := indexfmt.NewTxnIndex(nil)
	path := pl.Segment.TxnIndex
	if path != "" {
		f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if f.Size()%indexfmt.TxnEntrySize != 0 {
			return nil, nil
		}
		have = indexfmt.NewTxnIndexFrom(fileio.NewIndexSlots(f, f.Size()))
		if b, ok := pl.Segment.TxnIndexBound(); ok && int64(have.Entries()) > b {
			return nil, nil
		}
	} else {
		path = filepath.Join(p.Dir, inspect.SegmentName(pl.Segment.BaseOffset)+inspect.TxnIndexSuffix)
	}
	var want []indexfmt.AbortedTxn
	for at := 0; at+indexfmt.TxnEntrySize <= len(pl.TxnIndex); at += indexfmt.TxnEntrySize {
		want = append(want, indexfmt.DecodeTxnEntry(pl.TxnIndex[at:]))
	}
	same := func(a, b indexfmt.AbortedTxn) bool {
		return a.VersionByte() == b.VersionByte() && a.ProducerID == b.ProducerID && a.FirstOffset == b.FirstOffset &&
			a.LastOffset == b.LastOffset && a.LastStableOffset == b.LastStableOffset
	}
	haveN := have.Entries()
	n := min(haveN, len(want))
	i := 0
	var a indexfmt.AbortedTxn
	for ; i < n; i++ {
		var err error
		if a, err = have.Entry(i); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !same(a, want[i]) {
			break
		}
	}
	if i == haveN && i == len(want) {
		return nil, nil
	}
	if haveN > 0 {
		sound, err := txnIndexSound(pl.Segment, have)
		if err != nil || !sound {
			return nil, err
		}
	}
	seg := ptr(pl.Segment.BaseOffset)
	at := int64(i * indexfmt.TxnEntrySize)
	var fd Finding
	switch {
	case i < n:
		b := want[i]
		fd = sideFinding(TxnIndexMismatch, path, seg, ptr(at), ptr(b.LastOffset),
			"entry %d is (producer %d, first offset %d, last offset %d, last stable offset %d); the ABORT markers in the log give (producer %d, first offset %d, last offset %d, last stable offset %d)",
			i, a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset, b.ProducerID, b.FirstOffset, b.LastOffset, b.LastStableOffset)
	case haveN > len(want):
		x, err := have.Entry(i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fd = sideFinding(TxnIndexMismatch, path, seg, ptr(at), ptr(x.LastOffset),
			"%d entries from entry %d (producer %d, last offset %d) have no ABORT marker in the log behind them: read_committed consumers lose the records of those transactions",
			haveN-len(want), i, x.ProducerID, x.LastOffset)
	default:
		x := want[i]
		what := "the file"
		if pl.Segment.TxnIndex == "" {
			what = "the missing file"
		}
		fd = sideFinding(TxnIndexMismatch, path, seg, ptr(at), ptr(x.LastOffset),
			"%s lacks %d entries from entry %d: the ABORT marker at offset %d ends producer %d's transaction from offset %d, so read_committed consumers are served its aborted records",
			what, len(want)-haveN, i, x.LastOffset, x.ProducerID, x.FirstOffset)
	}
	return &fd, nil
}

// txnIndexSound: every entry has version byte 0, a first offset not above
// its last, a last offset inside the segment, and last offsets increase.
func txnIndexSound(sf inspect.SegmentFiles, x *indexfmt.TxnIndex) (bool, error) {
	end := segmentEndOf(sf)
	if end.err != nil {
		return false, end.err
	}
	next := end.Next
	var prev int64
	for i := 0; i < x.Entries(); i++ {
		e, err := x.Entry(i)
		if err != nil {
			return false, err
		}
		if e.VersionByte() != 0 || e.FirstOffset > e.LastOffset || e.LastOffset < sf.BaseOffset || e.LastOffset >= next ||
			(i > 0 && e.LastOffset <= prev) {
			return false, nil
		}
		prev = e.LastOffset
	}
	return true, nil
}

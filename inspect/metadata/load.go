package metadata

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
)

// Options say which image Load builds: at most one of Offset and Time;
// neither is the log end.
type Options struct {
	// Offset builds the image as of this offset of the metadata log: the
	// records up to and including it.
	Offset *int64
	// Time (ms since the epoch) builds the image as of the last record
	// whose timestamp is at most Time. Every record of a KRaft batch
	// carries the batch's append time (BatchBuilder writes timestamp
	// delta 0), so that record is found from the batch headers; a batch
	// whose first timestamp is at most Time and whose largest is after it
	// has its records read.
	Time *int64
	// Progress, when set, is called with the bytes of the metadata log
	// read so far and the bytes to read (inspect.LogRange.Progress).
	Progress func(done, total int64)
}

// ErrNoMetadataLog says a path holds no KRaft metadata log.
var ErrNoMetadataLog = errors.New("no KRaft metadata log (" + inspect.MetadataTopic + "-0)")

// Load builds the metadata image of the KRaft metadata log under path: a
// data directory holding __cluster_metadata-0, that directory, one of its
// segments (the whole directory is read), or one metadata snapshot (the
// image it holds, without the log). It returns ErrNoMetadataLog (wrapped)
// when there is none, and another error when the log cannot be read or
// the snapshot to start from cannot be loaded; damage in the log ends the
// image there (Image.Damage).
func Load(path string, opts Options) (*Image, error) {
	t, err := inspect.Resolve(path)
	if err != nil {
		if errors.Is(err, fileio.ErrNotKafka) {
			return nil, fmt.Errorf("%s: %w", path, ErrNoMetadataLog)
		}
		return nil, err
	}
	return LoadTarget(t, opts)
}

// Find returns the __cluster_metadata-0 partition of a resolved target,
// nil when it has none.
func Find(t *inspect.Target) *inspect.Partition {
	for _, p := range t.Partitions {
		if p.Topic == inspect.MetadataTopic && p.Partition == 0 {
			return p
		}
	}
	return nil
}

// LoadTarget is Load of a target already resolved (the analyses that read
// a data directory pass theirs).
func LoadTarget(t *inspect.Target, opts Options) (*Image, error) {
	if opts.Offset != nil && opts.Time != nil {
		return nil, errors.New("metadata: give an offset or a time, not both")
	}
	p := Find(t)
	if p == nil {
		return nil, fmt.Errorf("%s: %w", t.Path, ErrNoMetadataLog)
	}
	im := newImage()
	im.Dir = p.Dir
	if len(p.Segments) == 1 && p.Segments[0].Snapshot != nil {
		// One snapshot named alone: its image.
		im.LogStartOffset, im.LogEndOffset = 0, 0
		s := p.Segments[0].Snapshot
		if err := im.loadSnapshot(s); err != nil {
			return nil, err
		}
		im.Target = s.EndOffset - 1
		return im, nil
	}
	if p.SingleSegment {
		full, err := inspect.ReadPartition(p.Dir)
		if err != nil {
			return nil, err
		}
		full.DataDir = p.DataDir
		p = full
	}
	l := &loader{im: im, p: p}
	if err := l.extent(); err != nil {
		return nil, err
	}
	if err := l.target(opts); err != nil {
		return nil, err
	}
	if im.Target >= 0 {
		// A snapshot ending below the log start offset is deleted at load
		// (KafkaMetadataLog.recoverSnapshots).
		var snaps []inspect.MetadataSnapshot
		for _, s := range p.MetadataSnapshots {
			if s.EndOffset >= im.LogStartOffset {
				snaps = append(snaps, s)
			}
		}
		if s := inspect.LatestMetadataSnapshot(snaps, im.Target); s != nil {
			if err := im.loadSnapshot(s); err != nil {
				return nil, err
			}
		}
	}
	if err := l.replayLog(opts.Progress); err != nil {
		return nil, err
	}
	if t.Kind == "data_dir" {
		im.findStrays(t, p)
	}
	return im, nil
}

// loader reads a metadata partition into an image.
type loader struct {
	im *Image
	p  *inspect.Partition
}

// extent finds the log's first offset (the first segment's base offset)
// and its end (LogSegment.readNextOffset of the last segment).
func (l *loader) extent() error {
	segs := l.p.Segments
	if len(segs) == 0 {
		return fmt.Errorf("%s: %w: no segment", l.p.Dir, ErrNoMetadataLog)
	}
	l.im.LogStartOffset = segs[0].BaseOffset
	s, err := inspect.OpenSegment(segs[len(segs)-1], inspect.SegmentOptions{Unmapped: true})
	if err != nil {
		return err
	}
	defer s.Close()
	end, err := s.NextOffset()
	if err != nil && !fileio.IsCorrupt(err) {
		return err
	}
	l.im.LogEndOffset = end
	return nil
}

// target sets the image's target offset from the options.
func (l *loader) target(opts Options) error {
	im := l.im
	switch {
	case opts.Offset != nil:
		im.Target = *opts.Offset
	case opts.Time != nil:
		n, err := l.lastAtOrBefore(*opts.Time)
		if err != nil {
			return err
		}
		im.Target = n
	default:
		im.Target = im.LogEndOffset - 1
	}
	if im.Target < -1 {
		im.Target = -1
	}
	return nil
}

// lastAtOrBefore is the offset of the last record of the log whose
// timestamp is at most ts (-1: none), from the batch headers (Options.Time).
func (l *loader) lastAtOrBefore(ts int64) (int64, error) {
	last := int64(-1)
	var dec record.RecordDecoder
	var buf []byte
	for _, sf := range l.p.Segments {
		s, err := inspect.OpenSegment(sf, inspect.SegmentOptions{Unmapped: true})
		if err != nil {
			return 0, err
		}
		it := s.Batches(0)
		for it.Next() {
			if it.Damage() != nil {
				break
			}
			b := it.Batch()
			switch {
			case b.MaxTimestamp <= ts:
				last = max(last, b.LastOffset)
			case b.BaseTimestamp <= ts:
				// Records of different times in one batch (not a KRaft
				// writer's): read them.
				entry, err := s.ReadEntry(b, buf)
				if err != nil {
					s.Close()
					return 0, err
				}
				buf = entry
				err = dec.Records(sf.Log, entry, b, func(r *record.Record) error {
					if r.Timestamp <= ts {
						last = max(last, r.Offset)
					}
					return nil
				})
				if err != nil && !fileio.IsCorrupt(err) {
					s.Close()
					return 0, err
				}
			}
		}
		err = it.Err()
		s.Close()
		if err != nil {
			if fileio.IsCorrupt(err) {
				break // the image stops there too
			}
			return 0, err
		}
	}
	return last, nil
}

// loadSnapshot replays a snapshot's records into the (empty) image
// (MetadataLoader.loadSnapshot: every record through MetadataDelta.replay,
// control batches aside). A snapshot a broker cannot load (damage, no
// header: RecordsSnapshotReader) is an error.
func (im *Image) loadSnapshot(s *inspect.MetadataSnapshot) error {
	var (
		dec     record.RecordDecoder
		framing inspect.SnapshotFraming
		types   []record.ControlType
		header  *int64
	)
	err := s.Partition().Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		b := w.Batch
		if !w.CRCValid {
			// RecordsIterator checks every batch's CRC.
			return fileio.Corruptf(w.Segment.Log, b.Position, fileio.ErrCRC, "batch %d..%d: its CRC does not match its bytes", b.BaseOffset, b.LastOffset)
		}
		types = types[:0]
		if b.IsControl() {
			err := dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
				c := internaltopics.DecodeControl(r.Key, r.Value)
				if c.Error != "" {
					return fileio.Corruptf(w.Segment.Log, b.Position, fileio.ErrCorruptRecords, "control record at offset %d: %s", r.Offset, c.Error)
				}
				_, t, _ := record.ParseControlKey(r.Key)
				types = append(types, t)
				if t == record.ControlSnapshotHeader && header == nil {
					if v, ok := c.Fields.Get("lastContainedLogTimestamp"); ok {
						header = ptr(v.(int64))
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			framing.Add(b, types)
			return nil
		}
		framing.Add(b, nil)
		if framing.HeaderProblem() != "" {
			return nil // refused below, whatever follows
		}
		return dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
			d := internaltopics.Decode(internaltopics.ClusterMetadata, r.Key, r.Value)
			im.SnapshotRecords++
			if reason := undecoded(&d); reason != "" {
				im.unapplied(w, r.Offset, &d, reason)
				return nil
			}
			if err := im.replay(&d); err != nil {
				im.unapplied(w, r.Offset, &d, ruleText(err))
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("snapshot %s: a broker cannot load it: %w", s.Path, err)
	}
	if p := framing.HeaderProblem(); p != "" {
		return fmt.Errorf("snapshot %s: %s: a broker refuses to load it (RecordsSnapshotReader)", s.Path, p)
	}
	if p, pos := framing.FooterProblem(); p != "" {
		im.Incomplete = fmt.Sprintf("snapshot %s: %s (batch at position %d): it may be cut short", s.Name(), p, pos)
	}
	im.Snapshot = s
	if header != nil {
		im.LastTimestamp = *header
	}
	return nil
}

// replayLog applies the log's records after the snapshot up to the
// target (MetadataBatchLoader.loadBatch, replay).
func (l *loader) replayLog(progress func(done, total int64)) error {
	im := l.im
	from := im.LogStartOffset
	if im.Snapshot != nil {
		from = im.Snapshot.EndOffset
		if from < im.LogStartOffset {
			im.noteIncomplete(fmt.Sprintf("the log starts at offset %d, after the end of snapshot %s (%d): the records between are missing", im.LogStartOffset, im.Snapshot.Name(), from))
		}
	} else if im.LogStartOffset > 0 {
		im.noteIncomplete(fmt.Sprintf("the log starts at offset %d and no snapshot at or below offset %d covers the records before it", im.LogStartOffset, im.Target))
	}
	im.AppliedFrom = from
	if im.Target < from {
		return nil
	}
	var (
		dec record.RecordDecoder
		tx  txn
	)
	to := im.Target
	err := l.p.Walk(inspect.LogRange{FromOffset: &from, ToOffset: &to, Progress: progress}, func(w inspect.WalkBatch) error {
		b := w.Batch
		if !w.CRCValid {
			// Recovery truncates the log at a batch whose CRC fails
			// (LogSegment.recover, ensureValid): no broker reads past it.
			return fileio.Corruptf(w.Segment.Log, b.Position, fileio.ErrCRC, "batch %d..%d: its CRC does not match its bytes", b.BaseOffset, b.LastOffset)
		}
		if b.IsControl() {
			im.AppliedTo = max(im.AppliedTo, min(b.LastOffset, to))
			return nil
		}
		im.LastTimestamp = b.MaxTimestamp
		return dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
			if r.Offset < from || r.Offset > to {
				return nil
			}
			im.AppliedTo = r.Offset
			d := internaltopics.Decode(internaltopics.ClusterMetadata, r.Key, r.Value)
			if reason := undecoded(&d); reason != "" {
				im.unapplied(w, r.Offset, &d, reason)
				return nil
			}
			tx.record(im, w, r.Offset, d)
			return nil
		})
	})
	if tx.open {
		im.OpenTransaction = tx.first
	}
	if err != nil {
		if !fileio.IsCorrupt(err) {
			return err
		}
		im.Damage = err
	}
	return nil
}

// txn is MetadataBatchLoader's transaction state: records between a
// BeginTransactionRecord and its EndTransactionRecord are applied at the
// end, dropped at an AbortTransactionRecord, and wait while it is open.
type txn struct {
	open    bool
	first   int64 // offset of the BeginTransactionRecord
	pending []pendingRecord
}

type pendingRecord struct {
	file     string
	position int64
	offset   int64
	d        internaltopics.Decoded
}

func (tx *txn) record(im *Image, w inspect.WalkBatch, offset int64, d internaltopics.Decoded) {
	switch d.Type {
	case recBeginTransaction:
		if tx.open {
			im.unapplied(w, offset, &d, "MetadataBatchLoader: encountered BeginTransactionRecord while already in a transaction")
			return
		}
		tx.open, tx.first, tx.pending = true, offset, tx.pending[:0]
	case recEndTransaction:
		if !tx.open {
			im.unapplied(w, offset, &d, "MetadataBatchLoader: encountered EndTransactionRecord without having seen a BeginTransactionRecord")
			return
		}
		for i := range tx.pending {
			pr := &tx.pending[i]
			im.apply(pr.file, pr.position, pr.offset, &pr.d)
		}
		tx.open, tx.pending = false, tx.pending[:0]
		im.CommittedTransactions++
	case recAbortTransaction:
		if !tx.open {
			im.unapplied(w, offset, &d, "MetadataBatchLoader: encountered AbortTransactionRecord without having seen a BeginTransactionRecord")
			return
		}
		tx.open, tx.pending = false, tx.pending[:0]
		im.AbortedTransactions++
	default:
		if tx.open {
			tx.pending = append(tx.pending, pendingRecord{w.Segment.Log, w.Batch.Position, offset, d})
			return
		}
		im.apply(w.Segment.Log, w.Batch.Position, offset, &d)
	}
}

// apply replays one record of the log, noting it when a rule refuses it.
func (im *Image) apply(file string, position, offset int64, d *internaltopics.Decoded) {
	if err := im.replay(d); err != nil {
		im.Unapplied = append(im.Unapplied, Unapplied{File: file, Position: position, Offset: offset, Type: d.Type, Reason: ruleText(err)})
		return
	}
	im.Records++
}

func (im *Image) unapplied(w inspect.WalkBatch, offset int64, d *internaltopics.Decoded, reason string) {
	typ := d.Type
	if typ == "" {
		typ = "unknown"
	}
	im.Unapplied = append(im.Unapplied, Unapplied{File: w.Segment.Log, Position: w.Batch.Position, Offset: offset, Type: typ, Reason: reason})
}

func (im *Image) noteIncomplete(why string) {
	if im.Incomplete == "" {
		im.Incomplete = why
	} else {
		im.Incomplete += "; " + why
	}
}

// undecoded says why a record cannot be replayed because it does not
// decode (MetadataRecordSerde fails on it): an unknown api key or
// version, bytes that do not match the schema, a null value. "" when it
// decoded.
func undecoded(d *internaltopics.Decoded) string {
	switch {
	case d.OK():
		return ""
	case d.Error != "":
		return "MetadataRecordSerde cannot read it: " + d.Error
	}
	return "MetadataRecordSerde cannot read it: " + d.Note
}

func ruleText(err error) string {
	if errors.Is(err, errRule) {
		return err.Error()[len(errRule.Error())+2:]
	}
	return err.Error()
}

func ptr[T any](v T) *T { return &v }

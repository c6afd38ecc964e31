package inspect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// Segment is one opened segment: its .log and, when present, its offset
// and time indexes, each read through an io.ReaderAt. OpenSegment opens the
// files (indexes mapped, the log read with pread); NewSegment wraps bytes
// (tests, fuzzing).
type Segment struct {
	BaseOffset int64
	LogName    string
	Log        io.ReaderAt
	LogSize    int64
	LogModTime time.Time

	IndexName     string
	Index         *indexfmt.OffsetIndex // nil when the .index is absent
	TimeIndexName string
	TimeIndex     *indexfmt.TimeIndex // nil when the .timeindex is absent

	closers []io.Closer

	// fast reads the same files as Log, Index and TimeIndex, the mapped
	// ones without a fault guard per read; LookupOffset and LookupTimestamp
	// go through it under one guard for the whole lookup (unguarded).
	fast readers

	// The broker's entry counts of the indexes: the slots before any zero
	// padding (indexfmt's EntriesBeforePadding), read by the first lookup
	// (entries).
	counted     bool
	idxN, tidxN int
	// RebuiltIndexes says Index and TimeIndex were built in memory as
	// broker recovery writes them, the files being missing (UseIndexes).
	RebuiltIndexes bool
	// KeptBecause, when not empty, says why the broker's next start would not
	// recover this segment (below the recovery point, or a clean
	// shutdown): a padded index would then be searched padding included
	// (KAFKA-10207). Lookups name it in --trace.
	KeptBecause string

	// Reused by the lookups, so that they allocate nothing (a Segment is
	// for one goroutine at a time).
	tl  timeLookupState
	dec record.RecordDecoder
	buf []byte
	it  LogIterator
}

// NewSegment builds a segment over bytes. A nil idx or tidx means the file
// is absent (an empty, non-nil slice is an empty file).
func NewSegment(baseOffset int64, log, idx, tidx []byte) *Segment {
	s := &Segment{BaseOffset: baseOffset, LogName: SegmentName(baseOffset) + LogSuffix, Log: bytes.NewReader(log), LogSize: int64(len(log))}
	if idx != nil {
		s.IndexName = SegmentName(baseOffset) + IndexSuffix
		s.Index = indexfmt.NewOffsetIndex(idx, baseOffset)
	}
	if tidx != nil {
		s.TimeIndexName = SegmentName(baseOffset) + TimeIndexSuffix
		s.TimeIndex = indexfmt.NewTimeIndex(tidx, baseOffset)
	}
	s.fast = s.guarded()
	return s
}

// readers are the readers a lookup goes through: the Segment's own
// (guarded) or its fast ones.
type readers struct {
	log  io.ReaderAt
	idx  *indexfmt.OffsetIndex // nil when the .index is absent
	tidx *indexfmt.TimeIndex   // nil when the .timeindex is absent
}

// guarded are the Segment's own readers, every read of a mapping guarded
// against faults.
func (s *Segment) guarded() readers { return readers{s.Log, s.Index, s.TimeIndex} }

// unguarded runs lookup over the fast readers under one fault guard for
// all of its reads (fileio.GuardFaults) instead of one per read. It
// reports whether a mapped file faulted (another process cut it short);
// the caller then repeats the lookup over the guarded readers, whose
// error names the file.
func (s *Segment) unguarded(lookup func(r readers)) (faulted bool) {
	return fileio.GuardFaults(func() { lookup(s.fast) })
}

// SegmentOptions say how OpenSegment opens a segment's files.
type SegmentOptions struct {
	// Log says how the .log is opened. The zero value reads it with pread,
	// as the broker's FileRecords reads it: a lookup reads a few batch
	// headers, and a mapping costs more than those reads. A process that
	// makes many lookups in one segment (the broker's case) maps it too,
	// fileio.Options{Mapped: true}.
	Log fileio.Options
	// Unmapped maps nothing: every file, the indexes too (which are
	// otherwise mapped, as the broker maps them: small, read at random), is
	// read with pread, cache-neutral, and Log is not used. For a short read
	// (a segment's last batches, one slot) made beside other goroutines of
	// the process, which the unmap at Close would interrupt with a TLB
	// flush on every core running them (docs/performance.md, "What changed
	// since run G").
	Unmapped bool
}

// OpenSegment opens the segment's .log, .index and .timeindex read-only
// (the ones that exist) as o says: the one way to open a segment's files.
// On error everything opened is closed again.
func OpenSegment(sf SegmentFiles, o SegmentOptions) (*Segment, error) {
	log, indexes := o.Log, fileio.Options{Mapped: true}
	if o.Unmapped {
		log = fileio.Options{CacheNeutral: true}
		indexes = log
	}
	s := &Segment{BaseOffset: sf.BaseOffset}
	if sf.Log != "" {
		f, err := fileio.Open(sf.Log, log)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, f)
		s.LogName, s.Log, s.LogSize = f.Name, f, f.Size()
		s.fast.log = f.Unguarded()
		if st, err := os.Stat(sf.Log); err == nil {
			s.LogModTime = st.ModTime()
		}
	} else {
		s.Log = bytes.NewReader(nil)
		s.fast.log = s.Log
	}
	if sf.Index != "" {
		f, err := fileio.Open(sf.Index, indexes)
		if err != nil {
			return nil, errors.Join(err, s.Close())
		}
		s.closers = append(s.closers, f)
		s.IndexName = f.Name
		s.Index = indexfmt.NewOffsetIndexFrom(fileio.NewIndexSlots(f, f.Size()), sf.BaseOffset)
		s.fast.idx = indexfmt.NewOffsetIndexFrom(fileio.NewIndexSlots(f.Unguarded(), f.Size()), sf.BaseOffset)
	}
	if sf.TimeIndex != "" {
		f, err := fileio.Open(sf.TimeIndex, indexes)
		if err != nil {
			return nil, errors.Join(err, s.Close())
		}
		s.closers = append(s.closers, f)
		s.TimeIndexName = f.Name
		s.TimeIndex = indexfmt.NewTimeIndexFrom(fileio.NewIndexSlots(f, f.Size()), sf.BaseOffset)
		s.fast.tidx = indexfmt.NewTimeIndexFrom(fileio.NewIndexSlots(f.Unguarded(), f.Size()), sf.BaseOffset)
	}
	return s, nil
}

// UseIndexes replaces the segment's offset and time index with the given
// bytes (an index built in memory as broker recovery would write it, for a
// segment whose files are missing); a nil slice leaves that index as it is.
func (s *Segment) UseIndexes(index, timeIndex []byte) {
	if index != nil {
		s.IndexName = SegmentName(s.BaseOffset) + IndexSuffix
		s.Index = indexfmt.NewOffsetIndex(index, s.BaseOffset)
		s.fast.idx = s.Index
	}
	if timeIndex != nil {
		s.TimeIndexName = SegmentName(s.BaseOffset) + TimeIndexSuffix
		s.TimeIndex = indexfmt.NewTimeIndex(timeIndex, s.BaseOffset)
		s.fast.tidx = s.TimeIndex
	}
	s.RebuiltIndexes = true
	s.counted = false
}

// entries returns the broker's entry counts of the offset and time index
// (0 for an absent one): the slots before the zero-filled tail, which a
// broker holding the segment never counts and recovery removes.
func (s *Segment) entries(r readers) (idx, tidx int, err error) {
	if s.counted {
		return s.idxN, s.tidxN, nil
	}
	if r.idx != nil {
		if idx, err = r.idx.EntriesBeforePadding(); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", s.IndexName, err)
		}
	}
	if r.tidx != nil {
		if tidx, err = r.tidx.EntriesBeforePadding(); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", s.TimeIndexName, err)
		}
	}
	s.idxN, s.tidxN, s.counted = idx, tidx, true
	return idx, tidx, nil
}

// tracePadding notes, for --trace, the padding slots a search left out.
func (s *Segment) tracePadding(tr *tracer, index, name string, entries, slots int) {
	if tr == nil || entries >= slots {
		return
	}
	tr.note(TraceStep{Why: WhyPadding, Index: index, File: name, Entries: entries, Slots: slots})
	if s.KeptBecause != "" {
		tr.note(TraceStep{Why: WhyPaddingKept, Index: index, File: name, KeptBecause: s.KeptBecause, Slots: slots})
	}
}

// Close releases the files OpenSegment opened.
func (s *Segment) Close() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c.Close())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// Batches returns a headers-only iterator (IterOptions.Headers) over the
// segment's log from byte position start.
func (s *Segment) Batches(start int64) *LogIterator {
	it := NewLogIterator(IterOptions{Headers: true})
	it.ResetReader(s.Log, s.LogName, s.LogSize, start)
	return it
}

// batches is Batches through the segment's own iterator (the lookups
// allocate nothing), reading log, restarted at start.
func (s *Segment) batches(log io.ReaderAt, start int64) *LogIterator {
	s.it.s.SetHeaders(true)
	s.it.ResetReader(log, s.LogName, s.LogSize, start)
	return &s.it
}

// ReadEntry reads the complete entry of batch b into buf (grown as needed;
// b.Size is bounded by the file size, which the iterator checked) and
// returns it.
func (s *Segment) ReadEntry(b *record.Batch, buf []byte) ([]byte, error) {
	if cap(buf) < int(b.Size) {
		buf = make([]byte, b.Size)
	}
	buf = buf[:b.Size]
	if n, err := s.Log.ReadAt(buf, b.Position); n < len(buf) {
		return nil, fileio.ReadError(s.LogName, b.Position, err)
	}
	return buf, nil
}

// NextOffset is the broker's LogSegment.readNextOffset: the offset after
// the last batch, found by scanning from the offset index's last entry, or
// the base offset when the segment holds no batch. A torn tail ends the
// scan as it ends the broker's; other damage is an error.
func (s *Segment) NextOffset() (int64, error) {
	end, _, err := ReadNextOffset(s.batches(s.Log, 0), s.Log, s.LogName, s.LogSize, s.BaseOffset, s.Index)
	return end.Next, err
}

// SegmentEnd is where a segment's log ends: the offset after its last
// batch (the base offset when none was found) and that batch's partition
// leader epoch (HasBatch: there is one).
type SegmentEnd struct {
	Next     int64
	Epoch    int32
	HasBatch bool
	// MaxTimestamp is the largest max timestamp of the batches the scan
	// read (-1: none).
	MaxTimestamp int64
}

// ReadNextOffset is LogSegment.readNextOffset over a segment's log (size
// bytes, named name in errors, based at base) and offset index (nil: none),
// read with the headers-only iterator it: a scan from the position of the
// index's last entry (0 with no entry, or one that points past the log) to
// the end of the log. It returns the end the scan found, where it started
// (-1 when the index entry could not be read: no scan), and what ended it
// early: damage or a short read (a *fileio.CorruptError; the end is then
// the last batch before it) or another read error. A torn tail ends it
// silently, as FileLogInputStream stops there.
func ReadNextOffset(it *LogIterator, log io.ReaderAt, name string, size, base int64, idx *indexfmt.OffsetIndex) (end SegmentEnd, start int64, err error) {
	if idx != nil && idx.Slots() > 0 {
		e, err := idx.Entry(idx.Slots() - 1)
		if err != nil {
			return SegmentEnd{Next: base, MaxTimestamp: -1}, -1, err
		}
		if e.Position >= 0 && int64(e.Position) <= size {
			start = int64(e.Position)
		}
	}
	end, err = ScanEnd(it, log, name, size, base, start)
	return end, start, err
}

// EntryLeadsNowhere reports whether ReadNextOffset's scan, which started
// at start (the offset index's last entry; -1: the entry could not be
// read), found no batch (found false) or stopped at bytes no batch can
// start with (err ErrCorruptHeader): either the log is damaged there or the
// entry is wrong, and only a scan from position 0 tells which. The broker
// then answers the base offset (LogSegment.readNextOffset: translateOffset
// finds nothing); the readers that want where the log really ends (LogEnd,
// ls's summaries) scan from 0 instead.
func EntryLeadsNowhere(start int64, found bool, err error) bool {
	return start != 0 && (!found || errors.Is(err, fileio.ErrCorruptHeader))
}

// LogEnd is where a segment's log really ends: ReadNextOffset's scan, or a
// scan from position 0 when its index entry leads nowhere
// (EntryLeadsNowhere). Damage ends the scan, the end being the last batch
// before it, and is returned as the error (a *fileio.CorruptError).
func LogEnd(it *LogIterator, log io.ReaderAt, name string, size, base int64, idx *indexfmt.OffsetIndex) (SegmentEnd, error) {
	end, start, err := ReadNextOffset(it, log, name, size, base, idx)
	if start >= 0 && err != nil && !fileio.IsCorrupt(err) {
		return end, err // a read error, not an answer
	}
	if EntryLeadsNowhere(start, end.HasBatch, err) {
		return ScanEnd(it, log, name, size, base, 0)
	}
	return end, err
}

// ScanEnd runs the headers-only iterator it over the log from position
// start to its end and returns the end it found (see ReadNextOffset).
func ScanEnd(it *LogIterator, log io.ReaderAt, name string, size, base, start int64) (SegmentEnd, error) {
	end := SegmentEnd{Next: base, MaxTimestamp: -1}
	it.ResetReader(log, name, size, start)
	for it.Next() {
		b := it.Batch()
		end.Next, end.Epoch, end.HasBatch = b.NextOffset(), b.PartitionLeaderEpoch, true
		end.MaxTimestamp = max(end.MaxTimestamp, b.MaxTimestamp)
	}
	if err := it.Err(); err != nil && !errors.Is(err, fileio.ErrTorn) {
		return end, err
	}
	return end, nil
}

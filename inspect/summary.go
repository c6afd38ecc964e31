package inspect

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// IndexStats describes one index file as it lies on disk.
type IndexStats struct {
	Present bool
	// Bytes is the file size.
	Bytes int64
	// Slots is floor(Bytes / entry size): every whole slot, which is how
	// many entries a broker counts when it opens the file
	// (AbstractIndex: entries = floor(length / entrySize)).
	Slots int
	// Entries is how many slots hold entries: the slots before the first
	// slot i > 0 whose relative offset is 0, where the zero-filled,
	// preallocated tail starts (DumpLogSegments' rule). For a .txnindex,
	// the whole entries.
	Entries int
	// Trailing is the bytes after the last whole slot (Bytes mod entry
	// size), which the broker's sanity check rejects.
	Trailing int
}

// Padded reports a zero-filled tail after the entries: the index of an
// active segment, while its broker runs or after it stopped uncleanly
// (a clean shutdown trims it to Entries × entry size).
func (s IndexStats) Padded() bool { return s.Entries < s.Slots }

// SegmentSummary is what a glance at one segment shows: its offsets and
// timestamps, its sizes, its index files, and whether the valid batches
// of its .log reach the end of the file.
type SegmentSummary struct {
	Files SegmentFiles
	// LogBytes is the .log's size (0 when there is no .log).
	LogBytes int64
	// Counted says that Batches and Records cover the whole log: the scan
	// started at position 0 (SummaryOptions.Deep, or no usable offset
	// index entry to start from). Otherwise both are -1.
	Counted bool
	Batches int64
	// Records counts records as the batch headers do (a v2 batch's records
	// count; a legacy wrapper's inner messages, decompressed; 1 for an
	// uncompressed legacy message).
	Records int64
	// FirstOffset is the first record's offset (a batch's base offset, a
	// legacy wrapper's first inner offset); LastOffset the last batch's
	// last offset; NextOffset the one after it (the base offset when the
	// log holds no batch: LogSegment.readNextOffset). FirstOffset and
	// LastOffset are -1 when the log holds no batch.
	FirstOffset, LastOffset, NextOffset int64
	// FirstTimestamp is the first record's timestamp (decoded from the
	// first batch; for LogAppendTime the batch's); LastTimestamp the last
	// batch's max timestamp. -1 when there is none (no batch, magic 0).
	FirstTimestamp, LastTimestamp int64
	// Index, TimeIndex and TxnIndex describe the index files.
	Index, TimeIndex, TxnIndex IndexStats
	// Damage is why the .log's valid batches end before the end of the
	// file, as the broker's file iterator sees it: a *CorruptError of kind
	// ErrTorn (a partial batch at the end, or too few bytes left for a
	// header) or ErrCorruptHeader (an impossible length), naming the byte
	// position. Nil when the batches end exactly at the end of the file.
	// CRCs are not checked (that is verify's work).
	Damage error
	// IndexAstray says that the offset index's last entry does not lead to
	// a batch: its position is beyond the log, or scanning from it meets
	// an impossible header where a scan from position 0 finds a batch
	// boundary elsewhere. The log was then scanned from position 0.
	IndexAstray bool
}

// SummaryOptions say how much of each .log SummarizeSegment reads.
type SummaryOptions struct {
	// Deep reads every batch header of every log (counting batches and
	// records exactly, and finding damage anywhere). Otherwise a log is
	// read where the broker reads it to find its end
	// (LogSegment.readNextOffset): from the offset index's last entry, plus
	// its first batch.
	Deep bool
	// Progress, when set, is called with the bytes of .log scanned so far
	// and the total, every few MiB at most and last with done == total
	// (Partition.Summarize; a deep summary counts every byte of every log,
	// a shallow one only what it reads). Nil costs nothing.
	Progress func(done, total int64)
	// Meter, when set, is used instead of Progress: one meter over the
	// logs of several partitions (Target.LogBytes), which the caller
	// finishes (Meter.Finish).
	Meter *Meter
}

// summaryWindow is the read size of a shallow summary's scan: the tail
// after the last index entry is about index.interval.bytes long.
const summaryWindow = 64 << 10

// firstWindow is the read size for a segment's first batch: a producer's
// default batch.size (16384), so that the first record of most segments
// comes with one small pread (a larger batch grows the window). The files
// of a shallow summary are read with pread, not mapped: a listing of
// thousands of segments paid more for mapping and unmapping each file
// (a TLB shootdown on every other core per munmap) than for reading the
// few KiB it needs (docs/performance.md).
const firstWindow = 16 << 10

// summaryScratch is what a shallow summary reads with, reused across
// segments and goroutines (summaryScratches), so that a listing of
// thousands of small segments allocates nothing per segment.
type summaryScratch struct {
	// buf (summaryWindow bytes) holds an index file, then the window of
	// the scan from the last index entry.
	buf []byte
	// first reads the first batch, through its own buffer of firstWindow
	// bytes (grown, once, by a first batch larger than that); tail scans
	// through buf. Neither is reset with a segment's files: without
	// salvage no Damage event names them.
	first, tail *LogIterator
	dec         record.RecordDecoder
}

var summaryScratches = sync.Pool{New: func() any {
	sc := &summaryScratch{buf: make([]byte, summaryWindow)}
	sc.first = NewLogIterator(IterOptions{Buffer: make([]byte, 0, firstWindow)})
	sc.tail = NewLogIterator(IterOptions{Buffer: sc.buf})
	return sc
}}

// indexSlots opens the index file at path and returns it (for the caller
// to close) and its slots: an index of up to summaryWindow bytes (a few thousand
// entries) read with one pread into buf (which it holds until the next
// call), a larger one read from the file through IndexSlots.
func (sc *summaryScratch) indexSlots(path string) (*fileio.File, indexfmt.SlotReader, error) {
	f, err := fileio.Open(path, fileio.Options{})
	if err != nil {
		return nil, nil, err
	}
	b, err := fileio.ReadWhole(f, sc.buf, summaryWindow)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if b != nil {
		return f, indexfmt.SlotsInMemory(b), nil
	}
	return f, fileio.NewIndexSlots(f, f.Size()), nil
}

// put returns sc to summaryScratches. An iterator whose window grew past
// a batch larger than summaryWindow is replaced: its read size is its
// buffer's capacity, and every later segment would read that much.
func (sc *summaryScratch) put() {
	if sc.first.s.WindowSize() > summaryWindow {
		sc.first = NewLogIterator(IterOptions{Buffer: make([]byte, 0, firstWindow)})
	}
	if sc.tail.s.WindowSize() > summaryWindow {
		sc.tail = NewLogIterator(IterOptions{Buffer: sc.buf})
	}
	summaryScratches.Put(sc)
}

// Summarize summarizes every segment of p in base-offset order. Damage is
// reported in each summary, not as an error; an error means a file could
// not be read.
func (p *Partition) Summarize(opts SummaryOptions) ([]SegmentSummary, error) {
	var m *Meter
	var counted int64 // bytes of the current segment counted by m
	switch {
	case opts.Deep && opts.Meter != nil:
		m = opts.Meter
	case opts.Deep:
		m = NewMeter(opts.Progress, func() int64 { return LogBytes(p.Segments, 0) })
		defer m.Finish()
	}
	out := make([]SegmentSummary, 0, len(p.Segments))
	for _, sf := range p.Segments {
		s, err := summarize(sf, opts, m, &counted)
		if err != nil {
			return out, err
		}
		m.Done(&counted, s.LogBytes)
		out = append(out, s)
	}
	return out, nil
}

// SummarizeMetadataSnapshots summarizes p's KRaft metadata snapshots
// (Partition.MetadataSnapshots) as segments of their own, by end offset:
// with no index to start from, each is read whole.
func (p *Partition) SummarizeMetadataSnapshots(opts SummaryOptions) ([]SegmentSummary, error) {
	segs := make([]SegmentFiles, len(p.MetadataSnapshots))
	for i, ms := range p.MetadataSnapshots {
		segs[i] = ms.Segment()
	}
	return (&Partition{Dir: p.Dir, Segments: segs}).Summarize(opts)
}

// SummarizeSegment summarizes one segment (see SegmentSummary).
func SummarizeSegment(sf SegmentFiles, opts SummaryOptions) (SegmentSummary, error) {
	return summarize(sf, opts, nil, nil)
}

func summarize(sf SegmentFiles, opts SummaryOptions, m *Meter, counted *int64) (SegmentSummary, error) {
	s := SegmentSummary{Files: sf, Batches: -1, Records: -1, FirstOffset: -1, LastOffset: -1,
		NextOffset: sf.BaseOffset, FirstTimestamp: -1, LastTimestamp: -1}
	sc := summaryScratches.Get().(*summaryScratch)
	defer sc.put()
	var last *indexfmt.OffsetEntry // the offset index's last valid entry (shallow only)
	if sf.Index != "" {
		// Its valid entries, then the last of them.
		f, slots, err := sc.indexSlots(sf.Index)
		if err != nil {
			return s, err
		}
		defer f.Close()
		idx := indexfmt.NewOffsetIndexFrom(slots, sf.BaseOffset)
		if s.Index, err = offsetIndexStats(idx); err != nil {
			return s, fmt.Errorf("%s: %w", sf.Index, err)
		}
		if !opts.Deep && s.Index.Entries > 0 {
			e, err := idx.Entry(s.Index.Entries - 1)
			if err != nil {
				return s, fmt.Errorf("%s: %w", sf.Index, err)
			}
			last = &e
		}
	}
	if sf.TimeIndex != "" {
		f, slots, err := sc.indexSlots(sf.TimeIndex)
		if err != nil {
			return s, err
		}
		defer f.Close()
		x := indexfmt.NewTimeIndexFrom(slots, sf.BaseOffset)
		n, err := x.ValidEntries()
		if err != nil {
			return s, fmt.Errorf("%s: %w", sf.TimeIndex, err)
		}
		s.TimeIndex = IndexStats{Present: true, Bytes: x.Size(), Slots: x.Slots(), Entries: n, Trailing: x.TrailingBytes()}
	}
	if sf.TxnIndex != "" {
		fi, err := os.Stat(sf.TxnIndex)
		if err != nil {
			return s, err
		}
		n := int(fi.Size() / indexfmt.TxnEntrySize)
		s.TxnIndex = IndexStats{Present: true, Bytes: fi.Size(), Slots: n, Entries: n, Trailing: int(fi.Size() % indexfmt.TxnEntrySize)}
	}
	if sf.Log == "" {
		return s, nil
	}
	var (
		f   *fileio.File
		err error
	)
	if opts.Deep {
		f, err = fileio.Open(sf.Log, fileio.Options{CacheNeutral: true}) // a long sequential read
	} else {
		f, err = fileio.Open(sf.Log, fileio.Options{}) // a few headers
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	s.LogBytes = f.Size()
	if err := s.first(sc.first, f, &sc.dec); err != nil {
		return s, err
	}
	start := int64(0)
	if last != nil {
		// The broker starts readNextOffset's scan at the last entry's
		// position; an entry beyond the log leads nowhere.
		if int64(last.Position) <= s.LogBytes && last.Position >= 0 {
			start = int64(last.Position)
		} else {
			s.IndexAstray = true
		}
	}
	var scan tailScan
	if start == 0 {
		scan, err = s.scan(NewLogIterator(IterOptions{Window: DefaultWindow}), f, start, -1, &sc.dec, m, counted)
	} else {
		scan, err = s.scan(sc.tail, f, start, -1, &sc.dec, m, counted)
	}
	if err != nil {
		return s, err
	}
	if start > 0 && EntryLeadsNowhere(start, scan.batches > 0, scan.damage) {
		// A scan from the start finds the last batch before the damage.
		again, err := s.scan(NewLogIterator(IterOptions{Window: DefaultWindow}), f, 0, start, &sc.dec, m, counted)
		if err != nil {
			return s, err
		}
		s.IndexAstray = !again.probeHit
		scan, start = again, 0
	}
	s.Damage = scan.damage
	if scan.batches > 0 {
		s.LastOffset = scan.lastOffset
		s.NextOffset = scan.lastOffset + 1
		s.LastTimestamp = max(scan.lastTimestamp, -1)
	}
	if start == 0 {
		s.Counted, s.Batches, s.Records = true, scan.batches, scan.records
	}
	return s, nil
}

// offsetIndexStats describes an offset index.
func offsetIndexStats(x *indexfmt.OffsetIndex) (IndexStats, error) {
	n, err := x.ValidEntries()
	if err != nil {
		return IndexStats{}, err
	}
	return IndexStats{Present: true, Bytes: x.Size(), Slots: x.Slots(), Entries: n, Trailing: x.TrailingBytes()}, nil
}

// first reads the first batch: the first record's offset and timestamp,
// through it (reset here, without salvage).
func (s *SegmentSummary) first(it *LogIterator, f *fileio.File, dec *record.RecordDecoder) error {
	it.Reset(f, nil, 0)
	if !it.Next() {
		if err := it.Err(); err != nil && !fileio.IsCorrupt(err) {
			return err
		}
		return nil // no batch; the tail scan reports the damage
	}
	b := it.Batch()
	s.FirstOffset = b.BaseOffset
	s.FirstTimestamp = headerFirstTimestamp(b)
	entry, err := it.Entry()
	if err != nil {
		if fileio.IsCorrupt(err) {
			return nil
		}
		return err
	}
	// The first record says it exactly (a legacy wrapper's first inner
	// offset; a v2 batch whose base timestamp holds a delete horizon).
	err = dec.Records(f.Name, entry, b, func(r *record.Record) error {
		s.FirstOffset, s.FirstTimestamp = r.Offset, max(r.Timestamp, -1)
		return errStopRecords
	})
	if err != nil && !errors.Is(err, errStopRecords) && !fileio.IsCorrupt(err) {
		return err
	}
	return nil
}

// headerFirstTimestamp is the first record's timestamp as far as the
// header tells: the base timestamp (v2 CreateTime), the batch timestamp
// (LogAppendTime, and a magic 1 message), -1 for magic 0.
func headerFirstTimestamp(b *record.Batch) int64 {
	switch {
	case b.Magic == 0:
		return -1
	case b.Magic == 1 || b.LogAppendTime():
		return max(b.MaxTimestamp, -1)
	}
	return max(b.BaseTimestamp, -1)
}

// tailScan is what a scan of a .log from some position found.
type tailScan struct {
	// The last valid batch's last offset and max timestamp (not a copy of
	// its whole header per batch).
	lastOffset, lastTimestamp int64
	batches                   int64 // 0: no valid batch
	records                   int64
	damage                    error
	probeHit                  bool // a batch starts at the position scan was asked about
}

// scan reads batch headers from start to the end of the valid entries,
// noting whether a batch starts at position probe, through it (reset here,
// without salvage).
func (s *SegmentSummary) scan(it *LogIterator, f *fileio.File, start int64, probe int64, dec *record.RecordDecoder, m *Meter, counted *int64) (tailScan, error) {
	var t tailScan
	it.Reset(f, nil, start)
	for it.Next() {
		b := it.Batch()
		t.probeHit = t.probeHit || b.Position == probe
		t.batches++
		c := record.HeaderCount(b)
		if c.FromRecords() {
			entry, err := it.Entry()
			if err != nil && !fileio.IsCorrupt(err) {
				return t, err
			}
			if err == nil {
				err = dec.Records(f.Name, entry, b, func(r *record.Record) error { c.Record(r); return nil })
				if err != nil && !fileio.IsCorrupt(err) {
					return t, err
				}
			}
		}
		t.records += max(c.RecordCount, 0)
		t.lastOffset, t.lastTimestamp = b.LastOffset, b.MaxTimestamp
		m.Advance(counted, b.End())
	}
	if err := it.Err(); err != nil {
		if !fileio.IsCorrupt(err) {
			return t, err
		}
		t.damage = err
		var ce *fileio.CorruptError
		if errors.As(err, &ce) && ce.Position == probe {
			t.probeHit = true // damage, but at the start of an entry
		}
	}
	return t, nil
}

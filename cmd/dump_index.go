package cmd

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

type dumpIndexOptions struct {
	paths []string
	all   bool
}

// AddFlags adds dump-index's flags to f.
func (o *dumpIndexOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.all, "all", false, "list every slot the broker counts, zero padding included")
}

func newDumpIndexCommand(ios *IOStreams) *cobra.Command {
	var opts dumpIndexOptions
	c := &cobra.Command{
		Use:   "dump-index PATH...",
		Short: "List the entries of .index, .timeindex and .txnindex files",
		Long: `List the entries of index files. The type comes from the suffix: .index
(offset index), .timeindex (time index), .txnindex (aborted transactions).
A .log, a partition directory or a data directory dumps every index file of
its segments.

Entries are listed up to the end of what the broker wrote: as in Kafka's
DumpLogSegments, the first slot after slot 0 whose offset equals the
segment's base offset starts the zero-filled, preallocated tail an unclean
shutdown leaves. That padding is reported on stderr and under the table, not
listed; --all lists every slot the broker counts (floor(size / entry size)),
padding included.

Fields (offset is always absolute: base offset + relative offset):
  .index      file slot offset relative_offset position
  .timeindex  file slot timestamp offset relative_offset
  .txnindex   file slot version producer_id first_offset last_offset last_stable_offset

An empty index lists nothing and exits 0. A file whose size is not a
multiple of its entry size is listed as the broker reads it, then reported
as an error (exit 2).`,
		Example: `  kseg dump-index data/orders-0/00000000000000000000.index
  kseg dump-index --all data/orders-0/00000000000000000000.timeindex
  kseg dump-index -o json data/orders-0 | jq 'select(.position != null) | .position'`,
		Args: cobra.MinimumNArgs(1),
		RunE: pathsRunE(&opts.paths, func() error { return runDumpIndex(ios, opts) }),
	}
	opts.AddFlags(c.Flags())
	return c
}

// indexFile is one index file to dump, with its segment's base offset.
type indexFile struct {
	path string
	base int64
	kind string // inspect suffix
	log  string // the segment's .log, "" when absent
}

func collectIndexFiles(path string) ([]indexFile, error) {
	t, err := resolveTarget(path)
	if err != nil {
		return nil, err
	}
	var out []indexFile
	for _, p := range t.Partitions {
		for _, s := range p.Segments {
			if t.Kind == "segment" {
				// Only the file named, unless it is the .log.
				switch t.File {
				case s.Index:
					out = append(out, indexFile{s.Index, s.BaseOffset, inspect.IndexSuffix, s.Log})
					continue
				case s.TimeIndex:
					out = append(out, indexFile{s.TimeIndex, s.BaseOffset, inspect.TimeIndexSuffix, s.Log})
					continue
				case s.TxnIndex:
					out = append(out, indexFile{s.TxnIndex, s.BaseOffset, inspect.TxnIndexSuffix, s.Log})
					continue
				}
			}
			for _, f := range []indexFile{{s.Index, s.BaseOffset, inspect.IndexSuffix, s.Log}, {s.TimeIndex, s.BaseOffset, inspect.TimeIndexSuffix, s.Log}, {s.TxnIndex, s.BaseOffset, inspect.TxnIndexSuffix, s.Log}} {
				if f.path != "" {
					out = append(out, f)
				}
			}
		}
	}
	return out, nil
}

func runDumpIndex(ios *IOStreams, opts dumpIndexOptions) error {
	files, err := collectEach(opts.paths, collectIndexFiles)
	if err != nil {
		return err
	}
	var firstErr error
	for i, f := range files {
		if i > 0 && ios.IsTable() {
			fmt.Fprintln(ios.Out)
		}
		if err := dumpIndexFile(ios, f, opts.all); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

type offsetEntryJSON struct {
	File           string `json:"file"`
	Slot           int    `json:"slot"`
	Offset         int64  `json:"offset"`
	RelativeOffset int32  `json:"relative_offset"`
	Position       int32  `json:"position"`
}

type timeEntryJSON struct {
	File           string `json:"file"`
	Slot           int    `json:"slot"`
	Timestamp      int64  `json:"timestamp"`
	Offset         int64  `json:"offset"`
	RelativeOffset int32  `json:"relative_offset"`
}

func (e offsetEntryJSON) appendJSON(b []byte) []byte {
	b = appendJSONString(append(b, `{"file":`...), e.File)
	b = strconv.AppendInt(append(b, `,"slot":`...), int64(e.Slot), 10)
	b = strconv.AppendInt(append(b, `,"offset":`...), e.Offset, 10)
	b = strconv.AppendInt(append(b, `,"relative_offset":`...), int64(e.RelativeOffset), 10)
	b = strconv.AppendInt(append(b, `,"position":`...), int64(e.Position), 10)
	return append(b, '}')
}

func (e timeEntryJSON) appendJSON(b []byte) []byte {
	b = appendJSONString(append(b, `{"file":`...), e.File)
	b = strconv.AppendInt(append(b, `,"slot":`...), int64(e.Slot), 10)
	b = strconv.AppendInt(append(b, `,"timestamp":`...), e.Timestamp, 10)
	b = strconv.AppendInt(append(b, `,"offset":`...), e.Offset, 10)
	b = strconv.AppendInt(append(b, `,"relative_offset":`...), int64(e.RelativeOffset), 10)
	return append(b, '}')
}

type txnEntryJSON struct {
	File             string `json:"file"`
	Slot             int    `json:"slot"`
	Version          int16  `json:"version"`
	ProducerID       int64  `json:"producer_id"`
	FirstOffset      int64  `json:"first_offset"`
	LastOffset       int64  `json:"last_offset"`
	LastStableOffset int64  `json:"last_stable_offset"`
}

var offsetEntryColumns = []column[offsetEntryJSON]{
	textColumn("file", func(e offsetEntryJSON) string { return e.File }),
	intColumn("slot", func(e offsetEntryJSON) int { return e.Slot }),
	intColumn("offset", func(e offsetEntryJSON) int64 { return e.Offset }),
	intColumn("relative_offset", func(e offsetEntryJSON) int32 { return e.RelativeOffset }),
	intColumn("position", func(e offsetEntryJSON) int32 { return e.Position }),
}

var timeEntryColumns = []column[timeEntryJSON]{
	textColumn("file", func(e timeEntryJSON) string { return e.File }),
	intColumn("slot", func(e timeEntryJSON) int { return e.Slot }),
	timestampColumn("timestamp", func(e timeEntryJSON) int64 { return e.Timestamp }),
	intColumn("offset", func(e timeEntryJSON) int64 { return e.Offset }),
	intColumn("relative_offset", func(e timeEntryJSON) int32 { return e.RelativeOffset }),
}

var txnEntryColumns = []column[txnEntryJSON]{
	textColumn("file", func(e txnEntryJSON) string { return e.File }),
	intColumn("slot", func(e txnEntryJSON) int { return e.Slot }),
	intColumn("version", func(e txnEntryJSON) int16 { return e.Version }),
	intColumn("producer_id", func(e txnEntryJSON) int64 { return e.ProducerID }),
	intColumn("first_offset", func(e txnEntryJSON) int64 { return e.FirstOffset }),
	intColumn("last_offset", func(e txnEntryJSON) int64 { return e.LastOffset }),
	intColumn("last_stable_offset", func(e txnEntryJSON) int64 { return e.LastStableOffset }),
}

func dumpIndexFile(ios *IOStreams, f indexFile, all bool) error {
	file, err := fileio.Open(f.path, fileio.Options{Mapped: true})
	if err != nil {
		return err
	}
	defer file.Close()
	size := file.Size()
	name := filepath.Base(f.path)
	switch f.kind {
	case inspect.IndexSuffix:
		x := indexfmt.NewOffsetIndexFrom(fileio.NewIndexSlots(file, size), f.base)
		n, err := listed(x.Slots(), x.ValidEntries, all)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		l := newLister(ios, offsetEntryColumns)
		l.appendJSON = offsetEntryJSON.appendJSON
		for i := 0; i < n; i++ {
			e, err := x.Entry(i)
			if err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			l.Add(offsetEntryJSON{f.path, i, e.Offset, e.RelativeOffset, e.Position})
		}
		return finishIndex(ios, l, f.path, name, x.Slots(), x.ValidEntries, indexfmt.OffsetEntrySize, size, all)
	case inspect.TimeIndexSuffix:
		x := indexfmt.NewTimeIndexFrom(fileio.NewIndexSlots(file, size), f.base)
		n, err := listed(x.Slots(), x.ValidEntries, all)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		l := newLister(ios, timeEntryColumns)
		l.appendJSON = timeEntryJSON.appendJSON
		for i := 0; i < n; i++ {
			e, err := x.Entry(i)
			if err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			l.Add(timeEntryJSON{f.path, i, e.Timestamp, e.Offset, e.RelativeOffset})
		}
		return finishIndex(ios, l, f.path, name, x.Slots(), x.ValidEntries, indexfmt.TimeEntrySize, size, all)
	default:
		x := indexfmt.NewTxnIndexFrom(fileio.NewIndexSlots(file, size))
		// Beside its log, no more entries are listed than the log could
		// justify (record.MaxTxnIndexEntries): a forged or sparse file of
		// billions of entries is not walked.
		n, bound := int64(x.Entries()), int64(-1)
		if f.log != "" {
			if b, ok := (inspect.SegmentFiles{Log: f.log}).TxnIndexBound(); ok && n > b {
				bound, n = b, b
			}
		}
		l := newLister(ios, txnEntryColumns)
		for i := 0; i < int(n); i++ {
			e, err := x.Entry(i)
			if err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			l.Add(txnEntryJSON{f.path, i, e.Version, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset})
		}
		l.Footer("%s: %s", name, count(n, "entry"))
		if err := l.Close(); err != nil {
			return err
		}
		if bound >= 0 {
			return fmt.Errorf("%s: %d entries, but its log %s holds at most %d ABORT markers (one batch of at least %d bytes each): the first %d are listed, the rest no broker wrote",
				f.path, x.Entries(), f.log, bound, record.MinMarkerBatchSize, bound)
		}
		return trailingError(f.path, size, indexfmt.TxnEntrySize)
	}
}

// listed is how many slots to list: every slot with --all, else the valid
// ones (DumpLogSegments' padding rule).
func listed(slots int, valid func() (int, error), all bool) (int, error) {
	if all {
		return slots, nil
	}
	return valid()
}

// finishIndex closes the listing with the padding footer and warning and
// reports trailing bytes.
func finishIndex[T any](ios *IOStreams, l *lister[T], path, name string, slots int, valid func() (int, error), entrySize int, size int64, all bool) error {
	n, err := valid()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if n < slots {
		msg := fmt.Sprintf("%s: zero-filled padding from slot %d (byte position %d): %d of %d slots are preallocated padding, as an unclean shutdown leaves them", name, n, int64(n)*int64(entrySize), slots-n, slots)
		if !all {
			msg += " (--all lists them)"
		}
		l.Footer("%s", msg)
		ios.Warnf("%s", msg)
	} else {
		l.Footer("%s: %s", name, count(n, "entry"))
	}
	if err := l.Close(); err != nil {
		return err
	}
	return trailingError(path, size, entrySize)
}

// trailingError reports bytes after the last whole entry, which the broker
// ignores and its sanity check rejects.
func trailingError(path string, size int64, entrySize int) error {
	if r := size % int64(entrySize); r != 0 {
		return fmt.Errorf("%s: byte position %d: %s: the size %d is not a multiple of the %d-byte entry size (run kseg verify %s)", path, size-r, count(r, "trailing byte"), size, entrySize, filepath.Dir(path))
	}
	return nil
}

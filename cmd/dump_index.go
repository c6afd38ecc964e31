package cmd

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumpindex"
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

func collectIndexFiles(path string) ([]dumpindex.File, error) {
	t, err := resolveTarget(path)
	if err != nil {
		return nil, err
	}
	return dumpindex.Files(t), nil
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

func dumpIndexFile(ios *IOStreams, f dumpindex.File, all bool) error {
	switch f.Kind {
	case inspect.IndexSuffix:
		l := newLister(ios, offsetEntryColumns)
		l.appendJSON = offsetEntryJSON.appendJSON
		res, err := dumpindex.Dump(f, all, dumpindex.Visit{Offset: func(i int, e indexfmt.OffsetEntry) {
			l.Add(offsetEntryJSON{f.Path, i, e.Offset, e.RelativeOffset, e.Position})
		}})
		return finishIndex(ios, l, f, res, err, indexfmt.OffsetEntrySize, all)
	case inspect.TimeIndexSuffix:
		l := newLister(ios, timeEntryColumns)
		l.appendJSON = timeEntryJSON.appendJSON
		res, err := dumpindex.Dump(f, all, dumpindex.Visit{Time: func(i int, e indexfmt.TimeEntry) {
			l.Add(timeEntryJSON{f.Path, i, e.Timestamp, e.Offset, e.RelativeOffset})
		}})
		return finishIndex(ios, l, f, res, err, indexfmt.TimeEntrySize, all)
	}
	l := newLister(ios, txnEntryColumns)
	res, err := dumpindex.Dump(f, all, dumpindex.Visit{Txn: func(i int, e indexfmt.AbortedTxn) {
		l.Add(txnEntryJSON{f.Path, i, e.Version, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset})
	}})
	if err != nil {
		return err
	}
	l.Footer("%s: %s", filepath.Base(f.Path), count(res.Listed, "entry"))
	if err := l.Close(); err != nil {
		return err
	}
	if res.TxnBound >= 0 {
		return fmt.Errorf("%s: %d entries, but its log %s holds at most %d ABORT markers (one batch of at least %d bytes each): the first %d are listed, the rest no broker wrote",
			f.Path, res.Slots, f.Log, res.TxnBound, record.MinMarkerBatchSize, res.TxnBound)
	}
	return trailingError(f.Path, res, indexfmt.TxnEntrySize)
}

// finishIndex closes the listing with the padding footer and warning and
// reports trailing bytes.
func finishIndex[T any](ios *IOStreams, l *lister[T], f dumpindex.File, res dumpindex.Result, err error, entrySize int, all bool) error {
	if err != nil {
		return err
	}
	name := filepath.Base(f.Path)
	if n := res.Valid; n < res.Slots {
		msg := fmt.Sprintf("%s: zero-filled padding from slot %d (byte position %d): %d of %d slots are preallocated padding, as an unclean shutdown leaves them", name, n, int64(n)*int64(entrySize), res.Slots-n, res.Slots)
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
	return trailingError(f.Path, res, entrySize)
}

// trailingError reports bytes after the last whole entry, which the broker
// ignores and its sanity check rejects.
func trailingError(path string, res dumpindex.Result, entrySize int) error {
	if r := res.Trailing; r != 0 {
		return fmt.Errorf("%s: byte position %d: %s: the size %d is not a multiple of the %d-byte entry size (run kseg verify %s)", path, res.Size-r, count(r, "trailing byte"), res.Size, entrySize, filepath.Dir(path))
	}
	return nil
}

package cmd

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect/dumpsnapshot"
)

type dumpSnapshotOptions struct {
	paths []string
}

func newDumpSnapshotCommand(ios *IOStreams) *cobra.Command {
	var opts dumpSnapshotOptions
	c := &cobra.Command{
		Use:   "dump-snapshot PATH...",
		Short: "List the producers in producer state snapshots (.snapshot files)",
		Long: `Decode producer state snapshots (<offset>.snapshot, ProducerSnapshot version 1)
as the broker reads them, and list each snapshot and its producers. The
offset in the name is the exclusive end offset the snapshot covers. PATH is a
.snapshot file, a partition directory (its snapshots by offset) or a data
directory (every partition's).

Snapshot line: kind ("snapshot") file offset version crc crc_valid
producers trailing_bytes. crc is the stored CRC-32C of bytes 6 to the end;
crc_valid says whether it matches (a broker deletes a snapshot whose CRC
fails and rebuilds producer state from an older one or the log).

Producer line: kind ("producer") file offset producer_id producer_epoch
coordinator_epoch current_txn_first_offset (-1: no open transaction)
last_timestamp last_sequence last_offset offset_delta, as stored, and
first_sequence first_offset of the producer's last data batch (null when
the producer has none: last_offset -1). Entries are in the file's order
(the broker's hash map order).

A bad CRC still lists everything and exits 0 (judging is verify's job). A
file the broker cannot parse at all (unknown version, an entry array that
does not fit) lists what can be read, then exits 2 naming the byte position.`,
		Example: `  kseg dump-snapshot data/orders-0/00000000000000001000.snapshot
  kseg dump-snapshot data/orders-0
  kseg dump-snapshot -o json data/orders-0 | jq -c 'select(.kind=="producer" and .current_txn_first_offset >= 0)'`,
		Args: cobra.MinimumNArgs(1),
		RunE: pathsRunE(&opts.paths, func() error { return runDumpSnapshot(ios, opts) }),
	}
	return c
}

var producerCell = partCell(func(l dumpsnapshot.Line) *dumpsnapshot.Producer { return l.Producer })

func snapshotProducerInt[N ~int16 | ~int32 | ~int64](f func(*dumpsnapshot.Producer) N) func(dumpsnapshot.Line) string {
	return producerCell(func(p *dumpsnapshot.Producer) string { return strconv.FormatInt(int64(f(p)), 10) })
}

func snapshotProducerOpt[N ~int32 | ~int64](f func(*dumpsnapshot.Producer) *N) func(dumpsnapshot.Line) string {
	return producerCell(func(p *dumpsnapshot.Producer) string {
		if v := f(p); v != nil {
			return strconv.FormatInt(int64(*v), 10)
		}
		return "null"
	})
}

var snapshotColumns = []column[dumpsnapshot.Line]{
	textColumn("kind", func(l dumpsnapshot.Line) string { return l.Kind }),
	textColumn("file", func(l dumpsnapshot.Line) string { return l.File }),
	intColumn("offset", func(l dumpsnapshot.Line) int64 { return l.Offset }),
	textColumn("crc_valid", func(l dumpsnapshot.Line) string {
		if l.CRCValid == nil {
			return ""
		}
		return strconv.FormatBool(*l.CRCValid)
	}),
	{name: "producers", right: true, cell: func(l dumpsnapshot.Line) string {
		if l.Producers == nil {
			return ""
		}
		return strconv.Itoa(*l.Producers)
	}},
	{name: "producer_id", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int64 { return p.ProducerID })},
	{name: "producer_epoch", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int16 { return p.ProducerEpoch })},
	{name: "coordinator_epoch", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int32 { return p.CoordinatorEpoch })},
	{name: "current_txn_first_offset", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int64 { return p.CurrentTxnFirstOffset })},
	{name: "last_timestamp", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int64 { return p.LastTimestamp })},
	{name: "first_sequence", right: true, cell: snapshotProducerOpt(func(p *dumpsnapshot.Producer) *int32 { return p.FirstSequence })},
	{name: "last_sequence", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int32 { return p.LastSequence })},
	{name: "first_offset", right: true, cell: snapshotProducerOpt(func(p *dumpsnapshot.Producer) *int64 { return p.FirstOffset })},
	{name: "last_offset", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int64 { return p.LastOffset })},
	// The other JSON fields, in -o wide only (CSV keeps its columns).
	omitIfEmpty(wideTableOnly(column[dumpsnapshot.Line]{name: "offset_delta", right: true, cell: snapshotProducerInt(func(p *dumpsnapshot.Producer) int32 { return p.OffsetDelta })})),
	omitIfEmpty(wideTableOnly(column[dumpsnapshot.Line]{name: "version", right: true, cell: func(l dumpsnapshot.Line) string { return optDecimal(l.Version) }})),
	omitIfEmpty(wideTableOnly(column[dumpsnapshot.Line]{name: "crc", right: true, cell: func(l dumpsnapshot.Line) string { return optDecimal(l.CRC) }})),
	omitIfEmpty(wideTableOnly(column[dumpsnapshot.Line]{name: "trailing_bytes", right: true, cell: func(l dumpsnapshot.Line) string { return optDecimal(l.TrailingBytes) }})),
}

// optDecimal is *v in decimal, or "" when v is nil.
func optDecimal[N ~int16 | ~int32 | ~uint32 | ~int64](v *N) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(int64(*v), 10)
}

func runDumpSnapshot(ios *IOStreams, opts dumpSnapshotOptions) error {
	files, err := collectEach(opts.paths, dumpsnapshot.Files)
	if err != nil {
		return err
	}
	l := newLister(ios, snapshotColumns)
	var firstErr error
	for _, sf := range files {
		res, err := dumpsnapshot.Dump(sf, l.Add)
		name := filepath.Base(sf.Path)
		switch {
		case !res.Read:
			if cerr := l.Close(); cerr != nil {
				return cerr
			}
			return err
		case err != nil:
			l.Footer("%s: %v", name, err)
			if firstErr == nil {
				firstErr = err
			}
		case res.CRCMismatch:
			msg := fmt.Sprintf("%s: crc %d does not match the bytes (computed %d): a broker deletes this snapshot at load", name, res.StoredCRC, res.ComputedCRC)
			l.Footer("%s", msg)
			ios.Warnf("%s", msg)
		default:
			l.Footer("%s: offset %d, %s, crc ok", name, sf.Offset, count(res.Producers, "producer"))
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	return firstErr
}

package cmd

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumplog"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/find"
	"github.com/kseg/kseg/inspect/internaltopics"
)

type findOptions struct {
	paths  []string
	filter find.Filter
	topics []string
	encodingOptions
	salvage bool
	max     int

	// The filter flags as given; Validate makes filter of them.
	key, keyHex, keyPrefix, valueContains string
	headers                               []string
	window                                timeWindowOptions
	fromOffset, toOffset, maxMatches      int64
	flags                                 *pflag.FlagSet
}

// AddFlags adds find's filters and flags to fl.
func (o *findOptions) AddFlags(fl *pflag.FlagSet) {
	o.flags = fl
	fl.StringVar(&o.key, "key", "", "records whose key is exactly these bytes (UTF-8)")
	fl.StringVar(&o.keyHex, "key-hex", "", "records whose key is exactly these bytes (hex)")
	fl.StringVar(&o.keyPrefix, "key-prefix", "", "records whose key starts with these bytes")
	fl.StringVar(&o.valueContains, "value-contains", "", "records whose value contains these bytes")
	fl.StringArrayVar(&o.headers, "header", nil, "records with this header: NAME, or NAME=VALUE (repeatable; all must hold)")
	o.window.AddFlags(fl, "records with a timestamp >= this (ms, RFC 3339, a date, or relative: -1h)", "records with a timestamp <= this (ms, RFC 3339, a date, or relative: -1h)")
	fl.Int64Var(&o.fromOffset, "from-offset", 0, "records at this offset or later")
	fl.Int64Var(&o.toOffset, "to-offset", 0, "records at this offset or earlier")
	fl.StringArrayVar(&o.topics, "topic", nil, "only partitions of this topic (repeatable)")
	fl.Int64Var(&o.maxMatches, "max", 0, "stop after this many matches (0: no limit)")
	fl.BoolVar(&o.salvage, "salvage", false, "go on past damage inside a segment, resuming at the next valid batch")
	o.encodingOptions.AddFlags(fl)
}

// Validate checks the flags and makes the filter of them; at least one
// filter must be given.
func (o *findOptions) Validate() error {
	fl, f := o.flags, &o.filter
	if err := o.encodingOptions.Validate(); err != nil {
		return err
	}
	if fl.Changed("key") && fl.Changed("key-hex") {
		return usageErrorf("give --key or --key-hex, not both")
	}
	if fl.Changed("key") {
		f.Key = []byte(o.key)
	}
	if fl.Changed("key-hex") {
		b, err := hex.DecodeString(o.keyHex)
		if err != nil {
			return usageErrorf("--key-hex must be hexadecimal bytes, not %q", o.keyHex)
		}
		f.Key = b
	}
	if fl.Changed("key-prefix") {
		f.KeyPrefix = []byte(o.keyPrefix)
	}
	if fl.Changed("value-contains") {
		f.ValueContains = []byte(o.valueContains)
	}
	for _, h := range o.headers {
		name, value, hasValue := strings.Cut(h, "=")
		if name == "" {
			return usageErrorf("--header must be NAME or NAME=VALUE, not %q", h)
		}
		hf := find.HeaderFilter{Name: name, HasValue: hasValue}
		if hasValue {
			hf.Value = []byte(value)
		}
		f.Headers = append(f.Headers, hf)
	}
	for _, b := range []struct {
		flag string
		v    *int64
		dst  **int64
	}{{"from-offset", &o.fromOffset, &f.FromOffset}, {"to-offset", &o.toOffset, &f.ToOffset}} {
		if fl.Changed(b.flag) {
			if *b.v < 0 {
				return usageErrorf("--%s must be >= 0, not %d", b.flag, *b.v)
			}
			*b.dst = b.v
		}
	}
	if err := o.window.Validate(); err != nil {
		return err
	}
	f.FromTime, f.ToTime = o.window.From.Value, o.window.To.Value
	if o.maxMatches < 0 {
		return usageErrorf("--max must be >= 0, not %d", o.maxMatches)
	}
	o.max = int(o.maxMatches)
	if f.Key == nil && f.KeyPrefix == nil && f.ValueContains == nil && f.Headers == nil &&
		f.FromOffset == nil && f.ToOffset == nil && f.FromTime == nil && f.ToTime == nil && len(o.topics) == 0 {
		return usageErrorf("give at least one filter (--key, --key-hex, --key-prefix, --value-contains, --header, --from-time, --to-time, --from-offset, --to-offset, --topic)")
	}
	return nil
}

func newFindCommand(ios *IOStreams) *cobra.Command {
	var opts findOptions
	c := &cobra.Command{
		Use:   "find PATH... [filters]",
		Short: "Search the records of every partition for a key, value, header, time or offset",
		Long: `Search the records of every partition under each PATH (a data directory, a
partition directory or a segment file) and print each match as a dump-log
record line with where it is: kind ("record") partition_dir topic partition
segment batch_position batch_base_offset, then the record fields of dump-log
--records (offset timestamp key value key_encoding value_encoding headers, and
decoded, as dump-log --records decodes with --decoder auto: the records of
internal topics, and schema-registry values when the data directory holds
_schemas-0).

Filters (every filter given must hold; give at least one):
  --key S / --key-hex H    the key equals the bytes of S (or of the hex H)
  --key-prefix S           the key starts with the bytes of S
  --value-contains S       the value contains the bytes of S
  --header NAME            the record has a header NAME
  --header NAME=VALUE      ... whose value is exactly VALUE (repeatable)
  --from-time/--to-time T  the effective timestamp is >= T / <= T
  --from-offset/--to-offset N  the offset is >= N / <= N
  --topic NAME             the partition belongs to topic NAME (repeatable)

Control records never match. Lines come out partition by partition in the
order ls lists them (partitions are searched in parallel), in offset order
within a partition; --max N stops after N matches. Offset bounds and
--from-time are resolved through the indexes, segment by segment, so that
segments and byte ranges outside them are not read; --to-time filters (a
record's timestamp says nothing about the next one's). An index entry that
contradicts the batch it leads to (a position that is no batch boundary, a
batch whose offsets or timestamps disagree with it) is named on stderr, and
that segment is searched from where its batches place the bound instead: a
search never misses a record because an index misleads. On a terminal a
progress bar on stderr shows the bytes read.

Exit 0 when a record matched, 1 when none did, 2 when the search could not
be done. Damage in a segment is reported on stderr with the file and byte
position, and the search goes on with the next segment; the exit code is
then 2. With --salvage the search resumes past the damage at the next valid
batch, as dump-log --salvage does, and the exit code says only whether
anything matched.`,
		Example: `  kseg find data --key order-1234
  kseg find data --topic orders --value-contains '"status":"failed"' --from-time 2024-05-01T10:00:00Z --to-time 2024-05-01T11:00:00Z
  kseg find data/orders-3 --header trace-id=4bf92f3577b34da6 -o json | jq .offset
  kseg find -o json data --key-hex 00000001 --max 1`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.paths = args
			if err := opts.Validate(); err != nil {
				return err
			}
			return runFind(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

// findLineJSON is the contract's find line: where the record is, then the
// dump-log record fields (the embedded line's kind is shadowed by ours).
type findLineJSON struct {
	Kind            string `json:"kind"`
	PartitionDir    string `json:"partition_dir"`
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Segment         string `json:"segment"`
	BatchPosition   int64  `json:"batch_position"`
	BatchBaseOffset int64  `json:"batch_base_offset"`
	recordLineJSON
}

// findColumns: the default table shows where each match is (partition,
// offset, time) and the record as "key = value" (the value decoded when
// a decoder applies; under the row on a narrow terminal); -o wide and CSV
// show every field.
var findColumns = []column[*findLineJSON]{
	tableOnly(withFit(textColumn("partition", func(l *findLineJSON) string { return l.PartitionDir }), fitElide)),
	tableOnly(intColumn("offset", func(l *findLineJSON) int64 { return l.Offset })),
	tableOnly(column[*findLineJSON]{name: "timestamp", display: func(l *findLineJSON, ios *IOStreams) string { return ios.timeText(l.Timestamp) }}),
	tableOnly(withFit(textColumn("record", func(l *findLineJSON) string {
		switch d := l.Decoded.(type) {
		case *internaltopics.Decoded:
			return decodedText(d) // the decoded key is in it
		case nil:
		default:
			return optText(l.Key) + " = " + decodedText(d)
		}
		return optText(l.Key) + " = " + optText(l.Value)
	}), fitBelow)),
	wideOnly(textColumn("partition_dir", func(l *findLineJSON) string { return l.PartitionDir })),
	wideOnly(textColumn("topic", func(l *findLineJSON) string { return l.Topic })),
	wideOnly(intColumn("partition", func(l *findLineJSON) int32 { return l.Partition })),
	wideOnly(textColumn("segment", func(l *findLineJSON) string { return l.Segment })),
	wideOnly(intColumn("batch_position", func(l *findLineJSON) int64 { return l.BatchPosition })),
	wideOnly(intColumn("batch_base_offset", func(l *findLineJSON) int64 { return l.BatchBaseOffset })),
	wideOnly(intColumn("offset", func(l *findLineJSON) int64 { return l.Offset })),
	wideOnly(timestampColumn("timestamp", func(l *findLineJSON) int64 { return l.Timestamp })),
	wideOnly(textColumn("key", func(l *findLineJSON) string { return optText(l.Key) })),
	wideOnly(textColumn("value", func(l *findLineJSON) string { return optText(l.Value) })),
	wideOnly(textColumn("headers", func(l *findLineJSON) string { return headersText(l.Headers) })),
	omitIfEmpty(wideTableOnly(textColumn("key_encoding", func(l *findLineJSON) string { return l.KeyEncoding }))),
	omitIfEmpty(wideTableOnly(textColumn("value_encoding", func(l *findLineJSON) string { return l.ValueEncoding }))),
	omitIfEmpty(wideOnly(textColumn("decoded", func(l *findLineJSON) string {
		if l.Decoded == nil {
			return ""
		}
		return decodedText(l.Decoded)
	}))),
}

// headersText is a record's headers as name=value pairs (null values as
// null), for tables and CSV.
func headersText(hs []headerJSON) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.Key + "=" + optText(h.Value)
	}
	return strings.Join(parts, ",")
}

func runFind(ios *IOStreams, opts findOptions) error {
	all, err := resolveSortedPartitions(ios, opts.paths, "not searched")
	if err != nil {
		return err
	}
	var parts []*inspect.Partition
	for _, p := range all {
		if len(opts.topics) == 0 || slices.Contains(opts.topics, p.Topic) {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		ios.Warnf("no partition of topic %s under %s", strings.Join(opts.topics, ", "), strings.Join(opts.paths, ", "))
	}
	bar := ios.progress("find")
	defer bar.done()
	l := newLister(ios, findColumns)
	values := dumplog.AutoValues(schemaWarner(ios))
	damaged := 0
	res, err := find.Search(parts, find.Options{Filter: opts.filter, Salvage: opts.salvage, Max: opts.max, Progress: bar.callback()}, func(e find.Event) error {
		if d := e.Damage; d != nil {
			damaged++
			reportFindDamage(ios, d, opts.salvage)
			return nil
		}
		if m := e.Misleading; m != nil {
			warnMisleading(ios, m, "the segment is searched from where its batches place the bound instead")
			return nil
		}
		m := e.Match
		p := m.Partition
		line := &findLineJSON{Kind: "record", PartitionDir: p.Name(), Topic: p.Topic, Partition: p.Partition,
			Segment: m.Segment.Name(), BatchPosition: m.Batch.Position, BatchBaseOffset: m.BatchBaseOffset,
			recordLineJSON: decodedRecordLine(&m.Record, &m.Batch, opts.encoding, values(p), true)}
		l.Add(line)
		return nil
	})
	bar.done()
	l.Footer("%s in %s searched", count(res.Matches, "match"), count(res.Partitions, "partition"))
	if cerr := l.Close(); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	if damaged > 0 && !opts.salvage {
		return withHint(fmt.Errorf("%s not searched", count(damaged, "damaged segment range")),
			"kseg find --salvage searches past the damage; kseg verify names it")
	}
	if res.Matches == 0 {
		return errNegative("no record matched")
	}
	return nil
}

// reportFindDamage says on stderr which bytes of which file were not
// searched.
func reportFindDamage(ios *IOStreams, d *inspect.Damage, salvage bool) {
	detail := fileio.CorruptDetail(d.Err)
	if !salvage || d.End < 0 {
		ios.Warnf("%s: byte position %d: %s; the rest of the segment was not searched", d.Segment.Log, d.Position, detail)
		return
	}
	ios.Warnf("%s: bytes %d..%d (%s) skipped: %s", d.Segment.Log, d.Position, d.End-1, count(d.End-d.Position, "byte"), detail)
}

package cmd

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumplog"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
)

type dumpLogOptions struct {
	path    string
	records bool
	encodingOptions
	window                           timeWindowOptions
	fromOffset, toOffset, maxBatches int64 // as given; Validate puts them in rng
	rng                              inspect.LogRange
	salvage                          bool
	decoder                          string                // --decoder (dump_log_decode.go)
	schemas                          dumplog.SchemaOptions // --schemas, --key-schema, ... (dump_log_decode.go)
	flags                            *pflag.FlagSet
}

// AddFlags adds dump-log's flags to f.
func (o *dumpLogOptions) AddFlags(f *pflag.FlagSet) {
	o.flags = f
	f.BoolVar(&o.records, "records", false, "also list every record (decompressing batches)")
	o.encodingOptions.AddFlags(f)
	f.Int64Var(&o.fromOffset, "from-offset", 0, "first offset (inclusive)")
	f.Int64Var(&o.toOffset, "to-offset", 0, "last offset (inclusive)")
	o.window.AddFlags(f, "first timestamp (ms, RFC 3339, a date, or relative: -1h)", "last timestamp (ms, RFC 3339, a date, or relative: -1h; inclusive)")
	f.Int64Var(&o.maxBatches, "max-batches", 0, "stop after this many batches (0: no limit)")
	f.BoolVar(&o.salvage, "salvage", false, "go on past damage: report each damaged byte range and resume at the next valid batch (exit 1 if any)")
	addDecoderFlags(f, o)
}

// Validate checks the flags and makes the record range of them.
func (o *dumpLogOptions) Validate() error {
	if err := o.encodingOptions.Validate(); err != nil {
		return err
	}
	if o.flags.Changed("from-offset") {
		o.rng.FromOffset = &o.fromOffset
	}
	if o.flags.Changed("to-offset") {
		o.rng.ToOffset = &o.toOffset
	}
	if err := o.window.Validate(); err != nil {
		return err
	}
	o.rng.FromTime, o.rng.ToTime = o.window.From.Value, o.window.To.Value
	if o.maxBatches < 0 {
		return usageErrorf("--max-batches must be >= 0, not %d", o.maxBatches)
	}
	o.rng.MaxBatches = int(o.maxBatches)
	return resolveDecoderFlags(o.flags, o)
}

// dumpLogLong is kseg dump-log's help.
const dumpLogLong = `List batches in file order: one line per v2 record batch, or per shallow
legacy message (a compressed magic 0/1 wrapper is one batch). PATH is a .log,
a partition directory, a data directory holding one partition, or a KRaft
metadata snapshot (<offset>-<epoch>.checkpoint in __cluster_metadata-0, or a
data directory's bootstrap.checkpoint), whose batches are read as a .log's
(their offsets start at 0) and whose batch lines carry snapshot (end_offset
and epoch from the name; bootstrap true for bootstrap.checkpoint).

Batch fields: kind ("batch") segment position size magic base_offset
last_offset record_count crc crc_valid compression timestamp_type
base_timestamp max_timestamp producer_id producer_epoch base_sequence
partition_leader_epoch is_transactional is_control. crc is the stored CRC and
crc_valid whether the bytes match it; a bad CRC still exits 0 (judging is
verify's job).

With --records each batch line is followed by its records: kind ("record")
offset timestamp (effective: the batch's for LogAppendTime) key value
key_encoding value_encoding headers (key, value, value_encoding) and, in
control batches only, control: type (abort, commit, leader_change,
snapshot_header, snapshot_footer, kraft_version, kraft_voters, unknown),
coordinator_epoch (abort, commit), the KRaft control message's fields under
Kafka's names (version, leaderId, voters, lastContainedLogTimestamp, ...,
as kafka-dump-log prints them), type_id (unknown types, whose bytes are the
record's key and value) and error (a key or value that does not decode). Keys and values are
shown per --encoding: auto (UTF-8 when valid and printable, else base64),
utf8, hex or base64; null keys and values are JSON null.

Ranges are resolved through the indexes, so only the bytes in range are
read: --from-offset/--to-offset (inclusive; batches overlapping the range),
--from-time/--to-time (ms, RFC 3339, a date, or relative to now such as -1h;
records outside are left out, batches without any are skipped),
--max-batches. An index entry that contradicts the batch it leads to is
named on stderr, and the listing starts where the batches place the bound.

A damaged .log stops the listing of its segment: what comes before the
damage is listed, the error names the file and byte position, and the exit
code is 2. With --salvage the listing goes on past damage: each damaged
byte range is reported on stderr (and with -o json as a line: kind
("damage") segment position end bytes error), the listing resumes at the
next position where a valid batch starts (length, magic and CRC agree),
and the exit code is 1 when anything was skipped (0 when nothing was), so
that the records a broker's recovery would throw away (everything after
the first damage in a segment) can be recovered.

Records of Kafka's internal topics are decoded, as DumpLogSegments'
--offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder,
--share-group-state-decoder and --remote-log-metadata-decoder do: a record
line gets a "decoded" object (decoder, type, key_version, key,
value_version, value, tombstone, note, error; cluster and remote log
metadata also frame_version and api_key), with Kafka's field names. The
decoder follows the topic of the partition directory (__consumer_offsets,
__transaction_state, __cluster_metadata, __share_group_state,
__remote_log_metadata); --decoder picks one (consumer_offsets,
transaction_state, cluster_metadata, share_group_state,
remote_log_metadata) or none, and the DumpLogSegments flag names are
accepted too. Choosing a
decoder implies --records. A record that does not decode gets an "error"
in its decoded object; the listing goes on.

Keys and values in the schema registry's wire format (byte 0, a 4-byte
schema id, then the payload) are decoded offline with the schemas in the
registry's own topic, the _schemas-0 directory beside the partition
(--decoder schema-registry; auto picks it when _schemas-0 is there and the
topic is not an internal one): replayed as the registry does (the last
record of a subject version wins, a null value deletes it, soft-deleted
schemas still decode). --schemas names another source: a data directory,
a _schemas-0 directory or a directory of <id>.avsc, <id>.proto and
<id>.json files. The decoded object: decoder ("schema_registry")
key_schema key value_schema value (schema: id type subject version) and
error. Avro is shown in Avro's JSON encoding (a union value as
{"<branch>": value}, bytes as code points 0-255, enums as symbols),
Protobuf in the protobuf JSON mapping of the message the wire format's
message indexes name, JSON Schema as the document. A key or value not in
the wire format stays null in decoded; an unknown id or a payload that
does not match its schema is named in error. --key-schema and
--value-schema FILE (.avsc or .proto; --key-message/--value-message pick
the Protobuf message) decode keys or values that are plain Avro or
Protobuf, without the wire format.`

func newDumpLogCommand(ios *IOStreams) *cobra.Command {
	var opts dumpLogOptions
	c := &cobra.Command{
		Use:   "dump-log PATH",
		Short: "List the batches (and with --records the records) of .log files",
		Long:  dumpLogLong,
		Example: `  kseg dump-log data/orders-0/00000000000000000000.log
  kseg dump-log --records --from-offset 1200 --to-offset 1210 data/orders-0
  kseg dump-log -o json --records data/orders-0 | jq -r 'select(.kind=="record") | .value'
  kseg dump-log -o json --records --salvage data/orders-0 > salvaged.jsonl
  kseg dump-log -o json --records data/__consumer_offsets-13 | jq -c 'select(.decoded.type=="offset_commit") | .decoded.key'
  kseg dump-log -o json --records data/orders-0 | jq -c 'select(.kind=="record") | .decoded.value'
  kseg dump-log --records --value-schema order.avsc data/legacy-orders-0`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.path = args[0]
			if err := opts.Validate(); err != nil {
				return err
			}
			return runDumpLog(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	_ = c.RegisterFlagCompletionFunc("schemas", completeDirs)
	_ = c.RegisterFlagCompletionFunc("key-schema", completePaths("avsc", "proto"))
	_ = c.RegisterFlagCompletionFunc("value-schema", completePaths("avsc", "proto"))
	return c
}

// batchLineJSON is the contract's dump-log batch line.
type batchLineJSON struct {
	Kind                 string `json:"kind"`
	Segment              string `json:"segment"`
	Position             int64  `json:"position"`
	Size                 int64  `json:"size"`
	Magic                int8   `json:"magic"`
	BaseOffset           int64  `json:"base_offset"`
	LastOffset           int64  `json:"last_offset"`
	RecordCount          int64  `json:"record_count"`
	CRC                  uint32 `json:"crc"`
	CRCValid             bool   `json:"crc_valid"`
	Compression          string `json:"compression"`
	TimestampType        string `json:"timestamp_type"`
	BaseTimestamp        int64  `json:"base_timestamp"`
	MaxTimestamp         int64  `json:"max_timestamp"`
	ProducerID           int64  `json:"producer_id"`
	ProducerEpoch        int16  `json:"producer_epoch"`
	BaseSequence         int32  `json:"base_sequence"`
	PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
	IsTransactional      bool   `json:"is_transactional"`
	IsControl            bool   `json:"is_control"`
	// Snapshot is the snapshot id of a KRaft metadata snapshot's name,
	// on the batches of one.
	Snapshot *snapshotIDJSON `json:"snapshot,omitempty"`
}

// snapshotIDJSON is a metadata snapshot's id (its name's end offset and
// epoch; 0 and 0 for bootstrap.checkpoint, which says bootstrap).
type snapshotIDJSON struct {
	EndOffset int64 `json:"end_offset"`
	Epoch     int32 `json:"epoch"`
	Bootstrap bool  `json:"bootstrap,omitempty"`
}

func snapshotID(s *inspect.MetadataSnapshot) *snapshotIDJSON {
	if s == nil {
		return nil
	}
	return &snapshotIDJSON{EndOffset: s.EndOffset, Epoch: s.Epoch, Bootstrap: s.Bootstrap}
}

type headerJSON struct {
	Key           string  `json:"key"`
	Value         *string `json:"value"`
	ValueEncoding string  `json:"value_encoding,omitempty"`
}

// controlJSON is a control record's "control" object: its type, the
// coordinator epoch of an end transaction marker, the fields of a KRaft
// control message under Kafka's names (as DumpLogSegments prints them),
// the id of a type the broker does not know, and why it does not decode.
type controlJSON struct {
	Type             string
	CoordinatorEpoch *int32
	Fields           internaltopics.Fields
	TypeID           *int16 // unknown types only
	Error            string
}

func newControlJSON(key, value []byte) *controlJSON {
	d := internaltopics.DecodeControl(key, value)
	c := &controlJSON{Type: d.Type, CoordinatorEpoch: d.CoordinatorEpoch, Fields: d.Fields, Error: d.Error}
	if d.Type == "unknown" && d.TypeID >= 0 {
		c.TypeID = &d.TypeID
	}
	return c
}

// MarshalJSON writes the object with the message's fields after type.
func (c *controlJSON) MarshalJSON() ([]byte, error) {
	fs := append(internaltopics.Fields{{Name: "type", Value: c.Type}}, c.Fields...)
	if c.CoordinatorEpoch != nil {
		fs = append(fs, internaltopics.Field{Name: "coordinator_epoch", Value: int64(*c.CoordinatorEpoch)})
	}
	if c.TypeID != nil {
		fs = append(fs, internaltopics.Field{Name: "type_id", Value: int64(*c.TypeID)})
	}
	if c.Error != "" {
		fs = append(fs, internaltopics.Field{Name: "error", Value: c.Error})
	}
	return fs.MarshalJSON()
}

// text is the control record as the tables show it: its type, then its
// coordinator epoch or message fields.
func (c *controlJSON) text() string {
	t := c.Type
	switch {
	case c.TypeID != nil:
		t = fmt.Sprintf("unknown (%d)", *c.TypeID)
	case c.CoordinatorEpoch != nil:
		t = fmt.Sprintf("%s (coordinator_epoch %d)", t, *c.CoordinatorEpoch)
	case c.Fields != nil:
		if b, err := marshalJSON(c.Fields); err == nil {
			t += " " + string(b)
		}
	}
	if c.Error != "" {
		t += " (" + c.Error + ")"
	}
	return t
}

// recordLineJSON is the contract's dump-log record line.
type recordLineJSON struct {
	Kind          string       `json:"kind"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	Key           *string      `json:"key"`
	Value         *string      `json:"value"`
	KeyEncoding   string       `json:"key_encoding,omitempty"`
	ValueEncoding string       `json:"value_encoding,omitempty"`
	Headers       []headerJSON `json:"headers"`
	Control       *controlJSON `json:"control,omitempty"`
	// Decoded is the internal-topic or schema-registry decoding: an
	// *internaltopics.Decoded or a *schemaregistry.Decoded
	// (dump_log_decode.go).
	Decoded any `json:"decoded,omitempty"`
}

// logLine is one row of dump-log: a batch or a record. JSON prints the
// contract's object for whichever it is; table and CSV share the columns.
type logLine struct {
	batch  *batchLineJSON
	record *recordLineJSON
}

func (l logLine) MarshalJSON() ([]byte, error) { return marshalEither(l.batch, l.record) }

func logBatchInt(f func(*batchLineJSON) int64) func(logLine) string {
	return func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return strconv.FormatInt(f(l.batch), 10)
	}
}

func logRecordText(f func(*recordLineJSON) string) func(logLine) string {
	return func(l logLine) string {
		if l.record == nil {
			return ""
		}
		return f(l.record)
	}
}

func optText(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// logColumns: the default table has one row per batch (position, offsets,
// records, size, its largest timestamp, whether its CRC holds) and, with
// --records, one per record under it (its offset and timestamp in the
// batch's columns, then "key = value", under the row on a narrow
// terminal). -o wide and CSV show every field.
var logColumns = []column[logLine]{
	tableOnly(column[logLine]{name: "position", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.Position })}),
	tableOnly(column[logLine]{name: "offsets", right: true, cell: func(l logLine) string {
		if l.batch != nil {
			return offsetRange(l.batch.BaseOffset, &l.batch.LastOffset)
		}
		return strconv.FormatInt(l.record.Offset, 10)
	}}),
	tableOnly(column[logLine]{name: "records", right: true, cell: func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return groupCount(l.batch.RecordCount)
	}}),
	tableOnly(column[logLine]{name: "size", right: true, cell: func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return humanSize(l.batch.Size)
	}}),
	tableOnly(column[logLine]{name: "timestamp", display: func(l logLine, ios *IOStreams) string {
		if l.batch != nil {
			return ios.timeText(l.batch.MaxTimestamp)
		}
		return ios.timeText(l.record.Timestamp)
	}}),
	tableOnly(withStyle(textColumn("crc_valid", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return strconv.FormatBool(l.batch.CRCValid)
	}), crcStyle)),
	omitIfEmpty(tableOnly(withFit(textColumn("record", func(l logLine) string {
		if l.record == nil {
			return ""
		}
		if l.record.Control != nil {
			return "control: " + l.record.Control.text()
		}
		return optText(l.record.Key) + " = " + optText(l.record.Value)
	}), fitBelow))),
	wideOnly(textColumn("kind", func(l logLine) string {
		if l.batch != nil {
			return "batch"
		}
		return "record"
	})),
	wideOnly(column[logLine]{name: "position", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.Position })}),
	wideOnly(column[logLine]{name: "size", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.Size }), display: func(l logLine, _ *IOStreams) string {
		if l.batch == nil {
			return ""
		}
		return humanSize(l.batch.Size)
	}}),
	wideOnly(column[logLine]{name: "magic", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return int64(b.Magic) })}),
	wideOnly(column[logLine]{name: "base_offset", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.BaseOffset })}),
	wideOnly(column[logLine]{name: "last_offset", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.LastOffset })}),
	wideOnly(column[logLine]{name: "record_count", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.RecordCount })}),
	wideOnly(textColumn("compression", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return l.batch.Compression
	})),
	wideOnly(textColumn("timestamp_type", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return l.batch.TimestampType
	})),
	wideOnly(column[logLine]{name: "max_timestamp", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.MaxTimestamp }),
		display: func(l logLine, ios *IOStreams) string {
			if l.batch == nil {
				return ""
			}
			return ios.timeText(l.batch.MaxTimestamp)
		}}),
	wideOnly(withStyle(textColumn("crc_valid", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return strconv.FormatBool(l.batch.CRCValid)
	}), crcStyle)),
	wideOnly(textColumn("is_control", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return strconv.FormatBool(l.batch.IsControl)
	})),
	// The batch fields CSV leaves out, in -o wide (every JSON field).
	wideTableOnly(textColumn("segment", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return l.batch.Segment
	})),
	wideTableOnly(column[logLine]{name: "crc", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return int64(b.CRC) })}),
	wideTableOnly(column[logLine]{name: "base_timestamp", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.BaseTimestamp }),
		display: func(l logLine, ios *IOStreams) string {
			if l.batch == nil {
				return ""
			}
			return ios.timeText(l.batch.BaseTimestamp)
		}}),
	wideTableOnly(column[logLine]{name: "producer_id", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return b.ProducerID })}),
	wideTableOnly(column[logLine]{name: "producer_epoch", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return int64(b.ProducerEpoch) })}),
	wideTableOnly(column[logLine]{name: "base_sequence", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return int64(b.BaseSequence) })}),
	wideTableOnly(column[logLine]{name: "partition_leader_epoch", right: true, cell: logBatchInt(func(b *batchLineJSON) int64 { return int64(b.PartitionLeaderEpoch) })}),
	wideTableOnly(textColumn("is_transactional", func(l logLine) string {
		if l.batch == nil {
			return ""
		}
		return strconv.FormatBool(l.batch.IsTransactional)
	})),
	wideOnly(column[logLine]{name: "offset", right: true, cell: logRecordText(func(r *recordLineJSON) string { return strconv.FormatInt(r.Offset, 10) })}),
	wideOnly(column[logLine]{name: "timestamp", right: true, cell: logRecordText(func(r *recordLineJSON) string { return strconv.FormatInt(r.Timestamp, 10) }),
		display: func(l logLine, ios *IOStreams) string {
			if l.record == nil {
				return ""
			}
			return ios.timeText(l.record.Timestamp)
		}}),
	wideOnly(textColumn("key", logRecordText(func(r *recordLineJSON) string { return optText(r.Key) }))),
	wideOnly(textColumn("value", logRecordText(func(r *recordLineJSON) string {
		if r.Control != nil {
			return "control: " + r.Control.text()
		}
		return optText(r.Value)
	}))),
	// The record fields CSV leaves out, in -o wide (every JSON field).
	omitIfEmpty(wideTableOnly(textColumn("key_encoding", logRecordText(func(r *recordLineJSON) string { return r.KeyEncoding })))),
	omitIfEmpty(wideTableOnly(textColumn("value_encoding", logRecordText(func(r *recordLineJSON) string { return r.ValueEncoding })))),
	omitIfEmpty(wideTableOnly(textColumn("headers", logRecordText(func(r *recordLineJSON) string { return headersText(r.Headers) })))),
	omitIfEmpty(wideTableOnly(textColumn("control", logRecordText(func(r *recordLineJSON) string {
		if r.Control == nil {
			return ""
		}
		return r.Control.text()
	})))),
}

// crcStyle colours a batch's crc_valid cell red when its CRC does not hold.
func crcStyle(l logLine) []color.Attribute {
	if l.batch != nil && !l.batch.CRCValid {
		return []color.Attribute{color.FgRed, color.Bold}
	}
	return nil
}

func runDumpLog(ios *IOStreams, opts dumpLogOptions) error {
	p, err := resolvePartition(opts.path)
	if err != nil {
		return err
	}
	bar := ios.progress("dump-log")
	defer bar.done()
	bar.partition(p.Name())
	opts.rng.Progress = bar.callback()
	opts.rng.Misleading = func(m inspect.MisleadingEntry) {
		warnMisleading(ios, &m, "the listing starts where the log's batches place the bound instead")
	}
	var values *dumplog.Values
	if opts.records {
		if values, err = recordValuesFor(ios, opts.decoder, opts.schemas, p); err != nil {
			return err
		}
	}
	r := newDumpLogRenderer(ios, opts.encoding, values)
	res, walkErr := dumplog.Dump(p, dumplog.Options{Range: opts.rng, Records: opts.records, Salvage: opts.salvage}, r.event)
	bar.done()
	r.l.Footer("%s", count(res.Batches, "batch"))
	if res.DamagedRanges > 0 {
		r.l.Footer("%s (%s) skipped", count(res.DamagedRanges, "damaged range"), count(res.DamagedBytes, "byte"))
	}
	if err := r.l.Close(); err != nil {
		return err
	}
	if walkErr != nil {
		return fmt.Errorf("%w (run kseg verify %s)", walkErr, opts.path)
	}
	if res.DamagedRanges > 0 {
		return errNegative("damaged bytes skipped")
	}
	return nil
}

// dumpLogRenderer renders dump-log's events: batch lines and records
// through the lister, except v2 records in -o json, whose headers are
// streamed (recordWriter); damage on stderr, and as a line in -o json.
type dumpLogRenderer struct {
	ios      *IOStreams
	l        *lister[logLine]
	records  *recordWriter
	encoding string
	values   *dumplog.Values
}

func newDumpLogRenderer(ios *IOStreams, encoding string, values *dumplog.Values) *dumpLogRenderer {
	return &dumpLogRenderer{ios: ios, l: newLister(ios, logColumnsFor(values)), records: newRecordWriter(ios.Out), encoding: encoding, values: values}
}

func (r *dumpLogRenderer) event(e dumplog.Event) error {
	switch {
	case e.Damage != nil:
		return r.damage(*e.Damage)
	case e.Record == nil:
		r.l.Add(logLine{batch: batchLine(e.Batch)})
		return nil
	}
	b := e.Batch.Batch
	switch {
	case b.Magic < 2:
		// A legacy wrapper's records were read before it was listed.
		r.l.Add(logLine{record: ptr(decodedRecordLine(e.Record, b, r.encoding, r.values, true))})
	case r.ios.Format() == FormatJSON:
		return r.records.write(decodedRecordLine(e.Record, b, r.encoding, r.values, false), e.Record, r.encoding)
	default:
		// The table and CSV have no headers column; -o wide shows every
		// field.
		r.l.Add(logLine{record: ptr(decodedRecordLine(e.Record, b, r.encoding, r.values, r.ios.Format() == FormatWide))})
	}
	return nil
}

// batchLine is the contract's line of a batch.
func batchLine(d *dumplog.Batch) *batchLineJSON {
	b := d.Batch
	return &batchLineJSON{Kind: "batch", Segment: d.Segment.Name(), Position: b.Position, Size: b.Size, Magic: b.Magic,
		BaseOffset: d.FirstOffset, LastOffset: b.LastOffset, RecordCount: d.RecordCount, CRC: b.CRC, CRCValid: d.CRCValid,
		Compression: b.Compression().String(), TimestampType: b.TimestampType(), BaseTimestamp: b.BaseTimestamp,
		MaxTimestamp: b.MaxTimestamp, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, BaseSequence: b.BaseSequence,
		PartitionLeaderEpoch: b.PartitionLeaderEpoch, IsTransactional: b.IsTransactional(), IsControl: b.IsControl(),
		Snapshot: snapshotID(d.Segment.Snapshot)}
}

func ptr[T any](v T) *T { return &v }

// recordLine is a record's line; with headers false its headers are
// left out, for recordWriter to stream.
func recordLine(r *record.Record, b *record.Batch, encoding string, headers bool) recordLineJSON {
	out := recordLineJSON{Kind: "record", Offset: r.Offset, Timestamp: r.Timestamp, Headers: []headerJSON{}}
	out.Key, out.KeyEncoding = encodeBytes(r.Key, encoding)
	out.Value, out.ValueEncoding = encodeBytes(r.Value, encoding)
	if headers {
		_ = r.EachHeader(func(h record.Header) error {
			out.Headers = append(out.Headers, headerLine(h, encoding))
			return nil
		})
	}
	if b.IsControl() {
		out.Control = newControlJSON(r.Key, r.Value)
	}
	return out
}

func headerLine(h record.Header, encoding string) headerJSON {
	v, enc := encodeBytes(h.Value, encoding)
	return headerJSON{Key: string(h.Key), Value: v, ValueEncoding: enc}
}

// recordWriter writes JSON record lines with their headers streamed: the
// line is written up to "headers", then one header at a time, then the
// rest, so a record of millions of headers costs one header's memory, not
// a list of them (the bytes are those the one encoder writes for the
// whole line, as the lister writes it: jsonout.go).
type recordWriter struct {
	w   *bufio.Writer
	enc *jsonEncoder
}

func newRecordWriter(out io.Writer) *recordWriter {
	rw := &recordWriter{w: bufio.NewWriterSize(out, 64<<10)}
	rw.enc = newJSONEncoderTo(rw.w)
	return rw
}

// headersPlaceholder is how the line without headers marshals its
// headers field; it cannot occur earlier in the line (a quote inside a
// string is escaped).
var headersPlaceholder = []byte(`"headers":null`)

func (rw *recordWriter) write(line recordLineJSON, r *record.Record, encoding string) error {
	line.Headers = nil
	b, err := rw.enc.marshal(line)
	if err != nil {
		return err
	}
	i := bytes.Index(b, headersPlaceholder)
	rw.w.Write(b[:i])
	rest := append([]byte(nil), b[i+len(headersPlaceholder):]...)
	rw.w.WriteString(`"headers":[`)
	n := 0
	err = r.EachHeader(func(h record.Header) error {
		b, err := rw.enc.marshal(headerLine(h, encoding))
		if err != nil {
			return err
		}
		if n > 0 {
			rw.w.WriteByte(',')
		}
		n++
		_, err = rw.w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	rw.w.WriteByte(']')
	rw.w.Write(rest)
	rw.w.WriteByte('\n')
	return rw.w.Flush()
}

// encodeBytes renders key/value bytes per --encoding; nil stays null (and
// then has no encoding field).
func encodeBytes(b []byte, encoding string) (*string, string) {
	if b == nil {
		return nil, ""
	}
	switch encoding {
	case "hex":
		s := hex.EncodeToString(b)
		return &s, "hex"
	case "base64":
		s := base64.StdEncoding.EncodeToString(b)
		return &s, "base64"
	case "utf8":
		s := string(b)
		return &s, "utf8"
	}
	if printableUTF8(b) {
		s := string(b)
		return &s, "utf8"
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s, "base64"
}

// printableUTF8: valid UTF-8 with no control characters other than tab,
// newline and carriage return.
func printableUTF8(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if unicode.IsControl(r) || r == utf8.RuneError || !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// encodingOptions is --encoding, how the commands that print records
// (dump-log, find, diff) show keys, values and header values: a value of
// encodeBytes.
type encodingOptions struct{ encoding string }

// AddFlags adds --encoding to f.
func (o *encodingOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.encoding, "encoding", "auto", "how keys, values and header values are shown: auto, utf8, hex or base64")
}

// Validate rejects a value encodeBytes does not know.
func (o *encodingOptions) Validate() error {
	switch o.encoding {
	case "auto", "utf8", "hex", "base64":
		return nil
	}
	return usageErrorf("--encoding must be auto, utf8, hex or base64, not %q", o.encoding)
}

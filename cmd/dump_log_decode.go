package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumplog"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/schemaregistry"
)

// The values of dump-log --decoder besides the internal-topic decoder
// names (inspect/dumplog).
const (
	decoderAuto           = dumplog.DecoderAuto
	decoderNone           = dumplog.DecoderNone
	decoderSchemaRegistry = dumplog.DecoderSchemaRegistry
)

// DumpLogSegments' flags for the same decoders, accepted as shortcuts.
var decoderShortcuts = []struct{ flag, decoder, usage string }{
	{"offsets-decoder", internaltopics.ConsumerOffsets, "decode records as __consumer_offsets records (--decoder consumer_offsets)"},
	{"transaction-log-decoder", internaltopics.TransactionState, "decode records as __transaction_state records (--decoder transaction_state)"},
	{"cluster-metadata-decoder", internaltopics.ClusterMetadata, "decode records as KRaft metadata records (--decoder cluster_metadata)"},
	{"share-group-state-decoder", internaltopics.ShareGroupState, "decode records as __share_group_state records (--decoder share_group_state)"},
	{"remote-log-metadata-decoder", internaltopics.RemoteLogMetadata, "decode records as __remote_log_metadata records (--decoder remote_log_metadata)"},
}

func addDecoderFlags(f *pflag.FlagSet, opts *dumpLogOptions) {
	f.StringVar(&opts.decoder, "decoder", decoderAuto, "record decoder: auto (from the topic, or schema-registry when schemas are found), none, "+
		decoderSchemaRegistry+", "+strings.Join(internaltopics.Decoders(), ", "))
	for _, s := range decoderShortcuts {
		f.Bool(s.flag, false, s.usage)
	}
	so := &opts.schemas
	f.StringVar(&so.Schemas, "schemas", "", "schemas for "+decoderSchemaRegistry+": a data directory, a _schemas-0 directory, or a directory of <id>.avsc|.proto|.json (default: _schemas-0 beside PATH)")
	f.StringVar(&so.KeySchema, "key-schema", "", "decode keys as plain Avro or Protobuf (no wire format) with this .avsc or .proto file")
	f.StringVar(&so.ValueSchema, "value-schema", "", "decode values as plain Avro or Protobuf (no wire format) with this .avsc or .proto file")
	f.StringVar(&so.KeyMessage, "key-message", "", "the Protobuf message of --key-schema (default: its first message)")
	f.StringVar(&so.ValueMessage, "value-message", "", "the Protobuf message of --value-schema (default: its first message)")
}

// resolveDecoderFlags checks --decoder and the shortcuts (at most one
// choice); an explicit decoder implies --records, as any decoder option
// implies --print-data-log in DumpLogSegments.
func resolveDecoderFlags(f *pflag.FlagSet, opts *dumpLogOptions) error {
	valid := append([]string{decoderAuto, decoderNone, decoderSchemaRegistry}, internaltopics.Decoders()...)
	ok := false
	for _, v := range valid {
		ok = ok || opts.decoder == v
	}
	if !ok {
		return usageErrorf("--decoder must be one of %s, not %q", strings.Join(valid, ", "), opts.decoder)
	}
	chosen := ""
	if f.Changed("decoder") {
		chosen = "--decoder"
	}
	for _, s := range decoderShortcuts {
		if on, _ := f.GetBool(s.flag); on {
			if chosen != "" {
				return usageErrorf("give one decoder: --%s and %s were both given", s.flag, chosen)
			}
			chosen, opts.decoder = "--"+s.flag, s.decoder
		}
	}
	so := opts.schemas
	if so.KeyMessage != "" && so.KeySchema == "" || so.ValueMessage != "" && so.ValueSchema == "" {
		return usageErrorf("--key-message and --value-message name a message of --key-schema and --value-schema")
	}
	if so.Schemas != "" || so.KeySchema != "" || so.ValueSchema != "" {
		switch opts.decoder {
		case decoderAuto:
			opts.decoder = decoderSchemaRegistry
		case decoderSchemaRegistry:
		default:
			return usageErrorf("--schemas, --key-schema and --value-schema are for --decoder %s, not %s", decoderSchemaRegistry, opts.decoder)
		}
	}
	if opts.decoder != decoderAuto && opts.decoder != decoderNone {
		opts.records = true
	}
	return nil
}

// recordValuesFor is dumplog.ValuesFor with its schema warnings on stderr
// and its option errors as usage errors.
func recordValuesFor(ios *IOStreams, decoder string, so dumplog.SchemaOptions, p *inspect.Partition) (*dumplog.Values, error) {
	v, err := dumplog.ValuesFor(decoder, so, p, schemaWarner(ios))
	var oe *dumplog.OptionError
	var ne *dumplog.NoRegistryError
	switch {
	case errors.As(err, &ne):
		return nil, usageErrorf("--decoder %s: no %s in %s: give --schemas PATH (a data directory, a %[2]s directory or a directory of schema files), or --value-schema FILE",
			decoderSchemaRegistry, schemaregistry.TopicPartitionDir, ne.DataDir)
	case errors.As(err, &oe):
		return nil, usageErrorf("--%s: %v", oe.Option, oe.Err)
	}
	return v, err
}

// schemaWarner says a dumplog.SchemaWarning on stderr.
func schemaWarner(ios *IOStreams) func(dumplog.SchemaWarning) {
	return func(w dumplog.SchemaWarning) {
		if w.Source == "" {
			ios.Warnf("schemas not read, values not decoded: %v", w.Err)
			return
		}
		ios.Warnf("%s: read %s before: %v", w.Source, count(w.Read, "schema"), w.Err)
	}
}

// decodedRecordLine is recordLine plus the decoding of a data record.
func decodedRecordLine(r *record.Record, b *record.Batch, encoding string, v *dumplog.Values, headers bool) recordLineJSON {
	line := recordLine(r, b, encoding, headers)
	line.Decoded = v.Decode(r, b)
	return line
}

// logColumnsFor adds a "decoded" column to the table and CSV views when a
// decoder runs: the record type, then key and value as compact JSON.
func logColumnsFor(v *dumplog.Values) []column[logLine] {
	if v == nil {
		return logColumns
	}
	cols := append([]column[logLine](nil), logColumns...)
	return append(cols, omitIfEmpty(withFit(textColumn("decoded", func(l logLine) string {
		if l.record == nil || l.record.Decoded == nil {
			return ""
		}
		return decodedText(l.record.Decoded)
	}), fitBelow)))
}

func decodedText(decoded any) string {
	switch d := decoded.(type) {
	case *internaltopics.Decoded:
		return internalDecodedText(d)
	case *schemaregistry.Decoded:
		return schemaDecodedText(d)
	}
	return fmt.Sprint(decoded)
}

// schemaDecodedText: key=#ID <json> value=#ID <json>, for the sides that
// decoded, then the error.
func schemaDecodedText(d *schemaregistry.Decoded) string {
	var b strings.Builder
	side := func(name string, ref *schemaregistry.SchemaRef, v json.RawMessage) {
		if ref == nil {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name + "=")
		if ref.ID != nil {
			b.WriteString("#" + strconv.Itoa(int(*ref.ID)) + " ")
		}
		b.Write(v)
	}
	side("key", d.KeySchema, d.Key)
	side("value", d.ValueSchema, d.Value)
	if d.Error != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("error: " + d.Error)
	}
	return b.String()
}

func internalDecodedText(d *internaltopics.Decoded) string {
	var b strings.Builder
	b.WriteString(d.Type)
	if d.Key != nil {
		k, _ := marshalJSON(d.Key)
		b.WriteString(" key=")
		b.Write(k)
	}
	switch {
	case d.Tombstone:
		b.WriteString(" value=null (tombstone)")
	case d.Value != nil:
		v, _ := marshalJSON(d.Value)
		b.WriteString(" value=")
		b.Write(v)
	}
	if d.Note != "" {
		b.WriteString(" (" + d.Note + ")")
	}
	if d.Error != "" {
		b.WriteString(" error: " + d.Error)
	}
	return strings.TrimSpace(b.String())
}

package cmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/schemaregistry"
)

// Values of dump-log --decoder besides the internal-topic decoder names.
const (
	decoderAuto           = "auto" // from the partition directory's topic
	decoderNone           = "none"
	decoderSchemaRegistry = "schema-registry"
)

// schemaOptions are the flags of schema-registry decoding.
type schemaOptions struct {
	schemas                  string // --schemas
	keySchema, valueSchema   string // --key-schema, --value-schema
	keyMessage, valueMessage string // --key-message, --value-message
}

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
	f.StringVar(&so.schemas, "schemas", "", "schemas for "+decoderSchemaRegistry+": a data directory, a _schemas-0 directory, or a directory of <id>.avsc|.proto|.json (default: _schemas-0 beside PATH)")
	f.StringVar(&so.keySchema, "key-schema", "", "decode keys as plain Avro or Protobuf (no wire format) with this .avsc or .proto file")
	f.StringVar(&so.valueSchema, "value-schema", "", "decode values as plain Avro or Protobuf (no wire format) with this .avsc or .proto file")
	f.StringVar(&so.keyMessage, "key-message", "", "the Protobuf message of --key-schema (default: its first message)")
	f.StringVar(&so.valueMessage, "value-message", "", "the Protobuf message of --value-schema (default: its first message)")
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
	if so.keyMessage != "" && so.keySchema == "" || so.valueMessage != "" && so.valueSchema == "" {
		return usageErrorf("--key-message and --value-message name a message of --key-schema and --value-schema")
	}
	if so.schemas != "" || so.keySchema != "" || so.valueSchema != "" {
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

// recordValues decodes the keys and values of data records (control
// records are not the topic's records) into a record line's "decoded"
// object: with an internal topic's decoder, or with a schema registry's
// schemas.
type recordValues struct {
	internal string                  // an internaltopics decoder
	schemas  *schemaregistry.Decoder // or this
}

// internalValues decodes the records of an internal topic (nil for any
// other topic).
func internalValues(topic string) *recordValues {
	if d := internaltopics.ForTopic(topic); d != "" {
		return &recordValues{internal: d}
	}
	return nil
}

// recordValuesFor chooses how p's records are decoded with --decoder
// decoder and the schema flags (nil: not at all); dump-log asks only with
// --records, and find may ask the same. auto follows the topic: an
// internal topic's decoder, else the schema registry's when the data
// directory of p holds _schemas-0 (the registry's own topic, and other
// topics named with a leading underscore, are not decoded with it). A _schemas log damaged part way gives the
// schemas before the damage, with a warning.
func recordValuesFor(ios *IOStreams, decoder string, so schemaOptions, p *inspect.Partition) (*recordValues, error) {
	switch decoder {
	case decoderNone:
		return nil, nil
	case decoderAuto:
		if v := internalValues(p.Topic); v != nil {
			return v, nil
		}
		if strings.HasPrefix(p.Topic, "_") {
			return nil, nil
		}
		reg, err := schemaregistry.Find(filepath.Dir(filepath.Clean(p.Dir)))
		if reg == nil && err == nil {
			return nil, nil
		}
		if reg == nil {
			ios.Warnf("schemas not read, values not decoded: %v", err)
			return nil, nil
		}
		if err != nil {
			ios.Warnf("%s: read %s before: %v", reg.Source, count(reg.Len(), "schema"), err)
		}
		return &recordValues{schemas: schemaregistry.NewDecoder(reg, nil, nil)}, nil
	case decoderSchemaRegistry:
		return openSchemas(ios, so, p)
	}
	return &recordValues{internal: decoder}, nil
}

// openSchemas opens what --decoder schema-registry decodes with: the
// --schemas source or the _schemas-0 beside p, and the plain schema files.
func openSchemas(ios *IOStreams, so schemaOptions, p *inspect.Partition) (*recordValues, error) {
	var reg *schemaregistry.Registry
	var err error
	if so.schemas != "" {
		reg, err = schemaregistry.Open(so.schemas)
	} else {
		dataDir := filepath.Dir(filepath.Clean(p.Dir))
		reg, err = schemaregistry.Find(dataDir)
		if reg == nil && err == nil && so.keySchema == "" && so.valueSchema == "" {
			return nil, usageErrorf("--decoder %s: no %s in %s: give --schemas PATH (a data directory, a %[2]s directory or a directory of schema files), or --value-schema FILE",
				decoderSchemaRegistry, schemaregistry.TopicPartitionDir, dataDir)
		}
	}
	switch {
	case reg == nil && err != nil:
		return nil, usageErrorf("--schemas: %v", err)
	case err != nil:
		ios.Warnf("%s: read %s before: %v", reg.Source, count(reg.Len(), "schema"), err)
	}
	var key, value *schemaregistry.PlainSchema
	if so.keySchema != "" {
		if key, err = schemaregistry.OpenPlainSchema(so.keySchema, so.keyMessage); err != nil {
			return nil, usageErrorf("--key-schema: %v", err)
		}
	}
	if so.valueSchema != "" {
		if value, err = schemaregistry.OpenPlainSchema(so.valueSchema, so.valueMessage); err != nil {
			return nil, usageErrorf("--value-schema: %v", err)
		}
	}
	return &recordValues{schemas: schemaregistry.NewDecoder(reg, key, value)}, nil
}

// decodedRecordLine is recordLine plus the decoding of a data record.
func decodedRecordLine(r *record.Record, b *record.Batch, encoding string, v *recordValues, headers bool) recordLineJSON {
	line := recordLine(r, b, encoding, headers)
	if v == nil || b.IsControl() {
		return line
	}
	if v.schemas != nil {
		d := v.schemas.Decode(r.Key, r.Value)
		line.Decoded = &d
	} else {
		d := internaltopics.Decode(v.internal, r.Key, r.Value)
		line.Decoded = &d
	}
	return line
}

// logColumnsFor adds a "decoded" column to the table and CSV views when a
// decoder runs: the record type, then key and value as compact JSON.
func logColumnsFor(v *recordValues) []column[logLine] {
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

package dumplog

import (
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/schemaregistry"
)

// Decoder names besides the internal-topic decoders (internaltopics.Decoders).
const (
	DecoderAuto           = "auto" // from the partition directory's topic
	DecoderNone           = "none"
	DecoderSchemaRegistry = "schema-registry"
)

// SchemaOptions name the schemas of DecoderSchemaRegistry: a registry
// (Schemas: a data directory, a _schemas-0 directory or a directory of
// schema files; default the _schemas-0 beside the partition), and plain
// Avro or Protobuf schemas of keys and values without the wire format.
type SchemaOptions struct {
	Schemas                  string
	KeySchema, ValueSchema   string
	KeyMessage, ValueMessage string
}

// Values decodes the keys and values of data records (control records are
// not the topic's records): with an internal topic's decoder, or with a
// schema registry's schemas. A nil *Values decodes nothing.
type Values struct {
	internal string                  // an internaltopics decoder
	schemas  *schemaregistry.Decoder // or this
}

// Decode is the decoding of a data record of b: an *internaltopics.Decoded
// or a *schemaregistry.Decoded; nil for a control record or a nil v.
func (v *Values) Decode(r *record.Record, b *record.Batch) any {
	if v == nil || b.IsControl() {
		return nil
	}
	if v.schemas != nil {
		d := v.schemas.Decode(r.Key, r.Value)
		return &d
	}
	d := internaltopics.Decode(v.internal, r.Key, r.Value)
	return &d
}

// OptionError is a schema option of ValuesFor that cannot be used as
// given (a registry or schema file that does not read): the caller's
// fault, not the data's. Option names the SchemaOptions field: "schemas",
// "key-schema" or "value-schema".
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// NoRegistryError is DecoderSchemaRegistry without a registry to decode
// with: none given, none in DataDir beside the partition, and no plain
// schema.
type NoRegistryError struct{ DataDir string }

func (e *NoRegistryError) Error() string {
	return "no " + schemaregistry.TopicPartitionDir + " in " + e.DataDir
}

// SchemaWarning is a problem with the schemas that does not stop the
// decoding: no registry could be read (Source "", the values are not
// decoded), or the registry at Source was read part way (the Read
// schemas before Err decode).
type SchemaWarning struct {
	Source string
	Read   int
	Err    error
}

// ValuesFor chooses how p's records are decoded with decoder (DecoderAuto,
// DecoderNone, DecoderSchemaRegistry or an internaltopics decoder) and the
// schema options; nil decodes nothing. DecoderAuto follows the topic: an
// internal topic's decoder, else the schema registry's when the data
// directory of p holds _schemas-0 (the registry's own topic, and other
// topics named with a leading underscore, are not decoded with it). A
// _schemas log damaged part way gives the schemas before the damage; warn
// is told so. DecoderAuto never fails: problems with schemas are warnings.
func ValuesFor(decoder string, so SchemaOptions, p *inspect.Partition, warn func(SchemaWarning)) (*Values, error) {
	switch decoder {
	case DecoderNone:
		return nil, nil
	case DecoderAuto:
		if d := internaltopics.ForTopic(p.Topic); d != "" {
			return &Values{internal: d}, nil
		}
		if strings.HasPrefix(p.Topic, "_") {
			return nil, nil
		}
		reg, err := schemaregistry.Find(filepath.Dir(filepath.Clean(p.Dir)))
		if reg == nil && err == nil {
			return nil, nil
		}
		if reg == nil {
			warn(SchemaWarning{Err: err})
			return nil, nil
		}
		if err != nil {
			warn(SchemaWarning{Source: reg.Source, Read: reg.Len(), Err: err})
		}
		return &Values{schemas: schemaregistry.NewDecoder(reg, nil, nil)}, nil
	case DecoderSchemaRegistry:
		return openSchemas(so, p, warn)
	}
	return &Values{internal: decoder}, nil
}

// openSchemas opens what DecoderSchemaRegistry decodes with: the Schemas
// source or the _schemas-0 beside p, and the plain schema files.
func openSchemas(so SchemaOptions, p *inspect.Partition, warn func(SchemaWarning)) (*Values, error) {
	var reg *schemaregistry.Registry
	var err error
	if so.Schemas != "" {
		reg, err = schemaregistry.Open(so.Schemas)
	} else {
		dataDir := filepath.Dir(filepath.Clean(p.Dir))
		reg, err = schemaregistry.Find(dataDir)
		if reg == nil && err == nil && so.KeySchema == "" && so.ValueSchema == "" {
			return nil, &NoRegistryError{DataDir: dataDir}
		}
	}
	switch {
	case reg == nil && err != nil:
		return nil, &OptionError{Option: "schemas", Err: err}
	case err != nil:
		warn(SchemaWarning{Source: reg.Source, Read: reg.Len(), Err: err})
	}
	var key, value *schemaregistry.PlainSchema
	if so.KeySchema != "" {
		if key, err = schemaregistry.OpenPlainSchema(so.KeySchema, so.KeyMessage); err != nil {
			return nil, &OptionError{Option: "key-schema", Err: err}
		}
	}
	if so.ValueSchema != "" {
		if value, err = schemaregistry.OpenPlainSchema(so.ValueSchema, so.ValueMessage); err != nil {
			return nil, &OptionError{Option: "value-schema", Err: err}
		}
	}
	return &Values{schemas: schemaregistry.NewDecoder(reg, key, value)}, nil
}

// AutoValues returns how a search decodes each partition's keys and values
// (DecoderAuto, as dump-log --records): chosen once per data directory and
// topic, so that a registry's schemas are read once. The function is not
// safe for concurrent use.
func AutoValues(warn func(SchemaWarning)) func(*inspect.Partition) *Values {
	chosen := map[[2]string]*Values{}
	return func(p *inspect.Partition) *Values {
		k := [2]string{filepath.Dir(filepath.Clean(p.Dir)), p.Topic}
		v, ok := chosen[k]
		if !ok {
			v, _ = ValuesFor(DecoderAuto, SchemaOptions{}, p, warn) // auto never fails
			chosen[k] = v
		}
		return v
	}
}

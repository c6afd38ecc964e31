// Package schemaregistry decodes record keys and values written in the
// Confluent schema-registry wire format (byte 0, a 4-byte big-endian schema
// id, then the payload) offline: the schemas are read from the registry's
// own topic (_schemas-0) in a data directory, replayed as the registry
// replays it at start-up, or from a directory of schema files. Avro values
// become Avro's JSON encoding, Protobuf values the canonical protobuf JSON
// mapping, JSON Schema values the JSON document.
package schemaregistry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// Schema types as the registry names them (schemaType; absent means AVRO).
const (
	Avro       = "AVRO"
	Protobuf   = "PROTOBUF"
	JSONSchema = "JSON"
)

// Topic is the registry's default kafkastore.topic; its one partition is
// TopicPartitionDir in a data directory.
const (
	Topic             = "_schemas"
	TopicPartitionDir = Topic + "-0"
)

// Reference is a schema's reference to another one (an Avro named type, a
// Protobuf import, a JSON Schema $ref): the name it is known by in the
// referring schema, and the subject and version that hold it.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int32  `json:"version"`
}

// Schema is one registered schema version: the value of a SCHEMA record of
// _schemas (io.confluent.kafka.schemaregistry.storage.SchemaValue).
type Schema struct {
	Subject    string      `json:"subject"`
	Version    int32       `json:"version"`
	ID         int32       `json:"id"`
	SchemaType string      `json:"schemaType"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references"`
	// Deleted is a soft delete: the registry no longer lists the version,
	// but still serves the id, so data written with it still decodes.
	Deleted bool `json:"deleted"`
	// File is the schema file the schema was read from (a directory of
	// schema files), "" for a _schemas record.
	File string `json:"-"`
}

// subjectVersion identifies a SCHEMA record: the key the registry's store
// keeps (SchemaKey's subject and version).
type subjectVersion struct {
	subject string
	version int32
}

// Registry is the set of schemas read from one source. Lookups are safe for
// concurrent use; compiled schemas are cached per id.
type Registry struct {
	// Source is the _schemas partition directory or the schema directory
	// read.
	Source string
	// Records is the number of records replayed (0 for a directory of
	// files).
	Records int

	byID      map[int32]*Schema
	byVersion map[subjectVersion]*Schema
	latest    map[string]int32 // subject -> highest version

	mu       sync.Mutex
	compiled map[int32]*compiled
	dir      string // schema-file directory: Protobuf imports resolve in it
}

func newRegistry(source string) *Registry {
	return &Registry{Source: source, byID: map[int32]*Schema{}, byVersion: map[subjectVersion]*Schema{},
		latest: map[string]int32{}, compiled: map[int32]*compiled{}}
}

// Len is the number of schema ids known.
func (r *Registry) Len() int { return len(r.byID) }

// Lookup returns the schema of id, or nil.
func (r *Registry) Lookup(id int32) *Schema { return r.byID[id] }

// IDs lists the known ids in increasing order.
func (r *Registry) IDs() []int32 {
	ids := make([]int32, 0, len(r.byID))
	for id := range r.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// version resolves a reference: a subject's version, -1 meaning the
// latest (as the registry resolves references).
func (r *Registry) version(subject string, version int32) *Schema {
	if version == -1 {
		version = r.latest[subject]
	}
	return r.byVersion[subjectVersion{subject, version}]
}

// ErrNoSchemas: a --schemas path holds neither a _schemas partition nor
// schema files.
var ErrNoSchemas = errors.New("no schemas found")

// noSchemas: path is not a schema source Open reads.
func noSchemas(path string) error {
	return fmt.Errorf("%s: %w: want a data directory, a %s directory or a directory of <id>.avsc, <id>.proto, <id>.json files",
		path, ErrNoSchemas, TopicPartitionDir)
}

// Find looks for the registry's topic in a data directory: it returns nil
// and no error when dataDir has no _schemas-0 directory.
func Find(dataDir string) (*Registry, error) {
	dir := filepath.Join(dataDir, TopicPartitionDir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil
	}
	return readTopic(dir)
}

// Open reads the schemas at path: a data directory holding _schemas-0, a
// partition directory of the registry's topic (any name: kafkastore.topic
// may differ), or a directory of schema files named <id>.avsc, <id>.proto
// and <id>.json. A damaged _schemas log yields the schemas read before the
// damage and the error.
func Open(path string) (*Registry, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, noSchemas(path)
	}
	if _, _, ok := inspect.ParsePartitionDirName(filepath.Base(filepath.Clean(path))); ok {
		r, err := readTopic(path)
		if err == nil && r.Len() == 0 {
			return nil, fmt.Errorf("%s: %w: %d records, none registers a schema", path, ErrNoSchemas, r.Records)
		}
		return r, err
	}
	if r, err := Find(path); r != nil || err != nil {
		return r, err
	}
	return readFiles(path)
}

// readTopic replays a _schemas partition as the registry's KafkaStore does
// at start-up (KafkaStoreReaderThread, SchemaRegistry's store): records in
// offset order, the last record of a key wins, a null value deletes the
// key; only keytype SCHEMA defines schemas (CONFIG, MODE, DELETE_SUBJECT,
// CLEAR_SUBJECT and NOOP records do not).
func readTopic(dir string) (*Registry, error) {
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		return nil, err
	}
	reg := newRegistry(dir)
	live := map[subjectVersion]*Schema{}
	var rd record.RecordDecoder
	walkErr := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		if w.Batch.IsControl() {
			return nil
		}
		return rd.Records(w.Segment.Log, w.Entry, w.Batch, func(rec *record.Record) error {
			reg.Records++
			replay(live, rec.Key, rec.Value)
			return nil
		})
	})
	for _, s := range live {
		reg.add(s)
	}
	return reg, walkErr
}

// schemaKey is the JSON key of a _schemas record (SchemaRegistryKey).
type schemaKey struct {
	KeyType string `json:"keytype"`
	Subject string `json:"subject"`
	Version *int32 `json:"version"`
}

// replay applies one _schemas record to the live set. Records that are not
// SCHEMA records, or that do not parse, are skipped as the registry's
// serializer would reject them.
func replay(live map[subjectVersion]*Schema, key, value []byte) {
	var k schemaKey
	if json.Unmarshal(key, &k) != nil || k.KeyType != "SCHEMA" || k.Version == nil {
		return
	}
	sv := subjectVersion{k.Subject, *k.Version}
	if value == nil {
		delete(live, sv)
		return
	}
	var s Schema
	if json.Unmarshal(value, &s) != nil {
		return
	}
	if s.SchemaType == "" {
		s.SchemaType = Avro
	}
	s.Subject, s.Version = sv.subject, sv.version
	live[sv] = &s
}

// add indexes s by subject and version and by id. One id may be registered
// under several subjects (the same schema text): the id names the one not
// deleted, then the first subject and version in order.
func (r *Registry) add(s *Schema) {
	sv := subjectVersion{s.Subject, s.Version}
	r.byVersion[sv] = s
	if s.Version > r.latest[s.Subject] {
		r.latest[s.Subject] = s.Version
	}
	if o := r.byID[s.ID]; o != nil {
		if o.Deleted == s.Deleted && (o.Subject < s.Subject || o.Subject == s.Subject && o.Version < s.Version) || !o.Deleted && s.Deleted {
			return
		}
	}
	r.byID[s.ID] = s
}

// schemaFileTypes maps a schema file's extension to its schema type.
var schemaFileTypes = map[string]string{".avsc": Avro, ".proto": Protobuf, ".json": JSONSchema}

// readFiles reads a directory of <id>.avsc, <id>.proto and <id>.json
// files. Other files are ignored; Protobuf imports are resolved in the
// same directory.
func readFiles(dir string) (*Registry, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	reg := newRegistry(dir)
	reg.dir = dir
	for _, e := range ents {
		ext := filepath.Ext(e.Name())
		typ, ok := schemaFileTypes[ext]
		if !ok || e.IsDir() {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSuffix(e.Name(), ext), 10, 32)
		if err != nil || id < 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		text, err := readSchemaFile(path)
		if err != nil {
			return nil, err
		}
		if o := reg.byID[int32(id)]; o != nil {
			return nil, fmt.Errorf("%s: schema id %d is also defined by %s", path, id, o.File)
		}
		reg.byID[int32(id)] = &Schema{ID: int32(id), SchemaType: typ, Schema: text, File: path}
	}
	if len(reg.byID) == 0 {
		return nil, noSchemas(dir)
	}
	return reg, nil
}

// maxSchemaFileBytes bounds a schema file read whole.
const maxSchemaFileBytes = 16 << 20

func readSchemaFile(path string) (string, error) {
	// fileio.ReadFile: a FIFO is refused, not waited on.
	b, err := fileio.ReadFile(path, maxSchemaFileBytes)
	return string(b), err
}

package schemaregistry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Protobuf schemas are compiled from their text by
// github.com/bufbuild/protocompile; values are decoded with dynamicpb and
// printed with protojson (decode.go).

// rootFile is the name the schema being compiled goes by; its imports are
// the names of its references.
const rootFile = "schema-registry-root.proto"

// compileProto compiles a Protobuf schema. An import is found among the
// schema's references (depth first, by the reference name the registry's
// ProtobufSchema imports it by), then, for a directory of schema files, as
// a file of that directory, then among the well-known types.
func (r *Registry) compileProto(s *Schema) (protoreflect.FileDescriptor, error) {
	sources := map[string]string{rootFile: s.Schema}
	var collect func(refs []Reference, depth int) error
	collect = func(refs []Reference, depth int) error {
		if depth > maxReferenceDepth {
			return fmt.Errorf("references nest deeper than %d", maxReferenceDepth)
		}
		for _, ref := range refs {
			if _, ok := sources[ref.Name]; ok {
				continue
			}
			rs := r.version(ref.Subject, ref.Version)
			if rs == nil {
				return fmt.Errorf("reference %q: subject %q version %d not found", ref.Name, ref.Subject, ref.Version)
			}
			sources[ref.Name] = rs.Schema
			if err := collect(rs.References, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := collect(s.References, 0); err != nil {
		return nil, err
	}
	return r.compileProtoText(sources)
}

// compileProtoText compiles sources[rootFile] with the other sources as
// its imports.
func (r *Registry) compileProtoText(sources map[string]string) (protoreflect.FileDescriptor, error) {
	dir := r.dir
	accessor := func(path string) (io.ReadCloser, error) {
		if text, ok := sources[path]; ok {
			return io.NopCloser(strings.NewReader(text)), nil
		}
		if dir != "" && filepath.IsLocal(path) {
			text, err := readSchemaFile(filepath.Join(dir, path))
			if err == nil {
				return io.NopCloser(strings.NewReader(text)), nil
			}
		}
		return nil, os.ErrNotExist
	}
	var first error
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: accessor}),
		MaxParallelism: 1,
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			if first == nil {
				first = err
			}
			return err
		}, nil),
	}
	files, err := c.Compile(context.Background(), rootFile)
	if first != nil {
		err = first
	}
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), rootFile+":", "line:col "))
	}
	return files[0], nil
}

// protoMessage finds the message a wire-format message-index list names:
// the first index a top-level message of the file, each further one a
// message nested in the previous.
func protoMessage(fd protoreflect.FileDescriptor, indexes []int64) (protoreflect.MessageDescriptor, error) {
	msgs := fd.Messages()
	var md protoreflect.MessageDescriptor
	for i, ix := range indexes {
		if ix < 0 || ix >= int64(msgs.Len()) {
			if i == 0 {
				return nil, fmt.Errorf("message index %d: the schema has %d top-level messages", ix, msgs.Len())
			}
			return nil, fmt.Errorf("message index %d: %s has %d nested messages", ix, md.FullName(), msgs.Len())
		}
		md = msgs.Get(int(ix))
		msgs = md.Messages()
	}
	if md == nil {
		return nil, errors.New("the schema has no message")
	}
	return md, nil
}

// protoMessageByName finds a message by its full name or, when that is
// unique, its short name; "" names the file's first message.
func protoMessageByName(fd protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	if name == "" {
		return protoMessage(fd, []int64{0})
	}
	var found []protoreflect.MessageDescriptor
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if string(m.FullName()) == name || string(m.Name()) == name || strings.TrimPrefix(string(m.FullName()), string(fd.Package())+".") == name {
				found = append(found, m)
			}
			walk(m.Messages())
		}
	}
	walk(fd.Messages())
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no message %q", name)
	case 1:
		return found[0], nil
	}
	for _, m := range found {
		if string(m.FullName()) == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("message name %q is ambiguous (%s, %s): give the full name", name, found[0].FullName(), found[1].FullName())
}

// messageIndexes reads the wire format's message-index list after the
// schema id (Confluent's MessageIndexes: a zig-zag varint count, then the
// indexes; a count of 0 means [0], the first message). It returns the
// indexes (in buf) and the bytes read.
func messageIndexes(b []byte, buf []int64) ([]int64, int, error) {
	r := avroReader{b: b}
	n, err := r.long()
	if err != nil {
		return nil, 0, fmt.Errorf("message-index list: %w", err)
	}
	if n == 0 {
		return append(buf[:0], 0), r.pos, nil
	}
	if n < 0 || n > int64(len(b)-r.pos) {
		return nil, 0, fmt.Errorf("message-index list: count %d with %d bytes left", n, len(b)-r.pos)
	}
	buf = buf[:0]
	for range n {
		ix, err := r.long()
		if err != nil {
			return nil, 0, fmt.Errorf("message-index list: %w", err)
		}
		buf = append(buf, ix)
	}
	return buf, r.pos, nil
}

package dumpsnapshot_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumpsnapshot"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/sidefile"
)

func dump(t *testing.T, f inspect.SnapshotFile) ([]dumpsnapshot.Line, dumpsnapshot.Result, error) {
	t.Helper()
	var lines []dumpsnapshot.Line
	res, err := dumpsnapshot.Dump(f, func(l dumpsnapshot.Line) { lines = append(lines, l) })
	return lines, res, err
}

// decode reads a version 1 snapshot the plain way (the layout of
// ProducerStateManager's schema: a 10-byte header, 46-byte entries),
// independently of sidefile, into the lines dump-snapshot prints.
func decode(t *testing.T, f inspect.SnapshotFile) []dumpsnapshot.Line {
	t.Helper()
	b, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	version, crc, count := int16(be.Uint16(b)), be.Uint32(b[2:]), int(be.Uint32(b[6:]))
	valid := crc == crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli))
	trailing := int64(len(b) - 10 - 46*count)
	out := []dumpsnapshot.Line{{Kind: "snapshot", File: f.Path, Offset: f.Offset, Version: &version, CRC: &crc, CRCValid: &valid, Producers: &count, TrailingBytes: &trailing}}
	for i := 0; i < count; i++ {
		e := b[10+46*i:]
		p := &dumpsnapshot.Producer{ProducerID: int64(be.Uint64(e)), ProducerEpoch: int16(be.Uint16(e[8:])), LastSequence: int32(be.Uint32(e[10:])),
			LastOffset: int64(be.Uint64(e[14:])), OffsetDelta: int32(be.Uint32(e[22:])), LastTimestamp: int64(be.Uint64(e[26:])),
			CoordinatorEpoch: int32(be.Uint32(e[34:])), CurrentTxnFirstOffset: int64(be.Uint64(e[38:]))}
		if p.LastOffset >= 0 {
			seq := int64(p.LastSequence) - int64(p.OffsetDelta)
			if seq < 0 { // DefaultRecordBatch.decrementSequence wraps below 0
				seq += math.MaxInt32 + 1
			}
			first, off := int32(seq), p.LastOffset-int64(p.OffsetDelta)
			p.FirstSequence, p.FirstOffset = &first, &off
		}
		out = append(out, dumpsnapshot.Line{Kind: "producer", File: f.Path, Offset: f.Offset, Producer: p})
	}
	return out
}

// Every real broker's snapshots: Files on each data directory names its
// partitions' snapshot files, partition by partition, by offset; Dump
// reads each as the plain decoding above does, CRCs valid.
func TestRealSnapshotsMatchPlainDecoding(t *testing.T) {
	total := 0
	for _, dir := range fixtures.Dirs(t) {
		files, err := dumpsnapshot.Files(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		want, err := filepath.Glob(filepath.Join(dir, "*", "*.snapshot"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.Path)
			off, err := inspect.ParseBaseOffset(filepath.Base(f.Path))
			if err != nil || off != f.Offset {
				t.Errorf("%s: offset %d, the name says %d (%v)", f.Path, f.Offset, off, err)
			}
			lines, res, err := dump(t, f)
			if err != nil || !res.Read || res.CRCMismatch || res.StoredCRC != res.ComputedCRC || res.Producers != len(lines)-1 {
				t.Errorf("%s: %+v, %v", f.Path, res, err)
			}
			if plain := decode(t, f); !reflect.DeepEqual(lines, plain) {
				t.Errorf("%s:\n got %s\nwant %s", f.Path, js(t, lines), js(t, plain))
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Files\n got %v\nwant %v", dir, got, want)
		}
		total += len(files)
	}
	if total < 20 {
		t.Errorf("%d snapshots in the real fixtures, want at least 20", total)
	}

	// One whose values the contract's example shows.
	p := filepath.Join(fixtures.Root(t), "cp-kraft-snappy-small", "wallet_event-0")
	files, err := dumpsnapshot.Files(p)
	if err != nil || len(files) != 1 || files[0].Offset != 7 {
		t.Fatalf("%s: %v %v", p, files, err)
	}
	lines, _, _ := dump(t, files[0])
	if len(lines) != 3 || *lines[0].Producers != 2 || !*lines[0].CRCValid {
		t.Fatalf("%s", js(t, lines))
	}
	if s := js(t, lines[2:3]); !strings.HasSuffix(s, `"producer_id":1000,"producer_epoch":0,"coordinator_epoch":-1,"current_txn_first_offset":-1,"last_timestamp":1762959382648,"last_sequence":5,"last_offset":6,"offset_delta":0,"first_sequence":5,"first_offset":6}]`) {
		t.Errorf("producer line %s", s)
	}
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The JSON lines: a snapshot line has no producer fields, a producer
// line no snapshot fields, and a producer without a last batch has null
// first_sequence and first_offset.
func TestLineJSON(t *testing.T) {
	v, crc, ok, n, tb := int16(1), uint32(7), false, 1, int64(0)
	s := dumpsnapshot.Line{Kind: "snapshot", File: "a/9.snapshot", Offset: 9, Version: &v, CRC: &crc, CRCValid: &ok, Producers: &n, TrailingBytes: &tb}
	if got, want := js(t, s), `{"kind":"snapshot","file":"a/9.snapshot","offset":9,"version":1,"crc":7,"crc_valid":false,"producers":1,"trailing_bytes":0}`; got != want {
		t.Errorf("snapshot line\n got %s\nwant %s", got, want)
	}
	p := dumpsnapshot.Line{Kind: "producer", File: "a/9.snapshot", Offset: 9, Producer: &dumpsnapshot.Producer{ProducerID: 3, ProducerEpoch: 1,
		CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1, LastTimestamp: 5, LastSequence: -1, LastOffset: -1}}
	if got, want := js(t, p), `{"kind":"producer","file":"a/9.snapshot","offset":9,"producer_id":3,"producer_epoch":1,"coordinator_epoch":-1,"current_txn_first_offset":-1,"last_timestamp":5,"last_sequence":-1,"last_offset":-1,"offset_delta":0,"first_sequence":null,"first_offset":null}`; got != want {
		t.Errorf("producer line\n got %s\nwant %s", got, want)
	}
}

// Damaged snapshots: a CRC that does not match lists everything and is
// no error (Result says it); an entry array cut short lists the entries
// there and names the byte position; an unknown version says so at 0; a
// file that cannot be read lists nothing.
func TestDumpDamagedSnapshots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Segments: 2, Batches: 12, Transactions: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Snapshots) == 0 {
		t.Fatal("no snapshot generated")
	}
	src := filepath.Join(dir, inspect.SegmentName(m.Snapshots[0])+inspect.SnapshotSuffix)
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	count := int(binary.BigEndian.Uint32(good[6:]))
	if count < 2 {
		t.Fatalf("%d producers in the generated snapshot, want at least 2", count)
	}
	write := func(off int64, b []byte) inspect.SnapshotFile {
		f := inspect.SnapshotFile{Offset: off, Path: filepath.Join(dir, inspect.SegmentName(off)+inspect.SnapshotSuffix)}
		if err := os.WriteFile(f.Path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}

	stale := write(1001, append(append([]byte(nil), good...), 0, 0))
	lines, res, err := dump(t, stale)
	if err != nil || !res.Read || !res.CRCMismatch || res.StoredCRC == res.ComputedCRC || res.Producers != count || len(lines) != count+1 ||
		*lines[0].CRCValid || *lines[0].TrailingBytes != 2 || res.ComputedCRC != crc32.Checksum(append(good[6:], 0, 0), crc32.MakeTable(crc32.Castagnoli)) {
		t.Errorf("stale bytes after the entries: %d lines, %+v, %v", len(lines), res, err)
	}

	cut := write(1002, good[:10+46+20])
	lines, res, err = dump(t, cut)
	var ce *fileio.CorruptError
	if !res.Read || res.CRCMismatch || res.Producers != 1 || len(lines) != 2 || lines[1].Producer == nil ||
		!errors.As(err, &ce) || !errors.Is(err, sidefile.ErrCorruptSnapshot) || ce.File != cut.Path || ce.Position != 56 {
		t.Errorf("cut after one entry: %d lines, %+v, %v", len(lines), res, err)
	}

	garbage := write(1003, []byte("garbage\n"))
	lines, res, err = dump(t, garbage)
	if !res.Read || len(lines) != 1 || *lines[0].Version != 26465 || !errors.As(err, &ce) || ce.Position != 0 ||
		!strings.Contains(err.Error(), "unknown file version 26465") {
		t.Errorf("garbage: %s, %+v, %v", js(t, lines), res, err)
	}

	lines, res, err = dump(t, inspect.SnapshotFile{Offset: 5, Path: filepath.Join(dir, "gone.snapshot")})
	if res.Read || len(lines) != 0 || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file gone: %d lines, %+v, %v", len(lines), res, err)
	}
}

// What each kind of PATH names, and what a PATH that names no snapshot
// says.
func TestFiles(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if _, err := dumpsnapshot.Files(filepath.Join(root, "nosuch")); err == nil || err.Error() != filepath.Join(root, "nosuch")+": no such file or directory" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
	part := filepath.Join(data, "orders-0")
	m, err := kafkagen.Generate(part, kafkagen.Options{Seed: 4, Segments: 3, Batches: 12, Transactions: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Snapshots) < 2 {
		t.Fatalf("snapshots %v, want two or more", m.Snapshots)
	}
	var want []inspect.SnapshotFile
	for _, off := range m.Snapshots {
		want = append(want, inspect.SnapshotFile{Offset: off, Path: filepath.Join(part, inspect.SegmentName(off)+inspect.SnapshotSuffix)})
	}
	if got, err := dumpsnapshot.Files(part); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("partition: %v %v, want %v", got, err, want)
	}
	if got, err := dumpsnapshot.Files(want[1].Path); err != nil || !reflect.DeepEqual(got, want[1:2]) {
		t.Errorf("one file: %v %v", got, err)
	}
	if got, err := dumpsnapshot.Files(data); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("data directory: %v %v, want %v", got, err, want)
	}
	log := filepath.Join(part, "00000000000000000000.log")
	if _, err := dumpsnapshot.Files(log); !errors.Is(err, fileio.ErrNotKafka) || err.Error() != log+": "+fileio.ErrNotKafka.Error()+": expected a .snapshot file, a partition directory or a data directory" {
		t.Errorf("a .log: %v", err)
	}
	odd := filepath.Join(part, "x.snapshot")
	if err := os.WriteFile(odd, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dumpsnapshot.Files(odd); !errors.Is(err, fileio.ErrNotKafka) || !strings.HasPrefix(err.Error(), odd+": x.snapshot: ") {
		t.Errorf("a .snapshot without an offset: %v", err)
	}

	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	_, rerr := inspect.Resolve(empty)
	if _, err := dumpsnapshot.Files(empty); err == nil || rerr == nil || err.Error() != rerr.Error() {
		t.Errorf("an empty directory: %v, want Resolve's %v", err, rerr)
	}
	// A partition whose segments are gone still has its snapshot listed,
	// though Resolve refuses the directory.
	gone := filepath.Join(root, "gone-0")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	g := inspect.SnapshotFile{Offset: 40, Path: filepath.Join(gone, inspect.SegmentName(40)+inspect.SnapshotSuffix)}
	if err := os.WriteFile(g.Path, sidefile.AppendProducerSnapshot(nil, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := dumpsnapshot.Files(gone); err != nil || !reflect.DeepEqual(got, []inspect.SnapshotFile{g}) {
		t.Errorf("a partition without segments: %v %v", got, err)
	}
	// A partition directory without snapshots names none.
	for _, f := range want {
		if err := os.Remove(f.Path); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := dumpsnapshot.Files(part); err != nil || len(got) != 0 {
		t.Errorf("a partition without snapshots: %v %v", got, err)
	}
}

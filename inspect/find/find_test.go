package find_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/find"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/sidefile"
)

// shapes are the partitions of the generated data directory: every magic,
// several codecs, every timestamp pattern, LogAppendTime, compaction gaps,
// transactions, several segments, dense and sparse indexes.
var shapes = []struct {
	dir string
	o   kafkagen.Options
}{
	{"orders-0", kafkagen.Options{}},
	{"orders-1", kafkagen.Options{Compression: "gzip", Timestamps: "jumping"}},
	{"orders-2", kafkagen.Options{Compression: "lz4", LogAppendTime: 0.5, IndexIntervalBytes: kafkagen.IndexEveryBatch}},
	{"orders-10", kafkagen.Options{Compression: "zstd", Timestamps: "random"}},
	{"audit-0", kafkagen.Options{CompactionGaps: true, Timestamps: "random", IndexIntervalBytes: kafkagen.IndexEveryBatch}},
	{"audit-1", kafkagen.Options{Transactions: true, Timestamps: "jumping", Compression: "snappy"}},
	{"legacy-0", kafkagen.Options{Magic: 1, Compression: "gzip", LogAppendTime: 0.3}},
	{"legacy-1", kafkagen.Options{Magic: 1, CompactionGaps: true, Timestamps: "random", IndexIntervalBytes: 1 << 30}},
	{"old-0", kafkagen.Options{Magic: kafkagen.MagicV0, Compression: "snappy"}},
	{"start-0", kafkagen.Options{StartOffset: 1 << 40, Timestamps: "equal", EmptyActiveSegment: true}},
}

type oracleRecord struct {
	dir   string
	batch *kafkagen.BatchManifest
	rec   kafkagen.RecordManifest
}

// generateDataDir writes the shapes into one data directory and returns
// its partitions in ls order and every data record in that order.
func generateDataDir(t testing.TB) ([]*inspect.Partition, []oracleRecord) {
	t.Helper()
	root := t.TempDir()
	manifests := map[string]*kafkagen.Manifest{}
	for i, s := range shapes {
		o := s.o
		o.Seed = int64(i + 1)
		o.Segments = 3
		o.Batches = 30
		o.RecordsPerBatch = 6
		o.ValueSize = 80
		m, err := kafkagen.Generate(filepath.Join(root, s.dir), o)
		if err != nil {
			t.Fatalf("%s: %v", s.dir, err)
		}
		manifests[s.dir] = m
	}
	tg, err := inspect.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	parts := tg.Partitions
	sortLikeLs(parts)
	var all []oracleRecord
	for _, p := range parts {
		all = append(all, oracleRecords(p.Name(), manifests[p.Name()])...)
	}
	return parts, all
}

// oracleRecords is every data record m's partition (named dir) holds, in
// offset order: what a brute force searches.
func oracleRecords(dir string, m *kafkagen.Manifest) []oracleRecord {
	var all []oracleRecord
	for si := range m.Segments {
		for bi := range m.Segments[si].Batches {
			b := &m.Segments[si].Batches[bi]
			if b.Control {
				continue
			}
			for _, r := range b.Records {
				all = append(all, oracleRecord{dir, b, r})
			}
		}
	}
	return all
}

// sortLikeLs orders partitions by topic, then number (as kseg ls does).
func sortLikeLs(ps []*inspect.Partition) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0; j-- {
			a, b := ps[j-1], ps[j]
			if a.Topic < b.Topic || a.Topic == b.Topic && a.Partition <= b.Partition {
				break
			}
			ps[j-1], ps[j] = b, a
		}
	}
}

// bruteForce is the filter written out over the generator's manifest.
func bruteForce(all []oracleRecord, f find.Filter, maxN int) []string {
	var out []string
records:
	for _, o := range all {
		r := o.rec
		switch {
		case f.FromOffset != nil && r.Offset < *f.FromOffset, f.ToOffset != nil && r.Offset > *f.ToOffset:
			continue
		case f.FromTime != nil && r.Timestamp < *f.FromTime, f.ToTime != nil && r.Timestamp > *f.ToTime:
			continue
		case f.Key != nil && (r.Key == nil || string(r.Key) != string(f.Key)):
			continue
		case f.KeyPrefix != nil && (r.Key == nil || !bytes.HasPrefix(r.Key, f.KeyPrefix)):
			continue
		case f.ValueContains != nil && (r.Value == nil || !bytes.Contains(r.Value, f.ValueContains)):
			continue
		}
		for _, h := range f.Headers {
			ok := false
			for _, x := range r.Headers {
				if x.Key == h.Name && (!h.HasValue || (x.Value == nil) == (h.Value == nil) && string(x.Value) == string(h.Value)) {
					ok = true
				}
			}
			if !ok {
				continue records
			}
		}
		out = append(out, line(o.dir, o.batch.Position, o.batch.BaseOffset, r.Offset, r.Timestamp, r.Key, r.Value, len(r.Headers)))
		if maxN > 0 && len(out) == maxN {
			break
		}
	}
	return out
}

func line(dir string, pos, base, off, ts int64, key, value []byte, headers int) string {
	k := "null"
	if key != nil {
		k = fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%s batch@%d base=%d offset=%d ts=%d key=%s value=%q headers=%d", dir, pos, base, off, ts, k, value, headers)
}

func search(t *testing.T, parts []*inspect.Partition, opts find.Options) ([]string, find.Result) {
	t.Helper()
	got, _, res := collect(t, parts, opts)
	return got, res
}

// collect runs a search and returns its matches as lines and the
// misleading index entries it reported; damage fails the test (the logs
// are generated whole).
func collect(t *testing.T, parts []*inspect.Partition, opts find.Options) (got, misled []string, res find.Result) {
	t.Helper()
	res, err := find.Search(parts, opts, func(e find.Event) error {
		switch {
		case e.Damage != nil:
			t.Errorf("damage in generated data: %v", e.Damage.Err)
		case e.Misleading != nil:
			misled = append(misled, e.Misleading.String())
		default:
			m := e.Match
			got = append(got, line(m.Partition.Name(), m.Batch.Position, m.BatchBaseOffset, m.Record.Offset, m.Record.Timestamp, m.Record.Key, m.Record.Value, m.Record.HeaderCount))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, misled, res
}

func p64(v int64) *int64 { return &v }

// TestSearchMatchesBruteForce is the differential test: over a data
// directory of ten generated partitions (every magic, codecs, timestamp
// patterns, compaction gaps, transactions), random filters of every kind
// and their combinations find exactly the records (in ls order, offset
// order within a partition) that filtering the generator's own record
// list finds, with any number of workers and with --max (60 random
// filters, 24 under -short).
func TestSearchMatchesBruteForce(t *testing.T) {
	parts, all := generateDataDir(t)
	rng := rand.New(rand.NewPCG(7, 15))
	pick := func() kafkagen.RecordManifest { return all[rng.IntN(len(all))].rec }
	filters := []find.Filter{
		{Key: []byte("key-042")},
		{Key: []byte("no-such-key")},
		{KeyPrefix: []byte("key-1")},
		{ValueContains: []byte(" ")},
		{Headers: []find.HeaderFilter{{Name: "source"}}},
		{Headers: []find.HeaderFilter{{Name: "source", HasValue: true}}}, // a null value
		{Headers: []find.HeaderFilter{{Name: "trace-id", HasValue: true, Value: []byte("nope")}}},
		{FromOffset: p64(1 << 40)},
		{ToOffset: p64(0)},
	}
	random := 60
	if testing.Short() {
		random = 24
	}
	for range random {
		var f find.Filter
		r := pick()
		switch rng.IntN(8) {
		case 0:
			if r.Key != nil {
				f.Key = r.Key
			} else {
				f.Key = []byte("key-500")
			}
		case 1:
			f.KeyPrefix = []byte(fmt.Sprintf("key-%d", rng.IntN(100)))
		case 2:
			if len(r.Value) > 8 {
				at := rng.IntN(len(r.Value) - 6)
				f.ValueContains = r.Value[at : at+2+rng.IntN(5)]
			}
		case 3:
			if len(r.Headers) > 0 {
				f.Headers = []find.HeaderFilter{{Name: r.Headers[0].Key, HasValue: true, Value: r.Headers[0].Value}}
				if len(r.Headers) > 1 {
					f.Headers = append(f.Headers, find.HeaderFilter{Name: r.Headers[1].Key})
				}
			} else {
				f.Headers = []find.HeaderFilter{{Name: "trace-id"}}
			}
		case 4:
			f.FromTime = p64(r.Timestamp)
		case 5:
			f.FromTime, f.ToTime = p64(r.Timestamp-50), p64(r.Timestamp+1000)
		case 6:
			f.FromOffset, f.ToOffset = p64(r.Offset), p64(r.Offset+int64(rng.IntN(80)))
		case 7:
			f.ToTime = p64(r.Timestamp)
		}
		if rng.IntN(3) == 0 {
			f.KeyPrefix = []byte("key-")
		}
		if rng.IntN(4) == 0 {
			f.FromOffset = p64(pick().Offset)
		}
		if rng.IntN(4) == 0 {
			f.FromTime = p64(pick().Timestamp)
		}
		filters = append(filters, f)
	}
	nonEmpty := 0
	for i, f := range filters {
		maxN := 0
		if i%5 == 4 {
			maxN = 1 + rng.IntN(20)
		}
		want := bruteForce(all, f, maxN)
		// Every third search salvages: on healthy data it finds the same.
		got, res := search(t, parts, find.Options{Filter: f, Max: maxN, Workers: 1 + i%4, Salvage: i%3 == 0})
		if len(want) > 0 {
			nonEmpty++
		}
		if res.Matches != len(got) || maxN > 0 && len(want) == maxN && !res.Stopped {
			t.Errorf("filter %d: result %+v for %d matches", i, res, len(got))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("filter %d %+v (max %d): %d matches, brute force %d", i, describe(f), maxN, len(got), len(want))
			for k := 0; k < max(len(got), len(want)) && k < 3000; k++ {
				var g, w string
				if k < len(got) {
					g = got[k]
				}
				if k < len(want) {
					w = want[k]
				}
				if g != w {
					t.Errorf("first difference at %d:\n got  %s\n want %s", k, g, w)
					break
				}
			}
		}
	}
	if nonEmpty < len(filters)/2 {
		t.Errorf("only %d of %d filters matched anything: the test does not exercise the search", nonEmpty, len(filters))
	}
}

func describe(f find.Filter) string {
	s := ""
	add := func(name string, v any) { s += fmt.Sprintf("%s=%v ", name, v) }
	if f.Key != nil {
		add("key", string(f.Key))
	}
	if f.KeyPrefix != nil {
		add("prefix", string(f.KeyPrefix))
	}
	if f.ValueContains != nil {
		add("contains", string(f.ValueContains))
	}
	if f.Headers != nil {
		add("headers", f.Headers)
	}
	for _, b := range []struct {
		n string
		v *int64
	}{{"from-offset", f.FromOffset}, {"to-offset", f.ToOffset}, {"from-time", f.FromTime}, {"to-time", f.ToTime}} {
		if b.v != nil {
			add(b.n, *b.v)
		}
	}
	return s
}

// TestSearchGoesOnPastDamage: a batch in the middle of a segment whose
// length field is damaged. Without Salvage the rest of that segment is
// not searched (one damage event naming the file and position) and later
// segments are; with it only the damaged batch is lost.
func TestSearchGoesOnPastDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Segments: 3, Batches: 10, RecordsPerBatch: 4, ValueSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	seg := m.Segments[1]
	bad := seg.Batches[4]
	f, err := os.OpenFile(m.LogPath(&seg), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The length field (bytes 8..11) made impossibly small.
	if _, err := f.WriteAt([]byte{0, 0, 0, 3}, bad.Position+8); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := func(lost func(si, bi int) bool) []int64 {
		var out []int64
		for si, s := range m.Segments {
			for bi, b := range s.Batches {
				if lost(si, bi) {
					continue
				}
				for _, r := range b.Records {
					out = append(out, r.Offset)
				}
			}
		}
		return out
	}
	for _, salvage := range []bool{false, true} {
		var got []int64
		var damage []*inspect.Damage
		_, err := find.Search(tg.Partitions, find.Options{Filter: find.Filter{FromOffset: p64(0)}, Salvage: salvage}, func(e find.Event) error {
			if e.Damage != nil {
				damage = append(damage, e.Damage)
			} else {
				got = append(got, e.Match.Record.Offset)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		lost := func(si, bi int) bool { return si == 1 && bi >= 4 }
		if salvage {
			lost = func(si, bi int) bool { return si == 1 && bi == 4 }
		}
		if fmt.Sprint(got) != fmt.Sprint(want(lost)) {
			t.Errorf("salvage %v: offsets %v, want %v", salvage, got, want(lost))
		}
		if len(damage) != 1 || damage[0].Position != bad.Position || damage[0].Segment.BaseOffset != seg.BaseOffset {
			t.Fatalf("salvage %v: damage %+v, want one at %d in segment %d", salvage, damage, bad.Position, seg.BaseOffset)
		}
		if msg := damage[0].Err.Error(); !strings.Contains(msg, m.LogPath(&seg)) || !strings.Contains(msg, fmt.Sprintf("byte position %d", bad.Position)) {
			t.Errorf("damage error %q does not name the file and byte position", msg)
		}
	}
}

// TestSearchProgress: the progress callback (through inspect.Meter: a
// call per MeterChunk read at most) ends at the size of every .log
// searched, and never says more than that.
func TestSearchProgress(t *testing.T) {
	parts, _ := generateDataDir(t)
	var size int64
	for _, p := range parts {
		for _, s := range p.Segments {
			fi, err := os.Stat(s.Log)
			if err != nil {
				t.Fatal(err)
			}
			size += fi.Size()
		}
	}
	var mu sync.Mutex
	var calls, maxDone, lastDone, lastTotal int64
	progress := func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		maxDone = max(maxDone, done)
		lastDone, lastTotal = done, total
	}
	if _, err := find.Search(parts, find.Options{Filter: find.Filter{Key: []byte("none")}, Workers: 3, Progress: progress}, func(find.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if lastDone != size || lastTotal != size || maxDone != size || calls < 1 {
		t.Errorf("progress: %d calls, last (%d, %d), max %d; the logs hold %d bytes", calls, lastDone, lastTotal, maxDone, size)
	}
}

// TestSearchBelowTheLogStartOffset: with a log-start-offset-checkpoint
// above the first records (DeleteRecords), a bounded search still finds
// every record on disk in range, as an unbounded one does (a fetch there
// would be refused, so the segment is walked whole).
func TestSearchBelowTheLogStartOffset(t *testing.T) {
	root := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(root, "orders-0"), kafkagen.Options{Seed: 9, Segments: 3, Batches: 10, RecordsPerBatch: 3})
	if err != nil {
		t.Fatal(err)
	}
	logStart := m.Segments[0].Batches[5].BaseOffset + 1
	cp := sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: logStart}})
	if err := os.WriteFile(filepath.Join(root, sidefile.LogStartOffsetCheckpointFile), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	all := oracleRecords("orders-0", m)
	first := m.Segments[0].Batches[1].Records[0]
	for _, f := range []find.Filter{
		{FromOffset: p64(first.Offset)},
		{FromOffset: p64(first.Offset), ToOffset: p64(logStart + 2)},
		{FromTime: p64(first.Timestamp)},
	} {
		want := bruteForce(all, f, 0)
		got, _ := search(t, tg.Partitions, find.Options{Filter: f})
		if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
			t.Errorf("%s: %d matches, brute force %d", describe(f), len(got), len(want))
		}
	}
}

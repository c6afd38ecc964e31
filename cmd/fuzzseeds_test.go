package cmd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// The committed seed corpora of the fuzz targets that read disk bytes:
// <package>/testdata/fuzz/<target>/seed-<name>, in Go's corpus format
// ("go test fuzz v1"), made from generated partitions of every magic and
// codec, healthy and damaged. go test runs every file there as a test
// case; go test -fuzz (make fuzz) starts from them. Files without the
// seed- prefix are inputs a fuzz run found, kept as regression cases.
//
// To write the seeds again (after a target's arguments or the generator
// change):
//
//	KSEG_WRITE_FUZZ_SEEDS=1 go test ./cmd -run TestFuzzSeedCorpus
//
// Otherwise the test checks that the committed seeds are the ones this
// file makes.

// fuzzSeed is one corpus entry: the values of the target's arguments.
type fuzzSeed struct {
	name   string
	values []any
}

// marshalCorpus encodes values as Go's fuzzing engine stores a corpus
// entry (internal/fuzz encoding, version 1).
func marshalCorpus(values ...any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case string:
			fmt.Fprintf(&b, "string(%q)\n", v)
		case uint8:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		case int, int8, int16, int64, uint16, uint32, uint64, bool:
			fmt.Fprintf(&b, "%T(%v)\n", v, v)
		default:
			panic(fmt.Sprintf("marshalCorpus: unsupported type %T", v))
		}
	}
	return b.Bytes()
}

// seedPartition is a generated partition's files, by base name.
type seedPartition struct {
	name  string
	files map[string][]byte
	m     *kafkagen.Manifest
}

func (p *seedPartition) seg(i int) (log, idx, tidx []byte) {
	s := &p.m.Segments[i]
	n := kafkagen.SegmentName(s.BaseOffset)
	return p.files[n+".log"], p.files[n+".index"], p.files[n+".timeindex"]
}

func seedPartitions(t *testing.T) []*seedPartition {
	t.Helper()
	work := t.TempDir()
	var out []*seedPartition
	for _, c := range []struct {
		name string
		o    kafkagen.Options
	}{
		{"v2", kafkagen.Options{Segments: 2, Batches: 6, RecordsPerBatch: 3, ValueSize: 16, IndexIntervalBytes: 200}},
		{"v2-gzip", kafkagen.Options{Batches: 4, RecordsPerBatch: 3, ValueSize: 16, Compression: "gzip", IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"v2-snappy", kafkagen.Options{Batches: 4, RecordsPerBatch: 3, ValueSize: 16, Compression: "snappy", Timestamps: "jumping", IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"v2-lz4-txn", kafkagen.Options{Segments: 2, Batches: 8, RecordsPerBatch: 3, ValueSize: 16, Compression: "lz4", Transactions: true, CompactionGaps: true, IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"v2-zstd-padded", kafkagen.Options{Segments: 2, Batches: 5, RecordsPerBatch: 2, ValueSize: 16, Compression: "zstd", LogAppendTime: 0.5, PreallocatedIndexBytes: 96, EmptyActiveSegment: true, IndexIntervalBytes: 100}},
		{"v1-gzip", kafkagen.Options{Batches: 5, RecordsPerBatch: 3, ValueSize: 16, Magic: 1, Compression: "gzip", Timestamps: "random", IndexIntervalBytes: 100}},
		{"v1-none", kafkagen.Options{Batches: 6, ValueSize: 16, Magic: 1, IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"v0-snappy", kafkagen.Options{Batches: 4, RecordsPerBatch: 3, ValueSize: 16, Magic: kafkagen.MagicV0, Compression: "snappy", IndexIntervalBytes: 100}},
		{"v0-lz4", kafkagen.Options{Batches: 4, RecordsPerBatch: 3, ValueSize: 16, Magic: kafkagen.MagicV0, Compression: "lz4", StartOffset: 1000}},
		// Structure-heavy: decoded structure far larger than the bytes.
		{"v2-many-headers", kafkagen.Options{Batches: 2, RecordsPerBatch: 2, ValueSize: 4, EmptyHeaders: 3000, IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"v2-zstd-many-headers", kafkagen.Options{Batches: 2, RecordsPerBatch: 2, ValueSize: 4, EmptyHeaders: 20000, Compression: "zstd", IndexIntervalBytes: kafkagen.IndexEveryBatch}},
		{"v2-many-records", kafkagen.Options{Batches: 3, RecordsPerBatch: 1500, ValueSize: 1, Compression: "lz4", IndexIntervalBytes: kafkagen.IndexEveryBatch}},
	} {
		c.o.Seed = int64(len(out) + 1)
		dir := filepath.Join(work, c.name+"-0")
		m, err := kafkagen.Generate(dir, c.o)
		if err != nil {
			t.Fatal(err)
		}
		p := &seedPartition{name: c.name, files: map[string][]byte{}, m: m}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			p.files[e.Name()] = b
		}
		out = append(out, p)
	}
	return out
}

// damagedToo names the partitions whose logs also seed damaged variants.
var damagedToo = map[string]bool{"v2": true, "v2-lz4-txn": true, "v1-gzip": true, "v0-snappy": true}

// damagedLogs are variants of a log: cut inside its last batch, with a
// zero-filled tail, a flipped payload byte (bad CRC), a first length field
// of 2^31-1 and of 13, garbage in front.
func damagedLogs(name string, log []byte, batches []kafkagen.BatchManifest) map[string][]byte {
	out := map[string][]byte{}
	last := batches[len(batches)-1]
	out[name+"-torn"] = bytes.Clone(log[:last.Position+last.Size/2])
	out[name+"-zero-tail"] = append(bytes.Clone(log), make([]byte, 100)...)
	flipped := bytes.Clone(log)
	b := batches[len(batches)/2]
	flipped[b.Position+b.Size-3] ^= 0x5a
	out[name+"-bad-crc"] = flipped
	huge := bytes.Clone(log)
	binary.BigEndian.PutUint32(huge[8:], 0x7fffffff)
	out[name+"-length-max"] = huge
	small := bytes.Clone(log)
	binary.BigEndian.PutUint32(small[8:], 13)
	out[name+"-length-13"] = small
	out[name+"-garbage-first"] = append([]byte("not a batch at all, then batches: "), log...)
	return out
}

// batchEntries returns the first n entries of a segment's log.
func batchEntries(log []byte, batches []kafkagen.BatchManifest, n int) [][]byte {
	var out [][]byte
	for _, b := range batches[:min(n, len(batches))] {
		out = append(out, log[b.Position:b.Position+b.Size])
	}
	return out
}

// payload returns the compressed bytes of an entry: a v2 batch's records
// section, or a legacy wrapper's value.
func payload(entry []byte, magic int8) []byte {
	if magic >= 2 {
		return entry[inspect.V2HeaderSize:]
	}
	p := 18
	if magic == 1 {
		p = 26
	}
	if k := int32(binary.BigEndian.Uint32(entry[p:])); k > 0 {
		p += int(k)
	}
	return entry[p+4:]
}

// fuzzSeeds returns the seeds of every target, by package directory and
// target name.
func fuzzSeeds(t *testing.T) map[string]map[string][]fuzzSeed {
	parts := seedPartitions(t)
	seeds := map[string]map[string][]fuzzSeed{}
	add := func(pkg, target, name string, values ...any) {
		if seeds[pkg] == nil {
			seeds[pkg] = map[string][]fuzzSeed{}
		}
		seeds[pkg][target] = append(seeds[pkg][target], fuzzSeed{name, values})
	}
	for _, p := range parts {
		s0 := &p.m.Segments[0]
		log, idx, tidx := p.seg(0)
		mid := s0.BaseOffset
		if n := len(s0.Batches); n > 0 {
			mid = s0.Batches[n/2].LastOffset
		}
		// Logs, healthy and (for one partition of each magic, and the
		// transactional one) damaged.
		logs := map[string][]byte{p.name: log}
		if damagedToo[p.name] {
			for k, v := range damagedLogs(p.name, log, s0.Batches) {
				logs[k] = v
			}
		}
		for name, l := range logs {
			add("inspect", "FuzzBatchHeader", name, l, uint16(0))
			add("inspect/recovery", "FuzzPlanSegment", name, l, int64(300))
			add("verify", "FuzzVerifySegment", name, l, idx, tidx, strings.HasSuffix(name, "crc"))
			if name != p.name {
				add("inspect", "FuzzResync", name, l, int64(1))
			}
		}
		add("inspect", "FuzzBatchHeader", p.name+"-window-100", log, uint16(100))
		add("inspect/recovery", "FuzzPlanSegment", p.name+"-every-batch", log, int64(0))
		add("verify", "FuzzVerifySegment", p.name+"-records", log, idx, tidx, true)
		// Indexes.
		add("indexfmt", "FuzzIndexLookup", p.name+"-index", idx, s0.BaseOffset, mid, uint8(0))
		add("indexfmt", "FuzzIndexLookup", p.name+"-timeindex", tidx, s0.BaseOffset, s0.MaxTimestamp-1, uint8(0))
		add("indexfmt", "FuzzIndexLookup", p.name+"-index-cut-short", idx, s0.BaseOffset, mid, uint8(7))
		add("indexfmt", "FuzzIndexEntries", p.name+"-index", idx, s0.BaseOffset)
		add("indexfmt", "FuzzIndexEntries", p.name+"-timeindex", tidx, s0.BaseOffset)
		for i := range p.m.Segments {
			if s := &p.m.Segments[i]; s.TxnIndexWritten {
				add("indexfmt", "FuzzIndexEntries", fmt.Sprintf("%s-txnindex-%d", p.name, i), p.files[kafkagen.SegmentName(s.BaseOffset)+".txnindex"], s.BaseOffset)
			}
		}
		// Entries and their payloads.
		for i, e := range batchEntries(log, s0.Batches, 2) {
			name := fmt.Sprintf("%s-batch%d", p.name, i)
			add("inspect", "FuzzRecords", name, e)
			add("inspect", "FuzzRecordsRoundTrip", name, e)
			if b := s0.Batches[i]; b.Compression != "none" && i == 0 {
				codec := map[string]uint8{"gzip": 0, "snappy": 1, "lz4": 2, "zstd": 3}[b.Compression]
				add("inspect", "FuzzDecompress", p.name+"-payload", codec, b.Magic, payload(e, b.Magic))
			}
		}
		// Names and the small files.
		var names []string
		for name := range p.files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			switch {
			case strings.HasSuffix(name, ".snapshot"):
				add("inspect", "FuzzProducerSnapshot", p.name+"-"+name, p.files[name])
				add("inspect", "FuzzCheckpointFiles", p.name+"-"+name, p.files[name])
			case name == inspect.LeaderEpochCheckpointFile || name == inspect.PartitionMetadataFile:
				add("inspect", "FuzzCheckpointFiles", p.name+"-"+name, p.files[name])
			}
		}
		add("inspect", "FuzzNames", p.name+"-dir", p.name+"-0")
		add("inspect", "FuzzNames", p.name+"-segment", kafkagen.SegmentName(s0.BaseOffset)+".timeindex")
	}
	// Broker text files of the data directory.
	add("inspect", "FuzzCheckpointFiles", "recovery-point", inspect.AppendOffsetCheckpoint(nil, []inspect.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: 368}, {Topic: "__consumer_offsets", Partition: 49, Offset: 12}}))
	add("inspect", "FuzzCheckpointFiles", "recovery-point-crlf", []byte("0\r\n1\r\norders 0 368\r\n"))
	add("inspect", "FuzzCheckpointFiles", "meta-properties-kraft", []byte("#\n#Mon Nov 14 22:13:20 UTC 2023\nnode.id=1\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=1\ncluster.id=4L6g3nShT-eMCtK--X86sw\n"))
	add("inspect", "FuzzCheckpointFiles", "meta-properties-zk", []byte("version=0\nbroker.id=3\n"))
	add("inspect", "FuzzCheckpointFiles", "clean-shutdown", []byte(`{"version":0,"brokerEpoch":42}`))
	// Long epoch files: every entry kept, and every entry a repeat.
	var rising, repeats []inspect.EpochEntry
	for i := range 3000 {
		rising = append(rising, inspect.EpochEntry{Epoch: int32(i), StartOffset: int64(i) * 7})
		repeats = append(repeats, inspect.EpochEntry{Epoch: 5, StartOffset: 100})
	}
	add("inspect", "FuzzCheckpointFiles", "leader-epoch-long-rising", inspect.AppendLeaderEpochCheckpoint(nil, rising))
	add("inspect", "FuzzCheckpointFiles", "leader-epoch-long-repeats", inspect.AppendLeaderEpochCheckpoint(nil, repeats))
	for _, n := range []string{"orders-0.0123456789abcdef0123456789abcdef-delete", "lost+found", "__cluster_metadata-0", "orders-2147483647", "orders-2147483648"} {
		add("inspect", "FuzzNames", n, n)
	}

	// Lookups over damaged partitions: [segment, position high, low, xor]
	// operations on logs and indexes, a cut, padding and a missing index.
	for _, c := range []struct {
		name             string
		shape            uint8
		logFlips, idxOps []byte
		cut              uint16
		target           int64
	}{
		{"healthy", 0, nil, nil, 0, 20},
		{"length-field", 0, []byte{0, 0, 8, 0x7f}, nil, 0, 30},
		{"offset-field", 1, []byte{1, 0, 7, 0x10}, nil, 0, 40},
		{"index-entry", 1, nil, []byte{0, 0, 3, 0xff}, 0, 25},
		{"index-position", 2, nil, []byte{0, 0, 7, 0x01}, 0, 12},
		{"cut", 0, nil, nil, 2*150 + 1, 35},
		{"padded-index", 0x40 | 5, nil, nil, 0, 33},
		{"no-index", 0x80 | 4, []byte{0, 0, 70, 0x33}, nil, 0, 1005},
	} {
		add("inspect", "FuzzLookupPartition", c.name, c.shape, c.logFlips, c.idxOps, c.cut, c.target)
	}
	// Index bytes that are out of order.
	rev := indexfmt.AppendOffsetEntry(nil, 30, 900)
	rev = indexfmt.AppendOffsetEntry(rev, 10, 300)
	rev = indexfmt.AppendOffsetEntry(rev, 20, 600)
	add("indexfmt", "FuzzIndexLookup", "out-of-order", rev, int64(100), int64(115), uint8(0))
	return seeds
}

// TestFuzzSeedCorpus writes the seed corpora (KSEG_WRITE_FUZZ_SEEDS=1) or
// checks that the committed ones are exactly what fuzzSeeds makes.
func TestFuzzSeedCorpus(t *testing.T) {
	write := os.Getenv("KSEG_WRITE_FUZZ_SEEDS") == "1"
	total := 0
	for pkg, targets := range fuzzSeeds(t) {
		for target, list := range targets {
			dir := filepath.Join("..", filepath.FromSlash(pkg), "testdata", "fuzz", target)
			want := map[string][]byte{}
			for _, s := range list {
				name := "seed-" + s.name
				if _, dup := want[name]; dup {
					t.Fatalf("%s: two seeds named %s", target, name)
				}
				want[name] = marshalCorpus(s.values...)
			}
			total += len(want)
			if write {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
				for _, f := range old {
					if err := os.Remove(f); err != nil {
						t.Fatal(err)
					}
				}
				for name, b := range want {
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			have, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
			for _, f := range have {
				if _, ok := want[filepath.Base(f)]; !ok {
					t.Errorf("%s: not a seed this test makes (remove it, or rename it without the seed- prefix to keep it as a regression case)", f)
				}
			}
			for name, b := range want {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || !bytes.Equal(got, b) {
					t.Errorf("%s/%s: missing or different; write the seeds again with KSEG_WRITE_FUZZ_SEEDS=1 go test ./cmd -run TestFuzzSeedCorpus", dir, name)
				}
			}
		}
	}
	if write {
		t.Logf("wrote %d seed files", total)
	}
}

package sidefile_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/sidefile"
)

func TestOffsetCheckpointGolden(t *testing.T) {
	b := []byte("0\n3\norders 0 1234\n__consumer_offsets 49 -1\nmy.topic_x 7 9223372036854775807\n")
	c, err := sidefile.ParseOffsetCheckpoint("cp", b)
	if err != nil {
		t.Fatal(err)
	}
	want := []sidefile.OffsetCheckpointEntry{{"orders", 0, 1234}, {"__consumer_offsets", 49, -1}, {"my.topic_x", 7, 9223372036854775807}}
	if !reflect.DeepEqual(c.Entries, want) {
		t.Fatalf("entries %+v", c.Entries)
	}
	if got := sidefile.AppendOffsetCheckpoint(nil, want); string(got) != string(b) {
		t.Errorf("re-encoded %q", got)
	}
	if o, ok := c.Lookup("__consumer_offsets", 49); !ok || o != -1 {
		t.Errorf("lookup: %d %v", o, ok)
	}
	if _, ok := c.Lookup("orders", 1); ok {
		t.Errorf("lookup of an unlisted partition found something")
	}
	// A partition listed twice: the later line wins, as in the broker's map.
	c, err = sidefile.ParseOffsetCheckpoint("cp", []byte("0\n2\na 0 1\na 0 2\n"))
	if o, _ := c.Lookup("a", 0); err != nil || o != 2 {
		t.Errorf("duplicate: %d, %v", o, err)
	}
}

// TestOffsetCheckpointReaderRules follows CheckpointFile.CheckpointReadBuffer
// line by line (kafka-on-disk.md 1.6.1): what is accepted, and where
// each refusal points.
func TestOffsetCheckpointReaderRules(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      string
		entries int
		errPos  int64 // -1: no error
		msg     string
	}{
		{"empty file", "", 0, -1, ""},
		{"version only", "0\n", 0, -1, ""},
		{"version, no newline", "0", 0, -1, ""},
		{"zero entries", "0\n0\n", 0, -1, ""},
		{"CRLF", "0\r\n1\r\nt 0 5\r\n", 1, -1, ""},
		{"CR only", "0\r1\rt 0 5", 1, -1, ""},
		{"tabs and runs of blanks", "0\n1\nt\t0   5\n", 1, -1, ""},
		{"trailing blank", "0\n1\nt 0 5 \n", 1, -1, ""},
		{"plus signs", "0\n1\nt +0 +5\n", 1, -1, ""},
		{"wrong version", "1\n0\n", 0, 0, "unrecognised version 1"},
		{"bad version", "x\n", 0, 0, "malformed version line"},
		{"bad count", "0\nn\n", 0, 2, "malformed entry count"},
		{"negative count", "0\n-1\n", 0, 2, "malformed entry count"},
		{"too few", "0\n2\nt 0 5\n", 1, 10, "expected [2] entries, but found [1]"},
		{"too many", "0\n0\nt 0 5\n", 1, 10, "expected [0] entries, but found [1]"},
		{"blank line", "0\n1\nt 0 5\n\n", 1, 10, "malformed line \"\""},
		{"leading blank", "0\n1\n t 0 5\n", 0, 4, "malformed line"},
		{"two fields", "0\n1\nt 0\n", 0, 4, "malformed line"},
		{"four fields", "0\n1\nt 0 5 6\n", 0, 4, "malformed line"},
		{"partition overflow", "0\n1\nt 2147483648 5\n", 0, 4, "malformed line"},
		{"offset not a number", "0\n1\nt 0 5x\n", 0, 4, "malformed line"},
	} {
		cp, err := sidefile.ParseOffsetCheckpoint("f", []byte(c.in))
		if len(cp.Entries) != c.entries {
			t.Errorf("%s: %d entries, want %d", c.name, len(cp.Entries), c.entries)
		}
		if c.errPos < 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var ce *fileio.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, sidefile.ErrCheckpointFormat) || ce.Position != c.errPos || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a checkpoint format error at %d with %q", c.name, err, c.errPos, c.msg)
		}
	}
}

func TestLeaderEpochCheckpoint(t *testing.T) {
	entries := []sidefile.EpochEntry{{0, 0}, {3, 100}, {7, 250}}
	b := sidefile.AppendLeaderEpochCheckpoint(nil, entries)
	if string(b) != "0\n3\n0 0\n3 100\n7 250\n" {
		t.Fatalf("encoded %q", b)
	}
	c, err := sidefile.ParseLeaderEpochCheckpoint("lec", b)
	if err != nil || !reflect.DeepEqual(c.Entries, entries) {
		t.Fatalf("%v %+v", err, c.Entries)
	}
	for _, q := range []struct {
		off   int64
		epoch int32
		ok    bool
	}{{-1, 0, false}, {0, 0, true}, {99, 0, true}, {100, 3, true}, {249, 3, true}, {250, 7, true}, {1 << 40, 7, true}} {
		e, ok := c.EntryFor(q.off)
		if ok != q.ok || (ok && e.Epoch != q.epoch) {
			t.Errorf("EntryFor(%d) = %+v %v, want epoch %d %v", q.off, e, ok, q.epoch, q.ok)
		}
	}
	if e, ok := c.Latest(); !ok || e.Epoch != 7 {
		t.Errorf("latest %+v", e)
	}
	// Against a model of the broker's cache (a map by epoch, its latest
	// entry, removal of conflicting entries) on random checkpoints,
	// unsorted ones included; epochForOffset walks the map by epoch.
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 500; n++ {
		var es []sidefile.EpochEntry
		for i := rng.IntN(6); i > 0; i-- {
			es = append(es, sidefile.EpochEntry{Epoch: rng.Int32N(8), StartOffset: rng.Int64N(100)})
		}
		model := map[int32]sidefile.EpochEntry{}
		latest := func() (sidefile.EpochEntry, bool) {
			var l sidefile.EpochEntry
			ok := false
			for ep, e := range model {
				if !ok || ep > l.Epoch {
					l, ok = e, true
				}
			}
			return l, ok
		}
		for _, e := range es {
			if l, ok := latest(); ok && e.Epoch == l.Epoch && e.StartOffset >= l.StartOffset {
				continue
			}
			for ep, x := range model {
				if x.Epoch >= e.Epoch || x.StartOffset >= e.StartOffset {
					delete(model, ep)
				}
			}
			model[e.Epoch] = e
		}
		c := &sidefile.LeaderEpochCheckpoint{Entries: es}
		cache, err := c.Cache()
		if err != nil || len(cache) != len(model) {
			t.Fatalf("%+v: cache %+v (%v), model %+v", es, cache, err, model)
		}
		for _, e := range cache {
			if model[e.Epoch] != e {
				t.Fatalf("%+v: cache %+v, model %+v", es, cache, model)
			}
		}
		off := rng.Int64N(110) - 5
		got, ok := c.EntryFor(off)
		var want sidefile.EpochEntry
		found := false
		for ep := int32(0); ep < 8; ep++ {
			if x, in := model[ep]; in {
				if x.StartOffset > off {
					break
				}
				want, found = x, true
			}
		}
		if ok != found || got != want {
			t.Fatalf("%+v EntryFor(%d) = %+v %v, want %+v %v", es, off, got, ok, want, found)
		}
	}
	neg := &sidefile.LeaderEpochCheckpoint{Entries: []sidefile.EpochEntry{{Epoch: 1, StartOffset: 0}, {Epoch: -1, StartOffset: 5}}}
	if cache, err := neg.Cache(); !errors.Is(err, sidefile.ErrNegativeEpoch) || len(cache) != 1 {
		t.Errorf("negative epoch: %+v %v", cache, err)
	}
	if _, err := sidefile.ParseLeaderEpochCheckpoint("lec", []byte("0\n1\n3 100 9\n")); !errors.Is(err, sidefile.ErrCheckpointFormat) {
		t.Errorf("three fields: %v", err)
	}
}

func TestPartitionMetadata(t *testing.T) {
	for _, c := range []struct {
		name, in string
		ok       bool
		id       string
	}{
		{"as written", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", true, "AAAAAAAAAAAAAAAAAAAAAQ"},
		{"trailing newline and tabs", "version:\t0\ntopic_id:   xYz0123456789abcdefghg\n", true, "xYz0123456789abcdefghg"},
		{"any key names", "v: 5\nid: AAAAAAAAAAAAAAAAAAAAAQ", true, "AAAAAAAAAAAAAAAAAAAAAQ"},
		{"zero id", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", false, ""},
		{"short id", "version: 0\ntopic_id: AAAA", false, ""},
		{"no space after colon", "version:0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", false, ""},
		{"negative version", "version: -1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", false, ""},
		{"missing id line", "version: 0\n", false, ""},
		{"empty", "", false, ""},
		{"three parts", "version: 0: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", false, ""},
	} {
		pm, err := sidefile.ParsePartitionMetadata("pm", []byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err != nil && !errors.Is(err, sidefile.ErrCheckpointFormat) {
			t.Errorf("%s: error kind %v", c.name, err)
		}
		if c.ok && (pm.TopicID != c.id || sidefile.FormatUUID(pm.UUID) != c.id) {
			t.Errorf("%s: id %q / %q", c.name, pm.TopicID, sidefile.FormatUUID(pm.UUID))
		}
	}
}

func TestMetaPropertiesAndCleanShutdown(t *testing.T) {
	mp, err := sidefile.ParseMetaProperties("mp", []byte("#\n#Thu Oct 10 11:57:10 GMT 2024\nnode.id=1\ndirectory.id=ROP8qUaSlk7r55i85yz4Cg\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"))
	if err != nil || mp.Version != 1 || mp.NodeID == nil || *mp.NodeID != 1 || mp.ClusterID != "MkU3OEVBNTcwNTJENDM2Qk" || mp.DirectoryID != "ROP8qUaSlk7r55i85yz4Cg" ||
		!reflect.DeepEqual(mp.Keys, []string{"node.id", "directory.id", "version", "cluster.id"}) {
		t.Errorf("v1: %v %+v", err, mp)
	}
	mp, err = sidefile.ParseMetaProperties("mp", []byte("version=0\nbroker.id = 1001\n"))
	if err != nil || mp.Version != 0 || *mp.NodeID != 1001 || mp.ClusterID != "" {
		t.Errorf("v0: %v %+v", err, mp)
	}
	mp, err = sidefile.ParseMetaProperties("mp", []byte("a\\:b:c\n"))
	if err != nil || mp.Values["a:b"] != "c" || mp.NodeID != nil {
		t.Errorf("escaped key: %v %+v", err, mp.Values)
	}
	for _, bad := range []string{"version=1\ncluster.id=x\n", "version=1\nnode.id=1\n", "version=2\n", "broker.id=x\n", "directory.id=###\n"} {
		if _, err := sidefile.ParseMetaProperties("mp", []byte(bad)); !errors.Is(err, sidefile.ErrCheckpointFormat) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	cs, err := sidefile.ParseCleanShutdown("cs", []byte(`{"version":0,"brokerEpoch":79484}`))
	if err != nil || cs.Version == nil || *cs.Version != 0 || cs.BrokerEpoch == nil || *cs.BrokerEpoch != 79484 {
		t.Errorf("clean shutdown: %v %+v", err, cs)
	}
	if cs, err := sidefile.ParseCleanShutdown("cs", nil); err != nil || cs.BrokerEpoch != nil {
		t.Errorf("empty marker: %v %+v", err, cs)
	}
	if _, err := sidefile.ParseCleanShutdown("cs", []byte("garbage")); !errors.Is(err, sidefile.ErrCheckpointFormat) {
		t.Errorf("garbage marker: %v", err)
	}
}

// TestCheckpointsOfGeneratedPartitions reads the generator's
// leader-epoch-checkpoint and partition.metadata back.
func TestCheckpointsOfGeneratedPartitions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "epochs-3")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 9, Segments: 4, Batches: 10, LeaderEpoch: 5, LeaderEpochBumps: true, OmitRecords: true})
	if err != nil {
		t.Fatal(err)
	}
	side, err := inspect.ReadPartitionSideFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !side.LeaderEpochs.OK() || !side.PartitionMetadata.OK() {
		t.Fatalf("side files: %+v %+v", side.LeaderEpochs, side.PartitionMetadata)
	}
	var want []sidefile.EpochEntry
	for _, e := range m.LeaderEpochs {
		want = append(want, sidefile.EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset})
	}
	if len(want) != 4 || !reflect.DeepEqual(side.LeaderEpochs.Value.Entries, want) {
		t.Errorf("epochs %+v, manifest %+v", side.LeaderEpochs.Value.Entries, want)
	}
	// Every batch's partition leader epoch is the checkpoint's entry for
	// its base offset.
	for _, b := range m.Batches() {
		e, ok := side.LeaderEpochs.Value.EntryFor(b.BaseOffset)
		if !ok || e.Epoch != b.PartitionLeaderEpoch {
			t.Fatalf("batch at %d has epoch %d, checkpoint says %+v", b.BaseOffset, b.PartitionLeaderEpoch, e)
		}
	}
	if side.PartitionMetadata.Value.TopicID != m.TopicID {
		t.Errorf("topic id %q, manifest %q", side.PartitionMetadata.Value.TopicID, m.TopicID)
	}
	if len(side.Snapshots) != len(m.Snapshots) {
		t.Errorf("%d snapshots listed, manifest %d", len(side.Snapshots), len(m.Snapshots))
	}
}

// TestCheckpointsRealFixtures reads every data directory's and partition's
// checkpoint files written by real brokers: all parse, and known values are
// there.
func TestCheckpointsRealFixtures(t *testing.T) {
	root := sideFixtures(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	partitions := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dd := sidefile.ReadDataDirFiles(filepath.Join(root, e.Name()))
		for name, f := range map[string]*sidefile.SideFile[sidefile.OffsetCheckpoint]{
			"recovery": &dd.RecoveryPoints, "log start": &dd.LogStarts, "replication": &dd.HighWatermarks, "cleaner": &dd.CleanerOffsets,
		} {
			if f.Present() && !f.OK() {
				t.Errorf("%s %s: %v", e.Name(), name, f.Err)
			}
		}
		if dd.Meta.Present() && !dd.Meta.OK() {
			t.Errorf("%s meta.properties: %v", e.Name(), dd.Meta.Err)
		}
		if dd.CleanShutdown.Present() && dd.CleanShutdown.Err != nil {
			t.Errorf("%s clean shutdown: %v", e.Name(), dd.CleanShutdown.Err)
		}
		subs, _ := os.ReadDir(dd.Dir)
		for _, s := range subs {
			if !s.IsDir() {
				continue
			}
			side, err := inspect.ReadPartitionSideFiles(filepath.Join(dd.Dir, s.Name()))
			if err != nil {
				t.Fatal(err)
			}
			partitions++
			if side.LeaderEpochs.Present() && !side.LeaderEpochs.OK() {
				t.Errorf("%s/%s leader epochs: %v", e.Name(), s.Name(), side.LeaderEpochs.Err)
			}
			if side.PartitionMetadata.Present() && !side.PartitionMetadata.OK() {
				t.Errorf("%s/%s partition.metadata: %v", e.Name(), s.Name(), side.PartitionMetadata.Err)
			}
		}
	}
	if partitions < 15 {
		t.Errorf("only %d partition directories seen", partitions)
	}

	dd := sidefile.ReadDataDirFiles(filepath.Join(root, "cp-kraft-multiseg-compacted"))
	if o, ok := sidefile.CheckpointedOffset(&dd.CleanerOffsets, "__consumer_offsets", 13); !ok || o != 21 {
		t.Errorf("cleaner offset of __consumer_offsets-13: %d %v, want 21", o, ok)
	}
	if o, ok := sidefile.CheckpointedOffset(&dd.RecoveryPoints, "__consumer_offsets", 13); !ok || o != 25 {
		t.Errorf("recovery point of __consumer_offsets-13: %d %v, want 25", o, ok)
	}
	if dd.Meta.Value.ClusterID != "" || dd.Meta.Value.Version != 1 || *dd.Meta.Value.NodeID != 1 {
		t.Errorf("meta.properties with an empty cluster.id: %+v", dd.Meta.Value)
	}
	if cs := dd.CleanShutdown.Value; cs == nil || cs.BrokerEpoch == nil || *cs.BrokerEpoch != 79484 {
		t.Errorf("clean shutdown marker: %+v", dd.CleanShutdown)
	}
	side, _ := inspect.ReadPartitionSideFiles(filepath.Join(root, "cp-kraft-multiseg-compacted", "__consumer_offsets-13"))
	if l, ok := side.LeaderEpochs.Value.Latest(); len(side.LeaderEpochs.Value.Entries) != 6 || !ok || l.Epoch != 58 || l.StartOffset != 25 {
		t.Errorf("leader epochs of __consumer_offsets-13: %+v", side.LeaderEpochs.Value)
	}
	meta, _ := inspect.ReadPartitionSideFiles(filepath.Join(root, "kafka40-kraft-snappy-retention", "__cluster_metadata-0"))
	if meta.PartitionMetadata.Value.TopicID != "AAAAAAAAAAAAAAAAAAAAAQ" || len(meta.LeaderEpochs.Value.Entries) != 8 || len(meta.Snapshots) != 3 {
		t.Errorf("__cluster_metadata-0: %+v %+v %d snapshots", meta.PartitionMetadata.Value, meta.LeaderEpochs.Value, len(meta.Snapshots))
	}
	zk := sidefile.ReadDataDirFiles(filepath.Join(root, "cp51-zk-lz4-unclean-noindex"))
	if zk.CleanShutdown.Present() || zk.Meta.Value.Version != 0 || *zk.Meta.Value.NodeID != 1001 || zk.Meta.Value.ClusterID != "" {
		t.Errorf("cp51: clean %v meta %+v", zk.CleanShutdown.Present(), zk.Meta.Value)
	}
}

// TestLeaderEpochsAgreeWithRealBatches: in the real brokers' partitions,
// the leader-epoch-checkpoint entry covering each v2 batch's base offset
// names the epoch the batch was written in.
func TestLeaderEpochsAgreeWithRealBatches(t *testing.T) {
	root := sideFixtures(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	checked, below := 0, 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		tg, err := inspect.Resolve(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tg.Partitions {
			side, err := inspect.ReadPartitionSideFiles(p.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if !side.LeaderEpochs.OK() {
				continue
			}
			err = p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				b := w.Batch
				if b.Magic < 2 || b.PartitionLeaderEpoch < 0 {
					return nil
				}
				got, ok := side.LeaderEpochs.Value.EntryFor(b.BaseOffset)
				if !ok {
					// Below the cache's first entry: the broker truncated the
					// cache from the start to the log start offset
					// (KRaft's metadata log keeps segments below its
					// latest snapshot); such batches must also be older
					// than the first epoch.
					if first := side.LeaderEpochs.Value.Entries[0]; b.PartitionLeaderEpoch > first.Epoch {
						t.Errorf("%s: batch at offset %d written in epoch %d, before the first entry %+v", p.Dir, b.BaseOffset, b.PartitionLeaderEpoch, first)
					}
					below++
					return nil
				}
				if got.Epoch != b.PartitionLeaderEpoch {
					t.Errorf("%s: batch at offset %d written in epoch %d, checkpoint entry %+v (%v)", p.Dir, b.BaseOffset, b.PartitionLeaderEpoch, got, ok)
				}
				checked++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if checked < 1000 || below == 0 {
		t.Errorf("%d batches checked, %d below the first epoch: the fixtures have more of both", checked, below)
	}
}

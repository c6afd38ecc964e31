package dumpcheckpoint_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/dumpcheckpoint"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/sidefile"
)

func dump(t *testing.T, f dumpcheckpoint.File) ([]dumpcheckpoint.Line, error) {
	t.Helper()
	var lines []dumpcheckpoint.Line
	err := dumpcheckpoint.Dump(f, func(l dumpcheckpoint.Line) { lines = append(lines, l) })
	return lines, err
}

// textEntries reads a checkpoint's entries the simple way: the lines
// after the version and count lines, split on spaces.
func textEntries(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var out [][]string
	for _, l := range lines[2:] {
		out = append(out, strings.Fields(l))
	}
	return out
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A real broker's data directory: its own files in the documented order,
// then each partition's (Resolve's partitions, in its order), and every
// line of every file as the file's text has it.
func TestFilesAndDumpRealDataDir(t *testing.T) {
	dir := filepath.Join(fixtures.Root(t), "cp-kraft-multiseg-compacted")
	files, err := dumpcheckpoint.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []dumpcheckpoint.File{
		{filepath.Join(dir, "recovery-point-offset-checkpoint"), dumpcheckpoint.RecoveryPoint},
		{filepath.Join(dir, "log-start-offset-checkpoint"), dumpcheckpoint.LogStart},
		{filepath.Join(dir, "replication-offset-checkpoint"), dumpcheckpoint.HighWatermark},
		{filepath.Join(dir, "cleaner-offset-checkpoint"), dumpcheckpoint.Cleaner},
		{filepath.Join(dir, "meta.properties"), dumpcheckpoint.MetaProperties},
		{filepath.Join(dir, ".kafka_cleanshutdown"), dumpcheckpoint.CleanShutdown},
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tg.Partitions {
		for _, n := range []struct{ name, kind string }{{"leader-epoch-checkpoint", dumpcheckpoint.LeaderEpoch},
			{"partition.metadata", dumpcheckpoint.PartitionMetadata}, {"quorum-state", dumpcheckpoint.QuorumState}} {
			if _, err := os.Stat(filepath.Join(p.Dir, n.name)); err == nil {
				want = append(want, dumpcheckpoint.File{Path: filepath.Join(p.Dir, n.name), Kind: n.kind})
			}
		}
	}
	if !reflect.DeepEqual(files, want) {
		t.Fatalf("Files:\n got %v\nwant %v", files, want)
	}
	if n := len(want) - 6; n != 3+2+2 {
		t.Fatalf("%d partition files, want 7 (__cluster_metadata-0: 3, __consumer_offsets-13 and postCreated-0: 2)", n)
	}

	seen := map[string]bool{}
	for _, f := range files {
		lines, err := dump(t, f)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		for _, l := range lines {
			if l.File != f.Path {
				t.Fatalf("%s: line names %s", f.Path, l.File)
			}
			seen[l.Kind] = true
		}
		switch f.Kind {
		case dumpcheckpoint.RecoveryPoint, dumpcheckpoint.LogStart, dumpcheckpoint.HighWatermark, dumpcheckpoint.Cleaner:
			text := textEntries(t, f.Path)
			if len(lines) != len(text) {
				t.Fatalf("%s: %d lines, the file has %d entries", f.Path, len(lines), len(text))
			}
			for i, e := range text {
				l := lines[i]
				if l.Kind != "offset" || l.Checkpoint != f.Kind || *l.Topic != e[0] || int64(*l.Partition) != atoi(t, e[1]) || *l.Offset != atoi(t, e[2]) {
					t.Errorf("%s entry %d: %+v, the file says %v", f.Path, i, l, e)
				}
			}
		case dumpcheckpoint.LeaderEpoch:
			text := textEntries(t, f.Path)
			if len(lines) != len(text) {
				t.Fatalf("%s: %d lines, the file has %d entries", f.Path, len(lines), len(text))
			}
			for i, e := range text {
				// Every real file's epochs and start offsets grow: the
				// broker's cache keeps every entry.
				l := lines[i]
				if l.Kind != "leader_epoch" || int64(*l.Epoch) != atoi(t, e[0]) || *l.StartOffset != atoi(t, e[1]) || !*l.InCache {
					t.Errorf("%s entry %d: %+v, the file says %v", f.Path, i, l, e)
				}
			}
		}
	}
	for _, k := range []string{"offset", "leader_epoch", "partition_metadata", "property", "clean_shutdown", "quorum_state"} {
		if !seen[k] {
			t.Errorf("no %s line", k)
		}
	}

	one := func(name string) []dumpcheckpoint.Line {
		t.Helper()
		for _, f := range files {
			if strings.HasSuffix(f.Path, name) {
				lines, _ := dump(t, f)
				return lines
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	if l := one("cleaner-offset-checkpoint"); len(l) != 1 || *l[0].Topic != "__consumer_offsets" || *l[0].Partition != 13 || *l[0].Offset != 21 {
		t.Errorf("cleaner-offset-checkpoint: %+v", l)
	}
	if l := one("log-start-offset-checkpoint"); len(l) != 0 {
		t.Errorf("empty log-start-offset-checkpoint: %+v", l)
	}
	if l := one(".kafka_cleanshutdown"); len(l) != 1 || l[0].Kind != "clean_shutdown" || l[0].BrokerEpoch == nil || *l[0].BrokerEpoch != 79484 {
		t.Errorf(".kafka_cleanshutdown: %+v", l)
	}
	var props []string
	for _, l := range one("meta.properties") {
		props = append(props, *l.Key+"="+*l.Value)
	}
	if want := []string{"cluster.id=", "directory.id=gIODMx0B20PHQLXVLoRD7w", "node.id=1", "version=1"}; !reflect.DeepEqual(props, want) {
		t.Errorf("meta.properties: %q, want %q", props, want)
	}
	if l := one("__cluster_metadata-0/partition.metadata"); len(l) != 1 || *l[0].Version != 0 || *l[0].TopicID != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Errorf("partition.metadata: %+v", l)
	}
	q := one("quorum-state")
	if len(q) != 1 || *q[0].DataVersion != 0 || *q[0].ClusterID != "" || *q[0].LeaderID != 1 || *q[0].LeaderEpoch != 36 ||
		*q[0].VotedID != -1 || *q[0].AppliedOffset != 0 || !reflect.DeepEqual(*q[0].CurrentVoters, []int32{1}) || q[0].VotedDirectoryID != nil {
		t.Errorf("quorum-state: %+v", q)
	}
}

// What a PATH that names no such file says, each in the words of the
// contract: missing, not a Kafka file, a directory without any of them.
// A partition directory Resolve refuses (its segments are gone) still
// has its files listed; a directory with a checkpoint's name is not one.
func TestFilesBadPaths(t *testing.T) {
	root := t.TempDir()
	if _, err := dumpcheckpoint.Files(filepath.Join(root, "nosuch")); err == nil || err.Error() != filepath.Join(root, "nosuch")+": no such file or directory" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
	part := filepath.Join(root, "data", "orders-0")
	if _, err := kafkagen.Generate(part, kafkagen.Options{Seed: 1, Segments: 1, Batches: 3}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(part, "00000000000000000000.log")
	if _, err := dumpcheckpoint.Files(log); !errors.Is(err, fileio.ErrNotKafka) || !strings.Contains(err.Error(), "expected a checkpoint file (recovery-point-offset-checkpoint, ...), a partition directory or a data directory") {
		t.Errorf("a .log: %v", err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(filepath.Join(empty, sidefile.LeaderEpochCheckpointFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := dumpcheckpoint.Files(empty); err == nil || err.Error() != empty+": no checkpoint, epoch, partition metadata or properties files" {
		t.Errorf("a directory without the files: %v", err)
	}
	partEpochs, partMeta := filepath.Join(part, sidefile.LeaderEpochCheckpointFile), filepath.Join(part, sidefile.PartitionMetadataFile)
	files, err := dumpcheckpoint.Files(part)
	if want := []dumpcheckpoint.File{{partEpochs, dumpcheckpoint.LeaderEpoch}, {partMeta, dumpcheckpoint.PartitionMetadata}}; err != nil || !reflect.DeepEqual(files, want) {
		t.Errorf("a generated partition: %v %v, want %v", files, err, want)
	}
	for _, f := range files {
		if err := os.Remove(f.Path); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dumpcheckpoint.Files(part); err == nil || err.Error() != part+": no checkpoint, epoch, partition metadata or properties files" {
		t.Errorf("a partition without side files: %v", err)
	}

	gone := filepath.Join(root, "data", "gone-0")
	if err := os.MkdirAll(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	epochs := filepath.Join(gone, sidefile.LeaderEpochCheckpointFile)
	if err := os.WriteFile(epochs, []byte("0\n1\n4 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := inspect.Resolve(gone); err == nil {
		t.Fatal("Resolve takes a directory without segments")
	}
	files, err = dumpcheckpoint.Files(gone)
	if want := []dumpcheckpoint.File{{epochs, dumpcheckpoint.LeaderEpoch}}; err != nil || !reflect.DeepEqual(files, want) {
		t.Errorf("a partition without segments: %v %v, want %v", files, err, want)
	}
	// Its data directory lists only the partitions Resolve finds.
	files, err = dumpcheckpoint.Files(filepath.Join(root, "data"))
	if err == nil {
		t.Errorf("data directory whose one partition with a side file has no segments: %v", files)
	}
	rp := filepath.Join(root, "data", sidefile.RecoveryPointCheckpointFile)
	if err := os.WriteFile(rp, []byte("0\n1\norders 0 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(partEpochs, []byte("0\n1\n0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err = dumpcheckpoint.Files(filepath.Join(root, "data"))
	if want := []dumpcheckpoint.File{{rp, dumpcheckpoint.RecoveryPoint}, {partEpochs, dumpcheckpoint.LeaderEpoch}}; err != nil || !reflect.DeepEqual(files, want) {
		t.Errorf("data directory: %v %v, want %v", files, err, want)
	}
}

// A file its broker reader refuses is listed as far as it parses, then
// its error names the file and byte position; an epoch entry the
// broker's cache drops is listed with in_cache false.
func TestDumpDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	epochs := write("leader-epoch-checkpoint", "0\n3\n3 0\n5 40\n4 30\n")
	lines, err := dump(t, dumpcheckpoint.File{Path: epochs, Kind: dumpcheckpoint.LeaderEpoch})
	var got []string
	for _, l := range lines {
		got = append(got, strconv.Itoa(int(*l.Epoch))+"@"+strconv.FormatInt(*l.StartOffset, 10)+":"+strconv.FormatBool(*l.InCache))
	}
	if want := []string{"3@0:true", "5@40:false", "4@30:true"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("non-monotonic epochs: %v %v, want %v", got, err, want)
	}

	// Three entries declared, two written: a file cut short.
	epochs = write("leader-epoch-checkpoint", "0\n3\n3 0\n5 40\n")
	lines, err = dump(t, dumpcheckpoint.File{Path: epochs, Kind: dumpcheckpoint.LeaderEpoch})
	var ce *fileio.CorruptError
	if len(lines) != 2 || *lines[1].Epoch != 5 || !errors.As(err, &ce) || ce.File != epochs || !strings.Contains(err.Error(), "expected [3] entries, but found [2]") {
		t.Errorf("truncated: %d lines, %v", len(lines), err)
	}

	hw := write("replication-offset-checkpoint", "0\n2\norders 0 5\norders 1\n")
	lines, err = dump(t, dumpcheckpoint.File{Path: hw, Kind: dumpcheckpoint.HighWatermark})
	if len(lines) != 1 || *lines[0].Offset != 5 || lines[0].Checkpoint != "high_watermark" || !errors.As(err, &ce) || ce.File != hw || ce.Position != 15 ||
		!strings.HasSuffix(err.Error(), "replication-offset-checkpoint: byte position 15: malformed checkpoint file: malformed line \"orders 1\"") {
		t.Errorf("malformed line: %+v, %v", lines, err)
	}

	meta := write("partition.metadata", "version: 0\ntopic_id: not-a-uuid\n")
	if lines, err := dump(t, dumpcheckpoint.File{Path: meta, Kind: dumpcheckpoint.PartitionMetadata}); len(lines) != 0 || err == nil {
		t.Errorf("bad partition.metadata: %+v, %v", lines, err)
	}
	for _, kind := range []string{dumpcheckpoint.Cleaner, dumpcheckpoint.LeaderEpoch, dumpcheckpoint.PartitionMetadata, dumpcheckpoint.MetaProperties,
		dumpcheckpoint.QuorumState, dumpcheckpoint.CleanShutdown} {
		if lines, err := dump(t, dumpcheckpoint.File{Path: filepath.Join(dir, "gone"), Kind: kind}); err != nil || len(lines) != 0 {
			t.Errorf("%s gone since Files: %+v, %v", kind, lines, err)
		}
	}
	if _, err := dump(t, dumpcheckpoint.File{Path: hw, Kind: "bogus"}); err == nil {
		t.Error("unknown kind read")
	}
	empty := write(".kafka_cleanshutdown", "")
	if lines, err := dump(t, dumpcheckpoint.File{Path: empty, Kind: dumpcheckpoint.CleanShutdown}); err != nil || len(lines) != 1 || lines[0].BrokerEpoch != nil {
		t.Errorf("empty clean shutdown marker: %+v, %v", lines, err)
	}
}

package inspect_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// sortedReadPartition is ReadPartition written the plain way: the sorted
// listing of os.ReadDir, filepath.Join for every path, the last of two
// names for the same file kept as a sorted listing leaves it.
func sortedReadPartition(t *testing.T, dir string) *inspect.Partition {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &inspect.Partition{Dir: dir, Partition: -1}
	p.Topic, p.Partition, _ = inspect.ParsePartitionDirName(filepath.Base(filepath.Clean(dir)))
	if p.Topic == "" {
		p.Partition = -1
	}
	suffixes := []string{inspect.LogSuffix, inspect.IndexSuffix, inspect.TimeIndexSuffix, inspect.TxnIndexSuffix}
	byBase := map[int64]*inspect.SegmentFiles{}
	var bases []int64
	for _, e := range ents {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		if e.IsDir() {
			continue
		}
		if m, _ := filepath.Match("*.deleted", name); m {
			p.Skipped = append(p.Skipped, inspect.Skipped{Path: path, Reason: "scheduled for deletion (.deleted)"})
			continue
		}
		if m, _ := filepath.Match("*.cleaned", name); m {
			p.Skipped = append(p.Skipped, inspect.Skipped{Path: path, Reason: "log cleaner output not yet swapped in (.cleaned)"})
			continue
		}
		if m, _ := filepath.Match("*.swap", name); m {
			p.Skipped = append(p.Skipped, inspect.Skipped{Path: path, Reason: "log cleaner swap file (.swap)"})
			continue
		}
		if ms, ok := inspect.ParseMetadataSnapshotName(name); ok && !ms.Bootstrap {
			// A KRaft snapshot (a sorted listing lists them by end offset).
			ms.Path = path
			p.MetadataSnapshots = append(p.MetadataSnapshots, ms)
			continue
		}
		sfx := ""
		for _, s := range suffixes {
			if filepath.Ext(name) == s {
				sfx = s
			}
		}
		if sfx == "" {
			continue
		}
		base, err := inspect.ParseBaseOffset(name)
		if err != nil {
			p.Skipped = append(p.Skipped, inspect.Skipped{Path: path, Reason: "not a segment file name"})
			continue
		}
		s := byBase[base]
		if s == nil {
			s = &inspect.SegmentFiles{BaseOffset: base}
			byBase[base] = s
			bases = append(bases, base)
		}
		switch sfx {
		case inspect.LogSuffix:
			s.Log = path
		case inspect.IndexSuffix:
			s.Index = path
		case inspect.TimeIndexSuffix:
			s.TimeIndex = path
		case inspect.TxnIndexSuffix:
			s.TxnIndex = path
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, b := range bases {
		s := byBase[b]
		if s.Log == "" {
			for _, f := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" {
					p.Skipped = append(p.Skipped, inspect.Skipped{Path: f, Reason: "index file without a .log (orphaned)"})
				}
			}
			continue
		}
		p.Segments = append(p.Segments, *s)
	}
	sort.Slice(p.Skipped, func(i, j int) bool { return p.Skipped[i].Path < p.Skipped[j].Path })
	p.Snapshots, err = inspect.ListSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkReadPartition compares ReadPartition(dir) with sortedReadPartition.
func checkReadPartition(t *testing.T, dir string) {
	t.Helper()
	got, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := sortedReadPartition(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("ReadPartition(%q):\n got %+v\nwant %+v", dir, got, want)
	}
}

// TestReadPartitionMatchesSortedListing: ReadPartition lists unsorted and
// joins paths by prefix; it must find exactly what a sorted listing joined
// with filepath.Join finds, on a directory of odd names spelled in several
// ways.
func TestReadPartitionMatchesSortedListing(t *testing.T) {
	odd := t.TempDir()
	dir := filepath.Join(odd, "orders-3")
	for _, sub := range []string{"00000000000000000500.log", "00000000000000000600.snapshot"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{
		"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
		"00000000000000000100.log", "00000000000000000100.index", "00000000000000000100.txnindex",
		"0000000000000000100.log", "000000000000000000100.index", // the same base offset, other spellings
		"00000000000000000200.index", "00000000000000000200.timeindex", // orphaned
		"00000000000000000300.log.deleted", "00000000000000000400.index.cleaned", "00000000000000000100.log.swap",
		"abc.log", "-1.index", "99999999999999999999.log", // not segment names
		"00000000000000000100.snapshot", "leader-epoch-checkpoint", "partition.metadata",
		"00000000000000000050.snapshot", "00000000000000000010.snapshot", "00000000000000000900.snapshot", "00000000000000000020.snapshot", "abc.snapshot", "00000000000000000070.snapshot.deleted", // snapshots, in no order, and names that are not
		"0000000000000000050.snapshot", "50.snapshot", "000000000000000000050.snapshot", // one offset, several names: by name
		"00000000000000000700-0000000002.checkpoint", "00000000000000000300-0000000001.checkpoint", "bootstrap.checkpoint", "00000000000000000800-0000000002.checkpoint.deleted", "x.checkpoint", // KRaft snapshots, and names that are not
	} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkReadPartition(t, dir)
	checkReadPartition(t, dir+string(filepath.Separator))
	checkReadPartition(t, filepath.Join(dir, ".", "..", "orders-3"))
	t.Chdir(odd)
	checkReadPartition(t, "orders-3")
	checkReadPartition(t, "./orders-3/")
	t.Chdir(dir)
	checkReadPartition(t, ".")
}

// TestReadPartitionRealFixturesMatchSortedListing: the same on every real
// partition directory.
func TestReadPartitionRealFixturesMatchSortedListing(t *testing.T) {
	n := 0
	err := filepath.WalkDir(realFixtures(t), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p, err := inspect.ReadPartition(path); err == nil && len(p.Segments) > 0 {
				checkReadPartition(t, path)
				n++
			}
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("%d real partitions: %v", n, err)
	}
}

// TestResolveFollowsSymlinkedPartitionDirs: a partition directory that a
// data directory holds as a symbolic link is loaded by the broker
// (LogManager.loadLogs keeps every entry whose File.isDirectory, which
// follows links), so Resolve lists it with the others, in the data
// directory that holds the link.
func TestResolveFollowsSymlinkedPartitionDirs(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	for _, dir := range []string{filepath.Join(data, "orders-0"), filepath.Join(root, "elsewhere", "orders-1")} {
		if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Batches: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere", "orders-1"), filepath.Join(data, "orders-1")); err != nil {
		t.Fatal(err)
	}
	// A link to a file, or a dangling one, is not a partition directory.
	if err := os.Symlink(filepath.Join(data, "orders-0", "00000000000000000000.log"), filepath.Join(data, "orders-2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "gone"), filepath.Join(data, "orders-3")); err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range tg.Partitions {
		got = append(got, p.Name()+" in "+filepath.Base(p.DataDir))
		if len(p.Segments) != 1 {
			t.Errorf("%s: %d segments, want 1", p.Dir, len(p.Segments))
		}
	}
	sort.Strings(got)
	if want := []string{"orders-0 in data", "orders-1 in data"}; !reflect.DeepEqual(got, want) {
		t.Errorf("partitions %q, want %q", got, want)
	}
}

// TestResolveDataDirMatchesSequentialReads: Resolve reads a data
// directory's partitions on several goroutines; the target must be the one
// that reading them one by one, in listing order, gives: every partition
// as ReadPartition reads it, in order, and the directories it skips (no
// segments, a name that is not a partition's, one being deleted) with the
// same reasons, in order.
func TestResolveDataDirMatchesSequentialReads(t *testing.T) {
	root := t.TempDir()
	var want inspect.Target
	want.Path, want.Kind, want.DataDir = root, "data_dir", root
	for i := range 100 {
		var name string
		files := []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000042.log", "00000000000000000042.snapshot"}
		switch i % 10 {
		case 3:
			name, files = "empty-"+strconv.Itoa(i), []string{"leader-epoch-checkpoint"}
		case 5:
			name = "notapartition" + strconv.Itoa(i)
		case 7:
			name = "orders-" + strconv.Itoa(i) + ".0123456789abcdef0123456789abcdef-delete"
		default:
			name = "orders-" + strconv.Itoa(i)
		}
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ents, err := os.ReadDir(root) // sorted, as Resolve lists
	if err != nil {
		t.Fatal(err)
	}
	got, err := inspect.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if _, _, ok := inspect.ParsePartitionDirName(e.Name()); !ok {
			want.Skipped = append(want.Skipped, inspect.Skipped{Path: dir})
			continue
		}
		p, err := inspect.ReadPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Segments) == 0 {
			want.Skipped = append(want.Skipped, inspect.Skipped{Path: dir, Reason: "no segments"})
			continue
		}
		p.DataDir = root
		want.Partitions = append(want.Partitions, p)
	}
	if len(want.Partitions) != 70 || len(want.Skipped) != 30 {
		t.Fatalf("the data directory was not made as meant: %d partitions, %d skipped", len(want.Partitions), len(want.Skipped))
	}
	if len(got.Skipped) != len(want.Skipped) {
		t.Fatalf("skipped %d directories, want %d", len(got.Skipped), len(want.Skipped))
	}
	for i := range got.Skipped {
		if want.Skipped[i].Reason == "" { // a name's reason is Resolve's wording: the path must match
			want.Skipped[i].Reason = got.Skipped[i].Reason
		}
	}
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Resolve(%q):\n got %+v\nwant %+v", root, got, &want)
	}
}

// TestValidTopicName holds ValidTopicName to Kafka's Topic.isValid, case
// by case (the checks of TopicTest.testInvalidTopicNames and
// testTopicHasCollisionChars' valid names).
func TestValidTopicName(t *testing.T) {
	long := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		return string(b)
	}
	for name, want := range map[string]bool{
		"orders": true, "a.b_c-D9": true, "..a": true, "...": true, "_": true, "-": true, long(249): true,
		"": false, ".": false, "..": false, long(250): false, "../other/t": false, "a/b": false, "a b": false,
		"é": false, "a\x00": false, "topic\n": false, "t*": false, "a,b": false, "a+b": false,
	} {
		if got := inspect.ValidTopicName(name); got != want {
			t.Errorf("ValidTopicName(%q) = %v, want %v", name, got, want)
		}
	}
}

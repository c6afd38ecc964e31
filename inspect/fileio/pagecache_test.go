//go:build linux

package fileio_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// diskTempDir is a temporary directory on a filesystem with a page cache
// that mincore and posix_fadvise act on: os.TempDir() unless it is tmpfs or
// ramfs (whose pages cannot be dropped), else one under the package
// directory's testdata.
func diskTempDir(t *testing.T) string {
	t.Helper()
	if onDisk(os.TempDir()) {
		return t.TempDir()
	}
	if err := os.MkdirAll("testdata", 0o755); err == nil && onDisk("testdata") {
		d, err := os.MkdirTemp("testdata", "pagecache-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skip("neither the temporary directory nor testdata is on a disk filesystem (tmpfs or ramfs): page-cache residency cannot be changed there")
	return ""
}

func onDisk(dir string) bool {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	return st.Type != unix.TMPFS_MAGIC && st.Type != unix.RAMFS_MAGIC
}

// cachePartition writes an 8 MiB partition on disk (with 1 MiB indexes),
// syncs it and leaves in the page cache only a few ranges of its .log (as a
// broker's hot pages would be) and none of its indexes.
func cachePartition(t *testing.T) *inspect.Partition {
	t.Helper()
	dir := filepath.Join(diskTempDir(t), "cache-0")
	o := kafkagen.BenchOptions(5, 1, 8<<20)
	o.PreallocatedIndexBytes = 1 << 20 // indexes of many pages, as a broker preallocates them
	if _, err := kafkagen.Generate(dir, o); err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := tg.Partitions[0]
	sf := p.Segments[0]
	for _, path := range []string{sf.Log, sf.Index, sf.TimeIndex} {
		evict(t, path)
	}
	f, err := os.Open(sf.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM) // no read-ahead while priming
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	for _, r := range [][2]int64{{0, 256 << 10}, {2 << 20, 64 << 10}, {5<<20 + 4096, 128 << 10}, {st.Size() - 8192, 8192}} {
		if _, err := f.ReadAt(buf[:r[1]], r[0]); err != nil {
			t.Fatalf("priming %d bytes at %d of %d: %v", r[1], r[0], st.Size(), err)
		}
	}
	return p
}

// evict syncs path and drops all its pages from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

func resident(t *testing.T, path string) []bool {
	t.Helper()
	r, err := fileio.ResidentPages(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func count(r []bool) (n int) {
	for _, in := range r {
		if in {
			n++
		}
	}
	return n
}

// sameResidency fails unless after holds exactly the pages before did.
func sameResidency(t *testing.T, path string, before, after []bool) {
	t.Helper()
	var added, lost int
	for i := range before {
		switch {
		case after[i] && !before[i]:
			added++
		case before[i] && !after[i]:
			lost++
		}
	}
	if added != 0 || lost != 0 {
		t.Errorf("%s: %d pages brought into the page cache were left there and %d resident pages were evicted (of %d; %d resident before, %d after)",
			filepath.Base(path), added, lost, len(before), count(before), count(after))
	}
}

// TestCacheNeutralWalk reads a whole .log the way dump-log does and checks
// with mincore that the page cache holds the same pages afterwards: the
// pages the read brought in are gone, the ones resident before stay. An
// ordinary read of the same file, as a control, leaves it all cached.
func TestCacheNeutralWalk(t *testing.T) {
	p := cachePartition(t)
	log := p.Segments[0].Log
	before := resident(t, log)
	if n := count(before); n == 0 || n == len(before) {
		t.Fatalf("priming left %d of %d pages resident: the test needs some of each", n, len(before))
	}
	batches := 0
	if err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		if !w.CRCValid {
			t.Errorf("batch at %d: bad CRC", w.Batch.Position)
		}
		batches++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if batches < 500 {
		t.Fatalf("walked %d batches of an 8 MiB log", batches)
	}
	sameResidency(t, log, before, resident(t, log))

	// Control: keeping the cache, the same reading leaves every page in.
	f, err := fileio.Open(log, fileio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := inspect.NewLogIterator(inspect.IterOptions{})
	s.Reset(f, nil, 0)
	for s.Next() {
	}
	f.Close()
	if after := resident(t, log); count(after) < len(after)*9/10 || count(after) <= count(before) {
		t.Errorf("control read keeping the cache left %d of %d pages resident (%d before), want nearly all", count(after), len(after), count(before))
	}
}

// TestCacheNeutralMapped reads a whole index through a cache-neutral
// mapping (verify's index checks) and checks the same.
func TestCacheNeutralMapped(t *testing.T) {
	p := cachePartition(t)
	idx := p.Segments[0].Index
	f, err := os.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
	var one [8]byte
	if _, err := f.ReadAt(one[:], 0); err != nil { // a resident page at the start
		t.Fatal(err)
	}
	f.Close()
	before := resident(t, idx)
	if count(before) == 0 || count(before) == len(before) {
		t.Fatalf("%d of %d index pages resident before: the test needs some of each", count(before), len(before))
	}
	m, err := fileio.Open(idx, fileio.Options{Mapped: true, CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	if !m.CacheNeutral() {
		t.Fatal("a file this process owns did not open cache-neutral")
	}
	buf := make([]byte, m.Size())
	if n, err := m.ReadAt(buf, 0); int64(n) != m.Size() {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	sameResidency(t, idx, before, resident(t, idx))
}

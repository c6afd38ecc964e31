//go:build linux

package gentest

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// ResidencyPartition writes an 8 MiB partition (indexes zero-extended to
// preallocate bytes when it is not 0) on a disk filesystem, syncs it, drops it from the page cache and reads a
// few ranges of the .log and the first page of each index back in, as a
// broker's hot pages would be. It skips where the only temporary
// filesystem is tmpfs or ramfs (no page cache to drop).
func ResidencyPartition(t *testing.T, preallocate int64) (*inspect.Target, []string) {
	t.Helper()
	root := os.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil || st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC {
		t.Skipf("%s is not on a disk filesystem (tmpfs or ramfs): page-cache Residency cannot be changed there", root)
	}
	dir := filepath.Join(t.TempDir(), "cache-0")
	o := kafkagen.BenchOptions(5, 1, 8<<20)
	o.PreallocatedIndexBytes = preallocate
	if _, err := kafkagen.Generate(dir, o); err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	sf := tg.Partitions[0].Segments[0]
	files := []string{sf.Log, sf.Index, sf.TimeIndex}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM)
		ranges := [][2]int64{{0, 4096}}
		if path == sf.Log {
			ranges = [][2]int64{{0, 256 << 10}, {3 << 20, 64 << 10}, {fi.Size() - 8192, 8192}}
		}
		for _, r := range ranges {
			if _, err := f.ReadAt(make([]byte, r[1]), r[0]); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	return tg, files
}

// Residency returns the page-cache Residency of each file.
func Residency(t *testing.T, files []string) [][]bool {
	t.Helper()
	out := make([][]bool, len(files))
	for i, f := range files {
		r, err := fileio.ResidentPages(f)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = r
	}
	return out
}

// AssertSameResidency fails unless every file has exactly the resident
// pages it had before, and checks that the priming left both kinds.
func AssertSameResidency(t *testing.T, files []string, before, after [][]bool) {
	t.Helper()
	for i, f := range files {
		var in, added, lost int
		for p := range before[i] {
			if before[i][p] {
				in++
			}
			switch {
			case after[i][p] && !before[i][p]:
				added++
			case before[i][p] && !after[i][p]:
				lost++
			}
		}
		if in == 0 || in == len(before[i]) {
			t.Fatalf("%s: %d of %d pages resident before: the test needs some of each", filepath.Base(f), in, len(before[i]))
		}
		if added != 0 || lost != 0 {
			t.Errorf("%s: %d pages brought into the page cache were left there, %d resident pages were evicted (of %d)", filepath.Base(f), added, lost, len(before[i]))
		}
	}
}

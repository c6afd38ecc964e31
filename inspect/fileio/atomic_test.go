package fileio_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
)

// TestWriteAtomicFailsWhole fails WriteAtomic at each of its steps: the
// name holds the old bytes until the rename and the new ones from then
// on, and no temporary file is left behind.
func TestWriteAtomicFailsWhole(t *testing.T) {
	errStop := errors.New("stop")
	for _, at := range []string{"create", "write", "fsync", "close", "rename", "sync-dir", ""} {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.svg")
		if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		size, err := fileio.WriteAtomic(path, func(w io.Writer) error {
			_, err := io.WriteString(w, "the new content")
			return err
		}, fileio.AtomicOptions{Step: func(name string) error {
			if name == at {
				return errStop
			}
			return nil
		}})
		want := "old"
		if at == "" || at == "sync-dir" {
			want = "the new content"
		}
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("stopped at %q: %q, want %q", at, got, want)
		}
		if (err != nil) != (at != "") || at != "" && !errors.Is(err, errStop) {
			t.Errorf("stopped at %q: %v", at, err)
		}
		if at == "" && size != int64(len(want)) {
			t.Errorf("size %d, want %d", size, len(want))
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("stopped at %q: %d files left, want 1", at, len(ents))
		}
	}
}

// TestWriteAtomicNew: a new file never replaces one that exists, and a
// failed write leaves no name.
func TestWriteAtomicNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tail.saved")
	write := func(w io.Writer) error { _, err := io.WriteString(w, "tail"); return err }
	if _, err := fileio.WriteAtomic(path, write, fileio.AtomicOptions{New: true, Perm: 0o640, SetPerm: true}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 || fi.Size() != 4 {
		t.Fatalf("%v %v", fi, err)
	}
	if _, err := fileio.WriteAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "other"); return err }, fileio.AtomicOptions{New: true}); err == nil {
		t.Fatal("a second new file replaced the first")
	}
	if got, _ := os.ReadFile(path); string(got) != "tail" {
		t.Fatalf("%q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files left, want 1", len(ents))
	}
}

// TestWriteAtomicUmask: with Umask the file gets the mode os.Create gives
// a new file (0666 less the umask), not the temporary file's 0600.
func TestWriteAtomicUmask(t *testing.T) {
	dir := t.TempDir()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	pfi, err := os.Stat(probe.Name())
	if err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "<svg/>"); return err }
	for _, tc := range []struct {
		umask bool
		want  os.FileMode
	}{{true, pfi.Mode().Perm()}, {false, 0o600}} {
		path := filepath.Join(dir, "chart.svg")
		if _, err := fileio.WriteAtomic(path, write, fileio.AtomicOptions{Umask: tc.umask}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != tc.want {
			t.Errorf("Umask %v: mode %v, want %v", tc.umask, fi.Mode().Perm(), tc.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the directory, want the probe and the chart", len(ents))
	}
}

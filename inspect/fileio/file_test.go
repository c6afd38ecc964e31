package fileio_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
)

// TestPreadFileReads: a File opened for pread reads as os.File.ReadAt
// does (whole reads, io.EOF with the bytes there at the end), refuses a
// directory, and a second Close reports fs.ErrClosed without closing the
// descriptor the system has since handed to another file.
func TestPreadFileReads(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := fileio.Open(path, fileio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", f.Size(), len(data))
	}
	buf := make([]byte, 1<<20)
	for _, off := range []int64{0, 12345, 2 << 20} {
		if n, err := f.ReadAt(buf, off); n != len(buf) || err != nil || !bytes.Equal(buf, data[off:off+int64(len(buf))]) {
			t.Fatalf("ReadAt(%d): %d bytes, %v", off, n, err)
		}
	}
	off := int64(len(data) - 100)
	if n, err := f.ReadAt(buf, off); n != 100 || err != io.EOF || !bytes.Equal(buf[:n], data[off:]) {
		t.Fatalf("ReadAt at the end: %d bytes, %v; want 100, io.EOF", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := fileio.Open(path, fileio.Options{}) // likely given the same descriptor number
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close: %v, want fs.ErrClosed", err)
	}
	if n, err := other.ReadAt(buf[:10], 0); n != 10 || err != nil {
		t.Errorf("another file after a second Close of the first: %d bytes, %v", n, err)
	}
	if _, err := fileio.Open(dir, fileio.Options{}); err == nil {
		t.Error("a directory opens for pread")
	}
}

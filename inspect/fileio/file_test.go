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

// TestReadWhole: a file of at most limit bytes comes back whole, in the
// buffer given when it is large enough and in a new one otherwise; an
// empty file as an empty, non-nil slice; a larger file as nil, unread.
func TestReadWhole(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) *fileio.File {
		t.Helper()
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*13 + 1)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := fileio.Open(path, fileio.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	want := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*13 + 1)
		}
		return b
	}
	f := write("a.index", 800)
	buf := make([]byte, 0, 1024)
	got, err := fileio.ReadWhole(f, buf, 1024)
	if err != nil || !bytes.Equal(got, want(800)) || &got[0] != &buf[:1][0] {
		t.Fatalf("800 bytes into a 1 KiB buffer: %d bytes, same buffer %v, %v", len(got), err == nil && len(got) > 0 && &got[0] == &buf[:1][0], err)
	}
	got, err = fileio.ReadWhole(f, make([]byte, 0, 16), 1024)
	if err != nil || !bytes.Equal(got, want(800)) {
		t.Fatalf("800 bytes into a 16-byte buffer: %d bytes, %v", len(got), err)
	}
	if got, err := fileio.ReadWhole(f, buf, 799); got != nil || err != nil {
		t.Fatalf("800 bytes over a limit of 799: %d bytes, %v; want nil", len(got), err)
	}
	empty := write("b.index", 0)
	if got, err := fileio.ReadWhole(empty, nil, 1024); got == nil || len(got) != 0 || err != nil {
		t.Fatalf("an empty file: %v (nil %v), %v; want an empty slice", got, got == nil, err)
	}
}

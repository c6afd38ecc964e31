package inspect

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// countingReader counts the reads that reach the file.
type countingReader struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

// TestReadWindowMatchesReader: bytes, ReadAt and crc through windows of
// several sizes return exactly what the file holds (a bytes.Reader, read
// directly), at random positions and lengths, up to and past the end.
func TestReadWindowMatchesReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*ReadAlignment+123)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	file := bytes.NewReader(data)
	size := int64(len(data))
	for _, window := range []int{16, 100, ReadAlignment, 2 * ReadAlignment, 64 << 10} {
		w := readWindow{r: file, name: "x", end: size, buf: make([]byte, 0, window)}
		for range 2000 {
			pos := rng.Int64N(size)
			n := rng.Int64N(min(size-pos, 2*int64(window))) + 1
			got, err := w.bytes(pos, n)
			if err != nil || !bytes.Equal(got, data[pos:pos+n]) {
				t.Fatalf("window %d: bytes(%d, %d): %v, or not the file's bytes", window, pos, n, err)
			}
			p := make([]byte, rng.IntN(2*window)+1)
			k, err := w.ReadAt(p, pos)
			want := min(int64(len(p)), size-pos)
			if int64(k) != want || !bytes.Equal(p[:k], data[pos:pos+want]) {
				t.Fatalf("window %d: ReadAt(%d bytes, %d) = %d: not the file's bytes", window, len(p), pos, k)
			}
			if (want < int64(len(p))) != (err == io.EOF) || (err != nil && err != io.EOF) {
				t.Fatalf("window %d: ReadAt(%d bytes, %d) = %d, %v: want io.EOF exactly on a short read", window, len(p), pos, k, err)
			}
			to := pos + n
			c, err := w.crc(2, pos, to)
			if err != nil || c != record.UpdateCRC(2, 0, data[pos:to]) {
				t.Fatalf("window %d: crc(%d, %d) = %d, %v", window, pos, to, c, err)
			}
		}
		if k, err := w.ReadAt(make([]byte, 4), size); k != 0 || err != io.EOF {
			t.Fatalf("ReadAt at the end = %d, %v; want 0, io.EOF", k, err)
		}
	}
}

// TestReadWindowReadsOnce: a small file read slot by slot through a
// window larger than it reaches the file once.
func TestReadWindowReadsOnce(t *testing.T) {
	data := make([]byte, 816)
	c := &countingReader{r: bytes.NewReader(data)}
	w := readWindow{r: c, name: "x.index", end: int64(len(data)), buf: make([]byte, 0, 4096)}
	p := make([]byte, 8)
	for off := int64(0); off < int64(len(data)); off += 8 {
		if _, err := w.ReadAt(p, off); err != nil {
			t.Fatal(err)
		}
	}
	if c.reads != 1 {
		t.Fatalf("%d reads of the file, want 1", c.reads)
	}
}

// TestReadWindowShortFile: a file shorter than it claims is an error
// naming the file and the position asked for.
func TestReadWindowShortFile(t *testing.T) {
	w := readWindow{r: bytes.NewReader(make([]byte, 100)), name: "x.log", end: 200, buf: make([]byte, 0, 64)}
	_, err := w.bytes(150, 10)
	var ce *fileio.CorruptError
	if !errors.As(err, &ce) || ce.File != "x.log" || ce.Position != 150 {
		t.Fatalf("bytes past the real end: %v, want a *CorruptError at x.log position 150", err)
	}
}

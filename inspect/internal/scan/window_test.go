package scan

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// TestReadWindowMatchesReader: bytes and crc through windows of
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
			to := pos + n
			c, err := w.crc(2, pos, to)
			if err != nil || c != record.UpdateCRC(2, 0, data[pos:to]) {
				t.Fatalf("window %d: crc(%d, %d) = %d, %v", window, pos, to, c, err)
			}
		}
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

package verify

import (
	"errors"
	"fmt"
	"io"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// window reads a .log through one reusable buffer: sequential passes hit
// the buffer, and nothing is allocated per batch.
type window struct {
	r    io.ReaderAt
	name string
	size int64
	buf  []byte // buf[:n] holds the file bytes [at, at+n)
	at   int64
	n    int64

	ahead *aheadState // checksums on another goroutine (crcahead.go); nil: none
}

func newWindow(r io.ReaderAt, name string, size int64, buf []byte) *window {
	return &window{r: r, name: name, size: size, buf: buf}
}

// bytes returns the file bytes [pos, pos+n). n must be at most len(buf)
// and pos+n at most the file size (the callers check both).
func (w *window) bytes(pos, n int64) ([]byte, error) {
	if pos >= w.at && pos+n <= w.at+w.n {
		off := pos - w.at
		return w.buf[off : off+n], nil
	}
	if w.ahead != nil {
		return w.bytesAhead(pos, n)
	}
	if err := w.read(pos, n); err != nil {
		return nil, err
	}
	return w.buf[pos-w.at : pos-w.at+n], nil
}

// read refills buf with a window holding [pos, pos+n).
func (w *window) read(pos, n int64) error {
	start := inspect.ReadStart(pos, n, int64(len(w.buf)))
	want := min(int64(len(w.buf)), w.size-start)
	if want < pos-start+n {
		return fmt.Errorf("%s: internal error: read of %d bytes at %d with %d left", w.name, n, pos, want)
	}
	k, err := w.r.ReadAt(w.buf[:want], start)
	if int64(k) < want {
		w.n = 0
		return readError(w.name, pos, err)
	}
	w.at, w.n = start, want
	return nil
}

// crc computes the checksum of the entry [pos, pos+size) as the header's
// CRC field should hold it (CRC-32C from byte 21 for v2, CRC-32 from byte
// 16 for v0/v1), streaming through the window when the entry is larger.
func (w *window) crc(magic int8, pos, size int64) (uint32, error) {
	if w.ahead != nil {
		if c, ok := w.ahead.crc(magic, pos, size); ok {
			return c, nil
		}
	}
	var c uint32
	for at, end := pos+record.CRCStart(magic), pos+size; at < end; {
		n := min(int64(len(w.buf)), end-at)
		p, err := w.bytes(at, n)
		if err != nil {
			return 0, err
		}
		c = record.UpdateCRC(magic, c, p)
		at += n
	}
	return c, nil
}

// allZero reports whether the file bytes [pos, size) are all zero.
func (w *window) allZero(pos int64) (bool, error) {
	for at := pos; at < w.size; {
		n := min(int64(len(w.buf)), w.size-at)
		p, err := w.bytes(at, n)
		if err != nil {
			return false, err
		}
		for _, c := range p {
			if c != 0 {
				return false, nil
			}
		}
		at += n
	}
	return true, nil
}

func readError(name string, pos int64, err error) error {
	var ce *fileio.CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: reading at byte position %d: %w", name, pos, err)
}

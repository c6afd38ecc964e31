package inspect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/exp/mmap"
)

// File is one file opened read-only: through a memory mapping
// (golang.org/x/exp/mmap), as the broker maps its indexes, or through pread
// (os.File.ReadAt), which measured steadier for long sequential scans (see
// docs/performance.md). Both are io.ReaderAt, the one reading abstraction
// the rest of inspect uses.
//
// The size is fixed when the file is opened: a log a broker is still
// appending to is read up to that point. A mapped file that shrinks under
// the mapping raises SIGBUS on access; ReadAt turns that into a
// *CorruptError of kind ErrFault naming the file, instead of a crash. This
// guard is the only recover() on a data path in kseg.
type File struct {
	Name string // the path as given
	size int64
	mm   *mmap.ReaderAt // mapped files
	f    *os.File       // pread files
}

// OpenMapped maps path read-only. An empty file is not mapped (mmap rejects
// length 0) and reads as empty.
func OpenMapped(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	m, err := mmap.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{Name: path, size: int64(m.Len()), mm: m}, nil
}

// OpenPread opens path read-only for reading with pread.
func OpenPread(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if !st.Mode().IsRegular() {
		return nil, errors.Join(fmt.Errorf("%s: not a regular file", path), f.Close())
	}
	return &File{Name: path, size: st.Size(), f: f}, nil
}

// Size is the file length when it was opened.
func (f *File) Size() int64 { return f.size }

// ReadAt reads len(p) bytes at off. Reading past the size fixed at open
// returns io.EOF with the bytes that were there.
func (f *File) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative read position %d", f.Name, off)
	}
	if off >= f.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	short := false
	if rem := f.size - off; int64(len(p)) > rem {
		p = p[:rem]
		short = true
	}
	if f.mm != nil {
		n, err = f.readMapped(p, off)
	} else {
		n, err = f.f.ReadAt(p, off)
		if err == io.EOF && n < len(p) {
			err = &CorruptError{File: f.Name, Position: off + int64(n), Offset: -1, Err: fmt.Errorf("%w: file is shorter than when it was opened (%d bytes)", ErrFault, f.size)}
		}
	}
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// readMapped copies from the mapping with faults turned into errors. The
// fault flag is per goroutine, so it is set around each access.
func (f *File) readMapped(p []byte, off int64) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			n, err = 0, &CorruptError{File: f.Name, Position: off, Offset: -1, Err: fmt.Errorf("%w: the file was truncated while mapped", ErrFault)}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return f.mm.ReadAt(p, off)
}

// Close unmaps or closes the file.
func (f *File) Close() error {
	if f.mm != nil {
		return f.mm.Close()
	}
	return f.f.Close()
}

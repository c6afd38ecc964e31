package fileio

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
// (os.File.ReadAt), for long sequential scans (docs/performance.md). Both are io.ReaderAt, the one reading
// abstraction the rest of inspect uses, so either can serve any reader.
//
// The size is fixed when the file is opened: a log a broker is still
// appending to is read up to that point. A mapped file that shrinks under
// the mapping raises SIGBUS on access; ReadAt turns that into a
// *CorruptError of kind ErrFault naming the file, instead of a crash
// (GuardFaults, the one fault guard).
//
// A File opened with Options.CacheNeutral leaves the page cache as it
// found it: see Options. A File is not safe for concurrent use when it
// is cache-neutral (its bookkeeping is unsynchronised); otherwise ReadAt
// may be called from several goroutines.
type File struct {
	Name  string // the path as given
	size  int64
	mm    *mmap.ReaderAt // mapped files
	f     *descriptor    // pread files
	cache *pageCache     // nil unless cache-neutral (and supported)
}

// Options say how Open reads a file.
type Options struct {
	// Mapped reads through a read-only memory mapping: the choice for
	// small files read at random (indexes, the few batch headers of a
	// lookup). Otherwise the file is read with pread, the choice for long
	// sequential scans.
	Mapped bool
	// CacheNeutral releases from the page cache, as the reading goes and
	// at Close, the pages of the file this File brought in, and only those:
	// pages that were resident when the reading reached them (a live
	// broker's hot data) stay. Residency is taken with mincore() before a
	// range is read (and before the kernel's read-ahead can reach it), and
	// pages found absent are dropped with posix_fadvise(POSIX_FADV_DONTNEED)
	// once read. (The motivation is KIP-824's: a whole-segment read must not
	// evict a broker's hot pages.)
	//
	// It does nothing where residency cannot be known: off Linux, and when
	// the kernel would not report the page cache to this process (mincore
	// only does for files the caller owns or may write, or for root), kseg
	// then reads like any other reader rather than guess.
	CacheNeutral bool
}

// Open opens path read-only as o says: the one way kseg opens a file to
// read it (inspect.OpenSegment opens a segment's files through it). The
// zero Options read with pread and leave the pages read cached; Mapped is
// for small files read at random (indexes), CacheNeutral for long
// sequential reads beside a live broker (verify, rebuild, dump-log). An
// empty file is not mapped (mmap rejects length 0) and reads as empty.
func Open(path string, o Options) (*File, error) {
	var (
		f   *File
		err error
	)
	if o.Mapped {
		f, err = openMapped(path)
	} else {
		f, err = openPread(path)
	}
	if err != nil || !o.CacheNeutral || f.size == 0 {
		return f, err
	}
	f.cache = newPageCache(path, f, !o.Mapped)
	return f, nil
}

func openMapped(path string) (*File, error) {
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

func openPread(path string) (*File, error) {
	f, size, err := openDescriptor(path)
	if err != nil {
		return nil, err
	}
	return &File{Name: path, size: size, f: f}, nil
}

// Size is the file length when it was opened.
func (f *File) Size() int64 { return f.size }

// CacheNeutral reports whether the File releases the pages it brings into
// the page cache (Options.CacheNeutral, where supported).
func (f *File) CacheNeutral() bool { return f.cache != nil }

// ReadAt reads len(p) bytes at off. Reading past the size fixed at open
// returns io.EOF with the bytes that were there.
func (f *File) ReadAt(p []byte, off int64) (n int, err error) {
	return f.readAt(p, off, true)
}

// readAt is ReadAt; guard false reads a mapping without readMapped's
// per-read fault guard (see Unguarded).
func (f *File) readAt(p []byte, off int64, guard bool) (n int, err error) {
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
	if f.cache != nil {
		f.cache.before(off, int64(len(p)))
	}
	switch {
	case f.mm != nil && guard:
		n, err = f.readMapped(p, off)
	case f.mm != nil:
		n, err = f.mm.ReadAt(p, off)
	default:
		n, err = f.f.ReadAt(p, off)
		if err == io.EOF && n < len(p) {
			err = &CorruptError{File: f.Name, Position: off + int64(n), Offset: -1, Err: fmt.Errorf("%w: file is shorter than when it was opened (%d bytes)", ErrFault, f.size)}
		}
	}
	if f.cache != nil {
		f.cache.after(off, int64(len(p)))
	}
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// Unguarded returns a reader of f that reads a mapping without the
// per-read fault guard of ReadAt. Only code that holds the guard itself
// around all its reads may use it (Segment.unguarded): a fault there
// (another process cut the file short) is a panic that code recovers.
// Files that are not mapped are returned as they are.
func (f *File) Unguarded() io.ReaderAt {
	if f.mm == nil {
		return f
	}
	return unguardedFile{f}
}

type unguardedFile struct{ f *File }

func (u unguardedFile) ReadAt(p []byte, off int64) (int, error) { return u.f.readAt(p, off, false) }

// readMapped copies from the mapping with faults turned into errors.
func (f *File) readMapped(p []byte, off int64) (n int, err error) {
	if GuardFaults(func() { n, err = f.mm.ReadAt(p, off) }) {
		return 0, &CorruptError{File: f.Name, Position: off, Offset: -1, Err: fmt.Errorf("%w: the file was truncated while mapped", ErrFault)}
	}
	return n, err
}

// GuardFaults runs fn with memory faults turned into a recovered panic
// (debug.SetPanicOnFault, per goroutine) and reports whether one happened:
// a mapped file cut short by another process. Any other panic goes on.
// It is the one fault guard: File's mapped reads take one per read, the
// segment lookups one per lookup (Segment.unguarded).
func GuardFaults(fn func()) (faulted bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			faulted = true
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	fn()
	return false
}

// Close unmaps or closes the file; a cache-neutral File first releases
// the pages it brought into the page cache.
func (f *File) Close() error {
	var err error
	if f.mm != nil {
		err = f.mm.Close()
	}
	if f.cache != nil {
		f.cache.close() // after munmap: mapped pages cannot be dropped
		f.cache = nil
	}
	if f.f != nil {
		err = errors.Join(err, f.f.Close())
	}
	return err
}

// ReadWhole reads the whole of f into buf, grown when it is too small,
// and returns the bytes, when f holds at most limit bytes; nil for a
// larger file. It is how an index read all over (its shape, its entries
// in order) is read once, with one pread, and then read in memory
// (indexfmt's bytes constructors, SlotsInMemory) instead of through
// IndexSlots; buf, returned grown, is the caller's to keep for the next
// file.
func ReadWhole(f *File, buf []byte, limit int64) ([]byte, error) {
	size := f.Size()
	if size > limit {
		return nil, nil
	}
	if buf == nil || int64(cap(buf)) < size {
		buf = make([]byte, size) // not nil, even when empty
	}
	b := buf[:size]
	if n, err := f.ReadAt(b, 0); int64(n) < size {
		return nil, ReadError(f.Name, int64(n), err)
	}
	return b, nil
}

// ReadFile reads the whole of a small file (a checkpoint, a producer
// snapshot, a schema) of at most limit bytes, refusing a larger one before
// reading it.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, Options{})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this kind of file can sensibly hold", path, f.Size(), limit)
	}
	b := make([]byte, f.Size())
	if n, err := f.ReadAt(b, 0); n < len(b) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

//go:build linux

package fileio

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Residency sampling and release for cache-neutral Files
// (Options.CacheNeutral).
//
// Residency is sampled with cachestat() (a count per chunk: all cached or
// none cached settles it) and, for a chunk partly cached, mincore() on a
// read-only mapping of the file, made then and never touched (so sampling itself
// faults nothing in), chunk by chunk, before the first read that could bring a chunk's pages in: a read
// at [off, off+n) samples [off-margin, off+n+margin) first, the margin
// covering the kernel's read-ahead (sequential read-ahead runs ahead of a
// pread, fault read-around on both sides of a mapped access). A page found
// absent is one this File may bring in; once read it is dropped with
// POSIX_FADV_DONTNEED, which leaves alone pages that are mapped (a broker's
// index mappings), dirty or locked. Memory: one bit per page of the file
// (32 KiB for a 1 GiB segment) and one mincore vector per chunk.
const (
	cacheChunk  = 16 << 20 // residency is sampled 16 MiB at a time
	cacheMargin = 64 << 20 // read-ahead reach sampled around a read (2 x read_ahead_kb up to 32 MiB)
	releaseStep = 8 << 20  // a sequential reader releases behind itself every 8 MiB
)

type pageCache struct {
	mu         sync.Mutex // a File may be read by several goroutines (inspect's read-ahead)
	fd         int
	own        *os.File // descriptor opened for a mapped File; nil when the pread one is used
	size       int64
	page       int64
	mapping    []byte   // PROT_READ, MAP_SHARED; only for mincore, made when first needed
	was        []uint64 // bit i: page i was resident when its chunk was sampled
	sampled    []uint64 // bit c: chunk c was sampled
	vec        []byte   // mincore output for one chunk
	sequential bool
	released   int64 // sequential: [0, released) was released
}

// newPageCache prepares cache-neutral reading of f, or returns nil when
// residency cannot be known (the File then keeps the cache like any reader).
func newPageCache(path string, f *File, sequential bool) *pageCache {
	owner := -1
	if f.f != nil {
		owner = int(f.f.uid) // from the fstat of the open
	} else if euid() != 0 {
		st, err := os.Stat(path)
		if err != nil {
			return nil
		}
		owner = ownerOf(st)
	}
	if !mincoreHonest(path, owner) {
		return nil
	}
	c := &pageCache{size: f.size, page: int64(os.Getpagesize()), sequential: sequential}
	if f.f != nil {
		c.fd = int(f.f.Fd())
	} else {
		own, err := os.Open(path)
		if err != nil {
			return nil
		}
		c.own, c.fd = own, int(own.Fd())
	}
	if int64(int(c.size)) != c.size {
		c.closeOwn()
		return nil
	}
	pages := (c.size + c.page - 1) / c.page
	c.was = make([]uint64, (pages+63)/64)
	chunks := (c.size + cacheChunk - 1) / cacheChunk
	c.sampled = make([]uint64, (chunks+63)/64)
	return c
}

// ownerOf is the owner's uid of a file os.Stat described, -1 when the
// system does not say.
func ownerOf(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// euid is the process's effective user id, asked once.
var euid = sync.OnceValue(os.Geteuid)

// mincoreHonest reports whether mincore() will report page-cache residency
// of the file at path (owned by owner, -1 when not known) to this process.
// Since Linux 5.2 it does only for a file the caller owns or may write, or
// with CAP_FOWNER (mm/mincore.c, can_do_mincore); otherwise it reports
// only pages mapped in this process, and every page would look absent.
func mincoreHonest(path string, owner int) bool {
	e := euid()
	if e == 0 || owner == e {
		return true
	}
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}

// before samples the residency of the chunks a read of [off, off+n) and
// the read-ahead it may trigger can reach.
func (c *pageCache) before(off, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lo := max(off-cacheMargin, 0)
	if c.sequential {
		lo = off
	}
	hi := min(off+n+cacheMargin, c.size)
	for ch := lo / cacheChunk; ch*cacheChunk < hi; ch++ {
		if c.sampled[ch/64]&(1<<(ch%64)) == 0 {
			c.sample(ch)
		}
	}
}

func (c *pageCache) sample(ch int64) {
	c.sampled[ch/64] |= 1 << (ch % 64)
	start := ch * cacheChunk
	length := min(int64(cacheChunk), c.size-start)
	pages := (length + c.page - 1) / c.page
	first := start / c.page
	// cachestat() (Linux 6.5) counts the chunk's cached pages folio by
	// folio, far cheaper than mincore's page-by-page answer; only a chunk
	// partly cached needs mincore.
	var cs unix.Cachestat_t
	if unix.Cachestat(uint(c.fd), &unix.CachestatRange{Off: uint64(start), Len: uint64(length)}, &cs, 0) == nil {
		switch cs.Cache {
		case 0:
			return // nothing resident: every page may be dropped once read
		case uint64(pages):
			for i := int64(0); i < pages; i++ {
				p := first + i
				c.was[p/64] |= 1 << (p % 64)
			}
			return
		}
	}
	var errno syscall.Errno = syscall.ENOMEM
	if c.mapping == nil {
		// Most chunks are settled by cachestat: map the file (untouched)
		// only when mincore is needed.
		if m, err := unix.Mmap(c.fd, 0, int(c.size), unix.PROT_READ, unix.MAP_SHARED); err == nil {
			c.mapping, c.vec = m, make([]byte, cacheChunk/c.page)
		}
	}
	if c.mapping != nil {
		_, _, errno = unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&c.mapping[start])), uintptr(length), uintptr(unsafe.Pointer(&c.vec[0])))
	}
	for i := int64(0); i < pages; i++ {
		// Unknown (mincore failed) counts as resident: never drop a
		// page that may have been someone else's.
		if errno != 0 || c.vec[i]&1 != 0 {
			p := first + i
			c.was[p/64] |= 1 << (p % 64)
		}
	}
}

// after releases, for a sequential reader, the pages behind a read at off.
func (c *pageCache) after(off, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sequential || off-c.released < releaseStep {
		return
	}
	end := off / c.page * c.page
	c.release(c.released, end)
	c.released = end
}

// release drops the pages of [from, to) (page-aligned) that were absent
// when sampled. Pages of chunks never sampled were never read here.
func (c *pageCache) release(from, to int64) {
	to = min(to, (c.size+c.page-1)/c.page*c.page)
	runStart := int64(-1)
	flush := func(end int64) {
		if runStart >= 0 {
			unix.Fadvise(c.fd, runStart, end-runStart, unix.FADV_DONTNEED)
			runStart = -1
		}
	}
	for pos := from; pos < to; pos += c.page {
		ch := pos / cacheChunk
		if c.sampled[ch/64]&(1<<(ch%64)) == 0 {
			flush(pos)
			pos = (ch+1)*cacheChunk - c.page
			continue
		}
		p := pos / c.page
		if c.was[p/64]&(1<<(p%64)) != 0 {
			flush(pos)
		} else if runStart < 0 {
			runStart = pos
		}
	}
	flush(to)
}

// close releases every page read that was absent when sampled, and frees
// the sampling mapping.
func (c *pageCache) close() {
	c.release(0, c.size)
	if c.mapping != nil {
		unix.Munmap(c.mapping)
	}
	c.closeOwn()
}

func (c *pageCache) closeOwn() {
	if c.own != nil {
		c.own.Close()
	}
}

// ResidentPages reports, page by page, which pages of the file at path are
// in the page cache now (mincore on an untouched mapping). It is how the
// tests and benchmarks check that cache-neutral reading left the cache as
// it found it.
func ResidentPages(path string) ([]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !mincoreHonest(path, ownerOf(st)) {
		return nil, fmt.Errorf("%s: mincore does not report the page cache of a file this process neither owns nor may write", path)
	}
	size := st.Size()
	page := int64(os.Getpagesize())
	out := make([]bool, (size+page-1)/page)
	if size == 0 {
		return out, nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, len(out))
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return nil, fmt.Errorf("%s: mincore: %w", path, errno)
	}
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out, nil
}

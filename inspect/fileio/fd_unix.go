//go:build unix

package fileio

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// descriptor is a file opened for pread: a bare descriptor. os.Open
// would also try to register it with the runtime's poller and reset its
// flags (three more system calls, which a regular file never needs):
// opening, stating, reading 12 bytes of and closing a time index took
// 2.4 µs that way and 1.2 µs this way, and a time lookup passing hundreds
// of segments does it once for each (docs/performance.md).
type descriptor struct {
	fd   int
	name string
	uid  uint32 // the file's owner when it was opened (the page-cache bookkeeping asks)
}

// openDescriptor opens path read-only and returns it with its size; it
// refuses anything but a regular file.
func openDescriptor(path string) (*descriptor, int64, error) {
	fd, st, err := openRegular(path, false)
	if err != nil {
		return nil, 0, err
	}
	return &descriptor{fd: fd, name: path, uid: st.uid}, st.size, nil
}

// OpenFile opens path read-only as an os.File, refusing anything but a
// regular file without blocking (openRegular): every file kseg reads
// outside inspect is opened here.
func OpenFile(path string) (*os.File, error) {
	fd, _, err := openRegular(path, true)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenDir opens a directory for listing. os.Open would try to register
// the descriptor with the runtime's poller, which a directory refuses, and
// set and reset its flags around that: four fcntl and an epoll_ctl per
// directory, for a listing of thousands of partitions one set each. Here
// it is one open (O_DIRECTORY: anything else, a FIFO included, fails at
// once with ENOTDIR) and the F_GETFL of os.NewFile.
func OpenDir(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_DIRECTORY, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// regularStat is what openRegular's fstat says of a file, by value: a
// syscall.Stat_t returned by pointer is one more allocation per file.
type regularStat struct {
	size int64
	uid  uint32
}

// openRegular opens path read-only and returns the descriptor and the
// file's status, refusing anything but a regular file. The open itself must
// not block: opening a FIFO read-only waits for a writer, forever, so the
// file is opened O_NONBLOCK (a FIFO then opens at once), checked with
// fstat, and only a regular file is kept. O_NONBLOCK means nothing to a
// regular file's reads (open(2)), so a bare descriptor keeps it (one
// system call less per file: a listing opens three files per segment);
// with blocking set, O_NONBLOCK is cleared, for os.NewFile, which would
// otherwise try to register the descriptor with the runtime's poller.
func openRegular(path string, blocking bool) (int, regularStat, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return -1, regularStat{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, regularStat{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return -1, regularStat{}, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	rs := regularStat{size: st.Size, uid: st.Uid}
	if !blocking {
		return fd, rs, nil
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_RDONLY); err != nil {
		syscall.Close(fd)
		return -1, regularStat{}, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return fd, rs, nil
}

// ReadAt is os.File.ReadAt: it reads until p is full, the end of the file
// (io.EOF) or an error.
func (d *descriptor) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		k, err := syscall.Pread(d.fd, p[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: d.name, Err: err}
		}
		if k == 0 {
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

// Fd is the descriptor, for the page-cache bookkeeping.
func (d *descriptor) Fd() uintptr { return uintptr(d.fd) }

// Close closes the descriptor once; closing again reports fs.ErrClosed
// rather than closing whatever file has since been given the same number.
func (d *descriptor) Close() error {
	if d.fd < 0 {
		return &fs.PathError{Op: "close", Path: d.name, Err: fs.ErrClosed}
	}
	fd := d.fd
	d.fd = -1
	if err := syscall.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: d.name, Err: err}
	}
	return nil
}

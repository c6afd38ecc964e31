//go:build unix

package rebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// LockFile is the name of the lock file a broker holds in each data
// directory while it runs (LogManager.LockFileName).
const LockFile = ".lock"

// ErrLocked: the data directory's .lock file is held, by a running broker
// (or another tool): writing in place would race with it.
var ErrLocked = errors.New("the data directory is locked by a running broker")

// CheckLock tells whether a process holds dataDir/.lock. The broker takes
// it with FileChannel.tryLock, a POSIX record lock (fcntl); other tools
// use flock. Both are probed without taking anything for long: the file is
// opened read-only (never created: no .lock means no broker), a write lock
// is tested with F_OFD_GETLK/F_GETLK, then flock(LOCK_EX|LOCK_NB) is tried
// and released at once. It returns nil when nobody holds the file, an
// error wrapping ErrLocked when somebody does, and another error when it
// cannot tell.
func CheckLock(dataDir string) error {
	path := filepath.Join(dataDir, LockFile)
	// O_NONBLOCK: a FIFO named .lock must not block the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: cannot tell whether a broker holds it: %w (--force writes anyway)", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: cannot tell whether a broker holds it: not a regular file (--force writes anyway)", path)
	}
	fd := int(f.Fd())
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(uintptr(fd), getLockCmd, &lk); err != nil {
		return fmt.Errorf("%s: cannot tell whether a broker holds it: %w (--force writes anyway)", path, err)
	}
	if lk.Type != unix.F_UNLCK {
		holder := ""
		if lk.Pid > 0 {
			holder = fmt.Sprintf(" (process %d)", lk.Pid)
		}
		return fmt.Errorf("%s is locked%s: %w; stop the broker first, or use --force", path, holder, ErrLocked)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("%s is locked (flock): %w; stop the broker first, or use --force", path, ErrLocked)
		}
		return fmt.Errorf("%s: cannot tell whether a broker holds it: %w (--force writes anyway)", path, err)
	}
	return unix.Flock(fd, unix.LOCK_UN)
}

// owner is a file's user and group, restored on rewritten files when kseg
// runs as root (so the broker's user can still open them).
type owner struct {
	uid, gid int
	ok       bool
}

func ownerOf(fi fs.FileInfo) owner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return owner{uid: int(st.Uid), gid: int(st.Gid), ok: true}
	}
	return owner{}
}

func (o owner) apply(f *os.File) error {
	if !o.ok || os.Geteuid() != 0 {
		return nil
	}
	return f.Chown(o.uid, o.gid)
}

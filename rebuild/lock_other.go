//go:build !unix

package rebuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LockFile is the name of the lock file a broker holds in each data
// directory while it runs (LogManager.LockFileName).
const LockFile = ".lock"

// ErrLocked: the data directory's .lock file is held by a running broker.
var ErrLocked = errors.New("the data directory is locked by a running broker")

// CheckLock cannot probe locks on this system (the broker's tryLock is a
// Windows byte-range lock here, which kseg does not test): a data
// directory without .lock has no broker (nil), one with it cannot be told
// apart from a running broker's, so writing in place is refused there
// unless --force, as on Unix when the probe fails.
func CheckLock(dataDir string) error {
	path := filepath.Join(dataDir, LockFile)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("%s: cannot tell whether a broker holds it on this system: stop the broker, then use --force (or write with --out)", path)
}

type owner struct{}

func ownerOf(fs.FileInfo) owner { return owner{} }

func (owner) apply(*os.File) error { return nil }

//go:build !unix

package fileio

import (
	"errors"
	"fmt"
	"os"
)

// descriptor is a file opened for pread (fd_unix.go says why Unix uses a
// bare descriptor).
type descriptor = os.File

// openDescriptor opens path read-only and returns it with its size; it
// refuses anything but a regular file.
func openDescriptor(path string) (*descriptor, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, 0, errors.Join(err, f.Close())
	}
	if !st.Mode().IsRegular() {
		return nil, 0, errors.Join(fmt.Errorf("%s: %w", path, ErrNotRegular), f.Close())
	}
	return f, st.Size(), nil
}

// OpenFile opens path read-only as an os.File, refusing anything but a
// regular file.
func OpenFile(path string) (*os.File, error) {
	f, _, err := openDescriptor(path)
	return f, err
}

// OpenDir opens a directory for listing.
func OpenDir(path string) (*os.File, error) { return os.Open(path) }

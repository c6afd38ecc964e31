//go:build !linux

package fileio

import (
	"errors"
	"fmt"
)

// pageCache is Linux-only (mincore, posix_fadvise); elsewhere a File keeps
// the page cache like any reader.
type pageCache struct{}

func newPageCache(string, *File, bool) *pageCache { return nil }
func (*pageCache) before(off, n int64)            {}
func (*pageCache) after(off, n int64)             {}
func (*pageCache) close()                         {}

// ResidentPages needs mincore (Linux).
func ResidentPages(path string) ([]bool, error) {
	return nil, fmt.Errorf("%s: page-cache residency: %w", path, errors.ErrUnsupported)
}

package cmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeReplacing writes a file a command makes (timeline --svg, report
// --html) through a temporary file beside it, renamed over path once
// whole: a reader never sees half a file, and a failed write leaves what
// was there. write gets a buffered writer; it returns the size written.
func writeReplacing(path string, write func(w io.Writer) error) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	fail := func(err error) (int64, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	b := bufio.NewWriter(tmp)
	if err := write(b); err != nil {
		return fail(err)
	}
	if err := b.Flush(); err != nil {
		return fail(err)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	return size, nil
}

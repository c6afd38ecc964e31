package cmd

import (
	"io"

	"github.com/kseg/kseg/inspect/fileio"
)

// writeReplacing writes a file a command makes (timeline --svg, report
// --html) atomically (fileio.WriteAtomic): a reader never sees half a
// file, and a failed write leaves what was there. It returns the size
// written.
func writeReplacing(path string, write func(w io.Writer) error) (int64, error) {
	return fileio.WriteAtomic(path, write, fileio.AtomicOptions{})
}

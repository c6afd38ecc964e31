package cmd

import (
	"io"
	"os"

	"github.com/kseg/kseg/inspect/fileio"
)

// writeReplacing writes a file a command makes (timeline --svg, report
// --html) atomically (fileio.WriteAtomic): a reader never sees half a
// file, and a failed write leaves what was there. A new file gets the
// mode os.Create gives (0666 less the umask); a file replaced keeps its
// mode. It returns the size written.
func writeReplacing(path string, write func(w io.Writer) error) (int64, error) {
	o := fileio.AtomicOptions{Umask: true}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		o.Perm, o.SetPerm = fi.Mode().Perm(), true
	}
	return fileio.WriteAtomic(path, write, o)
}

package rebuild

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/inspect"
)

// lockDirs lists the real data directories whose .lock guards the files an
// in-place Run may write: the resolved parent of each partition directory
// (and, for a data directory PATH, that directory resolved), plus, when the
// log may be cut, the resolved grandparent of a .log reached through a
// symbolic link. A broker locks the directory it was configured with
// (LogManager.lockLogDirs), so the lock must be looked for where the files
// really are, not where the path as typed points: "." inside a partition
// directory, a bare segment file name, ".." or a symbolic link all name
// the same files as the broker's own path.
func lockDirs(t *inspect.Target, truncateLog bool) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	add := func(dir string) {
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	if t.Kind == "data_dir" {
		real, err := realPath(t.Path)
		if err != nil {
			return nil, err
		}
		add(real)
	}
	for _, p := range t.Partitions {
		real, err := realPath(p.Dir)
		if err != nil {
			return nil, err
		}
		add(filepath.Dir(real))
		if !truncateLog && t.Kind != "segment" {
			continue
		}
		for _, s := range p.Segments {
			for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
				if f == "" {
					continue
				}
				if fi, err := os.Lstat(f); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					continue
				}
				real, err := realPath(f)
				if err != nil {
					return nil, err
				}
				add(filepath.Dir(filepath.Dir(real)))
			}
		}
	}
	return dirs, nil
}

// realPath is path made absolute with every symbolic link resolved.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%s: cannot tell which data directory holds it: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: cannot tell which data directory holds it: %w", path, err)
	}
	return real, nil
}

// checkLocks probes the .lock of every data directory lockDirs names.
func checkLocks(t *inspect.Target, truncateLog bool) error {
	dirs, err := lockDirs(t, truncateLog)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := CheckLock(d); err != nil {
			return err
		}
	}
	return nil
}

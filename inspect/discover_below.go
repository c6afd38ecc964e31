package inspect

import (
	"errors"
	"os"
	"path/filepath"
)

// StatPath is os.Stat of a path a caller named, a missing one said in one
// line naming it ("<path>: no such file or directory"); that error still
// matches os.ErrNotExist.
func StatPath(path string) (os.FileInfo, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &missingPathError{path: path, err: err}
	}
	return st, err
}

type missingPathError struct {
	path string
	err  error
}

func (e *missingPathError) Error() string { return e.path + ": no such file or directory" }
func (e *missingPathError) Unwrap() error { return e.err }

// FoundDataDir is a data directory DataDirsBelow found, and how many
// partitions Resolve finds in it.
type FoundDataDir struct {
	Path       string
	Partitions int
}

// MaxDataDirsBelow bounds the directories DataDirsBelow looks into, so
// that a path such as / costs a moment, not a walk of the disk.
const MaxDataDirsBelow = 256

// DataDirsBelow lists the data directories one or two levels below path
// (a directory holding a broker's log.dirs, or a backup of several
// brokers), in name order: each subdirectory Resolve takes for a data
// directory with partitions, looking into one that does not resolve, up to
// MaxDataDirsBelow directories in all. It reads directory listings only.
func DataDirsBelow(path string) []FoundDataDir {
	var found []FoundDataDir
	looked := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() || looked >= MaxDataDirsBelow {
				continue
			}
			looked++
			sub := filepath.Join(dir, e.Name())
			if t, err := Resolve(sub); err == nil && t.Kind == "data_dir" && len(t.Partitions) > 0 {
				found = append(found, FoundDataDir{Path: sub, Partitions: len(t.Partitions)})
			} else if err != nil && depth < 2 {
				walk(sub, depth+1)
			}
		}
	}
	walk(path, 1)
	return found
}

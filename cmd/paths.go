package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kseg/kseg/inspect"
)

// resolveTarget resolves a PATH argument, turning "does not exist" and
// "not a Kafka path" into one clear line naming the path.
func resolveTarget(path string) (*inspect.Target, error) {
	t, err := inspect.Resolve(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			hint := "check the path"
			if parent := filepath.Dir(filepath.Clean(path)); parent != "." {
				if fi, err := os.Stat(parent); err == nil && fi.IsDir() {
					hint += "; kseg ls " + parent + " lists the partitions kseg finds there"
				}
			}
			return nil, withHint(fmt.Errorf("%s: no such file or directory", path), hint)
		}
		if errors.Is(err, inspect.ErrNotKafka) {
			return nil, withHint(err, "name a data directory (a log.dirs entry), a partition directory (<topic>-<partition>) or a segment file (.log, .index, .timeindex, .txnindex)")
		}
		return nil, err
	}
	return t, nil
}

// resolvePartition resolves PATH to exactly one partition (lookups answer
// for one partition; a data dir of several is ambiguous).
func resolvePartition(path string) (*inspect.Partition, error) {
	t, err := resolveTarget(path)
	if err != nil {
		return nil, err
	}
	if len(t.Partitions) != 1 {
		names := ""
		for i, p := range t.Partitions {
			if i == 3 {
				names += ", ..."
				break
			}
			if i > 0 {
				names += ", "
			}
			names += p.Name()
		}
		return nil, withHint(fmt.Errorf("%s holds %d partitions (%s): name one partition directory", path, len(t.Partitions), names),
			"kseg ls "+path+" lists them; give one, e.g. "+t.Partitions[0].Dir)
	}
	return t.Partitions[0], nil
}

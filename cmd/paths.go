package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/spf13/cobra"
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
		if errors.Is(err, fileio.ErrNotKafka) {
			if found := inspect.DataDirsBelow(path); len(found) > 0 {
				return nil, withHint(err, foundDataDirsHint(path, found))
			}
			return nil, withHint(err, "name a data directory (a log.dirs entry), a partition directory (<topic>-<partition>) or a segment file (.log, .index, .timeindex, .txnindex)")
		}
		return nil, err
	}
	return t, nil
}

// foundDataDirsHint lists what inspect.DataDirsBelow found and the
// commands to run on it, on one line.
func foundDataDirsHint(path string, found []inspect.FoundDataDir) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds no partition itself, but data directories below it: ", path)
	args := make([]string, 0, len(found))
	for i, f := range found {
		if i == 8 {
			fmt.Fprintf(&b, ", and %d more", len(found)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", f.Path, countOf(f.Partitions, "partition"))
		args = append(args, f.Path)
	}
	list := strings.Join(args, " ")
	if len(found) > 3 {
		// A shell glob that matches directories only.
		list = filepath.Join(path, "*") + string(filepath.Separator)
	}
	fmt.Fprintf(&b, "; list them with kseg ls %s, check them with kseg verify %s", list, list)
	return b.String()
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

// resolveTargets resolves every PATH argument before anything is read or
// written: a bad one fails the command (exit 2) with no partial output.
func resolveTargets(paths []string) ([]*inspect.Target, error) {
	return collectEach(paths, func(path string) ([]*inspect.Target, error) {
		t, err := resolveTarget(path)
		if err != nil {
			return nil, err
		}
		return []*inspect.Target{t}, nil
	})
}

// resolveSortedPartitions resolves each PATH in turn, says on stderr
// "<path>: <notUsed>: <reason>" for each file or directory it skipped
// (notUsed in the command's words: "not searched", "not read"), and
// returns the partitions, each PATH's in partition order
// (inspect.SortPartitions). A PATH that does not resolve stops it.
func resolveSortedPartitions(ios *IOStreams, paths []string, notUsed string) ([]*inspect.Partition, error) {
	var parts []*inspect.Partition
	for _, path := range paths {
		t, err := resolveTarget(path)
		if err != nil {
			return nil, err
		}
		for _, s := range t.Skipped {
			ios.Warnf("%s: %s: %s", s.Path, notUsed, s.Reason)
		}
		ps := append([]*inspect.Partition(nil), t.Partitions...)
		inspect.SortPartitions(ps)
		parts = append(parts, ps...)
	}
	return parts, nil
}

// pathsRunE is the RunE of a command whose arguments are all PATHs
// (at least one, cobra.MinimumNArgs): it keeps them in *paths and runs
// run.
func pathsRunE(paths *[]string, run func() error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		*paths = args
		return run()
	}
}

// collectEach runs collect on every PATH argument, in order, and joins
// what it lists (the files dump-index, dump-checkpoint and dump-snapshot
// dump); the first PATH that fails stops it.
func collectEach[T any](paths []string, collect func(path string) ([]T, error)) ([]T, error) {
	var out []T
	for _, p := range paths {
		fs, err := collect(p)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

package fileio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// AtomicOptions say how WriteAtomic finishes a file.
type AtomicOptions struct {
	// Perm is the file's permission bits when SetPerm. Otherwise the file
	// keeps those it was created with: 0600, or with Umask 0666 less the
	// process's umask, as a file os.Create or a shell's redirection makes
	// (a page or chart the user asked for, to be read by others).
	Perm    fs.FileMode
	SetPerm bool
	Umask   bool
	// Prepare, when set, runs on the written and fsynced file before it is
	// closed (rebuild gives it the owner of the file it replaces).
	Prepare func(f *os.File) error
	// BeforeName, when set, runs after the file is closed and before it
	// gets its name (rebuild gives the old file its .bak name then).
	BeforeName func() error
	// New: path must not exist. The file gets the name by a hard link,
	// which fails rather than replace a file (where the file system has
	// no links, by a rename once the name is found free). Otherwise the
	// file is renamed over path.
	New bool
	// Named, when set, is called once path names the new file (before the
	// directory's fsync, which may still fail).
	Named func()
	// Step, when set (tests), is called before each step with its name
	// (create, write, fsync, close, rename or link, sync-dir); an error
	// stops there, as a crash there would.
	Step func(name string) error
}

// WriteAtomic writes path through a temporary file in its directory
// (".<name>.*.kseg-tmp"): write fills it through a buffer, then it is
// fsynced, closed, given the name path and the directory fsynced (the
// recipe of Prometheus tsdb's fileutil). At every instant path names its
// old content (or nothing) or the whole new file; on failure the
// temporary file is removed. It returns the bytes written.
func WriteAtomic(path string, write func(w io.Writer) error, o AtomicOptions) (size int64, err error) {
	step := func(name string) error {
		if o.Step == nil {
			return nil
		}
		return o.Step(name)
	}
	dir := filepath.Dir(path)
	if err := step("create"); err != nil {
		return 0, err
	}
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".", ".kseg-tmp", o.Umask)
	if err != nil {
		return 0, fmt.Errorf("creating a temporary file for %s: %w", path, err)
	}
	closed := false
	defer func() {
		if !closed {
			tmp.Close()
		}
		os.Remove(tmp.Name()) // after a link, the temporary name only; after a rename, nothing
	}()
	if err := step("write"); err != nil {
		return 0, err
	}
	b := bufio.NewWriter(tmp)
	if err := write(b); err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := b.Flush(); err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	if size, err = tmp.Seek(0, io.SeekCurrent); err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := step("fsync"); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, fmt.Errorf("fsync %s: %w", path, err)
	}
	if o.SetPerm {
		if err := tmp.Chmod(o.Perm); err != nil {
			return 0, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
		}
	}
	if o.Prepare != nil {
		if err := o.Prepare(tmp); err != nil {
			return 0, fmt.Errorf("%s: %w", tmp.Name(), err)
		}
	}
	if err := step("close"); err != nil {
		return 0, err
	}
	closed = true
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if o.BeforeName != nil {
		if err := o.BeforeName(); err != nil {
			return 0, err
		}
	}
	if o.New {
		if err := step("link"); err != nil {
			return 0, err
		}
		if err := linkNew(tmp.Name(), path); err != nil {
			return 0, err
		}
	} else {
		if err := step("rename"); err != nil {
			return 0, err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return 0, fmt.Errorf("replacing %s: %w", path, err)
		}
	}
	if o.Named != nil {
		o.Named()
	}
	if err := step("sync-dir"); err != nil {
		return size, err
	}
	return size, SyncDir(dir)
}

// createTemp creates a new file named prefix, a random number and suffix
// in dir: as os.CreateTemp (mode 0600), or with umask mode 0666 less the
// umask.
func createTemp(dir, prefix, suffix string, umask bool) (*os.File, error) {
	if !umask {
		return os.CreateTemp(dir, prefix+"*"+suffix)
	}
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no free temporary name %s*%s", dir, prefix, suffix)
}

// linkNew gives the file at tmp the name path, which must not exist.
func linkNew(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: %w", path, err)
	}
	// No hard links here: a rename after checking the name is free.
	if _, lerr := os.Lstat(path); lerr == nil {
		return fmt.Errorf("%s already exists", path)
	}
	return os.Rename(tmp, path)
}

// SyncDir fsyncs a directory, making renames and new names in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return d.Close()
}

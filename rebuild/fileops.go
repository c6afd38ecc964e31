package rebuild

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/kseg/kseg/inspect/fileio"
)

// hook, when set (tests only), is called before each step of a file
// replacement or log cut with the step's name; an error stops there, as a
// crash at that point would. Steps:
//
//	replaceFile: create, write, fsync, close, backup, rename, sync-dir
//	cutLog:      save-create, save-write, save-fsync, save-close, save-link,
//	             truncate, truncate-fsync
//	AfterCut:    aside (before each file set aside)
var hook func(step string) error

func step(name string) error {
	if hook == nil {
		return nil
	}
	if err := hook(name); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// source writes a file's new content.
type source func(w io.Writer) error

func bytesSource(b []byte) source {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// sectionSource copies n bytes of r from off, checking that they were all
// there.
func sectionSource(r io.ReaderAt, off, n int64) source {
	return func(w io.Writer) error {
		c, err := io.Copy(w, io.NewSectionReader(r, off, n))
		if err == nil && c != n {
			err = fmt.Errorf("copied %d bytes, expected %d", c, n)
		}
		return err
	}
}

// replaceFile writes final atomically (prom tsdb fileutil's recipe plus a
// backup): a temporary file in the same directory is written, fsynced and
// closed; with backup the current file gets a second name, final.bak (a
// hard link, or a complete copy renamed into place where links are not
// supported); then the temporary file is renamed over final and the
// directory fsynced. At every instant final names either the whole old
// file or the whole new one, and a .bak, once it exists, is whole.
//
// It returns the paths it created (final, and final.bak when made).
func replaceFile(final string, src source, perm fs.FileMode, own owner, backup bool) (written []string, err error) {
	dir := filepath.Dir(final)
	if err := step("create"); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(final)+".*.kseg-tmp")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary file for %s: %w", final, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := step("write"); err != nil {
		return nil, err
	}
	// Errors name the file being replaced; the wrapped error names the
	// temporary file (removed on the way out).
	if err := src(tmp); err != nil {
		return nil, fmt.Errorf("writing %s: %w", final, err)
	}
	if err := step("fsync"); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("fsync %s: %w", final, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := own.apply(tmp); err != nil {
		return nil, fmt.Errorf("chown %s: %w", tmp.Name(), err)
	}
	if err := step("close"); err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if backup {
		if err := step("backup"); err != nil {
			return nil, err
		}
		bak := final + BackupSuffix
		if err := keepBackup(final, bak); err != nil {
			return nil, err
		}
		written = append(written, bak)
		if err := syncDir(dir); err != nil {
			return written, err
		}
	}
	if err := step("rename"); err != nil {
		return written, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return written, fmt.Errorf("replacing %s: %w", final, err)
	}
	renamed = true
	written = append([]string{final}, written...)
	if err := step("sync-dir"); err != nil {
		return written, err
	}
	return written, syncDir(dir)
}

// keepBackup gives final's current content the name bak, which must not
// exist: a hard link (the old inode keeps its bytes when final is renamed
// over), else a complete copy renamed into place.
func keepBackup(final, bak string) error {
	err := os.Link(final, bak)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		// Left by an interrupted run with final's very bytes: keep it.
		if ok, cerr := backupUsable(final, bak); cerr == nil && ok {
			return nil
		}
		return fmt.Errorf("%s already exists: %w", bak, err)
	}
	// No hard links here: copy.
	in, err := fileio.OpenFile(final)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(bak), "."+filepath.Base(bak)+".*.kseg-tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file for %s: %w", bak, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := sectionSource(in, 0, fi.Size())(tmp); err != nil {
		return fmt.Errorf("copying %s to %s: %w", final, bak, err)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if _, err := os.Lstat(bak); err == nil {
		return fmt.Errorf("%s already exists", bak)
	}
	if err := os.Rename(tmp.Name(), bak); err != nil {
		return err
	}
	done = true
	return nil
}

// cutLog cuts the log at validBytes as recovery does (log.truncateTo),
// after saving the bytes it removes as saved (which must not exist): the
// tail is written to a temporary file, fsynced, and linked to its final
// name; only then is the log truncated and fsynced. The log's modification
// time is kept (the broker uses it for time retention when a segment has
// no timestamps). saved + the cut log == the original log.
func cutLog(log, saved string, validBytes, size int64, logInfo fs.FileInfo) ([]string, error) {
	in, err := fileio.OpenFile(log)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return nil, err
	} else if fi.Size() != size {
		return nil, fmt.Errorf("%s: the log is now %d bytes, it was %d when planned", log, fi.Size(), size)
	}
	if _, err := os.Lstat(saved); err == nil {
		// Left by an interrupted run: reuse it only if it holds the tail.
		if ok, err := savedUsable(saved, log, validBytes, size-validBytes); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("%s already exists", saved)
		}
	} else if err := saveNew(saved, sectionSource(in, validBytes, size-validBytes), logInfo); err != nil {
		return nil, err
	}
	written := []string{saved}
	if err := step("truncate"); err != nil {
		return written, err
	}
	// O_NONBLOCK: should log have become a FIFO since it was read, the open
	// fails instead of waiting for a reader.
	f, err := os.OpenFile(log, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return written, err
	}
	if err := f.Truncate(validBytes); err != nil {
		f.Close()
		return written, fmt.Errorf("truncating %s at %d: %w", log, validBytes, err)
	}
	written = append(written, log)
	if err := step("truncate-fsync"); err != nil {
		f.Close()
		return written, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return written, fmt.Errorf("fsync %s: %w", log, err)
	}
	if err := f.Close(); err != nil {
		return written, err
	}
	return written, keepModTime(log, logInfo)
}

// saveNew writes a new file at path, which must not exist, atomically:
// temporary file, fsync, hard link to the final name (which fails rather
// than replace an existing file), directory fsync.
func saveNew(path string, src source, like fs.FileInfo) error {
	dir := filepath.Dir(path)
	if err := step("save-create"); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.kseg-tmp")
	if err != nil {
		return fmt.Errorf("creating a temporary file for %s: %w", path, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	if err := step("save-write"); err != nil {
		return err
	}
	if err := src(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := step("save-fsync"); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := tmp.Chmod(like.Mode().Perm()); err != nil {
		return err
	}
	if err := ownerOf(like).apply(tmp); err != nil {
		return err
	}
	if err := step("save-close"); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := step("save-link"); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists: %w", path, err)
		}
		// No hard links here: a rename after checking the name is free.
		if _, lerr := os.Lstat(path); lerr == nil {
			return fmt.Errorf("%s already exists", path)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

// copyCutLog writes, under --out, the log cut at its valid prefix and the
// bytes cut off, as two new files (the source log is only read).
func copyCutLog(a *segmentActions, logInfo fs.FileInfo) ([]string, error) {
	in, err := fileio.OpenFile(a.plan.Segment.Log)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var written []string
	perm, own := logInfo.Mode().Perm(), ownerOf(logInfo)
	w, err := replaceFile(a.saved, sectionSource(in, a.plan.ValidBytes, a.plan.TruncatedBytes), perm, own, false)
	written = append(written, w...)
	if err != nil {
		return written, err
	}
	w, err = replaceFile(a.logFinal, sectionSource(in, 0, a.plan.ValidBytes), perm, own, false)
	written = append(written, w...)
	if err != nil {
		return written, err
	}
	return written, keepModTime(a.logFinal, logInfo)
}

func keepModTime(path string, like fs.FileInfo) error {
	if err := os.Chtimes(path, like.ModTime(), like.ModTime()); err != nil {
		return fmt.Errorf("restoring the modification time of %s: %w", path, err)
	}
	return nil
}

// syncDir fsyncs a directory, making renames and new names in it durable.
func syncDir(dir string) error {
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

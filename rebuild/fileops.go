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

// replaceFile writes final atomically (fileio.WriteAtomic), with backup
// giving the current file a second name, final.bak (a hard link, or a
// complete copy where links are not supported), before the new file is
// renamed over final. At every instant final names either the whole old
// file or the whole new one, and a .bak, once it exists, is whole.
//
// It returns the paths it created (final, and final.bak when made).
func replaceFile(final string, src source, perm fs.FileMode, own owner, backup bool) (written []string, err error) {
	o := fileio.AtomicOptions{Perm: perm, SetPerm: true, Step: step,
		Prepare: func(f *os.File) error {
			if err := own.apply(f); err != nil {
				return fmt.Errorf("chown: %w", err)
			}
			return nil
		},
		Named: func() { written = append([]string{final}, written...) },
	}
	if backup {
		o.BeforeName = func() error {
			if err := step("backup"); err != nil {
				return err
			}
			bak := final + BackupSuffix
			if err := keepBackup(final, bak); err != nil {
				return err
			}
			written = append(written, bak)
			return fileio.SyncDir(filepath.Dir(final))
		}
	}
	_, err = fileio.WriteAtomic(final, src, o)
	return written, err
}

// keepBackup gives final's current content the name bak, which must not
// exist: a hard link (the old inode keeps its bytes when final is renamed
// over), else a complete copy given the name as a new file.
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
	_, err = fileio.WriteAtomic(bak, sectionSource(in, 0, fi.Size()), fileio.AtomicOptions{Perm: fi.Mode().Perm(), SetPerm: true, New: true})
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", final, bak, err)
	}
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

// saveNew writes a new file at path, which must not exist, atomically
// (fileio.WriteAtomic, New), with like's permissions and owner.
func saveNew(path string, src source, like fs.FileInfo) error {
	_, err := fileio.WriteAtomic(path, src, fileio.AtomicOptions{
		Perm: like.Mode().Perm(), SetPerm: true, New: true,
		Prepare: ownerOf(like).apply,
		Step:    func(name string) error { return step("save-" + name) },
	})
	return err
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

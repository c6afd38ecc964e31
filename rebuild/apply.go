package rebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/recovery"
)

// ApplyOptions say how rebuilt files are written.
type ApplyOptions struct {
	// StartPartition, when set, is called with each partition's name as
	// Run starts on it: for a progress display.
	StartPartition func(name string)
	recovery.Options

	// OutDir, when set, receives the rebuilt files under
	// OutDir/<partition directory name>/; nothing under the partition is
	// touched. Otherwise files are replaced in place.
	OutDir string
	// NoBackup: in place, do not keep the replaced file as <name>.bak.
	NoBackup bool
	// DryRun: plan and compare, write nothing.
	DryRun bool
	// TruncateLog also cuts a log at its valid prefix, as recovery does,
	// after saving the cut bytes as <name>.log.truncated-at-<position>
	// beside it. Run then also plans with Options.CutOverlap: a log is cut
	// as well at its first batch whose offsets reach the next segment's
	// base offset (recovery.ErrOverlap), which a broker's fetch never reads.
	TruncateLog bool
	// Force writes in place even when the data directory's .lock file is
	// held (by a running broker).
	Force bool
	// Context, when set, stops the run once it is done (Ctrl-C): before
	// the next partition, segment or file, and while a file's new content
	// is written (the temporary file is removed). Every file already
	// replaced is whole; the error wraps context.Cause.
	Context context.Context
}

// stopped is the context's cause once it is done, else nil.
func (o ApplyOptions) stopped() error {
	if o.Context == nil || o.Context.Err() == nil {
		return nil
	}
	return context.Cause(o.Context)
}

// cancellable makes src stop at its next write once the run is stopped.
func (o ApplyOptions) cancellable(src source) source {
	if o.Context == nil {
		return src
	}
	return func(w io.Writer) error { return src(stopWriter{w, o}) }
}

// stopWriter fails a write once the run is stopped.
type stopWriter struct {
	w io.Writer
	o ApplyOptions
}

func (s stopWriter) Write(p []byte) (int, error) {
	if err := s.o.stopped(); err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

// Result is what was done for one segment.
type Result struct {
	Partition string // the partition directory
	Segment   string // the .log's base name

	IndexEntries, TimeIndexEntries, TxnEntries int

	ValidBytes, TruncatedBytes int64
	// Changed: some rebuilt file differs from the one on disk (an absent
	// file counts as different; with TruncateLog, a log with a corrupt tail
	// is a changed file).
	Changed bool
	// Written lists every file created or modified, in order: rebuilt
	// files, the .bak kept of each replaced one, the saved tail and the cut
	// log. Empty (not nil) when nothing was written.
	Written []string
	// StopErr is the plan's: why recovery stops before the end of the log.
	StopErr error
	// Overlap is the plan's: the first batch whose offsets reach the next
	// segment's base offset (kind recovery.ErrOverlap), nil when none does. Unless
	// the log was planned with Options.CutOverlap (TruncateLog), it is left
	// in the log.
	Overlap error
	// AfterCut, with TruncateLog, is set on the segment cut for invalid
	// bytes: what recovery does beyond it (later segments, producer
	// snapshots, leader epochs), planned, and done in place unless DryRun
	// (its files are in Written).
	AfterCut *AfterCut
}

// TruncatedSuffix starts the name of the file holding the bytes cut off a
// log: <base>.log.truncated-at-<valid bytes>.
const TruncatedSuffix = ".truncated-at-"

// BackupSuffix is appended to a replaced file's name to keep the old one.
const BackupSuffix = ".bak"

// Run rebuilds every segment of a resolved PATH: partition by partition it
// plans (recovery.PlanPartition) and applies (Apply). In place and not a dry run, it
// first refuses to write when the .lock of the data directory really
// holding the files (symbolic links and relative spellings resolved:
// lockDirs) is held, unless opts.Force. It returns the results of the segments done so far with the
// first error.
func Run(t *inspect.Target, opts ApplyOptions) ([]Result, error) {
	if _, err := opts.Interval(); err != nil {
		return nil, err
	}
	if opts.OutDir == "" && !opts.DryRun && !opts.Force {
		if err := checkLocks(t, opts.TruncateLog); err != nil {
			return nil, err
		}
	}
	if opts.OutDir != "" && t.Kind != "segment" {
		// "Touch nothing under PATH": not even a new directory.
		for _, p := range t.Partitions {
			if in, err := within(filepath.Join(opts.OutDir, p.Name()), t.Path); err != nil {
				return nil, err
			} else if in {
				return nil, fmt.Errorf("%s: the output directory is inside %s, which is being rebuilt", opts.OutDir, t.Path)
			}
		}
	}
	if t.Kind == "data_dir" && opts.OutDir == "" {
		// Writing through a symlinked partition directory would write
		// outside the data directory named; refused before anything is
		// written, and by a dry run too (it says what the run would do).
		for _, p := range t.Partitions {
			if fi, err := os.Lstat(p.Dir); err != nil {
				return nil, err
			} else if fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s: refusing to write through a symbolic link to a partition directory (name it as the PATH to rebuild it)", p.Dir)
			}
		}
	}
	opts.Meter = inspect.NewMeter(opts.Progress, t.LogBytes)
	var results []Result
	for _, p := range t.Partitions {
		if err := opts.stopped(); err != nil {
			return results, err
		}
		if opts.StartPartition != nil {
			opts.StartPartition(p.Name())
		}
		popts := opts.Options
		popts.CutOverlap = popts.CutOverlap || opts.TruncateLog
		plans, err := recovery.PlanPartition(p, popts)
		if err != nil {
			return results, err
		}
		var after *AfterCut
		cut := cutForRecovery(plans)
		if opts.TruncateLog && cut >= 0 {
			// Recovery's rules beyond the cut segment: the later segments
			// go, so their indexes are not rebuilt.
			if after, err = afterCutOf(p, &plans[cut]); err != nil {
				return results, err
			}
			plans = plans[:cut+1]
		}
		// Beyond the cut first, then the cut: interrupted in between, a
		// second run plans the same cut and sets aside what is left.
		var asideWritten []string
		if after != nil && !opts.DryRun && opts.OutDir == "" && !after.Empty() {
			if asideWritten, err = after.apply(opts.NoBackup); err != nil {
				return results, err
			}
		}
		res, err := Apply(p, plans, opts)
		if after != nil && len(res) == cut+1 {
			r := &res[cut]
			r.AfterCut = after
			r.Written = append(r.Written, asideWritten...)
			r.Changed = r.Changed || !after.Empty()
		}
		results = append(results, res...)
		if err != nil {
			return results, err
		}
	}
	opts.Meter.Finish()
	return results, nil
}

// fileAction is one file Apply may write.
type fileAction struct {
	final   string // where the rebuilt file goes
	source  string // the file on disk it replaces or is compared with ("" when absent)
	data    []byte
	changed bool
}

// segmentActions is everything Apply does for one segment.
type segmentActions struct {
	plan  *recovery.SegmentRecovery
	files []fileAction
	// cut: the log is to be cut (TruncateLog and a truncated tail).
	cut      bool
	logFinal string // the cut log's destination (the .log itself in place)
	saved    string // where the cut bytes go
}

// Apply writes plans of partition p (from recovery.PlanPartition) as opts say and
// reports per segment (with opts.DryRun it only reports). Everything is
// checked before the first write (symbolic links, existing .bak or
// saved-tail files, logs changed since they were planned); then each file
// is written atomically. In place, the
// index files of a segment are replaced before its log is cut, so the
// indexes never point past the end of the log.
//
// In place, a file is only rewritten when its content changes; with
// opts.OutDir every rebuilt file is written. A .txnindex is written when
// the segment has an aborted transaction, and, empty, when it has none but
// the segment had a .txnindex (as the broker's reset leaves it).
func Apply(p *inspect.Partition, plans []recovery.SegmentRecovery, opts ApplyOptions) ([]Result, error) {
	dest := p.Dir
	if opts.OutDir != "" {
		dest = filepath.Join(opts.OutDir, p.Name())
		if in, err := within(dest, p.Dir); err != nil {
			return nil, err
		} else if in {
			return nil, fmt.Errorf("%s: the output directory would be inside the partition directory %s", dest, p.Dir)
		}
	}
	actions := make([]segmentActions, len(plans))
	for i := range plans {
		a, err := writesFor(&plans[i], dest, opts)
		if err != nil {
			return nil, err
		}
		actions[i] = a
	}
	for i := range actions {
		if opts.DryRun {
			break // the refusals below are about writing
		}
		if err := checkActions(&actions[i], opts); err != nil {
			return nil, err
		}
	}
	results := make([]Result, 0, len(plans))
	if !opts.DryRun && opts.OutDir != "" {
		if err := os.MkdirAll(dest, 0o755); err != nil {
			return nil, fmt.Errorf("creating the output directory: %w", err)
		}
	}
	for i := range actions {
		a := &actions[i]
		r := Result{
			Partition: p.Dir, Segment: a.plan.Segment.Name(),
			IndexEntries: a.plan.IndexEntries, TimeIndexEntries: a.plan.TimeIndexEntries, TxnEntries: a.plan.TxnEntries,
			ValidBytes: a.plan.ValidBytes, TruncatedBytes: a.plan.TruncatedBytes,
			Changed: a.cut, Written: []string{}, StopErr: a.plan.StopErr, Overlap: a.plan.Overlap,
		}
		for _, f := range a.files {
			r.Changed = r.Changed || f.changed
		}
		if !opts.DryRun {
			if err := opts.stopped(); err != nil {
				return results, err
			}
			written, err := a.execute(opts)
			r.Written = append(r.Written, written...)
			if err != nil {
				return append(results, r), err
			}
		}
		results = append(results, r)
	}
	return results, nil
}

// writesFor decides which files a plan writes and whether each differs
// from the one on disk. It only reads.
func writesFor(pl *recovery.SegmentRecovery, dest string, opts ApplyOptions) (segmentActions, error) {
	seg := &pl.Segment
	a := segmentActions{plan: pl}
	name := inspect.SegmentName(seg.BaseOffset)
	add := func(suffix, source string, data []byte) error {
		changed, err := differs(source, data)
		if err != nil {
			return err
		}
		a.files = append(a.files, fileAction{final: filepath.Join(dest, name+suffix), source: source, data: data, changed: changed})
		return nil
	}
	if err := add(inspect.IndexSuffix, seg.Index, pl.Index); err != nil {
		return a, err
	}
	if err := add(inspect.TimeIndexSuffix, seg.TimeIndex, pl.TimeIndex); err != nil {
		return a, err
	}
	switch {
	case pl.TxnIndex != nil:
		if err := add(inspect.TxnIndexSuffix, seg.TxnIndex, pl.TxnIndex); err != nil {
			return a, err
		}
	case seg.TxnIndex != "":
		if err := add(inspect.TxnIndexSuffix, seg.TxnIndex, []byte{}); err != nil {
			return a, err
		}
	}
	if opts.TruncateLog && pl.TruncatedBytes > 0 {
		a.cut = true
		a.logFinal = filepath.Join(dest, filepath.Base(seg.Log))
		a.saved = a.logFinal + TruncatedSuffix + strconv.FormatInt(pl.ValidBytes, 10)
	}
	if opts.OutDir == "" {
		// In place, files already right are left alone.
		kept := a.files[:0]
		for _, f := range a.files {
			if f.changed {
				kept = append(kept, f)
			}
		}
		a.files = kept
	}
	return a, nil
}

// differs reports whether the file at path (absent when path is "" or the
// file does not exist) differs from want, reading it in chunks.
func differs(path string, want []byte) (bool, error) {
	if path == "" {
		return true, nil
	}
	// Cache-neutral, like the log reads: comparing leaves the page cache
	// as it was.
	f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if f.Size() != int64(len(want)) {
		return true, nil
	}
	buf := make([]byte, min(len(want), 64<<10))
	for off := 0; off < len(want); {
		n := min(len(buf), len(want)-off)
		k, err := f.ReadAt(buf[:n], int64(off))
		if k < n {
			var ce *fileio.CorruptError
			if err == nil || err == io.EOF || errors.As(err, &ce) {
				return true, nil // shorter than when it was opened
			}
			return false, fmt.Errorf("%s: %w", path, err)
		}
		if !bytes.Equal(buf[:n], want[off:off+n]) {
			return true, nil
		}
		off += n
	}
	return false, nil
}

// checkActions refuses what must not be done, before anything is written:
// replacing a symbolic link or a non-regular file, losing an existing
// .bak or saved tail, cutting a log that changed since it was planned.
func checkActions(a *segmentActions, opts ApplyOptions) error {
	for _, f := range a.files {
		exists, err := checkRegular(f.final)
		if err != nil {
			return err
		}
		if exists && opts.OutDir == "" && !opts.NoBackup {
			// A .bak holding exactly the current file is the leftover of an
			// interrupted run and is kept as it is; any other is not lost.
			if ok, err := backupUsable(f.final, f.final+BackupSuffix); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("%s%s already exists (from an earlier rebuild?): move it away first, or use --no-backup", f.final, BackupSuffix)
			}
		}
	}
	if !a.cut {
		return nil
	}
	log := a.plan.Segment.Log
	fi, err := os.Lstat(log)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 && opts.OutDir == "" {
		return fmt.Errorf("%s: refusing to cut a log that is a symbolic link", log)
	}
	if fi, err = os.Stat(log); err != nil {
		return err
	}
	if fi.Size() != a.plan.LogSize() {
		return fmt.Errorf("%s: the log is now %d bytes, it was %d when planned (is a broker writing to it?)", log, fi.Size(), a.plan.LogSize())
	}
	if opts.OutDir != "" {
		_, err := checkRegular(a.logFinal)
		return err
	}
	// A saved tail holding exactly the bytes to cut is the leftover of an
	// interrupted run; any other is not overwritten.
	if ok, err := savedUsable(a.saved, log, a.plan.ValidBytes, a.plan.TruncatedBytes); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("%s already exists: move it away before cutting the log again", a.saved)
	}
	return nil
}

// backupUsable reports whether bak may be used as final's backup: it does
// not exist, or it is final's inode or a regular file with final's bytes.
func backupUsable(final, bak string) (bool, error) {
	bi, err := os.Lstat(bak)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !bi.Mode().IsRegular() {
		return false, nil
	}
	fi, err := os.Stat(final)
	if err != nil {
		return false, err
	}
	if os.SameFile(fi, bi) {
		return true, nil
	}
	f, err := fileio.OpenFile(final)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return sameContent(bak, f, 0, fi.Size())
}

// savedUsable reports whether saved may hold the cut tail of log: it does
// not exist, or it is a regular file with exactly those n bytes from off.
func savedUsable(saved, log string, off, n int64) (bool, error) {
	si, err := os.Lstat(saved)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !si.Mode().IsRegular() {
		return false, nil
	}
	f, err := fileio.OpenFile(log)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return sameContent(saved, f, off, n)
}

// sameContent reports whether the file at path holds exactly the n bytes of
// r from off.
func sameContent(path string, r io.ReaderAt, off, n int64) (bool, error) {
	f, err := fileio.OpenFile(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() != n {
		return false, nil
	}
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for done := int64(0); done < n; {
		k := min(int64(len(a)), n-done)
		if _, err := io.ReadFull(f, a[:k]); err != nil {
			return false, err
		}
		if _, err := r.ReadAt(b[:k], off+done); err != nil && !(err == io.EOF && done+k == n) {
			return false, err
		}
		if !bytes.Equal(a[:k], b[:k]) {
			return false, nil
		}
		done += k
	}
	return true, nil
}

// checkRegular reports whether path exists, failing when it is a symbolic
// link or not a regular file.
func checkRegular(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return true, fmt.Errorf("%s: refusing to replace a symbolic link", path)
	}
	if !fi.Mode().IsRegular() {
		return true, fmt.Errorf("%s: refusing to replace something that is not a regular file", path)
	}
	return true, nil
}

// within reports whether path (which need not exist yet) is directory dir
// or lies under it, comparing directories by identity, so that symbolic
// links and relative spellings do not hide it.
func within(path, dir string) (bool, error) {
	di, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	for p := abs; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && os.SameFile(fi, di) {
			return true, nil
		}
		if p == filepath.Dir(p) {
			return false, nil
		}
	}
}

// execute writes one segment's files. It returns what it wrote, also when
// it fails part way.
func (a *segmentActions) execute(opts ApplyOptions) ([]string, error) {
	var written []string
	logInfo, err := os.Stat(a.plan.Segment.Log)
	if err != nil {
		return written, err
	}
	for _, f := range a.files {
		perm, own := logInfo.Mode().Perm(), ownerOf(logInfo)
		backup := false
		if opts.OutDir == "" {
			if fi, err := os.Stat(f.final); err == nil {
				perm, own = fi.Mode().Perm(), ownerOf(fi)
				backup = !opts.NoBackup
			}
		}
		if err := opts.stopped(); err != nil {
			return written, err
		}
		w, err := replaceFile(f.final, opts.cancellable(bytesSource(f.data)), perm, own, backup)
		written = append(written, w...)
		if err != nil {
			return written, err
		}
	}
	if !a.cut {
		return written, nil
	}
	if err := opts.stopped(); err != nil {
		return written, err
	}
	if opts.OutDir != "" {
		w, err := copyCutLog(a, logInfo)
		return append(written, w...), err
	}
	w, err := cutLog(a.plan.Segment.Log, a.saved, a.plan.ValidBytes, a.plan.LogSize(), logInfo)
	return append(written, w...), err
}

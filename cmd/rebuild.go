package cmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/recovery"
	"github.com/kseg/kseg/rebuild"
)

type rebuildOptions struct {
	path               string
	out                string
	noBackup           bool
	indexIntervalBytes int64
	dryRun             bool
	truncateLog        bool
	force              bool
	flags              *pflag.FlagSet
}

// AddFlags adds rebuild's flags to f.
func (o *rebuildOptions) AddFlags(f *pflag.FlagSet) {
	o.flags = f
	f.StringVar(&o.out, "out", "", "write the rebuilt files under `DIR`/<partition>/ and touch nothing under PATH")
	f.BoolVar(&o.noBackup, "no-backup", false, "in place: do not keep replaced files as <name>.bak")
	f.Int64Var(&o.indexIntervalBytes, "index-interval-bytes", recovery.DefaultIndexIntervalBytes, "the broker's index.interval.bytes")
	f.BoolVar(&o.dryRun, "dry-run", false, "report what would change, write nothing")
	f.BoolVar(&o.truncateLog, "truncate-log", false, "also cut a corrupt tail off each .log as recovery would, saving the cut bytes beside it")
	f.BoolVar(&o.force, "force", false, "write in place even when the data directory's .lock is held")
}

// Validate checks the flags' values and that they go together.
func (o *rebuildOptions) Validate() error {
	if o.indexIntervalBytes < 0 {
		return usageErrorf("--index-interval-bytes must be >= 0, not %d", o.indexIntervalBytes)
	}
	if o.noBackup && o.out != "" {
		return usageErrorf("--no-backup applies to in-place rebuilds; --out never replaces files under PATH")
	}
	if o.flags.Changed("out") && o.out == "" {
		return usageErrorf("--out needs a directory")
	}
	return nil
}

// rebuildLong is kseg rebuild's help.
const rebuildLong = `Rebuild the .index, .timeindex and .txnindex of every segment under PATH
from its .log, byte for byte as broker recovery (LogSegment.recover) would:
an offset-index entry (last offset, position) for each batch more than
--index-interval-bytes after the last indexed one, the running maximum
timestamp in the time index, and the aborted transactions, tracked from the
first segment under PATH (producer snapshots are not read), in the
.txnindex of the segment holding each ABORT marker. A segment with no
aborted transaction gets no .txnindex if it had none, and an empty one if
it had one.

Without --out, files are replaced in place, and only those that change:
each is written to a temporary file, fsynced and renamed over the old one,
which is kept as <name>.bak (unless --no-backup); at every moment the file
name holds the whole old or the whole new file. kseg refuses to write in
place while the .lock of the data directory really holding the files is
held by a running broker (the path is resolved first: ".", "..", a bare
segment file name and symbolic links all find the same .lock; unless
--force), and never replaces a symbolic link.

Recovery stops at the first invalid batch (a torn tail, a bad CRC, an
impossible length, a zero-filled tail); the indexes cover the valid prefix
and a warning on stderr says where and why. --truncate-log also cuts the
.log there, as recovery does, after saving the cut bytes beside it as
<name>.log.truncated-at-<position> (saved bytes + cut log = the old log).
A non-increasing offset at an index point makes broker recovery empty the
whole segment; kseg plans the same and warns.

Overlapping segments: a batch whose offsets reach the next segment's base
offset is never read by a broker's fetch (it looks offsets up in the
segment with the largest base offset at or below them), and neither is
anything after it in its log. Recovery keeps such batches; kseg warns, and
with --truncate-log cuts the log before the first of them (saved the same
way) and rebuilds the indexes of what is left. The broker ignores .bak and
.truncated-at-* files: remove them once the partition is back in service.

Beyond a log it cuts for invalid bytes, --truncate-log applies broker
recovery's rules (LogLoader.recoverLog) to the rest of the partition: every
later segment is removed, the producer snapshots beyond the new log end
offset are removed (ProducerStateManager.truncateAndReload), and the
leader-epoch-checkpoint entries starting at or beyond it are dropped
(LeaderEpochFileCache.truncateFromEnd). Removed files are set aside as
<name>.cut-at-<new log end offset> (unless --no-backup), the old
checkpoint too. With --dry-run
the plan is a warning on stderr and an after_cut object on the segment's
JSON line (log_end_offset, later_segments, snapshots,
leader_epoch_entries).

Fields, one line per segment: segment index_entries timeindex_entries
txnindex_entries valid_bytes truncated_bytes changed (a rebuilt file
differs from the one on disk) written (every file created or modified,
.bak and saved tails included; empty with --dry-run).

With --truncate-log the warning says "N bytes cut", "would cut N bytes"
(--dry-run) or "N bytes not cut" (the run failed before cutting the log).

Ctrl-C (SIGINT) or SIGTERM stops the run before the next file, or while a
file is being written (its temporary file is removed); every file already
replaced is whole, and running the same command again finishes the job.

Exit codes: 0 done (also when files changed); 2 could not do the job (bad
PATH or flags, the broker holds the lock, a write failed, recovery itself
would fail on a segment); 130 / 143 stopped by SIGINT / SIGTERM; segments
done before the failure are listed.`

func newRebuildCommand(ios *IOStreams) *cobra.Command {
	var opts rebuildOptions
	c := &cobra.Command{
		Use:   "rebuild PATH",
		Short: "Rebuild .index, .timeindex and .txnindex files as broker recovery does",
		Long:  rebuildLong,
		Example: `  kseg rebuild --dry-run data/orders-0
  kseg rebuild data/orders-0
  kseg rebuild --out /tmp/rebuilt data
  kseg rebuild --truncate-log data/orders-0/00000000000000000368.log
  kseg rebuild -o json --dry-run data | jq 'select(.changed) | .segment'`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.path = args[0]
			if err := opts.Validate(); err != nil {
				return err
			}
			return runRebuild(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

// rebuildJSON is the contract's rebuild line.
type rebuildJSON struct {
	Segment          string   `json:"segment"`
	IndexEntries     int      `json:"index_entries"`
	TimeIndexEntries int      `json:"timeindex_entries"`
	TxnIndexEntries  int      `json:"txnindex_entries"`
	ValidBytes       int64    `json:"valid_bytes"`
	TruncatedBytes   int64    `json:"truncated_bytes"`
	Changed          bool     `json:"changed"`
	Written          []string `json:"written"`
	// AfterCut (--truncate-log, on the segment cut for invalid bytes):
	// what recovery does beyond it, and so --truncate-log.
	AfterCut *rebuild.AfterCut `json:"after_cut,omitempty"`
}

var rebuildColumns = []column[rebuildJSON]{
	textColumn("segment", func(r rebuildJSON) string { return r.Segment }),
	intColumn("index_entries", func(r rebuildJSON) int { return r.IndexEntries }),
	intColumn("timeindex_entries", func(r rebuildJSON) int { return r.TimeIndexEntries }),
	intColumn("txnindex_entries", func(r rebuildJSON) int { return r.TxnIndexEntries }),
	intColumn("valid_bytes", func(r rebuildJSON) int64 { return r.ValidBytes }),
	intColumn("truncated_bytes", func(r rebuildJSON) int64 { return r.TruncatedBytes }),
	boolColumn("changed", func(r rebuildJSON) bool { return r.Changed }),
	textColumn("written", func(r rebuildJSON) string { return strings.Join(r.Written, " ") }),
}

func runRebuild(ios *IOStreams, opts rebuildOptions) error {
	t, err := resolveTarget(opts.path)
	if err != nil {
		return err
	}
	for _, s := range t.Skipped {
		ios.Warnf("%s: not rebuilt: %s", s.Path, s.Reason)
	}
	interval := opts.indexIntervalBytes
	if interval == 0 {
		interval = recovery.IndexEveryBatch
	}
	ctx, stop := interruptible()
	defer stop()
	bar := ios.progress("rebuild")
	results, runErr := rebuild.Run(t, rebuild.ApplyOptions{
		Context:        ctx,
		Options:        recovery.Options{IndexIntervalBytes: interval, Progress: bar.callback()},
		OutDir:         opts.out,
		NoBackup:       opts.noBackup,
		DryRun:         opts.dryRun,
		TruncateLog:    opts.truncateLog,
		Force:          opts.force,
		StartPartition: bar.partition,
	})
	bar.done()
	var sig *interruptedError
	if runErr != nil && len(results) == 0 {
		if errors.As(runErr, &sig) {
			return fmt.Errorf("%w: nothing written", runErr)
		}
		if errors.Is(runErr, rebuild.ErrLocked) {
			return fmt.Errorf("%w (nothing written)", runErr)
		}
		return runErr
	}
	if err := renderRebuild(ios, opts, results); err != nil {
		return errors.Join(runErr, err)
	}
	if errors.As(runErr, &sig) {
		done := 0
		for _, r := range results {
			if len(r.Written) > 0 {
				done++
			}
		}
		return fmt.Errorf("%w: stopped after writing %s (listed above; each file replaced is whole); no temporary file is left; run the same command again to finish", runErr, count(done, "segment"))
	}
	return runErr
}

// renderRebuild lists each segment's result, with its warnings on stderr.
func renderRebuild(ios *IOStreams, opts rebuildOptions, results []rebuild.Result) error {
	l := newLister(ios, rebuildColumns)
	changed := 0
	for _, r := range results {
		warnRebuilt(ios, opts, r)
		if r.Changed {
			changed++
		}
		l.Add(rebuildJSON{
			Segment:          r.Segment,
			IndexEntries:     r.IndexEntries,
			TimeIndexEntries: r.TimeIndexEntries,
			TxnIndexEntries:  r.TxnEntries,
			ValidBytes:       r.ValidBytes,
			TruncatedBytes:   r.TruncatedBytes,
			Changed:          r.Changed,
			Written:          r.Written,
			AfterCut:         r.AfterCut,
		})
	}
	if opts.dryRun {
		l.Footer("dry run: %d of %s would change; nothing written", changed, count(len(results), "segment"))
	}
	return l.Close()
}

// warnRebuilt says on stderr where recovery stops in r's segment, an
// overlap with the next segment, and the partition's state after a cut.
func warnRebuilt(ios *IOStreams, opts rebuildOptions, r rebuild.Result) {
	if r.StopErr != nil {
		warnStop(ios, r, opts.truncateLog, opts.dryRun)
	}
	if r.Overlap != nil && !errors.Is(r.StopErr, recovery.ErrOverlap) {
		ios.Warnf("%s: %v; --truncate-log would cut the log there", r.Segment, r.Overlap)
	}
	ac := r.AfterCut
	switch {
	case ac == nil:
	case opts.dryRun:
		ios.Warnf("%s: after this cut, as at the broker's next start after it recovers the segment: %s (--truncate-log does the same, setting each file aside as <name>.cut-at-%d)", r.Segment, ac.Describe(), ac.LogEndOffset)
	case opts.out != "":
		ios.Warnf("%s: after this cut, as at the broker's next start after it recovers the segment: %s (nothing done under PATH with --out)", r.Segment, ac.Describe())
	default:
		ios.Warnf("%s: after this cut, as the broker's next start would: %s", r.Segment, ac.Describe())
	}
}

// warnStop says on stderr where and why recovery stops in a segment.
// With --truncate-log it says what happened to the log: cut, would be cut
// (--dry-run), or not cut (the run failed before it got there).
func warnStop(ios *IOStreams, r rebuild.Result, truncating, dryRun bool) {
	size := r.ValidBytes + r.TruncatedBytes
	switch {
	case errors.Is(r.StopErr, indexfmt.ErrInvalidOffset):
		ios.Warnf("%s: broker recovery would empty this segment (all %d bytes) and delete the later unflushed segments: %v", r.Segment, size, r.StopErr)
	case truncating && dryRun:
		ios.Warnf("%s: would cut %s at byte %d (dry run: nothing written): %v", r.Segment, count(r.TruncatedBytes, "byte"), r.ValidBytes, r.StopErr)
	case truncating && !logWritten(r):
		ios.Warnf("%s: %s not cut at byte %d (the run stopped before the log was cut): %v", r.Segment, count(r.TruncatedBytes, "byte"), r.ValidBytes, r.StopErr)
	case truncating:
		ios.Warnf("%s: %s cut at byte %d: %v", r.Segment, count(r.TruncatedBytes, "byte"), r.ValidBytes, r.StopErr)
	default:
		ios.Warnf("%s: indexes cover the first %d of %d bytes; recovery would cut the rest (--truncate-log): %v", r.Segment, r.ValidBytes, size, r.StopErr)
	}
}

// logWritten reports whether the run wrote the segment's log (cut in
// place, or its cut copy under --out).
func logWritten(r rebuild.Result) bool {
	for _, w := range r.Written {
		if filepath.Base(w) == r.Segment {
			return true
		}
	}
	return false
}

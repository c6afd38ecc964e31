package cmd

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/verify"
)

type verifyOptions struct {
	paths        []string
	jobs         int
	strict       bool
	verbose      bool // --verbose: also info findings
	records      bool
	interval     int  // verify.Options.IndexIntervalBytes
	recoveryPlan bool // --recovery-plan (verify_recovery.go)
	intervalFlag int  // --index-interval-bytes as given
}

// AddFlags adds verify's flags to f.
func (o *verifyOptions) AddFlags(f *pflag.FlagSet) {
	f.IntVarP(&o.jobs, "jobs", "j", 0, "segments checked at once (0: the number of CPUs)")
	f.BoolVar(&o.strict, "strict", false, "exit 1 on warnings too")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "also list info findings (valid data a broker handles as it is, e.g. an index that differs from what recovery would write)")
	f.BoolVar(&o.records, "records", false, "decode every record of every batch (decompressing) and check it against the header")
	f.IntVar(&o.intervalFlag, "index-interval-bytes", verify.DefaultIndexIntervalBytes, "the broker's index.interval.bytes, for index.stale and timeindex.stale")
	f.BoolVar(&o.recoveryPlan, "recovery-plan", false, "also say which segments a broker would recover after an unclean shutdown, and how long that may take")
}

// Validate checks -j and --index-interval-bytes (0: an entry per batch).
func (o *verifyOptions) Validate() error {
	if o.jobs < 0 {
		return usageErrorf("--jobs must be at least 1 (0: the number of CPUs), not %d", o.jobs)
	}
	switch {
	case o.intervalFlag < 0:
		return usageErrorf("--index-interval-bytes must be >= 0, not %d", o.intervalFlag)
	case o.intervalFlag == 0:
		o.interval = verify.IndexEveryBatch
	default:
		o.interval = o.intervalFlag
	}
	return nil
}

// verifyLong is kseg verify's help.
const verifyLong = `Check every segment, index and side file under each PATH (a data directory,
a partition directory, or one segment file) and report what is wrong, one
finding per line, then a summary.

The .log is read batch by batch: length, magic, CRC, offset delta, record
count, offsets increasing and inside the segment, torn or zero-filled tails.
Past a corrupt batch the check goes on from the next position where a valid
batch starts, and the bytes in between are reported as one damaged range.
Indexes are judged by whether a broker's lookups would answer correctly, so
entries written by older brokers (one per append, first offsets, record
offsets in the time index) are not errors; an index that is valid but not
what broker recovery would rebuild is an info finding (index.stale,
timeindex.stale, assuming --index-interval-bytes). Missing indexes are
warnings; a zero-filled index tail or a missing closing time-index entry is
a warning only where the broker's next start would keep it (a segment below
the recovery point, or after a clean shutdown), info elsewhere (it is the
normal state of a running broker's active segment).

Severities: error = data a broker would lose or refuse; warning = a broker
will behave differently (the message says how); info = everything else.
Info findings are listed only with --verbose and never fail --strict; the
summary counts them all. Segments are checked in parallel (-j); a CPU
that would otherwise sit idle reads ahead inside a segment of 8 MiB or
more, so -j 1 keeps the log checks to one CPU. The output order depends
on neither.

The files beside the segments are checked too: producer snapshots (CRC,
format, an offset beyond the log end or inside a batch), the data
directory's checkpoints and meta.properties (the broker's strict readers; a
recovery point or log start offset beyond the log end), the
leader-epoch-checkpoint against the broker's epoch cache and the log, and
each .txnindex against the ABORT markers in the log (txnindex.mismatch).
KRaft metadata snapshots (<offset>-<epoch>.checkpoint in
__cluster_metadata-0, the data directory's bootstrap.checkpoint, or one
named as PATH) are checked as logs (log.* findings, with the snapshot as
the file and no segment) and for their framing: the first batch must be a
control batch starting with a SnapshotHeader (snapshot.header: a broker
refuses the snapshot otherwise) and the last must end with a
SnapshotFooter (snapshot.footer: without it the file is incomplete).

--recovery-plan adds, per partition, which segments a broker would recover
at its next start after an unclean shutdown (from the segment holding the
recovery point in recovery-point-offset-checkpoint, plus segments rebuilt at
every start), their bytes, and an estimate of the time from the rate kseg
read the logs at in this run: "kind":"recovery_plan" lines before the
summary in JSON, a second table, or lines on stderr with -o csv.

Finding fields: severity (error, warning, info) check file segment_base_offset
position offset message. The default table shows severity, check, the file
as <partition>/<file>, position and the message (wrapped, or under the row
on a narrow terminal); -o wide every field. A run without findings says so
in one line. -o junit writes JUnit XML for CI: a testsuite per partition, a
testcase per file checked (a segment's .log and indexes each, and each side
file), a failure per error finding (and per warning with --strict) with its
check id, file and position, at most one per testcase (a file's further
failing findings are testcases "FILE #2", ...), warnings as system-out. position is a byte position in file; position
and offset are empty (JSON null) when they do not apply. The summary
counts partitions, segments, batches (valid ones), bytes (of .log files),
errors, warnings and infos (info findings, listed or not): the table's last
line (with the time taken and the rate), the last JSON line
("kind":"summary"), or a line on stderr with -o csv or junit. Check ids are listed in the CLI contract
(log.crc, log.corrupt-header, log.truncated, log.offset-order,
log.offset-range, log.records, index.*, timeindex.*, txnindex.*,
segment.overlap, segment.leftover, snapshot.*, checkpoint.*,
leader-epoch.range, leader-epoch.mismatch).

Exit codes: 0 no error findings; 1 errors found (or, with --strict,
warnings); 2 a PATH could not be read.`

func newVerifyCommand(ios *IOStreams) *cobra.Command {
	var opts verifyOptions
	c := &cobra.Command{
		Use:   "verify PATH...",
		Short: "Check segments, indexes and side files for damage",
		Long:  verifyLong,
		Example: `  kseg verify /var/lib/kafka/data
  kseg verify -j 4 --strict data/orders-0
  kseg verify -o json data | jq -c 'select(.kind == "finding" and .severity == "error")'
  kseg verify -o junit --strict data > kseg-verify.xml
  kseg verify --recovery-plan -o json data | jq -c 'select(.kind == "recovery_plan") | [.partition, .bytes, .estimate.seconds]'`,
		Args:        cobra.MinimumNArgs(1),
		Annotations: map[string]string{annotationJUnit: "yes"},
		RunE: func(c *cobra.Command, args []string) error {
			opts.paths = args
			if err := opts.Validate(); err != nil {
				return err
			}
			return runVerify(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

// findingJSON is the contract's finding line; the table and CSV columns
// read it too.
type findingJSON = verify.FindingLine

// severityStyle colours the severity cell of a table on a terminal.
func severityStyle(f findingJSON) []color.Attribute {
	switch f.Severity {
	case verify.SeverityError:
		return []color.Attribute{color.FgRed, color.Bold}
	case verify.SeverityInfo:
		return []color.Attribute{color.Faint}
	}
	return []color.Attribute{color.FgYellow}
}

// findingColumns: the default table shows severity, check, the file as
// <partition>/<file>, the byte position and the message (wrapped to the
// terminal); -o wide and CSV every field.
var findingColumns = []column[findingJSON]{
	{name: "severity", cell: func(f findingJSON) string { return f.Severity }, style: severityStyle},
	textColumn("check", func(f findingJSON) string { return f.Check }),
	withFit(tableOnly(textColumn("file", func(f findingJSON) string { return shortFile(f.File) })), fitElide),
	wideOnly(textColumn("file", func(f findingJSON) string { return f.File })),
	wideOnly(nullableIntColumn("segment_base_offset", func(f findingJSON) *int64 { return f.SegmentBaseOffset })),
	nullableIntColumn("position", func(f findingJSON) *int64 { return f.Position }),
	wideOnly(nullableIntColumn("offset", func(f findingJSON) *int64 { return f.Offset })),
	withFit(textColumn("message", func(f findingJSON) string { return f.Message }), fitBelow),
}

// shortFile is a finding's file as the table shows it: the file's name
// under its directory's (orders-3/00000000000000000368.log), the rest of
// the path being the same for every finding of a run.
func shortFile(file string) string {
	dir, name := filepath.Split(filepath.Clean(file))
	if dir == "" {
		return name
	}
	return filepath.Join(filepath.Base(dir), name)
}

func runVerify(ios *IOStreams, opts verifyOptions) error {
	// Every PATH is resolved before anything is written: a bad one is a
	// usage-level failure (exit 2) with no partial output.
	targets, err := resolveTargets(opts.paths)
	if err != nil {
		return err
	}
	started := ios.now()
	out, err := newFindingSink(ios, opts.strict, targets)
	if err != nil {
		return err
	}
	total, err := verifyTargets(ios, opts, targets, func(f verify.Finding) {
		if opts.verbose || !f.IsInfo() {
			out.add(f)
		}
	})
	if err != nil {
		// What was found so far stands; the run could not finish.
		if cerr := out.close(ios.now().Sub(started)); cerr != nil {
			return cerr
		}
		return err
	}
	elapsed := ios.now().Sub(started)
	line := summaryText(total, elapsed)
	if total.Infos > 0 && !opts.verbose {
		// Nothing listed, but the run found something a broker handles.
		out.l.Empty(fmt.Sprintf("no errors or warnings: %s as a broker expects (%s, listed with --verbose)", "every segment, index and side file checked is", countOf(total.Infos, "info finding")))
	}
	out.l.Footer("%s", line)
	if err := out.close(elapsed); err != nil {
		return err
	}
	if opts.recoveryPlan {
		if err := printRecoveryPlans(ios, targets, total.Bytes, elapsed); err != nil {
			return err
		}
	}
	if err := out.summary(total, line); err != nil {
		return err
	}
	switch {
	case total.Errors > 0:
		return errNegative("verify found " + count(total.Errors, "error"))
	case opts.strict && total.Warnings > 0:
		return errNegative("verify found " + count(total.Warnings, "warning") + " (--strict)")
	}
	return nil
}

// verifyTargets runs verify.Run on each target in turn, each behind its
// progress bar, and sums their summaries; an error names the target.
func verifyTargets(ios *IOStreams, opts verifyOptions, targets []*inspect.Target, emit func(verify.Finding)) (verify.Summary, error) {
	vopts := verify.Options{Jobs: opts.jobs, Records: opts.records, IndexIntervalBytes: opts.interval, SideFiles: true}
	var total verify.Summary
	for _, t := range targets {
		for _, s := range t.Skipped {
			ios.Warnf("%s: not checked: %s", s.Path, s.Reason)
		}
		bar := ios.progress("verify")
		vopts.Progress = bar.callback()
		vopts.StartPartition = bar.partition
		sum, err := verify.Run(t, vopts, emit)
		bar.done()
		total.Add(sum)
		if err != nil {
			return total, fmt.Errorf("verifying %s: %w", t.Path, err)
		}
	}
	return total, nil
}

// findingSink renders verify's findings: through the lister, or with -o
// junit as a JUnit report of the targets.
type findingSink struct {
	ios   *IOStreams
	l     *lister[findingJSON]
	junit *junitReport
}

func newFindingSink(ios *IOStreams, strict bool, targets []*inspect.Target) (*findingSink, error) {
	s := &findingSink{ios: ios, l: newLister(ios, findingColumns)}
	s.l.Empty("no findings: every segment, index and side file checked is as a broker expects")
	if ios.Format() != FormatJUnit {
		return s, nil
	}
	s.junit = newJUnitReport(strict)
	for _, t := range targets {
		if err := s.junit.addTarget(t); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *findingSink) add(f verify.Finding) {
	if s.junit != nil {
		s.junit.add(f)
		return
	}
	s.l.Add(f.Line())
}

// close writes what was found (the JUnit report took elapsed to run).
func (s *findingSink) close(elapsed time.Duration) error {
	if s.junit != nil {
		return s.junit.write(s.ios.Out, elapsed)
	}
	return s.l.Close()
}

// summary writes the run's summary where the format has it: a JSON line,
// or on stderr beside CSV and JUnit (the table has it as its footer).
func (s *findingSink) summary(total verify.Summary, line string) error {
	switch s.ios.Format() {
	case FormatJSON:
		return newJSONEncoder(s.ios).Encode(total.Line("summary"))
	case FormatCSV, FormatJUnit:
		fmt.Fprintf(s.ios.ErrOut, "kseg: %s\n", line)
	}
	return nil
}

// summaryText is the summary for people: counts grouped, the bytes of the
// logs in IEC units, and the time the run took and its rate.
func summaryText(s verify.Summary, elapsed time.Duration) string {
	took := ""
	if elapsed > 0 {
		took = " in " + humanDuration(elapsed) + " (" + rate(s.Bytes, elapsed) + ")"
	}
	return fmt.Sprintf("%s, %s, %s, %s checked%s: %s, %s, %s info",
		countOf(s.Partitions, "partition"), countOf(s.Segments, "segment"), countOf(s.Batches, "batch"), humanSize(s.Bytes), took,
		countOf(s.Errors, "error"), countOf(s.Warnings, "warning"), groupCount(int64(s.Infos)))
}

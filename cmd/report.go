package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/verify/report"
)

type reportOptions struct {
	paths    []string
	html     string
	jobs     int
	analysis analysisOptions
}

// AddFlags adds report's flags to f.
func (o *reportOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.html, "html", "", "write the page to `FILE` (replaced whole once written)")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "segments verify checks at once (0: the number of CPUs)")
	o.analysis.AddFlags(f)
}

// Validate parses --at and requires a page or -o json.
func (o *reportOptions) Validate(ios *IOStreams) error {
	if err := o.analysis.Validate(); err != nil {
		return err
	}
	if o.html == "" && ios.Format() != FormatJSON {
		return usageErrorf("name the page's file with --html FILE (or print its data with -o json)")
	}
	return nil
}

// reportLong is kseg report's help.
const reportLong = `Write one self-contained HTML page about the data under each PATH, to attach
to an incident ticket or a review: it opens from a file in any browser, with
nothing fetched (its style, script and data are inline), in the viewer's
light or dark theme, and prints.

Sections, each with the kseg command that reproduces it, each present when
its data is:
  findings      every verify finding (as kseg verify --verbose), filtered by
                severity and check id, each linking to its partition; shown
                first when verify found an error
  partitions    ls's partitions (status, segments, offsets, size, last
                timestamp) with their findings counted, sortable
  traffic       a chart per topic and per partition of records over time
                (kseg timeline's traffic, in about 48 buckets of one width)
  groups        committed offsets and their lag (kseg groups)
  transactions  open transactions and the partitions whose last stable
                offset lags the log end (kseg txns)
  retention     what the next retention pass deletes and what blocks it
                (kseg retention)
  cleaner       the log cleaner's view of compacted partitions (kseg cleaner)
  metadata      the metadata image's brokers, leaders and ISR (kseg metadata)
Tables show 50 rows a page: a data directory of 10,000 partitions stays a
page of a few MB.

Everything from the data (names, keys, group and transactional ids,
messages) is shown as text: the data is embedded as JSON that cannot close
its element, the script puts strings in the page as text, and the page's
Content-Security-Policy runs only its own script and fetches nothing.

-o json prints the lines the page is drawn from, "kind" first: report (the
header: paths, generated, now, kseg_version, totals), then per section a
section line (id, title, present, command, rows, note) and its data:
partition, verify_summary and finding, traffic (scope topic or partition,
start, bucket_ms, records and bytes per bucket), group_offset,
open_transaction and lso, retention, compaction, metadata_broker and
metadata_partition. With -o json, --html is optional.

--server-properties, --config and --at are those of txns, retention and
cleaner (and the commands the page shows for them repeat them); --at is
also the time groups and metadata replay up to.

Exit 0 when the page (or the lines) are written, whatever the findings; 2
when a PATH cannot be read or FILE cannot be written.`

func newReportCommand(ios *IOStreams) *cobra.Command {
	var opts reportOptions
	c := &cobra.Command{
		Use:   "report PATH... --html FILE",
		Short: "Write a postmortem page of a data directory: findings, partitions, traffic, groups, transactions, retention, cleaner, metadata",
		Long:  reportLong,
		Example: `  kseg report /var/lib/kafka/data --html incident-4711.html
  kseg report --at 2024-05-01T12:00:00Z data --html before.html
  kseg report -o json data | jq -c 'select(.kind == "section") | [.id, .present, .command]'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.paths = args
			if err := opts.Validate(ios); err != nil {
				return err
			}
			return runReport(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	_ = c.MarkFlagFilename("html", "html")
	return c
}

func runReport(ios *IOStreams, opts reportOptions) error {
	targets, err := resolveTargets(opts.paths)
	if err != nil {
		return err
	}
	for _, t := range targets {
		for _, s := range t.Skipped {
			ios.Warnf("%s: not read: %s", s.Path, s.Reason)
		}
	}
	cfg, err := opts.analysis.resolver(ios, targets)
	if err != nil {
		return err
	}
	var bar *progressBar
	defer func() { bar.done() }()
	rep, err := report.Build(targets, report.Options{
		Paths: opts.paths, Now: opts.analysis.now(), At: opts.analysis.at.Value, Generated: ios.now().UnixMilli(),
		Version: versionString(), Configs: cfg, ConfigArgs: opts.analysis.configArgs(), Jobs: opts.jobs,
		Progress: func(step string) func(done, total int64) {
			bar.done()
			bar = ios.progress("report: " + step)
			return bar.callback()
		},
	})
	bar.done()
	if err != nil {
		return err
	}
	if ios.Format() == FormatJSON {
		enc := newJSONEncoder(ios)
		for _, l := range rep.Lines {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	if opts.html == "" {
		return nil
	}
	size, err := writeReplacing(opts.html, func(w io.Writer) error { return report.WriteHTML(w, rep) })
	if err != nil {
		return err
	}
	if ios.Format() != FormatJSON {
		err = printFooter(ios, fmt.Sprintf("wrote %s (%s): %s, %s, %s, %s", escapeControl(opts.html), humanSize(size), count(rep.Partitions, "partition"),
			count(rep.Errors, "error"), count(rep.Warnings, "warning"), count(rep.Infos, "info finding")))
	}
	return err
}

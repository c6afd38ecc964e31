package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
)

type timelineOptions struct {
	paths        []string
	bucket       time.Duration // 0: about timelineBuckets buckets over the span
	window       timeWindowOptions
	from, to     int64 // --from-time, --to-time; -1 when not given
	perPartition bool
	svg          string
	flags        *pflag.FlagSet
}

// AddFlags adds timeline's flags to f (their completions are the
// command's).
func (o *timelineOptions) AddFlags(f *pflag.FlagSet) {
	o.flags = f
	f.DurationVar(&o.bucket, "bucket", 0, "bucket width (30s, 5m, 1h; default: about 60 buckets over the span)")
	o.window.AddFlags(f, "first time shown (ms, RFC 3339, a date, or relative: -1h)", "last time shown (ms, RFC 3339, a date, or relative: -1h)")
	f.BoolVar(&o.perPartition, "per-partition", false, "one series per partition instead of their sum")
	f.StringVar(&o.svg, "svg", "", "also write the chart as an SVG image to `FILE`")
}

// Validate checks the bucket width and the time window.
func (o *timelineOptions) Validate() error {
	if o.bucket < 0 || (o.flags.Changed("bucket") && o.bucket < time.Millisecond) {
		return usageErrorf("--bucket must be at least 1ms, not %s", o.bucket)
	}
	if err := o.window.Validate(); err != nil {
		return err
	}
	o.from, o.to = -1, -1
	if v := o.window.From.Value; v != nil {
		o.from = *v
	}
	if v := o.window.To.Value; v != nil {
		o.to = *v
	}
	if o.from >= 0 && o.to >= 0 && o.to < o.from {
		return usageErrorf("--to-time (%d) is before --from-time (%d)", o.to, o.from)
	}
	return nil
}

// timelineBuckets is about how many buckets the automatic width gives.
const timelineBuckets = 60

// maxTimelineBuckets bounds the buckets of all series together (32 bytes
// and a line of output each): a --bucket far narrower than the span (1s
// over a year; 1ms over minutes, for each of hundreds of partitions with
// --per-partition) would otherwise allocate and print without end.
const maxTimelineBuckets = 1 << 20

// timelineLong is kseg timeline's help.
const timelineLong = `Show the traffic of every partition under each PATH over time: how many
offsets and log bytes fall in each time bucket, read from the time indexes
and the segments' base offsets and sizes (and, to place the bytes, the
offset index and a few batch headers): no record is read. "When did traffic
stop before the crash?" is answered by looking at the chart.

A time index entry (T, O) says T is the largest timestamp up to offset O,
so the offsets after the previous entry up to O, and their bytes, are
counted at T; what follows a segment's last entry is counted at that
entry's time. The resolution is the time index's: a broker writes an entry
per index.interval.bytes (4 KiB by default) of log, so traffic between two
entries shows in the later one's bucket. A segment without a usable time index (absent, or empty) is
read from its batch headers instead, and the summary says so
(source: batches); so is one whose index entry contradicts the batch it
leads to, named on stderr.

Buckets are contiguous, aligned on multiples of their width, and cover the
first to the last timestamp; --bucket sets the width (a Go duration: 30s,
5m, 1h), else about 60 buckets over the span, rounded to a whole second,
minute or hour. Summed over all buckets, records equal each partition's
offset span (log end offset minus its first segment's base offset,
compaction gaps included) and bytes its log size; --from-time and
--to-time keep only the buckets in that range.

The table draws a bar chart of records per bucket (one per partition with
--per-partition). Fields (-o json, csv): kind (bucket) start end (ms, end
exclusive) records bytes, with partition_dir when --per-partition; then a
summary line ("kind":"summary": partitions records bytes from to source;
on stderr with -o csv). --svg FILE also writes the chart as an SVG image.

At most 1,048,576 buckets are shown, all series together: a --bucket that
makes more is refused, with the narrowest width that fits as a hint; the
automatic width is widened to fit. The SVG draws at most 800 bars per
series (a bar then sums consecutive buckets).

Exit codes: 0 shown (also when no partition has a timestamp); 2 a PATH could
not be read, --bucket makes too many buckets, or FILE not written.`

func newTimelineCommand(ios *IOStreams) *cobra.Command {
	var opts timelineOptions
	c := &cobra.Command{
		Use:   "timeline PATH...",
		Short: "Show traffic over time (records and bytes per time bucket) from the time indexes",
		Long:  timelineLong,
		Example: `  kseg timeline /var/lib/kafka/data
  kseg timeline --bucket 1m --from-time 2023-11-14T22:00:00Z orders-0
  kseg timeline --per-partition --svg traffic.svg data
  kseg timeline -o json data/orders-0 | jq -c 'select(.kind == "bucket" and .records == 0)'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.paths = args
			if err := opts.Validate(); err != nil {
				return err
			}
			return runTimeline(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	_ = c.RegisterFlagCompletionFunc("svg", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"svg"}, cobra.ShellCompDirectiveFilterFileExt
	})
	_ = c.RegisterFlagCompletionFunc("bucket", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{"1s", "10s", "1m", "5m", "15m", "1h", "6h", "24h"}, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

// timelineBucketJSON is the contract's bucket line.
type timelineBucketJSON struct {
	Kind         string  `json:"kind"`
	PartitionDir *string `json:"partition_dir,omitempty"`
	Start        int64   `json:"start"`
	End          int64   `json:"end"`
	Records      int64   `json:"records"`
	Bytes        int64   `json:"bytes"`
}

// timelineSummaryJSON is the contract's summary line.
type timelineSummaryJSON struct {
	Kind       string `json:"kind"`
	Partitions int    `json:"partitions"`
	Records    int64  `json:"records"`
	Bytes      int64  `json:"bytes"`
	From       *int64 `json:"from"`
	To         *int64 `json:"to"`
	Source     string `json:"source"`
}

var timelineColumns = []column[timelineBucketJSON]{
	wideOnly(textColumn("kind", func(b timelineBucketJSON) string { return b.Kind })),
	omitIfEmpty(textPtrColumn("partition_dir", func(b timelineBucketJSON) *string { return b.PartitionDir })),
	withDisplay(intColumn("start", func(b timelineBucketJSON) int64 { return b.Start }),
		func(b timelineBucketJSON, ios *IOStreams) string { return ios.timeText(b.Start) }),
	withDisplay(intColumn("end", func(b timelineBucketJSON) int64 { return b.End }),
		func(b timelineBucketJSON, ios *IOStreams) string { return ios.timeText(b.End) }),
	intColumn("records", func(b timelineBucketJSON) int64 { return b.Records }),
	intColumn("bytes", func(b timelineBucketJSON) int64 { return b.Bytes }),
}

// timelineSeries is the buckets of one partition, or of all summed.
type timelineSeries struct {
	name    string // partition directory; "" for the sum
	buckets []inspect.TimelineBucket
}

// timelineBucketError words inspect's *TooManyBucketsError as a usage
// problem with --bucket: the narrowest width that fits is the hint.
func timelineBucketError(opts timelineOptions, e *inspect.TooManyBucketsError) error {
	what := fmt.Sprintf("--bucket %s makes %s buckets over %s", opts.bucket, groupCount(e.Buckets), humanMillis(e.Span))
	alt := "choose --bucket " + durationFlag(e.Fitting) + " or wider"
	if e.Series > 1 {
		what = fmt.Sprintf("%s for each of %d partitions", what, e.Series)
		alt += ", or leave out --per-partition"
	}
	return withHint(fmt.Errorf("%s: at most %s buckets in all are shown", what, groupCount(int64(e.Max))), alt)
}

// durationFlag is ms as a Go duration for --bucket (5s, 2m, 48h).
func durationFlag(ms int64) string {
	for _, u := range []struct {
		ms   int64
		unit string
	}{{3600e3, "h"}, {60e3, "m"}, {1e3, "s"}} {
		if ms%u.ms == 0 {
			return strconv.FormatInt(ms/u.ms, 10) + u.unit
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// humanMillis is a span of ms for people (humanDuration, without its
// overflow past 292 years).
func humanMillis(ms int64) string {
	if ms > 1e12 { // over 31 years: whole days
		return groupCount(ms/(24*3600e3)) + "d"
	}
	return humanDuration(time.Duration(ms) * time.Millisecond)
}

func runTimeline(ios *IOStreams, opts timelineOptions) error {
	parts, err := resolveSortedPartitions(ios, opts.paths, "not read")
	if err != nil {
		return err
	}
	bar := ios.progress("timeline")
	c, err := inspect.Timeline(parts, inspect.TimelineOptions{Bucket: opts.bucket.Milliseconds(), Buckets: timelineBuckets,
		MaxBuckets: maxTimelineBuckets, From: opts.from, To: opts.to, PerPartition: opts.perPartition,
		Progress: func(name string, done, total int64) { bar.partition(name); bar.update(done, total) }})
	bar.done()
	if c == nil {
		return err
	}
	for _, m := range c.Misleading {
		warnMisleading(ios, m, "the segment is read from its batch headers instead")
	}
	if len(c.FromBatches) > 0 {
		ios.Warnf("no usable time index for %s: read from the batch headers instead", listNames(c.FromBatches, 3))
	}
	var tooMany *inspect.TooManyBucketsError
	if errors.As(err, &tooMany) {
		return timelineBucketError(opts, tooMany)
	}
	for _, u := range c.Untimed {
		ios.Warnf("%s: %d offsets have no timestamp (%s) and are not shown", u.Dir, u.Records, u.Why)
	}
	return renderTimeline(ios, opts.svg, c)
}

// renderTimeline writes the chart in the output format (and as an SVG
// image to svg when given).
func renderTimeline(ios *IOStreams, svg string, c *inspect.TimelineChart) error {
	sum := timelineSummaryJSON{Kind: "summary", Partitions: c.Partitions, Source: c.Source, Records: c.Records, Bytes: c.Bytes}
	if c.From >= 0 {
		sum.From, sum.To = ptr(c.From), ptr(c.To)
	}
	series := make([]timelineSeries, len(c.Series))
	for i, s := range c.Series {
		series[i].buckets = s.Buckets
		if s.Partition != nil {
			series[i].name = s.Partition.Name()
		}
	}
	if svg != "" {
		if err := writeTimelineSVG(svg, series, c.Bucket, sum, ios.timeText); err != nil {
			return err
		}
	}
	if ios.Format() == FormatTable {
		return drawTimeline(ios, series, c.Bucket, sum)
	}
	// -o wide is the table of every field of the JSON lines; JSON ends
	// with the summary line, CSV says it on stderr.
	l := newLister(ios, timelineColumns)
	addTimelineRows(l, series)
	if ios.Format() == FormatWide {
		l.Footer("%s", timelineSummaryText(ios, sum, c.Bucket))
		return l.Close()
	}
	if err := l.Close(); err != nil {
		return err
	}
	if ios.Format() == FormatJSON {
		return newJSONEncoder(ios).Encode(sum)
	}
	fmt.Fprintf(ios.ErrOut, "kseg: %s\n", timelineSummaryText(ios, sum, c.Bucket))
	return nil
}

func addTimelineRows(l *lister[timelineBucketJSON], series []timelineSeries) {
	for _, s := range series {
		var dir *string
		if s.name != "" {
			dir = ptr(s.name)
		}
		for _, b := range s.buckets {
			l.Add(timelineBucketJSON{Kind: "bucket", PartitionDir: dir, Start: b.Start, End: b.End, Records: b.Records, Bytes: b.Bytes})
		}
	}
}

// listNames is up to n names joined, then how many more.
func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// timelineSummaryText is the summary for people.
func timelineSummaryText(ios *IOStreams, s timelineSummaryJSON, bucket int64) string {
	src := "from the time indexes"
	if s.Source == "batches" {
		src = "from the time indexes, and batch headers where a time index was missing"
	}
	if s.From == nil {
		return fmt.Sprintf("%s: no timestamp in range (%s)", countOf(s.Partitions, "partition"), src)
	}
	return fmt.Sprintf("%s, %s, %s from %s to %s (%s), %s buckets, %s",
		countOf(s.Partitions, "partition"), countOf(s.Records, "record"), humanSize(s.Bytes),
		ios.timeText(*s.From), ios.timeText(*s.To), ios.ago(*s.To),
		humanMillis(bucket), src)
}

// barWidth is the width of the bars of a chart on a terminal of width
// columns (0: no terminal) after a label of labelWidth columns.
func barWidth(columns, labelWidth int) int {
	if columns <= 0 {
		return 50
	}
	return max(columns-labelWidth-2, 10)
}

// blocks are the eighths of a block for the end of a bar.
var blocks = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// bar is a bar of value/maxValue of width columns, in block characters:
// any traffic draws at least an eighth, so that a quiet bucket is not
// mistaken for an empty one.
func bar(value, maxValue int64, width int) string {
	if value <= 0 || maxValue <= 0 {
		return ""
	}
	eighths := int(math.Round(float64(value) / float64(maxValue) * float64(width*8)))
	eighths = max(eighths, 1)
	return strings.Repeat("█", eighths/8) + blocks[eighths%8]
}

// drawTimeline draws each series as a bar chart: a line per bucket with
// its start time, records and bytes, and a bar of its records. Each
// series is gone over twice (the column widths and the busiest bucket,
// then the lines), so nothing is held per bucket: the lines stream.
func drawTimeline(ios *IOStreams, series []timelineSeries, bucket int64, sum timelineSummaryJSON) error {
	w := bufio.NewWriter(ios.Out)
	row := func(bk *inspect.TimelineBucket) [3]string {
		start := ios.timeText(bk.Start)
		if bucket%1000 == 0 {
			start = secondsTime(ios, &bk.Start)
		}
		return [3]string{start, groupCount(bk.Records), humanSize(bk.Bytes)}
	}
	for k, s := range series {
		if k > 0 {
			w.WriteByte('\n')
		}
		if s.name != "" {
			w.WriteString(escapeControl(s.name) + "\n")
		}
		header := [3]string{"start", "records", "bytes"}
		var widths [3]int
		for j := range header {
			widths[j] = len(header[j])
		}
		var maxRecords int64
		for i := range s.buckets {
			r := row(&s.buckets[i])
			for j := range r {
				widths[j] = max(widths[j], displayWidth(r[j]))
			}
			maxRecords = max(maxRecords, s.buckets[i].Records)
		}
		label := widths[0] + 2 + widths[1] + 2 + widths[2]
		width := barWidth(ios.TerminalWidth(), label)
		if len(s.buckets) > 0 {
			fmt.Fprintf(w, "%-*s  %*s  %*s\n", widths[0], header[0], widths[1], header[1], widths[2], header[2])
		}
		for i := range s.buckets {
			r := row(&s.buckets[i])
			line := fmt.Sprintf("%-*s  %*s  %*s  %s", widths[0], r[0], widths[1], r[1], widths[2], r[2], bar(s.buckets[i].Records, maxRecords, width))
			w.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	line := timelineSummaryText(ios, sum, bucket)
	for _, l := range wrapIndented(line, ios.TerminalWidth()) {
		w.WriteString(l + "\n")
	}
	return w.Flush()
}

// maxSVGBars bounds the bars of the SVG image, all series together (about
// 150 bytes each): a series gets at most a bar per pixel column of its
// chart, fewer when there are many series; a bar then sums consecutive
// buckets, and its tooltip says from when to when.
const maxSVGBars = 1 << 16

// svgBars is how many bars each of n series of buckets buckets gets.
func svgBars(n, buckets, chartWidth int) int {
	return max(min(buckets, chartWidth, maxSVGBars/max(n, 1)), 1)
}

// writeTimelineSVG writes the chart as an SVG image: per series, a bar of
// records per bucket (or per run of buckets, svgBars), with the first and
// last times under it, written by timeText (UTC, or the local zone with
// --local, as in the tables). The file is written to a temporary name
// beside it, then renamed.
func writeTimelineSVG(path string, series []timelineSeries, bucket int64, sum timelineSummaryJSON, timeText func(int64) string) error {
	_, err := writeReplacing(path, func(b io.Writer) error {
		writeSVG(b, series, bucket, sum, timeText)
		return nil
	})
	return err
}

// writeSVG draws the chart for writeTimelineSVG.
func writeSVG(b io.Writer, series []timelineSeries, bucket int64, sum timelineSummaryJSON, timeText func(int64) string) {
	const (
		chartW, chartH = 800, 160
		margin         = 40
	)
	height := len(series)*(chartH+2*margin) + margin
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", chartW+2*margin, height)
	fmt.Fprintf(b, `<title>kseg timeline: %d records, %d bytes, %d ms buckets</title>`+"\n", sum.Records, sum.Bytes, bucket)
	for k, s := range series {
		top := margin + k*(chartH+2*margin)
		name := "all partitions"
		if s.name != "" {
			name = s.name
		}
		fmt.Fprintf(b, `<text x="%d" y="%d">%s: records per %s</text>`+"\n", margin, top-8, xmlEscape(name), humanMillis(bucket))
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", margin, top, chartW, chartH)
		if len(s.buckets) == 0 {
			continue
		}
		// Bar i sums the buckets [i*n/bars, (i+1)*n/bars).
		n := len(s.buckets)
		bars := svgBars(len(series), n, chartW)
		sumOf := func(i int) (first, last int, records, bytes int64) {
			first, last = i*n/bars, (i+1)*n/bars-1
			for _, bk := range s.buckets[first : last+1] {
				records, bytes = inspect.CappedSum(records, bk.Records), inspect.CappedSum(bytes, bk.Bytes)
			}
			return first, last, records, bytes
		}
		var maxRecords int64
		for i := range bars {
			_, _, r, _ := sumOf(i)
			maxRecords = max(maxRecords, r)
		}
		if maxRecords == 0 {
			continue
		}
		w := float64(chartW) / float64(bars)
		for i := range bars {
			first, last, records, bytes := sumOf(i)
			when := timeText(s.buckets[first].Start)
			if last > first {
				when += " to " + timeText(s.buckets[last].End)
			}
			h := float64(chartH) * float64(records) / float64(maxRecords)
			fmt.Fprintf(b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="#3b7dd8"><title>%s: %s, %s</title></rect>`+"\n",
				float64(margin)+float64(i)*w, float64(top)+float64(chartH)-h, max(w-1, 0.5), h, when, count(records, "record"), count(bytes, "byte"))
		}
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", margin, top+chartH+16, timeText(s.buckets[0].Start))
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", margin+chartW, top+chartH+16, timeText(s.buckets[n-1].End))
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%d</text>`+"\n", margin-4, top+10, maxRecords)
	}
	fmt.Fprint(b, "</svg>\n")
}

// xmlEscape escapes text for an XML text node.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(escapeControl(s))
}

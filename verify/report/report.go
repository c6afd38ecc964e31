// Package report assembles kseg report's postmortem page: the data of a
// data directory at the time of an incident, gathered through the same
// library entry points the commands use (verify.Run, the ls summaries,
// the timeline's traffic, groups, txns, retention, cleaner and the
// metadata image), as lines of JSON with a "kind" (Build), and the one
// self-contained HTML page drawn from them (WriteHTML).
//
// It sits beside verify, whose findings it shows (nothing under inspect
// may import verify); it prints nothing and reads no flags: a Go caller
// gets the page kseg report writes.
package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/listing"
	"github.com/kseg/kseg/inspect/topicconfig"
	"github.com/kseg/kseg/verify"
)

// Section ids, in the order the page shows them when the findings hold no
// error (with errors, the findings come first).
const (
	SectionPartitions   = "partitions"
	SectionFindings     = "findings"
	SectionTraffic      = "traffic"
	SectionGroups       = "groups"
	SectionTransactions = "transactions"
	SectionRetention    = "retention"
	SectionCleaner      = "cleaner"
	SectionMetadata     = "metadata"
)

// Options are what Build needs besides the targets.
type Options struct {
	// Paths are the PATH arguments as given: the commands each section
	// shows name them.
	Paths []string
	// Now is "now" in ms for the analyses (ages, retention); At, when set,
	// is the --at it came from (the commands shown repeat it).
	Now int64
	At  *int64
	// Generated is when the report was built (ms).
	Generated int64
	// Version is the kseg version that built it.
	Version string
	// Configs resolves each topic's configuration (txns, retention,
	// cleaner); nil: Kafka's defaults.
	Configs *topicconfig.Resolver
	// ConfigArgs are the flags Configs came from (--server-properties
	// FILE, --config K=V), repeated in the commands of the sections they
	// change (txns, retention, cleaner).
	ConfigArgs []string
	// Jobs is verify's -j (0: every core).
	Jobs int
	// Buckets is about how many traffic buckets the charts get (0:
	// DefaultBuckets).
	Buckets int
	// Progress, when set, is called as each step starts with its name, and
	// returns the function that step reports its progress to (or nil).
	Progress func(step string) func(done, total int64)
}

// DefaultBuckets is about how many buckets a traffic chart has: few
// enough that 10,000 partitions' series keep the page small.
const DefaultBuckets = 48

// Report is the page's data: its lines in the order -o json prints them.
type Report struct {
	Lines []Line
	// Partitions counts the partitions; Errors, Warnings and Infos are
	// verify's findings by severity.
	Partitions              int
	Errors, Warnings, Infos int
}

// Line is one line of the report: a *...Line struct of this package, each
// with its "kind".
type Line any

func (o *Options) progress(step string) func(done, total int64) {
	if o.Progress == nil {
		return nil
	}
	return o.Progress(step)
}

// Build gathers the report of the targets: the header line, then each
// section's line and its data. A section whose data cannot be read says
// why in its line (Note) and the others stand; an error is returned only
// when nothing could be read at all.
func Build(targets []*inspect.Target, opts Options) (*Report, error) {
	if opts.Buckets <= 0 {
		opts.Buckets = DefaultBuckets
	}
	b := &builder{opts: opts, targets: targets}
	for _, t := range targets {
		ps := append([]*inspect.Partition(nil), t.Partitions...)
		inspect.SortPartitions(ps)
		b.parts = append(b.parts, ps...)
	}
	head := &HeaderLine{Kind: "report", Paths: opts.Paths, Generated: opts.Generated, Now: opts.Now, Version: opts.Version}
	if err := b.partitions(); err != nil {
		return nil, err
	}
	if err := b.findings(); err != nil {
		return nil, err
	}
	b.traffic()
	b.groups()
	b.transactions()
	b.retention()
	b.cleaner()
	b.metadata()
	b.rep.Partitions = len(b.parts)
	head.Partitions, head.Errors, head.Warnings, head.Infos = len(b.parts), b.rep.Errors, b.rep.Warnings, b.rep.Infos
	for _, p := range b.partRows {
		head.LogBytes += p.LogBytes
		head.Segments += p.Segments
	}
	// The sections' lines go before their data, findings first when
	// verify found an error (the page's order).
	b.rep.Lines = append([]Line{head}, b.order()...)
	return &b.rep, nil
}

type builder struct {
	opts     Options
	targets  []*inspect.Target
	parts    []*inspect.Partition
	partRows []*PartitionLine
	traffics [][]inspect.SegmentTraffic // each partition's, as timeline reads it
	byDir    map[string]*PartitionLine
	sections map[string][]Line // each section's line and data
	rep      Report
}

// section files a section's line (and its data lines after it).
func (b *builder) section(s *SectionLine, data ...Line) {
	if b.sections == nil {
		b.sections = map[string][]Line{}
	}
	b.sections[s.ID] = append(append(b.sections[s.ID], s), data...)
}

// order is the sections' lines in the page's order.
func (b *builder) order() []Line {
	ids := []string{SectionPartitions, SectionFindings, SectionTraffic, SectionGroups, SectionTransactions, SectionRetention, SectionCleaner, SectionMetadata}
	if b.rep.Errors > 0 {
		ids[0], ids[1] = SectionFindings, SectionPartitions
	}
	var out []Line
	for _, id := range ids {
		out = append(out, b.sections[id]...)
	}
	return out
}

// command is a kseg command line over the report's paths, quoted for a
// POSIX shell where a path needs it.
func (b *builder) command(args ...string) string {
	return commandLine(append(args, b.opts.Paths...)...)
}

// commandLine joins args, quoting those a shell would split or expand.
func commandLine(args ...string) string {
	out := []string{"kseg"}
	for _, a := range args {
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// atFlag is --at as given to the report, for the commands it shows.
func (b *builder) atFlag() []string {
	if b.opts.At == nil {
		return nil
	}
	return []string{"--at", fmt.Sprint(*b.opts.At)}
}

// analysisCommand is the command line of txns, retention or cleaner over
// the report's paths, with --at and the topic configuration's flags.
func (b *builder) analysisCommand(name string) string {
	return b.command(append(append([]string{name}, b.atFlag()...), b.opts.ConfigArgs...)...)
}

// partitions reads every partition's summary as kseg ls does (the first
// batch and the tail past the last index entry of each segment) and its
// traffic from the time indexes, on every core.
func (b *builder) partitions() error {
	b.partRows = make([]*PartitionLine, len(b.parts))
	b.traffics = make([][]inspect.SegmentTraffic, len(b.parts))
	b.byDir = map[string]*PartitionLine{}
	err := inspect.EachPartition(len(b.parts), func(i int) error {
		p := b.parts[i]
		sums, err := p.Summarize(inspect.SummaryOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", p.Dir, err)
		}
		b.partRows[i] = partitionLine(p, sums)
		if segs, err := p.Traffic(); err == nil {
			b.traffics[i] = segs
		} else {
			b.partRows[i].TrafficError = err.Error()
		}
		return nil
	}, b.opts.progress("ls"))
	if err != nil {
		return err
	}
	rows := make([]Line, len(b.partRows))
	for i, r := range b.partRows {
		rows[i] = r
		b.byDir[filepath.Clean(r.Dir)] = r
	}
	b.section(&SectionLine{Kind: "section", ID: SectionPartitions, Title: "Partitions", Present: len(rows) > 0,
		Command: b.command("ls"), Rows: len(rows)}, rows...)
	return nil
}

// partitionLine is a partition's row: ls's fields and status.
func partitionLine(p *inspect.Partition, sums []inspect.SegmentSummary) *PartitionLine {
	s := listing.Sum(p, sums)
	l := &PartitionLine{Kind: "partition", Dir: p.Dir, Name: p.Name(), Segments: s.Segments, Status: s.Status.String(),
		BaseOffset: s.BaseOffset, LastOffset: s.LastOffset, NextOffset: s.NextOffset,
		FirstTimestamp: s.FirstTimestamp, LastTimestamp: s.LastTimestamp, LogBytes: s.LogBytes}
	if p.Topic != "" {
		l.Topic, l.Partition = &p.Topic, &p.Partition
	}
	return l
}

// findings runs verify over every target, as kseg verify --verbose does,
// and counts each partition's findings by severity.
func (b *builder) findings() error {
	var lines []Line
	var total verify.Summary
	for _, t := range b.targets {
		vopts := verify.Options{Jobs: b.opts.Jobs, SideFiles: true, Progress: b.opts.progress("verify")}
		sum, err := verify.Run(t, vopts, func(f verify.Finding) {
			line := &FindingLine{FindingLine: f.Line()}
			if p := b.partitionOf(f.File); p != nil {
				line.PartitionDir = &p.Dir
				switch f.Severity {
				case verify.SeverityError:
					p.Errors++
				case verify.SeverityWarning:
					p.Warnings++
				default:
					p.Infos++
				}
			}
			lines = append(lines, line)
		})
		if err != nil {
			return fmt.Errorf("verifying %s: %w", t.Path, err)
		}
		total.Add(sum)
	}
	b.rep.Errors, b.rep.Warnings, b.rep.Infos = total.Errors, total.Warnings, total.Infos
	s := &SectionLine{Kind: "section", ID: SectionFindings, Title: "Findings", Present: true,
		Command: b.command("verify", "--verbose"), Rows: len(lines)}
	sum := total.Line("verify_summary")
	b.section(s, append([]Line{&sum}, lines...)...)
	return nil
}

// partitionOf is the partition row a finding's file belongs to: the
// partition directory holding it (nil for a data directory's own files).
func (b *builder) partitionOf(file string) *PartitionLine {
	if p, ok := b.byDir[filepath.Clean(file)]; ok {
		return p
	}
	return b.byDir[filepath.Dir(filepath.Clean(file))]
}

// sectionError files a section that could not be built, saying why.
func (b *builder) sectionError(id, title, command string, err error) {
	b.section(&SectionLine{Kind: "section", ID: id, Title: title, Command: command, Note: err.Error()})
}

// absent files a section with nothing to show, saying why.
func (b *builder) absent(id, title, command, why string) {
	b.section(&SectionLine{Kind: "section", ID: id, Title: title, Command: command, Note: why})
}

func ptr[T any](v T) *T { return &v }

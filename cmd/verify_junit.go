package cmd

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/verify"
)

// verify -o junit: the findings as JUnit XML, the report format CI systems
// (GitHub Actions reporters, GitLab's junit artifacts, Jenkins) render
// without a plugin. One <testsuite> per partition directory (and one per
// data directory whose own files were checked), one <testcase> per
// segment (named by its .log; findings about its indexes belong to it) and
// per side file checked, a <failure> per error finding (and per warning
// with --strict), warnings otherwise as <system-out> lines.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	ClassName string         `xml:"classname,attr"`
	Name      string         `xml:"name,attr"`
	Failures  []junitFailure `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitReport gathers the test cases of a verify run, in the order the
// files were found, and the findings that fall in each.
type junitReport struct {
	strict bool
	suites []*junitSuite
	// byDir is the suite of a directory (cleaned path); byFile the case
	// of a file (cleaned path), a segment's index files mapping to its
	// case.
	byDir  map[string]*junitSuite
	byFile map[string]caseRef
}

type caseRef struct {
	suite *junitSuite
	i     int
}

func newJUnitReport(strict bool) *junitReport {
	return &junitReport{strict: strict, byDir: map[string]*junitSuite{}, byFile: map[string]caseRef{}}
}

// suite returns the suite of dir, made on first use.
func (r *junitReport) suite(dir string) *junitSuite {
	key := filepath.Clean(dir)
	if s, ok := r.byDir[key]; ok {
		return s
	}
	s := &junitSuite{Name: dir}
	r.suites = append(r.suites, s)
	r.byDir[key] = s
	return s
}

// addCase adds a test case for name in dir, which the given files (all
// of dir) report into.
func (r *junitReport) addCase(dir, name string, files ...string) {
	if _, ok := r.byFile[filepath.Clean(filepath.Join(dir, name))]; ok {
		return
	}
	s := r.suite(dir)
	s.Cases = append(s.Cases, junitCase{ClassName: dir, Name: name})
	ref := caseRef{suite: s, i: len(s.Cases) - 1}
	r.byFile[filepath.Clean(filepath.Join(dir, name))] = ref
	for _, f := range files {
		if f != "" {
			r.byFile[filepath.Clean(f)] = ref
		}
	}
}

// addTarget adds the cases of what verify checks under t: each
// partition's segments and side files, and the data directory's own
// files.
func (r *junitReport) addTarget(t *inspect.Target) error {
	if t.Kind != "segment" && t.DataDir != "" {
		dd := sidefile.ReadDataDirFiles(t.DataDir)
		for _, p := range []string{dd.RecoveryPoints.Path, dd.LogStarts.Path, dd.HighWatermarks.Path, dd.CleanerOffsets.Path, dd.Meta.Path} {
			if p != "" {
				r.addCase(t.DataDir, filepath.Base(p))
			}
		}
	}
	for _, p := range t.Partitions {
		r.suite(p.Dir)
		for _, s := range p.Segments {
			r.addCase(p.Dir, s.Name(), s.Log, s.Index, s.TimeIndex, s.TxnIndex)
		}
		if t.Kind == "segment" {
			continue
		}
		side, err := inspect.ReadPartitionSideFiles(p.Dir)
		if err != nil {
			return err
		}
		for _, f := range []string{side.LeaderEpochs.Path, side.PartitionMetadata.Path} {
			if f != "" {
				r.addCase(p.Dir, filepath.Base(f))
			}
		}
		for _, sn := range side.Snapshots {
			r.addCase(p.Dir, filepath.Base(sn.Path))
		}
	}
	return nil
}

// add files a finding under its file's case (made if the file had none:
// a leftover file, a side file found only by the check).
func (r *junitReport) add(f verify.Finding) {
	ref, ok := r.byFile[filepath.Clean(f.File)]
	if !ok && f.SegmentBaseOffset != nil {
		// A segment's file that is not there (a missing index).
		ref, ok = r.byFile[filepath.Join(filepath.Dir(filepath.Clean(f.File)), inspect.SegmentName(*f.SegmentBaseOffset)+inspect.LogSuffix)]
	}
	if !ok {
		dir, name := filepath.Split(f.File)
		dir = strings.TrimSuffix(dir, string(filepath.Separator))
		if dir == "" {
			dir = "."
		}
		r.addCase(dir, name)
		ref = r.byFile[filepath.Clean(f.File)]
	}
	c := &ref.suite.Cases[ref.i]
	if f.IsError() || r.strict {
		c.Failures = append(c.Failures, junitFailure{
			Message: f.Check + ": " + f.Message,
			Type:    f.Check,
			Text:    findingDetail(f),
		})
		return
	}
	c.SystemOut += f.Severity + " " + f.Check + " " + findingWhere(f) + ": " + f.Message + "\n"
}

// findingWhere is a finding's file and byte position (file:position).
func findingWhere(f verify.Finding) string {
	if f.Position != nil {
		return f.File + ":" + strconv.FormatInt(*f.Position, 10)
	}
	return f.File
}

// findingDetail is a failure's body: where, then the message.
func findingDetail(f verify.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\nfile: %s\n", f.Severity, f.Check, f.File)
	if f.Position != nil {
		fmt.Fprintf(&b, "position: %d\n", *f.Position)
	}
	if f.Offset != nil {
		fmt.Fprintf(&b, "offset: %d\n", *f.Offset)
	}
	b.WriteString(f.Message)
	return b.String()
}

// write writes the report as XML with its counts.
func (r *junitReport) write(w io.Writer, elapsed time.Duration) error {
	out := junitSuites{Name: "kseg verify", Time: strconv.FormatFloat(elapsed.Seconds(), 'f', 3, 64)}
	for _, s := range r.suites {
		s.Tests = len(s.Cases)
		s.Failures = 0
		for _, c := range s.Cases {
			if len(c.Failures) > 0 {
				s.Failures++
			}
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, *s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

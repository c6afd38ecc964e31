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
// data directory whose own files were checked), one <testcase> per file
// checked (a segment's .log, .index, .timeindex and .txnindex each, and
// each side file), and one <failure> per error finding (and per warning
// with --strict). A test case holds one <failure> at most, as the JUnit
// schema has it and as CI systems show it: a file's further failing
// findings are test cases of their own, named "FILE #2", "FILE #3"...
// So failures counts failing test cases and <failure> elements alike,
// and every count is the sum of those below it. Warnings otherwise are
// <system-out> lines of their file's case.

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
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Cases    []*junitCase `xml:"testcase"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
	// more are the cases of the file's further failing findings, written
	// right after this one.
	more []*junitCase
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
	// of a file (cleaned path).
	byDir  map[string]*junitSuite
	byFile map[string]*junitCase
}

func newJUnitReport(strict bool) *junitReport {
	return &junitReport{strict: strict, byDir: map[string]*junitSuite{}, byFile: map[string]*junitCase{}}
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

// addCase adds the test case of the file name in dir (once) and returns it.
func (r *junitReport) addCase(dir, name string) *junitCase {
	key := filepath.Clean(filepath.Join(dir, name))
	if c, ok := r.byFile[key]; ok {
		return c
	}
	s := r.suite(dir)
	c := &junitCase{ClassName: dir, Name: name}
	s.Cases = append(s.Cases, c)
	r.byFile[key] = c
	return c
}

// addTarget adds the cases of what verify checks under t: each
// partition's segment files and side files, and the data directory's own
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
			for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" {
					r.addCase(p.Dir, filepath.Base(f))
				}
			}
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
// a missing index, a leftover file, a side file found only by the check).
// A failing finding goes to the file's case, or when that case already
// failed, to a case of its own named after it.
func (r *junitReport) add(f verify.Finding) {
	dir, name := filepath.Split(f.File)
	dir = strings.TrimSuffix(dir, string(filepath.Separator))
	if dir == "" {
		dir = "."
	}
	c := r.addCase(dir, name)
	if !f.IsError() && !r.strict {
		c.SystemOut += f.Severity + " " + f.Check + " " + findingWhere(f) + ": " + f.Message + "\n"
		return
	}
	failure := &junitFailure{Message: f.Check + ": " + f.Message, Type: f.Check, Text: findingDetail(f)}
	if c.Failure == nil {
		c.Failure = failure
		return
	}
	c.more = append(c.more, &junitCase{ClassName: c.ClassName, Name: c.Name + " #" + strconv.Itoa(len(c.more)+2), Failure: failure})
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

// write writes the report as XML with its counts: a suite's tests are its
// cases and its failures the failing ones (each with one <failure>); the
// root's are their sums.
func (r *junitReport) write(w io.Writer, elapsed time.Duration) error {
	out := junitSuites{Name: "kseg verify", Time: strconv.FormatFloat(elapsed.Seconds(), 'f', 3, 64)}
	for _, s := range r.suites {
		flat := junitSuite{Name: s.Name}
		for _, c := range s.Cases {
			flat.Cases = append(append(flat.Cases, c), c.more...)
		}
		flat.Tests = len(flat.Cases)
		for _, c := range flat.Cases {
			if c.Failure != nil {
				flat.Failures++
			}
		}
		out.Tests += flat.Tests
		out.Failures += flat.Failures
		out.Suites = append(out.Suites, flat)
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

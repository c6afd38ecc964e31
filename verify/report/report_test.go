package report_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/verify"
	"github.com/kseg/kseg/verify/report"
)

// damagedDataDir writes two partitions of one topic and flips a byte
// inside a batch of orders-1's first segment: a CRC error there.
func damagedDataDir(t *testing.T) (dir string, segments int) {
	t.Helper()
	dir = t.TempDir()
	var bad *kafkagen.Manifest
	for i, o := range []kafkagen.Options{
		{Seed: 1, Topic: "orders", Segments: 2, Batches: 30},
		{Seed: 2, Topic: "orders", Partition: 1, Segments: 3, Batches: 40},
	} {
		m, err := kafkagen.Generate(filepath.Join(dir, "orders-"+string(rune('0'+i))), o)
		if err != nil {
			t.Fatal(err)
		}
		segments += len(m.Segments)
		bad = m
	}
	seg := &bad.Segments[0]
	b, err := os.ReadFile(bad.LogPath(seg))
	if err != nil {
		t.Fatal(err)
	}
	b[seg.Batches[len(seg.Batches)/2].Position+70] ^= 0x5a
	if err := os.WriteFile(bad.LogPath(seg), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, segments
}

// Build on a damaged data directory: the header counts the partitions,
// segments and verify's findings as verify.Run finds them on the same
// target; each finding is placed in the partition of its file; with an
// error the findings section comes first; the page carries the lines as
// its data and a Content-Security-Policy naming its own script and style
// by hash.
func TestBuildAgreesWithVerify(t *testing.T) {
	dir, segments := damagedDataDir(t)
	target, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []verify.Finding
	if _, err := verify.Run(target, verify.Options{}, func(f verify.Finding) { want = append(want, f) }); err != nil {
		t.Fatal(err)
	}
	errs := 0
	for _, f := range want {
		if f.Severity == verify.SeverityError {
			errs++
		}
	}
	if errs == 0 {
		t.Fatal("verify found no error in the damaged partition: the damage missed")
	}

	rep, err := report.Build([]*inspect.Target{target}, report.Options{Paths: []string{dir}, Now: 1700100000000, Generated: 1700100000000})
	if err != nil {
		t.Fatal(err)
	}
	head, ok := rep.Lines[0].(*report.HeaderLine)
	if !ok {
		t.Fatalf("the first line is %T, not the header", rep.Lines[0])
	}
	if head.Partitions != 2 || head.Segments != segments || head.Errors != errs || rep.Errors != errs {
		t.Errorf("header: %d partitions, %d segments, %d errors (report %d); want 2, %d, %d", head.Partitions, head.Segments, head.Errors, rep.Errors, segments, errs)
	}
	var findings []report.FindingLine
	var sections []string
	for _, l := range rep.Lines {
		switch l := l.(type) {
		case *report.FindingLine:
			findings = append(findings, *l)
			if l.PartitionDir == nil || !strings.HasPrefix(l.File, *l.PartitionDir+string(filepath.Separator)) {
				t.Errorf("finding in %s placed in partition %v", l.File, l.PartitionDir)
			}
		case *report.SectionLine:
			sections = append(sections, l.ID)
		}
	}
	if len(findings) != len(want) {
		t.Errorf("%d findings, verify.Run made %d", len(findings), len(want))
	}
	for i := range min(len(findings), len(want)) {
		if got, w := jsonOf(t, findings[i].FindingLine), jsonOf(t, want[i].Line()); got != w {
			t.Errorf("finding %d: %s, verify.Run: %s", i, got, w)
		}
	}
	if len(sections) == 0 || sections[0] != report.SectionFindings {
		t.Errorf("sections %v: with an error the findings come first", sections)
	}

	var page bytes.Buffer
	if err := report.WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	// The policy names the page's one script and one style by their
	// SHA-256, which the browser checks against their text.
	csp := regexp.MustCompile(`Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page.String())
	if csp == nil || !strings.Contains(csp[1], "default-src 'none'") {
		t.Fatalf("the page's Content-Security-Policy: %q", csp)
	}
	policy := html.UnescapeString(csp[1]) // as the browser reads the attribute
	for _, re := range []string{`(?s)<script>(.*?)</script>`, `(?s)<style>(.*?)</style>`} {
		m := regexp.MustCompile(re).FindStringSubmatch(page.String())
		if m == nil {
			t.Fatalf("no %s in the page", re)
		}
		sum := sha256.Sum256([]byte(m[1]))
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(policy, h) {
			t.Errorf("the policy %q does not name %s", policy, h)
		}
	}
	data := regexp.MustCompile(`(?s)<script id="kseg-data" type="application/json">(.*?)</script>`).FindStringSubmatch(page.String())
	if data == nil {
		t.Fatal("no JSON data script in the page")
	}
	var lines []json.RawMessage
	if err := json.Unmarshal([]byte(data[1]), &lines); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	if len(lines) != len(rep.Lines) {
		t.Fatalf("the page holds %d lines, the report %d", len(lines), len(rep.Lines))
	}
	for i, l := range rep.Lines {
		if got, w := compact(t, lines[i]), jsonOf(t, l); got != w {
			t.Errorf("line %d in the page: %s, in the report: %s", i, got, w)
		}
	}
}

// A report of nothing still makes a page (no header line to title it).
func TestWriteHTMLEmptyReport(t *testing.T) {
	var page bytes.Buffer
	if err := report.WriteHTML(&page, &report.Report{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<title>kseg report</title>") {
		t.Errorf("the empty report's page has no plain title")
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compact is the JSON text b as json.Marshal writes it (the page escapes
// <, > and & for HTML, which Marshal does too).
func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

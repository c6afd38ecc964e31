package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/verify"
)

// verifyFixture generates a partition demo-0 in a temporary directory and
// returns the manifest and that directory; run kseg there with runIn, so
// that file fields are short and stable.
func verifyFixture(t *testing.T, o kafkagen.Options) (*kafkagen.Manifest, string) {
	t.Helper()
	dir := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(dir, "demo-0"), o)
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

// runIn runs kseg with dir as the working directory (in a subtest, so the
// working directory is restored before the caller compares golden files).
func runIn(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Run(strings.Join(args, " "), func(t *testing.T) {
		t.Chdir(dir)
		stdout, stderr, code = runKseg(t, nil, args...)
	})
	return stdout, stderr, code
}

// damageDemo flips a CRC byte of batch 30 of segment 0, appends stray bytes
// to segment 0's .index and removes segment 1's .timeindex: one error of
// the log, one of an index, one warning.
func damageDemo(t *testing.T, m *kafkagen.Manifest) {
	t.Helper()
	s0 := &m.Segments[0]
	log, err := os.ReadFile(m.LogPath(s0))
	if err != nil {
		t.Fatal(err)
	}
	log[s0.Batches[30].Position+17] ^= 0x55
	if err := os.WriteFile(m.LogPath(s0), log, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.IndexPath(s0), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{1, 2, 3})
	f.Close()
	if err := os.Remove(m.TimeIndexPath(&m.Segments[1])); err != nil {
		t.Fatal(err)
	}
}

var demoShape = kafkagen.Options{Seed: 7, Segments: 2, Batches: 60}

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		lines = append(lines, v)
	}
	return lines
}

func TestVerifyClean(t *testing.T) {
	m, dir := verifyFixture(t, demoShape)
	before := hashTree(t, m.Dir)
	stdout, stderr, code := runIn(t, dir, "-o", "json", "verify", "demo-0")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := jsonLines(t, stdout)
	if len(lines) != 1 || lines[0]["kind"] != "summary" || lines[0]["errors"] != 0.0 || lines[0]["warnings"] != 0.0 || lines[0]["segments"] != 2.0 || lines[0]["batches"] != 120.0 {
		t.Fatalf("output: %s", stdout)
	}
	outs := assertTableGoldens(t, dir, "verify-clean", 0, "verify", "demo-0")
	if !strings.HasPrefix(outs[0], "no findings: ") {
		t.Errorf("a clean run does not say so first:\n%s", outs[0])
	}
	assertTreeUnchanged(t, m.Dir, before)
}

func TestVerifyDamaged(t *testing.T) {
	m, dir := verifyFixture(t, demoShape)
	damageDemo(t, m)
	before := hashTree(t, m.Dir)
	assertTableGoldens(t, dir, "verify-damaged", exitNegative, "verify", "demo-0")
	for _, tc := range []struct{ format, golden string }{
		{"json", "verify-damaged.jsonl"},
		{"csv", "verify-damaged.csv"},
	} {
		stdout, stderr, code := runIn(t, dir, "-o", tc.format, "verify", "demo-0")
		if code != exitNegative {
			t.Errorf("-o %s: exit %d, want 1; stderr %q", tc.format, code, stderr)
		}
		assertGolden(t, tc.golden, stdout)
		wantErr := ""
		if tc.format == "csv" {
			wantErr = "kseg: 1 partition, 2 segments, 119 batches, " // the summary goes to stderr
		}
		if !strings.HasPrefix(stderr, wantErr) || (wantErr == "" && stderr != "") {
			t.Errorf("-o %s: stderr %q", tc.format, stderr)
		}
	}
	stdout, _, _ := runIn(t, dir, "-o", "json", "verify", "demo-0")
	lines := jsonLines(t, stdout)
	var checks []string
	for _, l := range lines[:len(lines)-1] {
		if l["kind"] != "finding" {
			t.Errorf("line %v", l)
		}
		checks = append(checks, l["check"].(string))
	}
	if strings.Join(checks, " ") != "log.crc index.size timeindex.missing" {
		t.Errorf("checks %v", checks)
	}
	sum := lines[len(lines)-1]
	if sum["kind"] != "summary" || sum["errors"] != 2.0 || sum["warnings"] != 1.0 || sum["batches"] != 119.0 {
		t.Errorf("summary %v", sum)
	}
	assertTreeUnchanged(t, m.Dir, before)
}

func TestVerifyStrict(t *testing.T) {
	m, _ := verifyFixture(t, demoShape)
	if err := os.Remove(m.TimeIndexPath(&m.Segments[1])); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runKseg(t, nil, "verify", m.Dir); code != exitOK {
		t.Errorf("a warning: exit %d, want 0", code)
	}
	if _, _, code := runKseg(t, nil, "verify", "--strict", m.Dir); code != exitNegative {
		t.Errorf("a warning with --strict: exit %d, want 1", code)
	}
}

func TestVerifyArguments(t *testing.T) {
	_, dir := verifyFixture(t, demoShape)
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"verify"}, exitFailed, "requires at least 1 arg"},
		{[]string{"verify", "-j", "-1", "demo-0"}, exitFailed, "--jobs must be at least 1"},
		{[]string{"verify", "--index-interval-bytes", "-3", "demo-0"}, exitFailed, "--index-interval-bytes must be >= 0"},
		{[]string{"verify", "demo-0", "nosuch"}, exitFailed, "nosuch: no such file or directory"},
		{[]string{"verify", "--records", "-j", "1", "--index-interval-bytes", "4096", "demo-0"}, exitOK, ""},
		{[]string{"verify", "demo-0/00000000000000000000.index"}, exitOK, ""},
	} {
		stdout, stderr, code := runIn(t, dir, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
		if code == exitFailed && stdout != "" {
			t.Errorf("%v: output before failing: %q", tc.args, stdout)
		}
	}
}

// Every real broker directory verifies with exit 0 and is left untouched.
func TestVerifyRealFixtures(t *testing.T) {
	real := requireRealFixtures(t)
	before := hashTree(t, real)
	ents, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		stdout, stderr, code := runKseg(t, nil, "-o", "json", "verify", filepath.Join(real, e.Name()))
		if code != exitOK {
			t.Errorf("%s: exit %d, stderr %q\n%s", e.Name(), code, stderr, stdout)
			continue
		}
		lines := jsonLines(t, stdout)
		if sum := lines[len(lines)-1]; sum["kind"] != "summary" || sum["errors"] != 0.0 {
			t.Errorf("%s: summary %v", e.Name(), sum)
		}
	}
	assertTreeUnchanged(t, real, before)
}

func TestVerifyJobsSameOutput(t *testing.T) {
	m, _ := verifyFixture(t, kafkagen.Options{Seed: 3, Segments: 4, Batches: 80})
	damageDemo(t, m)
	one, _, _ := runKseg(t, nil, "-o", "json", "verify", "-j", "1", m.Dir)
	two, _, _ := runKseg(t, nil, "-o", "json", "verify", "-j", "2", m.Dir)
	if one != two || !strings.Contains(one, `"check":"log.crc"`) {
		t.Errorf("-j 1:\n%s\n-j 2:\n%s", one, two)
	}
}

func TestFindingColumnsMatchJSON(t *testing.T) {
	b, p, o := int64(368), int64(4096), int64(400)
	assertColumnsMatchJSON(t, verify.Finding{Severity: "error", Check: "index.position", File: "d/x.index",
		SegmentBaseOffset: &b, Position: &p, Offset: &o, Message: "m"}.Line(), findingColumns)
	assertColumnsMatchJSON(t, verify.Finding{Severity: "warning", Check: "index.missing", File: "d/x.index", Message: "m"}.Line(), findingColumns)
}

// The contract's finding, summary and recovery_plan lines, field by field
// and in order, made from verify's plain structs.
func TestVerifyJSONLines(t *testing.T) {
	zero, pos := int64(0), int64(61)
	for _, c := range []struct {
		v    any
		want string
	}{
		{verify.Finding{Severity: verify.SeverityError, Check: verify.LogCRC, File: "d/00000000000000000000.log", SegmentBaseOffset: &zero, Position: &pos}.Line(),
			`{"kind":"finding","severity":"error","check":"log.crc","file":"d/00000000000000000000.log","segment_base_offset":0,"position":61,"offset":null,"message":""}`},
		{verify.Summary{Partitions: 1, Segments: 2, Batches: 3, Bytes: 4, Errors: 5, Warnings: 6}.Line("summary"),
			`{"kind":"summary","partitions":1,"segments":2,"batches":3,"bytes":4,"errors":5,"warnings":6,"infos":0}`},
		{recoveryPlanLine(verify.StartupRecovery{Partition: "a-0", Dir: "d/a-0", RecoveryPointSource: "absent", Bytes: 3000,
			Estimate: &verify.RecoveryEstimate{ScanRateBytesPerSecond: 1500, Seconds: 2}}),
			`{"kind":"recovery_plan","partition":"a-0","dir":"d/a-0","clean_shutdown":false,"recovery_point":0,"recovery_point_source":"absent",` +
				`"log_end_offset":0,"segments":[],"segment_count":0,"bytes":3000,"estimate":{"scan_rate_bytes_per_second":1500,"seconds":2}}`},
		{recoveryPlanLine(verify.StartupRecovery{Partition: "a-0", Dir: "d/a-0", RecoveryPoint: 7, RecoveryPointSource: "checkpoint", LogEndOffset: 9,
			Segments: []verify.StartupSegment{{Segment: "00000000000000000005.log", BaseOffset: 5, Bytes: 70, Reason: verify.ReasonRecoveryPoint}}, SegmentCount: 1, Bytes: 70}),
			`{"kind":"recovery_plan","partition":"a-0","dir":"d/a-0","clean_shutdown":false,"recovery_point":7,"recovery_point_source":"checkpoint",` +
				`"log_end_offset":9,"segments":[{"segment":"00000000000000000005.log","base_offset":5,"bytes":70,"reason":"recovery_point"}],"segment_count":1,"bytes":70,"estimate":null}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("json\n got %s\nwant %s", b, c.want)
		}
	}
}

// Info findings: listed only with --verbose, in every format, never
// failing --strict; the summary counts them either way. A freshly
// generated partition (a running broker's: padded active indexes, another
// index spacing than verify assumes) passes --strict.
func TestVerifyInfoFindings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 9, Segments: 2, Batches: 40, IndexIntervalBytes: 300, PreallocatedIndexBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runKseg(t, nil, "-o", "json", "verify", "--strict", dir)
	if code != exitOK || strings.Contains(out, `"kind":"finding"`) {
		t.Fatalf("verify --strict: exit %d, stdout %s, stderr %s", code, out, errOut)
	}
	m := regexp.MustCompile(`"errors":0,"warnings":0,"infos":([0-9]+)\}`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("summary %s: want info findings counted", out)
	}
	out, _, code = runKseg(t, nil, "-o", "json", "verify", "--strict", "--verbose", dir)
	if code != exitOK {
		t.Errorf("verify --strict --verbose: exit %d", code)
	}
	lines := 0
	checks := map[string]bool{}
	for _, l := range jsonLines(t, out) {
		if l["kind"] == "finding" {
			lines++
			checks[l["check"].(string)] = true
			if l["severity"] != "info" {
				t.Errorf("finding %v on a healthy partition", l)
			}
		}
	}
	if fmt.Sprint(lines) != m[1] || !checks["index.stale"] || !checks["index.padding"] || !checks["timeindex.padding"] {
		t.Errorf("%d info lines (%v), summary says %s", lines, checks, m[1])
	}
	out, _, _ = runKseg(t, nil, "verify", "-v", dir)
	if !regexp.MustCompile(`(?m)^info +index\.padding `).MatchString(out) || !strings.Contains(out, ", 0 warnings, "+m[1]+" info") {
		t.Errorf("table:\n%s", out)
	}
	out, errOut, _ = runKseg(t, nil, "-o", "csv", "verify", dir)
	if strings.Count(out, "\n") != 1 || !strings.Contains(errOut, m[1]+" info") {
		t.Errorf("csv without --verbose: stdout %q stderr %q", out, errOut)
	}
}

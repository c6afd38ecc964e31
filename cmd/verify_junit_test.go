package cmd

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// A JUnit report as a CI system reads it (the subset every renderer uses).
type parsedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			ClassName string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failures  []struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, out string) parsedJUnit {
	t.Helper()
	var r parsedJUnit
	dec := xml.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, out)
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			break // io.EOF: only the root was there
		}
		if cd, ok := tok.(xml.CharData); !ok || strings.TrimSpace(string(cd)) != "" {
			t.Fatalf("something after the root element (%T):\n%s", tok, out)
		}
	}
	return r
}

// A clean data dir: one suite per partition, a case per segment and side
// file, no failure, exit 0. A damaged one: a <failure> per error finding
// with its check id, file and byte position, warnings as system-out, exit 1.
func TestVerifyJUnit(t *testing.T) {
	dir := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(dir, "demo-0"), demoShape)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := kafkagen.Generate(filepath.Join(dir, "other-3"), kafkagen.Options{Seed: 2, Segments: 3, Batches: 5})
	if err != nil {
		t.Fatal(err)
	}
	// The cases of a partition: its segments' files (.log, .index,
	// .timeindex), then its side files, snapshots last, in name order.
	wantCases := func(m *kafkagen.Manifest) string {
		var names []string
		for i := range m.Segments {
			s := &m.Segments[i]
			names = append(names, filepath.Base(m.LogPath(s)), filepath.Base(m.IndexPath(s)), filepath.Base(m.TimeIndexPath(s)))
		}
		names = append(names, "leader-epoch-checkpoint", "partition.metadata")
		snaps, _ := filepath.Glob(filepath.Join(m.Dir, "*.snapshot"))
		for _, s := range snaps {
			names = append(names, filepath.Base(s))
		}
		return strings.Join(names, " ")
	}
	if err := os.WriteFile(filepath.Join(dir, "recovery-point-offset-checkpoint"), []byte("0\n1\ndemo 0 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, dir)
	stdout, stderr, code := runIn(t, dir, "-o", "junit", "verify", ".")
	if code != 0 || !strings.HasPrefix(stderr, "kseg: 2 partitions, 5 segments,") {
		t.Fatalf("clean: exit %d, stderr %q", code, stderr)
	}
	r := parseJUnit(t, stdout)
	if r.Failures != 0 || len(r.Suites) != 3 {
		t.Fatalf("clean: %d failures, %d suites:\n%s", r.Failures, len(r.Suites), stdout)
	}
	names := map[string][]string{}
	total := 0
	for _, s := range r.Suites {
		if s.Tests != len(s.Cases) {
			t.Errorf("suite %s: tests=%d, %d cases", s.Name, s.Tests, len(s.Cases))
		}
		total += s.Tests
		for _, c := range s.Cases {
			if c.ClassName != s.Name {
				t.Errorf("case %s: classname %q in suite %q", c.Name, c.ClassName, s.Name)
			}
			names[s.Name] = append(names[s.Name], c.Name)
		}
	}
	if total != r.Tests {
		t.Errorf("tests=%d, cases %d", r.Tests, total)
	}
	// Each file checked has its case.
	for suite, want := range map[string]string{
		".":       "recovery-point-offset-checkpoint",
		"demo-0":  wantCases(m),
		"other-3": wantCases(m3),
	} {
		if got := strings.Join(names[suite], " "); got != want {
			t.Errorf("suite %s: cases %q, want %q", suite, got, want)
		}
	}
	assertTreeUnchanged(t, dir, before)

	damageDemo(t, m)
	before = hashTree(t, dir)
	stdout, _, code = runIn(t, dir, "-o", "junit", "verify", ".")
	if code != exitNegative {
		t.Errorf("damaged: exit %d, want 1", code)
	}
	r = parseJUnit(t, stdout)
	type failure struct{ suite, name, typ string }
	var got []failure
	var out []string
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			for _, f := range c.Failures {
				got = append(got, failure{s.Name, c.Name, f.Type})
				if !strings.HasPrefix(f.Message, f.Type+": ") || !strings.Contains(f.Text, "file: "+filepath.Join("demo-0", "00000000000000000000.")) || !strings.Contains(f.Text, "position: ") {
					t.Errorf("failure %+v: message or detail without check id, file or position", f)
				}
			}
			if c.SystemOut != "" {
				out = append(out, c.Name+": "+c.SystemOut)
			}
		}
	}
	// The .index's finding fails the .index's case, not a second
	// <failure> of the .log's.
	want := []failure{{"demo-0", "00000000000000000000.log", "log.crc"}, {"demo-0", "00000000000000000000.index", "index.size"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("failures %v, want %v", got, want)
	}
	if r.Failures != 2 {
		t.Errorf("failures=%d, want 2 failing cases", r.Failures)
	}
	assertJUnitCounts(t, r)
	// The missing .timeindex's warning is its own (absent) file's.
	if ti := filepath.Base(m.TimeIndexPath(&m.Segments[1])); len(out) != 1 || !strings.HasPrefix(out[0], ti+": warning timeindex.missing ") {
		t.Errorf("warnings in system-out: %q", out)
	}
	// --strict: the warning fails its case too.
	stdout, _, _ = runIn(t, dir, "-o", "junit", "verify", "--strict", ".")
	if r := parseJUnit(t, stdout); r.Failures != 3 {
		t.Errorf("--strict: %d failing cases, want 3", r.Failures)
	} else {
		assertJUnitCounts(t, r)
	}
	assertTreeUnchanged(t, dir, before)

	// Other commands refuse -o junit.
	if _, stderr, code := runKseg(t, nil, "-o", "junit", "ls", dir); code != 2 || !strings.Contains(stderr, "-o junit is for kseg verify only") {
		t.Errorf("ls -o junit: exit %d, %q", code, stderr)
	}
}

// assertJUnitCounts: every case holds one <failure> at most, a suite's
// tests and failures are its cases and failing cases, and the root's are
// their sums.
func assertJUnitCounts(t *testing.T, r parsedJUnit) {
	t.Helper()
	tests, failures := 0, 0
	for _, s := range r.Suites {
		failing := 0
		for _, c := range s.Cases {
			if len(c.Failures) > 1 {
				t.Errorf("suite %s: case %s has %d <failure> elements", s.Name, c.Name, len(c.Failures))
			}
			if len(c.Failures) > 0 {
				failing++
			}
		}
		if s.Tests != len(s.Cases) || s.Failures != failing {
			t.Errorf("suite %s: tests=%d failures=%d, for %d cases of which %d fail", s.Name, s.Tests, s.Failures, len(s.Cases), failing)
		}
		tests += s.Tests
		failures += s.Failures
	}
	if r.Tests != tests || r.Failures != failures {
		t.Errorf("testsuites: tests=%d failures=%d, the suites add up to %d and %d", r.Tests, r.Failures, tests, failures)
	}
}

// TestVerifyJUnitOneFailurePerFinding: a .log with three batches whose
// CRC fails (three log.crc findings) is three failing test cases, the
// file's own and "#2", "#3" after it, each with one <failure>; the
// counts add up.
func TestVerifyJUnitOneFailurePerFinding(t *testing.T) {
	dir := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(dir, "demo-0"), demoShape)
	if err != nil {
		t.Fatal(err)
	}
	s0 := &m.Segments[0]
	log, err := os.ReadFile(m.LogPath(s0))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{10, 20, 30} {
		log[s0.Batches[b].Position+17] ^= 0x55 // the stored CRC
	}
	if err := os.WriteFile(m.LogPath(s0), log, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := runIn(t, dir, "-o", "junit", "verify", ".")
	if code != exitNegative {
		t.Fatalf("exit %d", code)
	}
	r := parseJUnit(t, stdout)
	assertJUnitCounts(t, r)
	name := filepath.Base(m.LogPath(s0))
	var failing []string
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			for _, f := range c.Failures {
				failing = append(failing, c.Name+" "+f.Type)
			}
		}
	}
	want := []string{name + " log.crc", name + " #2 log.crc", name + " #3 log.crc"}
	if strings.Join(failing, ", ") != strings.Join(want, ", ") || r.Failures != 3 {
		t.Errorf("failing cases %q (failures=%d), want %q", failing, r.Failures, want)
	}
}

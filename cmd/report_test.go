package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// reportAt is "now" for the reports of the tests: after the data
// generated (2023-11-14), so that ages and verdicts are the same on every run.
const reportAt = "--at=2023-11-15T00:00:00Z"

// reportDataDir writes a data directory with something for every section
// of kseg report: orders-0..2 (steady, burst, stop traffic), payments-0
// with transactions and two left open, a __consumer_offsets partition of
// three groups' commits, and a KRaft metadata log. damaged adds what a
// postmortem finds: a flipped byte in orders-0's first segment (a CRC
// error), orders-1's last segment cut inside a batch, payments-0's first
// time index gone.
func reportDataDir(t testing.TB, dir string, damaged bool) string {
	t.Helper()
	gen := func(name string, o kafkagen.Options) *kafkagen.Manifest {
		o.DataDirCheckpoints = true
		m, err := kafkagen.Generate(filepath.Join(dir, name), o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	o0 := gen("orders-0", kafkagen.Options{Seed: 1, Topic: "orders", Segments: 3, Batches: 60, Compression: "lz4", Traffic: "stop"})
	o1 := gen("orders-1", kafkagen.Options{Seed: 2, Topic: "orders", Partition: 1, Segments: 2, Batches: 80, Traffic: "burst"})
	gen("orders-2", kafkagen.Options{Seed: 3, Topic: "orders", Partition: 2, Segments: 2, Batches: 90, Traffic: "steady"})
	p0 := gen("payments-0", kafkagen.Options{Seed: 4, Topic: "payments", Segments: 2, Batches: 50, Transactions: true, OpenTransactions: 2, Traffic: "steady"})
	gen("__consumer_offsets-0", kafkagen.Options{Seed: 5, Topic: "__consumer_offsets", Batches: 60, ConsumerOffsets: true, Traffic: "steady"})
	if _, err := kafkagen.GenerateMetadata(filepath.Join(dir, "__cluster_metadata-0"), kafkagen.MetadataOptions{Seed: 6, Changes: 60}); err != nil {
		t.Fatal(err)
	}
	if !damaged {
		return dir
	}
	seg := &o0.Segments[0]
	f, err := os.OpenFile(o0.LogPath(seg), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	pos := seg.Batches[len(seg.Batches)/2].Position + 70 // inside a batch's records
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
	f.Close()
	last := &o1.Segments[len(o1.Segments)-1]
	if err := os.Truncate(o1.LogPath(last), last.LogSize-30); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p0.TimeIndexPath(&p0.Segments[0])); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The page embeds exactly the lines -o json prints (parsed, they are the
// same values), and kseg report writes it whole through a temporary file.
func TestReportPageEmbedsTheJSONLines(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), true)
	all, byKind := reportLines(t, reportAt, dir)
	file := writeReport(t, reportAt, dir)
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script id="kseg-data" type="application/json">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no data element in the page")
	}
	var embedded []map[string]any
	if err := json.Unmarshal(m[1], &embedded); err != nil {
		t.Fatal(err)
	}
	// The header's generated time differs between the two runs.
	embedded[0]["generated"], all[0]["generated"] = nil, nil
	if len(embedded) != len(all) {
		t.Fatalf("the page holds %d lines, -o json %d", len(embedded), len(all))
	}
	for i := range all {
		a, _ := json.Marshal(embedded[i])
		b, _ := json.Marshal(all[i])
		if !bytes.Equal(a, b) {
			t.Errorf("line %d of the page's data differs from -o json's:\n%s\n%s", i, a, b)
		}
	}
	// Every section is there, the findings first (verify found errors).
	var ids []string
	for _, s := range byKind["section"] {
		ids = append(ids, s["id"].(string))
	}
	if got := strings.Join(ids, " "); got != "findings partitions traffic groups transactions retention cleaner metadata" {
		t.Errorf("sections %s", got)
	}
	for _, kind := range []string{"partition", "finding", "traffic", "group_offset", "open_transaction", "retention", "metadata_partition"} {
		if len(byKind[kind]) == 0 {
			t.Errorf("no %s line", kind)
		}
	}
	if n := len(byKind["partition"]); n != 6 {
		t.Errorf("%d partitions, want 6", n)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*tmp*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// The counts and verdicts of the report are those of the commands it
// names: verify's summary, ls's statuses, groups' lags, txns' open
// transactions.
func TestReportAgreesWithTheCommands(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), true)
	_, byKind := reportLines(t, reportAt, dir)
	out, _, _ := runKseg(t, nil, "-o", "json", "verify", "--verbose", dir)
	var findings int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, `"kind":"finding"`) {
			findings++
		}
	}
	if findings != len(byKind["finding"]) || findings == 0 {
		t.Errorf("verify --verbose: %d findings, report %d", findings, len(byKind["finding"]))
	}
	out, _, _ = runKseg(t, nil, "-o", "json", "ls", dir)
	status := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err == nil && m["dir"] != nil {
			status[m["dir"].(string)] = m["status"].(string)
		}
	}
	for _, p := range byKind["partition"] {
		if status[p["dir"].(string)] != p["status"] {
			t.Errorf("%s: status %v, ls says %q", p["dir"], p["status"], status[p["dir"].(string)])
		}
	}
	out, _, _ = runKseg(t, nil, "-o", "json", "groups", reportAt, dir)
	var lags []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err == nil && m["kind"] == "group_offset" {
			lags = append(lags, jsonText(m["group"], m["topic"], m["partition"], m["offset"], m["lag"]))
		}
	}
	var got []string
	for _, g := range byKind["group_offset"] {
		got = append(got, jsonText(g["group"], g["topic"], g["partition"], g["offset"], g["lag"]))
	}
	if strings.Join(got, "\n") != strings.Join(lags, "\n") || len(got) == 0 {
		t.Errorf("group offsets:\n%s\ngroups says:\n%s", strings.Join(got, "\n"), strings.Join(lags, "\n"))
	}
	out, _, _ = runKseg(t, nil, "-o", "json", "txns", reportAt, dir)
	if n := strings.Count(out, `"kind":"open_transaction"`); n != len(byKind["open_transaction"]) || n != 2 {
		t.Errorf("txns: %d open transactions, report %d (want 2)", n, len(byKind["open_transaction"]))
	}
}

func jsonText(vs ...any) string {
	b, _ := json.Marshal(vs)
	return string(b)
}

// Without --html a table run is a usage error; -o json alone is fine.
func TestReportUsage(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), false)
	if _, stderr, code := runKseg(t, nil, "report", dir); code != 2 || !strings.Contains(stderr, "--html FILE") {
		t.Errorf("no --html: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runKseg(t, nil, "report", "--html", filepath.Join(dir, "no-such-dir", "r.html"), dir); code != 2 || !strings.Contains(stderr, "r.html") {
		t.Errorf("unwritable: exit %d, %q", code, stderr)
	}
}

// Each section's command reproduces it: run as shown (with --at and the
// topic configuration's flags given to the report), txns, retention and
// cleaner print the same partitions with the same verdicts.
func TestReportSectionCommandsReproduce(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), false)
	flags := []string{reportAt, "--config", "cleanup.policy=compact", "--config", "retention.ms=3600000"}
	_, byKind := reportLines(t, append(flags, dir)...)
	commands := map[string]string{}
	for _, s := range byKind["section"] {
		commands[s["id"].(string)] = s["command"].(string)
	}
	for _, c := range []struct {
		section, kind, lineKind string // the report's section and lines, the command's lines
		fields                  []string
	}{
		{"transactions", "open_transaction", "open_transaction", []string{"partition_dir", "producer_id", "first_offset", "verdict"}},
		{"retention", "retention", "partition", []string{"partition_dir", "segments", "deletable", "bytes_freed", "config/cleanup.policy", "config/retention.ms"}},
		{"cleaner", "compaction", "compaction", []string{"partition_dir", "first_dirty_offset", "would_clean", "why_not"}},
	} {
		args := strings.Fields(commands[c.section])
		if len(args) < 2 || args[0] != "kseg" {
			t.Fatalf("%s: command %q", c.section, commands[c.section])
		}
		out, stderr, code := runKseg(t, nil, append([]string{"-o", "json"}, args[1:]...)...)
		if code > 1 {
			t.Fatalf("%s: exit %d: %s", commands[c.section], code, stderr)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err == nil && m["kind"] == c.lineKind {
				want = append(want, fieldsText(m, c.fields))
			}
		}
		var got []string
		for _, m := range byKind[c.kind] {
			got = append(got, fieldsText(m, c.fields))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) == 0 {
			t.Errorf("%s: the report's lines\n%s\n%s prints\n%s", c.section, strings.Join(got, "\n"), commands[c.section], strings.Join(want, "\n"))
		}
	}
}

// fieldsText is the named fields of a JSON line, as JSON; "a/b" is field
// b of object a, as text (retention prints its settings as strings, the
// report as numbers).
func fieldsText(m map[string]any, fields []string) string {
	vs := make([]any, len(fields))
	for i, f := range fields {
		if obj, key, ok := strings.Cut(f, "/"); ok {
			inner, _ := m[obj].(map[string]any)
			if n, ok := inner[key].(float64); ok {
				vs[i] = strconv.FormatFloat(n, 'f', -1, 64)
			} else {
				vs[i] = fmt.Sprint(inner[key])
			}
			continue
		}
		vs[i] = m[f]
	}
	return jsonText(vs...)
}

// The page and the chart a user asks for are files like any other: a new
// one gets the mode os.Create gives (0666 less the umask), not a temporary
// file's 0600, and one replaced keeps its mode.
func TestWrittenFilesMode(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), false)
	out := t.TempDir()
	probe, err := os.Create(filepath.Join(out, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()
	pfi, err := os.Stat(probe.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"r.html", []string{"report", reportAt, "--html"}},
		{"t.svg", []string{"timeline", "--svg"}},
	} {
		path := filepath.Join(out, tc.file)
		mode := func() os.FileMode {
			t.Helper()
			if _, stderr, code := runKseg(t, nil, append(append(tc.args, path), dir)...); code != 0 {
				t.Fatalf("%s: exit %d: %s", tc.args[0], code, stderr)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			return fi.Mode().Perm()
		}
		if m := mode(); m != pfi.Mode().Perm() {
			t.Errorf("%s: a new file has mode %v, os.Create gives %v", tc.args[0], m, pfi.Mode().Perm())
		}
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if m := mode(); m != 0o600 {
			t.Errorf("%s: a replaced 0600 file has mode %v", tc.args[0], m)
		}
	}
}

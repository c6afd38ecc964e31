package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// fixNow sets the clock relative times count from, for one test.
func fixNow(t *testing.T, at time.Time) {
	t.Helper()
	old := now
	now = func() time.Time { return at }
	t.Cleanup(func() { now = old })
}

func TestParseTimestamp(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	fixNow(t, at)
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1700000000000", 1700000000000},
		{"0", 0},
		{"earliest", inspect.TimestampEarliest},
		{"LATEST", inspect.TimestampLatest},
		{"max", inspect.TimestampMax},
		{"2023-11-14T22:13:20Z", 1700000000000},
		{"2023-11-14T22:13:20.123Z", 1700000000123},
		{"2023-11-14T23:13:20+01:00", 1700000000000},
		{"2023-11-14", ms(time.Date(2023, 11, 14, 0, 0, 0, 0, time.UTC))},
		{"2023-11-14T22:13", ms(time.Date(2023, 11, 14, 22, 13, 0, 0, time.UTC))},
		{"2023-11-14 22:13:20", 1700000000000},
		{"2023-11-14T22:13:20.5", 1700000000500},
		{"now", ms(at)},
		{"NOW", ms(at)},
		{"-1h", ms(at.Add(-time.Hour))},
		{"now-1h", ms(at.Add(-time.Hour))},
		{"-90m", ms(at.Add(-90 * time.Minute))},
		{"-1h30m", ms(at.Add(-90 * time.Minute))},
		{"-2d", ms(at.Add(-48 * time.Hour))},
		{"-1w", ms(at.Add(-7 * 24 * time.Hour))},
		{"-1500ms", ms(at.Add(-1500 * time.Millisecond))},
		{"-10s", ms(at.Add(-10 * time.Second))},
	} {
		got, err := parseTimestamp(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseTimestamp(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-1", "-1x", "1h", "now+1h", "-h", "2023-13-01", "1969-12-31", "-60y", "-999999999999w", "--1h", "now-"} {
		if got, err := parseTimestamp(bad); err == nil {
			t.Errorf("parseTimestamp(%q) = %d, want an error", bad, got)
		} else if !isUsageError(err) {
			t.Errorf("parseTimestamp(%q): %v is not a usage error", bad, err)
		}
	}
}

func TestHumanTime(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{1700000000000, "2023-11-14T22:13:20.000Z"},
		{1700000000270, "2023-11-14T22:13:20.270Z"},
		{0, "1970-01-01T00:00:00.000Z"},
		{-1, ""},
		{maxHumanMillis - 1, "9999-12-31T23:59:59.999Z"},
		{maxHumanMillis, ""},
		{1<<63 - 1, ""},
	} {
		if got := humanTime(tc.ms); got != tc.want {
			t.Errorf("humanTime(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

// Timestamps carry their UTC time in tables only: CSV and JSON keep the
// number alone, under the JSON field name.
func TestTimestampColumnIsTableOnlyAid(t *testing.T) {
	type row struct {
		TS  int64  `json:"timestamp"`
		Opt *int64 `json:"max_timestamp"`
	}
	cols := []column[row]{
		timestampColumn("timestamp", func(r row) int64 { return r.TS }),
		nullableIntColumn("max_timestamp", func(r row) *int64 { return r.Opt }),
	}
	rows := []row{{1700000000270, int64Ptr(-1)}, {-1, nil}}
	render := func(f OutputFormat) string {
		ios, _, out, _ := Test()
		ios.SetFormat(f)
		l := newLister(ios, cols)
		for _, r := range rows {
			l.Add(r)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	wantTable := "" +
		"                               timestamp  max_timestamp\n" +
		"1700000000270 (2023-11-14T22:13:20.270Z)             -1\n" +
		"                                      -1\n"
	if got := render(FormatTable); got != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", got, wantTable)
	}
	if got, want := render(FormatCSV), "timestamp,max_timestamp\n1700000000270,-1\n-1,\n"; got != want {
		t.Errorf("csv:\n%s\nwant:\n%s", got, want)
	}
	if got, want := render(FormatJSON), "{\"timestamp\":1700000000270,\"max_timestamp\":-1}\n{\"timestamp\":-1,\"max_timestamp\":null}\n"; got != want {
		t.Errorf("json:\n%s\nwant:\n%s", got, want)
	}
	assertColumnsMatchJSON(t, rows[0], cols)
}

// "kseg lookup-time PATH -1h" works without "--", and means an hour before
// now; other commands' arguments are left alone.
func TestLookupTimeRelativeArgument(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "demo-0")
	if _, err := kafkagen.Generate(part, kafkagen.Options{Seed: 3, Batches: 50}); err != nil {
		t.Fatal(err)
	}
	// An hour after the first 100 ms of the generated data.
	fixNow(t, time.UnixMilli(kafkagen.DefaultStartTimestamp+100).Add(time.Hour))
	want, _, code := runKseg(t, nil, "-o", "json", "lookup-time", part, "now-1h")
	if code != 0 {
		t.Fatalf("now-1h: exit %d", code)
	}
	var v struct {
		TargetTimestamp int64 `json:"target_timestamp"`
	}
	if err := json.Unmarshal([]byte(want), &v); err != nil || v.TargetTimestamp != kafkagen.DefaultStartTimestamp+100 {
		t.Fatalf("now-1h: target %d (%v), want %d", v.TargetTimestamp, err, kafkagen.DefaultStartTimestamp+100)
	}
	for _, args := range [][]string{
		{"-o", "json", "lookup-time", part, "-1h"},
		{"-o", "json", "lookup-time", "--trace=false", part, "-60m"},
		{"lookup-time", "-o", "json", part, "-1h"},
		{"-o", "json", "lookup-time", part, "--", "-1h"},
	} {
		got, stderr, code := runKseg(t, nil, args...)
		if code != 0 || got != want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", args, code, got, stderr, want)
		}
	}
	// Not lookup-time: the flag parser's complaint stands.
	_, stderr, code := runKseg(t, nil, "dump-log", part, "-1h")
	if code != 2 || !strings.Contains(stderr, "unknown shorthand flag: '1' in -1h") {
		t.Errorf("dump-log PATH -1h: exit %d, stderr %q", code, stderr)
	}
}

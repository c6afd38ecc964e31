package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
)

func TestHumanNumbers(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		size string
		cnt  string
	}{
		{0, "0 B", "0"},
		{1023, "1023 B", "1,023"},
		{1024, "1.0 KiB", "1,024"},
		{3460300, "3.3 MiB", "3,460,300"},
		{6293668000, "5.9 GiB", "6,293,668,000"},
		{-1234567, "-1.2 MiB", "-1,234,567"},
		{1 << 62, "4096.0 PiB", "4,611,686,018,427,387,904"},
	} {
		if got := humanSize(tc.n); got != tc.size {
			t.Errorf("humanSize(%d) = %q, want %q", tc.n, got, tc.size)
		}
		if got := groupCount(tc.n); got != tc.cnt {
			t.Errorf("groupCount(%d) = %q, want %q", tc.n, got, tc.cnt)
		}
	}
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond: "850ms", 4200 * time.Millisecond: "4.2s", time.Minute: "1m",
		190 * time.Second: "3m10s", 5*time.Hour + 2*time.Minute: "5h2m", 76 * time.Hour: "3d4h",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
	ios, _, _, _ := Test()
	ios.SetNow(func() time.Time { return time.UnixMilli(1700000000000 + 2*3600*1000 + 5) })
	if got := ios.ago(1700000000000); got != "2h ago" {
		t.Errorf("ago = %q", got)
	}
	if got := ios.timeText(-1); got != "-" {
		t.Errorf("timeText(-1) = %q", got)
	}
	if got := countOf(int64(1234), "batch"); got != "1,234 batches" {
		t.Errorf("countOf = %q", got)
	}
	if got := countOf(1, "partition"); got != "1 partition" {
		t.Errorf("countOf = %q", got)
	}
}

// Wrapped text keeps every character but the blanks it breaks at, and no
// line is wider than asked (a word wider than the line is broken).
func TestWrapAndElide(t *testing.T) {
	text := "stored CRC 219818816 does not match the computed 1478110016 (CRC-32C over 520 bytes): missing-index,bad-index,leftover-files 2023-11-14T22:13:20Z averyveryverylongwordthatmustbebroken"
	for w := 1; w <= 60; w++ {
		lines := wrapText(text, w)
		for _, l := range lines {
			if displayWidth(l) > w {
				t.Fatalf("width %d: line %q", w, l)
			}
		}
		if strings.ReplaceAll(strings.Join(lines, ""), " ", "") != strings.ReplaceAll(text, " ", "") {
			t.Fatalf("width %d: text lost: %q", w, lines)
		}
		if w >= 21 && !strings.Contains(strings.Join(lines, "\n"), "2023-11-14T22:13:20Z") {
			t.Errorf("width %d: a date was broken at a hyphen: %q", w, lines)
		}
	}
	for w := 3; w <= 30; w++ {
		got := elideMiddle("__consumer_offsets-13", w)
		if displayWidth(got) > w || !strings.Contains(got, "…") {
			t.Errorf("elideMiddle(%d) = %q", w, got)
		}
	}
	if got := elideMiddle("__consumer_offsets-13", 12); got != "__con…ets-13" {
		t.Errorf("elideMiddle = %q", got)
	}
}

func TestAutoBucket(t *testing.T) {
	for span, want := range map[int64]int64{
		0: 1000, 59_000: 1000, 61_000: 1000, 350_000: 6000, 3_540_000: 59_000, 3_600_000: 60_000, 3_700_000: 60_000,
		10_000_000: 3 * 60_000, 86_400_000: 24 * 60_000, 30 * 86_400_000: 12 * 3_600_000, 365 * 86_400_000: 146 * 3_600_000,
	} {
		if got := inspect.AutoBucket(span, timelineBuckets); got != want {
			t.Errorf("AutoBucket(%d) = %d, want %d", span, got, want)
		}
		// About 60: rounding to the unit keeps the count within
		// [40, 90] once the span covers 60 seconds.
		if n := span / inspect.AutoBucket(span, timelineBuckets); span >= 60_000 && (n < 40 || n > 90) {
			t.Errorf("AutoBucket(%d): %d buckets", span, n)
		}
	}
}

// --local shows table times in the local zone, with its offset; JSON
// keeps the number.
func TestLocalTimes(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("test", 2*3600)
	t.Cleanup(func() { time.Local = saved })
	dir := lsDataDir(t)
	wide, _, _ := runIn(t, dir, "--local", "-o", "wide", "ls", ".")
	if !strings.Contains(wide, "2023-11-15T00:13:20.005+02:00") || strings.Contains(wide, "22:13:20.005Z") {
		t.Errorf("-o wide --local:\n%s", wide)
	}
	def, _, _ := runIn(t, dir, "--local", "ls", ".")
	if !strings.Contains(def, "2023-11-15T00:13:21+02:00") {
		t.Errorf("--local:\n%s", def)
	}
	lookup, _, _ := runIn(t, dir, "--local", "lookup", "orders-0", "5")
	if !strings.Contains(lookup, "(2023-11-15T00:13:20.") || !strings.Contains(lookup, "+02:00)") {
		t.Errorf("lookup --local:\n%s", lookup)
	}
	// timeline --svg writes its times as the tables do (it wrote UTC).
	svg := filepath.Join(t.TempDir(), "t.svg")
	if _, stderr, code := runIn(t, dir, "--local", "timeline", "--svg", svg, "orders-0"); code != 0 {
		t.Fatalf("timeline --svg --local: %s", stderr)
	}
	if b, _ := os.ReadFile(svg); !strings.Contains(string(b), "+02:00</text>") || strings.Contains(string(b), "Z</text>") || strings.Contains(string(b), "Z: ") {
		t.Errorf("timeline --svg --local:\n%s", b)
	}
	utc, _, _ := runIn(t, dir, "-o", "json", "--local", "ls", ".")
	plain, _, _ := runIn(t, dir, "-o", "json", "ls", ".")
	if utc != plain {
		t.Errorf("--local changed the JSON")
	}
}

package cmd

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// bigPartition generates a partition of about 14 MiB, several progress
// steps long, and returns its directory.
func bigPartition(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "big-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 11, Segments: 3, Batches: 120, RecordsPerBatch: 3, ValueSize: 20000}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// barFrame matches a drawn frame of the bar: the description, a percentage
// and the byte counts. (The first frame, at 0%, is drawn when the bar is
// created; later ones at most every 100 ms.)
var barFrame = regexp.MustCompile(`(verify|rebuild|dump-log|ls --deep)( [^ ]+)? +\d+% \[[^\]]*\] \( ?\d+(\.\d+)? (B|KiB|MiB)/\d+(\.\d+)? MiB`)

// The bar is drawn on stderr when stderr is a terminal, never on stdout;
// -q, a non-terminal stderr, and output streamed to the same terminal draw
// none, and stdout is the same in every case.
func TestProgressBarOnlyOnTerminalStderr(t *testing.T) {
	dir := bigPartition(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"verify", []string{"verify", dir}},
		{"rebuild", []string{"rebuild", "--dry-run", dir}},
		{"dump-log", []string{"dump-log", dir}},
		{"ls --deep", []string{"ls", "--deep", dir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A ticking clock: verify's summary says how long it took.
			plainOut, plainErr, code := runKseg(t, func(ios *IOStreams) { ios.SetNow(tickingClock(time.Second)) }, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, plainErr)
			}
			if plainErr != "" {
				t.Errorf("stderr not a terminal: %q, want nothing", plainErr)
			}
			out, errOut, code := runKseg(t, func(ios *IOStreams) { ios.SetStderrTTY(true); ios.SetNow(tickingClock(time.Second)) }, tc.args...)
			if code != 0 || out != plainOut {
				t.Errorf("stderr on a terminal: exit %d, stdout differs: %v", code, out != plainOut)
			}
			if !barFrame.MatchString(errOut) {
				t.Errorf("stderr on a terminal: no progress bar in %q", errOut)
			}
			if tc.name == "ls --deep" && !strings.Contains(errOut, "ls --deep big-0 ") {
				t.Errorf("the bar does not name the partition: %q", errOut)
			}
			if strings.Contains(out, "%") || strings.Contains(out, "\r") {
				t.Errorf("the bar reached stdout")
			}
			// Cleared at the end: the last thing on the line is blanks.
			if i := strings.LastIndex(errOut, "\r"); i < 0 || strings.TrimSpace(errOut[i:]) != "" {
				t.Errorf("the bar is not cleared at the end: %q", errOut[max(0, len(errOut)-120):])
			}

			for _, c := range []struct {
				stdoutTTY bool
				flags     []string
			}{
				{false, []string{"-q"}},
				{true, []string{"-o", "json"}},
				{true, []string{"-o", "csv"}},
			} {
				_, errOut, code := runKseg(t, func(ios *IOStreams) { ios.SetStderrTTY(true); ios.SetStdoutTTY(c.stdoutTTY) }, append(c.flags, tc.args...)...)
				if code != 0 || strings.Contains(errOut, "\r") || barFrame.MatchString(errOut) {
					t.Errorf("%v (stdout a terminal: %v): exit %d, stderr %q, want no bar", c.flags, c.stdoutTTY, code, errOut)
				}
			}
			// JSON to a file or pipe while stderr is a terminal: the bar.
			_, errOut, _ = runKseg(t, func(ios *IOStreams) { ios.SetStderrTTY(true) }, append([]string{"-o", "json"}, tc.args...)...)
			if !barFrame.MatchString(errOut) {
				t.Errorf("-o json into a pipe: no progress bar on the terminal stderr")
			}
		})
	}
}

// A warning during the work is written on a line of its own, not after a
// half-drawn bar.
func TestWarningClearsBar(t *testing.T) {
	ios, _, _, errOut := Test()
	ios.SetStderrTTY(true)
	bar := ios.progress("verify")
	bar.update(1<<20, 10<<20)
	before := errOut.Len()
	if !barFrame.MatchString(errOut.String()) {
		t.Fatalf("no bar drawn: %q", errOut.String())
	}
	ios.Warnf("something")
	got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(errOut.String()[before:], "")
	if !regexp.MustCompile(`^\r +\rkseg: warning: something\n$`).MatchString(got) {
		t.Errorf("warning written as %q, want the bar cleared first", got)
	}
	bar.done()
	n := errOut.Len()
	bar.update(5<<20, 10<<20)
	if errOut.Len() != n {
		t.Errorf("an update after done drew %q", errOut.String()[n:])
	}
	var none *progressBar
	none.update(1, 2)
	none.clear()
	none.done()
	if none.callback() != nil {
		t.Error("a nil bar's callback is not nil")
	}
}

// Work done in one step (a small partition) draws nothing.
func TestProgressBarSmallWorkDrawsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small-0")
	if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Batches: 20}); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runKseg(t, func(ios *IOStreams) { ios.SetStderrTTY(true) }, "verify", dir)
	if code != 0 || errOut != "" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

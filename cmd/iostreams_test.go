package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// tempFile is a stream that is not a terminal and can be read back.
func tempFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestColorDecision(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		env                  map[string]string
		stdoutTTY, stderrTTY bool
		noColorFlag          bool
		wantOut, wantErr     bool
	}{
		{"both terminals", map[string]string{"TERM": "xterm"}, true, true, false, true, true},
		{"stdout piped", map[string]string{"TERM": "xterm"}, false, true, false, false, true},
		{"stderr redirected", map[string]string{"TERM": "xterm"}, true, false, false, true, false},
		{"neither", nil, false, false, false, false, false},
		{"--no-color", map[string]string{"TERM": "xterm"}, true, true, true, false, false},
		{"NO_COLOR=1", map[string]string{"NO_COLOR": "1"}, true, true, false, false, false},
		{"NO_COLOR empty counts as unset", map[string]string{"NO_COLOR": ""}, true, true, false, true, true},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, true, true, false, false, false},
		{"TERM unset", nil, true, true, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios := newSystem(os.Stdin, tempFile(t, "out"), tempFile(t, "err"), fakeEnv(tc.env))
			ios.SetStdoutTTY(tc.stdoutTTY)
			ios.SetStderrTTY(tc.stderrTTY)
			ios.SetNoColor(tc.noColorFlag)
			if got := ios.ColorEnabled(); got != tc.wantOut {
				t.Errorf("ColorEnabled = %v, want %v", got, tc.wantOut)
			}
			if got := ios.ErrColorEnabled(); got != tc.wantErr {
				t.Errorf("ErrColorEnabled = %v, want %v", got, tc.wantErr)
			}
			// The fatih/color objects follow the same decisions, whatever
			// that package guessed at start-up.
			if got := ios.outColor(31).Sprint("x") != "x"; got != tc.wantOut {
				t.Errorf("outColor colours = %v, want %v", got, tc.wantOut)
			}
			if got := ios.errColor(31).Sprint("x") != "x"; got != tc.wantErr {
				t.Errorf("errColor colours = %v, want %v", got, tc.wantErr)
			}
		})
	}
}

func TestProgressEnabled(t *testing.T) {
	for _, tc := range []struct {
		stdoutTTY, stderrTTY, quiet, want bool
	}{
		{false, true, false, true}, // stdout piped to jq, progress on the terminal
		{true, true, false, true},
		{true, true, true, false}, // -q
		{true, false, false, false},
		{false, false, false, false},
	} {
		ios, _, _, _ := Test()
		ios.SetStdoutTTY(tc.stdoutTTY)
		ios.SetStderrTTY(tc.stderrTTY)
		ios.SetQuiet(tc.quiet)
		if got := ios.ProgressEnabled(); got != tc.want {
			t.Errorf("%+v: ProgressEnabled = %v", tc, got)
		}
	}
}

func TestSystemFilesAreNotTerminals(t *testing.T) {
	ios := newSystem(os.Stdin, tempFile(t, "out"), tempFile(t, "err"), fakeEnv(nil))
	if ios.IsStdoutTTY() || ios.IsStderrTTY() {
		t.Errorf("regular files detected as terminals: stdout %v, stderr %v", ios.IsStdoutTTY(), ios.IsStderrTTY())
	}
	if ios.Format() != FormatTable || ios.Quiet() {
		t.Errorf("defaults: format %q, quiet %v", ios.Format(), ios.Quiet())
	}
}

// Piped stdout is buffered (no system call per JSON line) until Flush.
func TestSystemBuffersStdoutUntilFlush(t *testing.T) {
	out := tempFile(t, "out")
	ios := newSystem(os.Stdin, out, tempFile(t, "err"), fakeEnv(nil))
	if _, err := ios.Out.Write([]byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := out.Stat(); fi.Size() != 0 {
		t.Errorf("%d bytes reached the file before Flush", fi.Size())
	}
	if err := ios.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil || string(b) != "{\"a\":1}\n" {
		t.Errorf("after Flush the file holds %q (%v)", b, err)
	}
}

func TestWarnf(t *testing.T) {
	ios, _, out, errOut := Test()
	ios.Warnf("%s: %d zero slots at the end", "00000000000000000000.index", 3)
	if want := "kseg: warning: 00000000000000000000.index: 3 zero slots at the end\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("a warning reached stdout: %q", out.String())
	}

	ios, _, _, errOut = Test()
	ios.SetStderrTTY(true)
	ios.SetQuiet(true) // -q silences progress, not warnings
	ios.Warnf("x")
	if want := "kseg: \x1b[33mwarning\x1b[0m: x\n"; errOut.String() != want {
		t.Errorf("on a terminal: stderr %q, want %q", errOut.String(), want)
	}
	if strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("more than one line: %q", errOut.String())
	}

	ios, _, _, errOut = Test()
	ios.Warnf("%s: padding", "bad\nname\x1b[2J")
	if want := "kseg: warning: bad\\nname\\x1b[2J: padding\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

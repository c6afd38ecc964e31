//go:build linux

package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runOnStreams runs kseg in process over real files (a pseudo-terminal,
// pipes, plain files), as the process's own streams would be.
func runOnStreams(t *testing.T, stdout, stderr *os.File, env map[string]string, args ...string) int {
	t.Helper()
	ios := newSystem(os.Stdin, stdout, stderr, fakeEnv(env))
	ios.SetNow(tickingClock(time.Second)) // the same summary on every run
	return execute(NewRootCommand(ios), ios, args)
}

// readAll drains r in the background (a terminal's buffer is small) until
// the returned function is called after the writing side is closed.
func readAll(r io.Reader) func() []byte {
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&buf, r) // ends with EIO (terminal) or EOF (pipe)
		close(done)
	}()
	return func() []byte { <-done; return buf.Bytes() }
}

// The progress bar appears on a real terminal, and not in a pipe.
func TestProgressBarOnTerminalNotInPipe(t *testing.T) {
	dir := bigPartition(t)
	ptmx, tty := openPTY(t)
	env := map[string]string{"TERM": "xterm"}

	read := readAll(ptmx)
	out := tempFile(t, "out")
	if code := runOnStreams(t, out, tty, env, "verify", dir); code != 0 {
		t.Fatalf("verify: exit %d", code)
	}
	tty.Close()
	onTerminal := read()
	if !barFrame.Match(onTerminal) {
		t.Errorf("stderr on a terminal: no progress bar in %q", onTerminal)
	}
	stdout, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	readPipe := readAll(pr)
	out2 := tempFile(t, "out2")
	if code := runOnStreams(t, out2, pw, env, "verify", dir); code != 0 {
		t.Fatalf("verify into a pipe: exit %d", code)
	}
	pw.Close()
	if inPipe := readPipe(); len(inPipe) != 0 {
		t.Errorf("stderr a pipe: %q, want nothing", inPipe)
	}
	pr.Close()
	stdout2, err := os.ReadFile(out2.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout, stdout2) || len(stdout) == 0 {
		t.Errorf("stdout depends on where stderr goes:\n%s\n%s", stdout, stdout2)
	}
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// Colour reaches a terminal unless NO_COLOR or --no-color say otherwise,
// and never a file or a pipe.
func TestNoColorOnRequestOrOffTerminal(t *testing.T) {
	m, dir := verifyFixture(t, demoShape)
	damageDemo(t, m)
	part := m.Dir
	_ = dir
	run := func(env map[string]string, toTerminal bool, args ...string) []byte {
		t.Helper()
		errFile := tempFile(t, "err")
		if !toTerminal {
			out := tempFile(t, "out")
			runOnStreams(t, out, errFile, env, args...)
			b, err := os.ReadFile(out.Name())
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		ptmx, tty := openPTY(t)
		read := readAll(ptmx)
		runOnStreams(t, tty, errFile, env, args...)
		tty.Close()
		return read()
	}
	term := map[string]string{"TERM": "xterm"}
	for _, args := range [][]string{{"verify", part}, {"ls", part}, {"ls", "--segments", part}} {
		if got := run(term, true, args...); !ansiEscape.Match(got) {
			t.Errorf("%v on a terminal: no colour in %q (the test would prove nothing)", args, got)
		}
		for _, tc := range []struct {
			name     string
			env      map[string]string
			terminal bool
			extra    []string
		}{
			{"NO_COLOR", map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, true, nil},
			{"--no-color", term, true, []string{"--no-color"}},
			{"TERM=dumb", map[string]string{"TERM": "dumb"}, true, nil},
			{"a file", term, false, nil},
		} {
			got := run(tc.env, tc.terminal, append(append([]string{}, tc.extra...), args...)...)
			if len(got) == 0 || bytes.ContainsRune(got, 0x1b) {
				t.Errorf("%v with %s: escape codes in %q", args, tc.name, got)
			}
		}
	}
}

// On a real terminal (its width from the terminal, COLUMNS unset), no line
// of the default ls table is wider than the terminal; a pipe (no terminal,
// no COLUMNS) gets the table unfitted.
func TestLsFitsTheTerminal(t *testing.T) {
	dir := lsDataDir(t)
	for _, width := range []uint16{80, 100, 120} {
		ptmx, tty := openPTY(t)
		if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: width}); err != nil {
			t.Fatalf("setting the terminal's size: %v", err)
		}
		read := readAll(ptmx)
		errFile := tempFile(t, "err")
		var code int
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Chdir(dir)
			code = runOnStreams(t, tty, errFile, map[string]string{"TERM": "xterm"}, "ls", ".")
		})
		tty.Close()
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		// The terminal turns \n into \r\n; colour codes take no room.
		out := ansiEscape.ReplaceAllString(strings.ReplaceAll(string(read()), "\r\n", "\n"), "")
		if !strings.Contains(out, "partition") || !strings.Contains(out, "orders-10") {
			t.Fatalf("%d columns: no table in %q", width, out)
		}
		assertLinesFit(t, fmt.Sprintf("ls on a terminal of %d columns", width), out, int(width))
	}

	out := tempFile(t, "out")
	if code := runOnStreams(t, out, tempFile(t, "err"), nil, "ls", dir); code != 0 {
		t.Fatalf("into a file: exit %d", code)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "missing-index,bad-index,leftover-files") {
		t.Errorf("into a file, the table was fitted:\n%s", b)
	}
}

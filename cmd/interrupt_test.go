//go:build unix

package cmd

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Ctrl-C in the middle of a read-only command: exit 130 at once, one line
// on stderr, no stack trace (SIGTERM: 143).
func TestInterruptStopsReadOnlyCommand(t *testing.T) {
	dir := bigPartition(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		c := exec.Command(ksegExecutable(t), "-o", "json", "dump-log", "--records", dir)
		var errOut strings.Builder
		c.Stderr = &errOut
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// The first line shows the command is at work; the output it
		// has yet to write (megabytes) then fills the pipe, so it is
		// still working when the signal comes.
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		if err := c.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		err = c.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
			t.Errorf("%v: %v, want exit %d", tc.sig, err, tc.code)
		}
		if got := errOut.String(); got != "kseg: interrupted\n" {
			t.Errorf("%v: stderr %q", tc.sig, got)
		}
	}
}

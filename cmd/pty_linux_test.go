//go:build linux

package cmd

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the returned tty is a terminal as
// far as term.IsTerminal can tell.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals on this machine (%v); terminal detection untested here", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// stdout and stderr are detected separately, on real terminal devices.
func TestSystemDetectsEachTerminal(t *testing.T) {
	_, tty := openPTY(t)
	env := fakeEnv(map[string]string{"TERM": "xterm"})

	ios := newSystem(os.Stdin, tty, tempFile(t, "err"), env)
	if !ios.IsStdoutTTY() || ios.IsStderrTTY() {
		t.Errorf("stdout on a terminal, stderr to a file: detected stdout %v, stderr %v", ios.IsStdoutTTY(), ios.IsStderrTTY())
	}
	if !ios.ColorEnabled() || ios.ErrColorEnabled() || ios.ProgressEnabled() {
		t.Errorf("colour out %v, colour err %v, progress %v; want true, false, false", ios.ColorEnabled(), ios.ErrColorEnabled(), ios.ProgressEnabled())
	}
	if ios.Out != tty {
		t.Errorf("stdout on a terminal is buffered; a person would not see lines as they come")
	}

	ios = newSystem(os.Stdin, tempFile(t, "out"), tty, env)
	if ios.IsStdoutTTY() || !ios.IsStderrTTY() {
		t.Errorf("stdout to a file, stderr on a terminal: detected stdout %v, stderr %v", ios.IsStdoutTTY(), ios.IsStderrTTY())
	}
	if ios.ColorEnabled() || !ios.ErrColorEnabled() || !ios.ProgressEnabled() {
		t.Errorf("colour out %v, colour err %v, progress %v; want false, true, true", ios.ColorEnabled(), ios.ErrColorEnabled(), ios.ProgressEnabled())
	}
}

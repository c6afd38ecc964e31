package cmd

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes for a run ended by a signal: 128 + the signal's number, as a
// shell reports a process killed by it.
const (
	exitInterrupted = 128 + int(syscall.SIGINT)  // 130: Ctrl-C
	exitTerminated  = 128 + int(syscall.SIGTERM) // 143
)

// writingCommands handle interruption themselves (they must finish or
// roll back the file being written); the others only read, and stop at
// once.
var writingCommands = map[string]bool{"rebuild": true, "gen": true}

// exitOnInterrupt makes Ctrl-C (SIGINT) or SIGTERM end a read-only
// command at once: the progress bar is cleared, "kseg: interrupted" goes
// to stderr and kseg exits 130 (143 for SIGTERM), with no stack trace and
// nothing more on stdout. Commands that write keep the default handling.
// The returned function stops listening.
func exitOnInterrupt(root *cobra.Command, ios *IOStreams, args []string) (stop func()) {
	if c, _, err := root.Find(args); err == nil && writingCommands[c.Name()] {
		return func() {}
	}
	sigs := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-sigs:
			ios.bar.clear()
			fmt.Fprintln(ios.ErrOut, "kseg: interrupted")
			code := exitInterrupted
			if sig == syscall.SIGTERM {
				code = exitTerminated
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

package cmd

import (
	"context"
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
	return onInterrupt(func(sig syscall.Signal) {
		ios.bar.clear()
		fmt.Fprintln(ios.ErrOut, "kseg: interrupted")
		code := exitInterrupted
		if sig == syscall.SIGTERM {
			code = exitTerminated
		}
		os.Exit(code)
	})
}

// onInterrupt calls fn with the first SIGINT or SIGTERM, after which the
// signals have their default handling again (a second one stops the
// process as usual). stop stops listening. Every command's handling of
// signals goes through it: exitOnInterrupt for those that only read,
// interruptible for those that write.
func onInterrupt(fn func(syscall.Signal)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			sig, _ := s.(syscall.Signal)
			fn(sig)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// interruptedError is a rebuild stopped by SIGINT or SIGTERM: the exit
// code is 128 + the signal's number (130, 143), as a shell reports it.
type interruptedError struct{ sig syscall.Signal }

func (e *interruptedError) Error() string { return "interrupted by " + signalName(e.sig) }

func signalName(s syscall.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// interruptible is a context cancelled, with an *interruptedError as its
// cause, by the first SIGINT or SIGTERM; a second one stops the process
// as usual. stop releases the signals.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := onInterrupt(func(sig syscall.Signal) { cancel(&interruptedError{sig: sig}) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

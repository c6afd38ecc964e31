package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes, as in the contract's "Exit codes (all commands)". Execute
// chooses one of them in exitCode, and nowhere else.
const (
	exitOK       = 0 // success; verify: no error-severity findings
	exitNegative = 1 // the command ran and the answer is negative
	exitFailed   = 2 // could not do the job (bad arguments included)
)

// negativeError is returned by a run function after it has written a
// negative answer (verify found errors, lookup's target is not in the log).
// It exits 1 and prints nothing: the answer on stdout already says why.
type negativeError struct{ reason string }

func (e *negativeError) Error() string { return e.reason }

// errNegative returns the silent exit-1 error; reason is for tests and
// embedders, never printed by Execute.
func errNegative(reason string) error { return &negativeError{reason: reason} }

// usageError says the command line itself was wrong: a bad flag or flag
// value, the wrong number of arguments, an unknown command, an invalid
// combination. It exits 2, and Execute adds a hint naming --help.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf is how a RunE rejects its arguments after cobra has parsed
// them, e.g. usageErrorf("--partitions must be at least 1, not %d", n).
func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// runError marks an error that a command's RunE returned (see
// guardCommands): the command line was fine, the job could not be done.
// Any error that reaches Execute without this mark, and is not one of the
// types above, came from cobra's own checks (unknown command, a required or
// mutually exclusive flag) and is a usage error.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// markRunError wraps an error from a RunE in runError, unless it already
// carries its own meaning (negative answer, usage).
func markRunError(err error) error {
	var neg *negativeError
	var usage *usageError
	if err == nil || errors.As(err, &neg) || errors.As(err, &usage) {
		return err
	}
	return &runError{err: err}
}

// exitCode is the one switch from an error to a process exit code.
func exitCode(err error) int {
	var neg *negativeError
	var sig *interruptedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &neg):
		return exitNegative
	case errors.As(err, &sig):
		return 128 + int(sig.sig)
	default:
		return exitFailed
	}
}

// isUsageError reports whether err is about the command line rather than
// about the job (see runError).
func isUsageError(err error) bool {
	var usage *usageError
	var run *runError
	var neg *negativeError
	if errors.As(err, &usage) {
		return true
	}
	return !errors.As(err, &run) && !errors.As(err, &neg)
}

// reportError writes err on stderr the one way kseg does: "kseg: <error>",
// plus a hint naming --help for usage errors, or a "kseg: hint:" line with
// the next step for a failure (hints.go); nothing for a negative answer.
// failed is the command cobra was running (or had found) when it failed.
func reportError(w io.Writer, failed *cobra.Command, err error) {
	if err == nil || exitCode(err) == exitNegative {
		return
	}
	// cobra's "unknown command" message ends with its suggestions and a
	// newline; keep the text, drop the trailing blank.
	// Escaped: a file name read from disk must not drive the terminal.
	fmt.Fprintf(w, "kseg: %s\n", escapeMessage(strings.TrimRight(err.Error(), "\n")))
	if isUsageError(err) && failed != nil {
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", failed.CommandPath())
		return
	}
	name := ""
	if failed != nil {
		name = failed.Name()
	}
	if hint := nextStep(name, err); hint != "" {
		fmt.Fprintf(w, "kseg: hint: %s\n", escapeControl(hint))
	}
}

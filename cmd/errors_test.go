package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"
)

func TestExitCode(t *testing.T) {
	plain := errors.New("open 00000000000000000000.log: permission denied")
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, exitOK},
		{"negative answer", errNegative("offset 99 is past the log end offset 42"), exitNegative},
		{"wrapped negative answer", fmt.Errorf("lookup: %w", errNegative("not found")), exitNegative},
		{"usage", usageErrorf("OFFSET must be an integer, not %q", "x"), exitFailed},
		{"failure from a run", markRunError(plain), exitFailed},
		{"plain error", plain, exitFailed},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exitCode = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestMarkRunError(t *testing.T) {
	if markRunError(nil) != nil {
		t.Error("markRunError(nil) is not nil")
	}
	neg := errNegative("no")
	if markRunError(neg) != neg {
		t.Error("a negative answer was re-marked")
	}
	usage := usageErrorf("bad")
	if markRunError(usage) != usage {
		t.Error("a usage error was re-marked as a failure")
	}
	plain := errors.New("disk on fire")
	marked := markRunError(plain)
	var run *runError
	if !errors.As(marked, &run) || !errors.Is(marked, plain) || marked.Error() != plain.Error() {
		t.Errorf("markRunError(plain) = %#v", marked)
	}
	if isUsageError(marked) || !isUsageError(usage) || !isUsageError(plain) || isUsageError(neg) {
		t.Error("isUsageError: a marked run error is not about usage; a usage error and an unmarked (cobra) error are")
	}
}

func TestReportError(t *testing.T) {
	root := &cobra.Command{Use: "kseg"}
	sub := &cobra.Command{Use: "lookup", RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(sub)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"success", nil, ""},
		{"negative answer is silent", errNegative("not found"), ""},
		{"failure: message only", markRunError(errors.New("00000000000000000000.log: byte position 12: crc mismatch")),
			"kseg: 00000000000000000000.log: byte position 12: crc mismatch\n"},
		{"usage: message and hint", usageErrorf("OFFSET must be an integer, not \"x\""),
			"kseg: OFFSET must be an integer, not \"x\"\nRun 'kseg lookup --help' for usage.\n"},
		{"cobra's own error counts as usage", errors.New("required flag(s) \"out\" not set"),
			"kseg: required flag(s) \"out\" not set\nRun 'kseg lookup --help' for usage.\n"},
		{"a file name cannot drive the terminal", markRunError(errors.New("open orders-0/\x1b[2Jx.log: no such file")),
			"kseg: open orders-0/\\x1b[2Jx.log: no such file\n"},
		{"trailing newlines dropped", errors.New("unknown command \"x\" for \"kseg\"\n\nDid you mean this?\n\ty\n"),
			"kseg: unknown command \"x\" for \"kseg\"\n\nDid you mean this?\n\ty\nRun 'kseg lookup --help' for usage.\n"},
	} {
		var buf bytes.Buffer
		reportError(&buf, sub, tc.err)
		if buf.String() != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, buf.String(), tc.want)
		}
	}
}

package cmd

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// testRoot is the real root plus a few commands that exercise each way a
// command can end, guarded exactly as NewRootCommand guards its own.
func testRoot(ios *IOStreams) *cobra.Command {
	root := NewRootCommand(ios)
	extra := []*cobra.Command{
		{Use: "ok", RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(ios.Out, "answer")
			return nil
		}},
		{Use: "negative", RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(ios.Out, `{"target_offset":99,"found":false}`)
			return errNegative("offset 99 is past the log end")
		}},
		{Use: "fail", RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(ios.Out, "partial")
			return fmt.Errorf("reading 00000000000000000000.log: %w", errors.New("permission denied"))
		}},
		{Use: "usage", RunE: func(*cobra.Command, []string) error {
			return usageErrorf("OFFSET must be an integer, not %q", "x")
		}},
		{Use: "two A B", Args: cobra.ExactArgs(2), RunE: func(*cobra.Command, []string) error { return nil }},
		{Use: "boom", RunE: func(_ *cobra.Command, args []string) error {
			fmt.Fprintln(ios.Out, "before the panic")
			return errors.New(args[3]) // a bug: there are no arguments
		}},
		{Use: "required", RunE: func(*cobra.Command, []string) error { return nil }},
		{Use: "flags", RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(ios.Out, "format=%s quiet=%v color=%v\n", ios.Format(), ios.Quiet(), ios.ColorEnabled())
			return nil
		}},
	}
	extra[6].Flags().String("out", "", "")
	_ = extra[6].MarkFlagRequired("out")
	for _, c := range extra {
		guardCommands(c)
		root.AddCommand(c)
	}
	return root
}

func runTestRoot(t *testing.T, setup func(*IOStreams), args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ios, _, out, errOut := Test()
	if setup != nil {
		setup(ios)
	}
	code = execute(testRoot(ios), ios, args)
	return out.String(), errOut.String(), code
}

func TestExecute(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string
		stderr     string
		stderrPart string // when the exact text is cobra's
	}{
		{args: []string{"ok"}, code: 0, stdout: "answer\n"},
		{args: []string{"negative"}, code: 1, stdout: "{\"target_offset\":99,\"found\":false}\n"},
		{args: []string{"fail"}, code: 2, stdout: "partial\n",
			stderr: "kseg: reading 00000000000000000000.log: permission denied\n"},
		{args: []string{"usage"}, code: 2,
			stderr: "kseg: OFFSET must be an integer, not \"x\"\nRun 'kseg usage --help' for usage.\n"},
		{args: []string{"two", "a"}, code: 2,
			stderr: "kseg: accepts 2 arg(s), received 1\nRun 'kseg two --help' for usage.\n"},
		{args: []string{"two", "a", "b", "c"}, code: 2,
			stderr: "kseg: accepts 2 arg(s), received 3\nRun 'kseg two --help' for usage.\n"},
		{args: []string{"two", "a", "b"}, code: 0},
		{args: []string{"ok", "stray"}, code: 2,
			stderr: "kseg: unexpected argument \"stray\" (ok takes none)\nRun 'kseg ok --help' for usage.\n"},
		{args: []string{"required"}, code: 2,
			stderr: "kseg: required flag(s) \"out\" not set\nRun 'kseg required --help' for usage.\n"},
		{args: []string{"boom"}, code: 2, stdout: "before the panic\n",
			stderr: "kseg: internal error: runtime error: index out of range [3] with length 0\n"},
		{args: []string{"nosuch"}, code: 2,
			stderr: "kseg: unknown command \"nosuch\" for \"kseg\"\nRun 'kseg --help' for usage.\n"},
		{args: []string{"ok", "--nosuch"}, code: 2,
			stderr: "kseg: unknown flag: --nosuch\nRun 'kseg ok --help' for usage.\n"},
		{args: []string{"--output", "yaml", "ok"}, code: 2,
			stderr: "kseg: invalid argument \"yaml\" for \"-o, --output\" flag: valid values are table, wide, json, csv, junit\nRun 'kseg ok --help' for usage.\n"},
		{args: []string{}, code: 0, stderrPart: ""},
		{args: []string{"ok", "--help"}, code: 0, stderrPart: ""},
	} {
		stdout, stderr, code := runTestRoot(t, nil, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != tc.code {
			t.Errorf("kseg %s: exit %d, want %d (stderr %q)", name, code, tc.code, stderr)
		}
		if tc.stdout != "" && stdout != tc.stdout {
			t.Errorf("kseg %s: stdout %q, want %q", name, stdout, tc.stdout)
		}
		if code != 0 && tc.stdout == "" && stdout != "" {
			t.Errorf("kseg %s: failed but wrote on stdout: %q", name, stdout)
		}
		if stderr != tc.stderr {
			t.Errorf("kseg %s: stderr\n%q\nwant\n%q", name, stderr, tc.stderr)
		}
	}
}

// Help is data the user asked for: stdout, exit 0, nothing on stderr.
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{}, {"--help"}, {"help"}, {"help", "coordinator"}, {"coordinator", "-h"}} {
		stdout, stderr, code := runKseg(t, nil, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage:") {
			t.Errorf("kseg %s: exit %d, stderr %q, stdout %.60q", strings.Join(args, " "), code, stderr, stdout)
		}
	}
}

// nil arguments mean "none", never the test binary's own arguments.
func TestExecuteNilArgs(t *testing.T) {
	ios, _, out, errOut := Test()
	if code := execute(NewRootCommand(ios), ios, nil); code != 0 || errOut.Len() != 0 || !strings.Contains(out.String(), "Usage:") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestVersion(t *testing.T) {
	stdout, stderr, code := runKseg(t, nil, "--version")
	if want := versionText(); stdout != want || stderr != "" || code != 0 {
		t.Errorf("--version: stdout %q (want %q), stderr %q, exit %d", stdout, want, stderr, code)
	}
	// The version line, then the build information as go version -m
	// prints it (cmd/internal/release compares the two on a built binary).
	first, rest, _ := strings.Cut(stdout, "\n")
	if first != "kseg "+versionString() {
		t.Errorf("--version: first line %q, want %q", first, "kseg "+versionString())
	}
	// (A test binary records no dependencies: those are checked there.)
	for _, want := range []string{"\tpath\tgithub.com/kseg/kseg/", "\tmod\tgithub.com/kseg/kseg\t", "\tbuild\tGOOS=" + runtime.GOOS + "\n"} {
		if !strings.Contains(rest, want) {
			t.Errorf("--version: no %q in the build information:\n%s", want, rest)
		}
	}
	if strings.Contains(rest, "\tgo\t") {
		t.Errorf("--version: the Go version repeated in the build information:\n%s", rest)
	}
	old := version
	defer func() { version = old }()
	version = "v1.2.3"
	if got, want := versionString(), "v1.2.3 ("+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")"; got != want {
		t.Errorf("versionString = %q, want %q", got, want)
	}
}

// The global flags land in the streams, before or after the subcommand.
func TestGlobalFlags(t *testing.T) {
	tty := func(ios *IOStreams) { ios.SetStdoutTTY(true) }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"flags"}, "format=table quiet=false color=true\n"},
		{[]string{"-o", "json", "flags"}, "format=json quiet=false color=true\n"},
		{[]string{"flags", "--output=csv", "-q"}, "format=csv quiet=true color=true\n"},
		{[]string{"--quiet", "flags", "--no-color", "-ojson"}, "format=json quiet=true color=false\n"},
	} {
		stdout, stderr, code := runTestRoot(t, tty, tc.args...)
		if stdout != tc.want || stderr != "" || code != 0 {
			t.Errorf("kseg %s: %q, stderr %q, exit %d; want %q", strings.Join(tc.args, " "), stdout, stderr, code, tc.want)
		}
	}
}

// Every command registered in the root, whoever wrote it, exits 2 with the
// hint on an unknown flag and on a stray argument when it takes none,
// without doing any work.
func TestEveryCommandIsGuarded(t *testing.T) {
	ios, _, _, _ := Test()
	var leaves []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.HasSubCommands() && c.Runnable() {
			leaves = append(leaves, c)
		}
	}
	walk(NewRootCommand(ios))
	if len(leaves) == 0 {
		t.Fatal("no commands registered")
	}
	for _, c := range leaves {
		path := strings.Fields(c.CommandPath())[1:]
		if c.Args == nil {
			t.Errorf("%s: Args not guarded", c.CommandPath())
		}
		if c.RunE == nil {
			t.Errorf("%s: uses Run, not RunE; its errors would not reach the exit code", c.CommandPath())
		}
		stdout, stderr, code := runKseg(t, nil, append(path, "--no-such-flag-anywhere")...)
		wantErr := "kseg: unknown flag: --no-such-flag-anywhere\nRun '" + c.CommandPath() + " --help' for usage.\n"
		if code != 2 || stdout != "" || stderr != wantErr {
			t.Errorf("%s --no-such-flag-anywhere: exit %d, stdout %q, stderr %q", c.CommandPath(), code, stdout, stderr)
		}
	}
}

// Binding the global flags starts them from their defaults, so a reused
// IOStreams does not carry the previous run's -o, --no-color or -q.
func TestNewRootCommandResetsGlobalFlags(t *testing.T) {
	ios, _, _, _ := Test()
	ios.SetFormat(FormatJSON)
	ios.SetNoColor(true)
	ios.SetQuiet(true)
	root := NewRootCommand(ios)
	if ios.Format() != FormatTable || ios.noColor || ios.Quiet() {
		t.Errorf("after NewRootCommand: format %q, no-color %v, quiet %v", ios.Format(), ios.noColor, ios.Quiet())
	}
	if got := root.PersistentFlags().Lookup("output").DefValue; got != "table" {
		t.Errorf("-o default shown as %q", got)
	}
}

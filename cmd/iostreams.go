package cmd

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/fatih/color"
	"golang.org/x/term"
)

// IOStreams is the only door to the terminal: every run function writes data
// to Out, and diagnostics, progress and colour decisions go through ErrOut and
// the methods below. Nothing else in kseg touches os.Stdout or os.Stderr.
//
// The root command binds the global flags -o, --no-color and -q straight into
// the unexported fields, so every subcommand sees them through this value
// without a hook of its own.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // data only: table, JSON Lines or CSV
	ErrOut io.Writer // errors, warnings, progress

	// outBuf, when set, buffers Out (stdout is not a terminal); Flush
	// drains it. Execute flushes before it reports an error.
	outBuf *bufio.Writer

	stdoutTTY bool
	stderrTTY bool
	// colorEnv is what the environment allows: NO_COLOR unset or empty
	// (no-color.org) and TERM other than "dumb".
	colorEnv bool
	// columns is the width tables fit (see TerminalWidth): COLUMNS when
	// set to a positive number, else the terminal's width on stdout, else
	// 0 (no limit).
	columns int
	// now is the clock relative times ("2h ago") and rates are read from.
	now func() time.Time

	// Bound to the global flags by NewRootCommand.
	format  OutputFormat // -o, --output
	noColor bool         // --no-color
	quiet   bool         // -q, --quiet
	local   bool         // --local: table times in the local time zone

	// bar is the progress bar being drawn on stderr, if any (progress.go):
	// Warnf clears it before writing.
	bar *progressBar
}

// System returns streams over the process's stdin, stdout and stderr, with
// terminal detection done separately for stdout and stderr.
func System() *IOStreams {
	return newSystem(os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

// newSystem is System over the given files and environment lookup, so tests
// can hand it pipes, a pseudo-terminal or a fake environment.
func newSystem(stdin, stdout, stderr *os.File, getenv func(string) string) *IOStreams {
	s := &IOStreams{
		In:        stdin,
		Out:       stdout,
		ErrOut:    stderr,
		stdoutTTY: term.IsTerminal(int(stdout.Fd())),
		stderrTTY: term.IsTerminal(int(stderr.Fd())),
		colorEnv:  getenv("NO_COLOR") == "" && getenv("TERM") != "dumb",
		format:    FormatTable,
		columns:   terminalColumns(stdout, getenv),
		now:       time.Now,
	}
	if !s.stdoutTTY {
		// A pipe or a file: one write per line would cost a system call
		// per JSON line. A person watching a terminal sees lines at once.
		s.outBuf = bufio.NewWriterSize(stdout, 64<<10)
		s.Out = s.outBuf
	}
	return s
}

// Test returns streams over three buffers (stdin, stdout, stderr). Neither
// stream is a terminal until SetStdoutTTY/SetStderrTTY say so; the
// environment allows colour.
func Test() (ios *IOStreams, stdin, stdout, stderr *bytes.Buffer) {
	stdin, stdout, stderr = new(bytes.Buffer), new(bytes.Buffer), new(bytes.Buffer)
	ios = &IOStreams{
		In:       stdin,
		Out:      stdout,
		ErrOut:   stderr,
		colorEnv: true,
		format:   FormatTable,
		now:      time.Now,
	}
	return ios, stdin, stdout, stderr
}

// terminalColumns is the width tables fit on stdout, as gh and kubectl
// decide it: COLUMNS when it is a positive number (a user's override, also
// for a pipe), else the terminal's width when stdout is one, else 0: no
// limit, so that output piped to a file or another program is never cut.
func terminalColumns(stdout *os.File, getenv func(string) string) int {
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(stdout.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
}

// TerminalWidth is the width default tables fit, or 0 for no limit.
func (s *IOStreams) TerminalWidth() int { return s.columns }

// SetTerminalWidth sets the width tables fit (0: no limit), as COLUMNS
// does (tests).
func (s *IOStreams) SetTerminalWidth(n int) { s.columns = n }

// SetNow sets the clock for relative times and rates (tests).
func (s *IOStreams) SetNow(now func() time.Time) { s.now = now }

// SetLocalTime shows table times in the local time zone, as --local does.
func (s *IOStreams) SetLocalTime(local bool) { s.local = local }

// IsTable reports whether the output is a table for people (-o table or
// -o wide).
func (s *IOStreams) IsTable() bool { return s.format == FormatTable || s.format == FormatWide }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetStdoutTTY overrides terminal detection for stdout (tests).
func (s *IOStreams) SetStdoutTTY(tty bool) { s.stdoutTTY = tty }

// SetStderrTTY overrides terminal detection for stderr (tests).
func (s *IOStreams) SetStderrTTY(tty bool) { s.stderrTTY = tty }

// Format is the output format chosen with -o.
func (s *IOStreams) Format() OutputFormat { return s.format }

// SetFormat sets the output format, as -o does.
func (s *IOStreams) SetFormat(f OutputFormat) { s.format = f }

// SetNoColor turns colour off, as --no-color does.
func (s *IOStreams) SetNoColor(off bool) { s.noColor = off }

// SetQuiet turns progress output off, as -q does.
func (s *IOStreams) SetQuiet(quiet bool) { s.quiet = quiet }

// Quiet reports whether -q was given.
func (s *IOStreams) Quiet() bool { return s.quiet }

// ColorEnabled reports whether stdout may carry ANSI colour: not --no-color,
// NO_COLOR unset or empty, TERM not "dumb", and stdout a terminal.
func (s *IOStreams) ColorEnabled() bool {
	return !s.noColor && s.colorEnv && s.stdoutTTY
}

// ErrColorEnabled is ColorEnabled for stderr, decided on stderr's own
// terminal state (stdout may be piped while stderr is on a terminal).
func (s *IOStreams) ErrColorEnabled() bool {
	return !s.noColor && s.colorEnv && s.stderrTTY
}

// ProgressEnabled reports whether progress may be drawn on stderr: stderr is
// a terminal and -q was not given. Progress never goes to stdout.
func (s *IOStreams) ProgressEnabled() bool {
	return s.stderrTTY && !s.quiet
}

// outColor returns a colour for decorating stdout, switched on or off by
// ColorEnabled. fatih/color's own global detection (made once at start-up,
// and on stdout only) is never consulted.
func (s *IOStreams) outColor(attrs ...color.Attribute) *color.Color {
	return setColor(color.New(attrs...), s.ColorEnabled())
}

// errColor returns a colour for decorating stderr, switched by ErrColorEnabled.
func (s *IOStreams) errColor(attrs ...color.Attribute) *color.Color {
	return setColor(color.New(attrs...), s.ErrColorEnabled())
}

func setColor(c *color.Color, on bool) *color.Color {
	if on {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c
}

// Warnf writes "kseg: warning: <message>" on stderr, on one line (control
// characters escaped). Warnings are not progress: -q does not silence them.
func (s *IOStreams) Warnf(format string, args ...any) {
	s.bar.clear()
	msg := escapeControl(fmt.Sprintf(format, args...))
	fmt.Fprintf(s.ErrOut, "kseg: %s: %s\n", s.errColor(color.FgYellow).Sprint("warning"), msg)
}

// Flush writes out whatever Out still buffers. Execute calls it once the
// command has returned.
func (s *IOStreams) Flush() error {
	if s.outBuf == nil {
		return nil
	}
	return s.outBuf.Flush()
}

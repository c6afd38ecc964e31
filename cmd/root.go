// Package cmd is kseg's command line: one cobra command per file, flags,
// rendering (table, JSON Lines, CSV) and exit codes. The work itself is done
// by the packages below it (verify, rebuild, inspect, indexfmt), which never
// print, read flags or exit.
package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Adding a command. Each subcommand lives in its own file, cmd/<name>.go,
// beside cmd/<name>_test.go, and has four parts named after it:
//
//	type lookupOptions struct { path string; offset int64; trace bool }
//
//	// AddFlags adds the command's flags to f; a flag group several
//	// commands share (encodingOptions, timeWindowOptions,
//	// timestampOption) is a field with AddFlags and Validate of its own.
//	func (o *lookupOptions) AddFlags(f *pflag.FlagSet) {
//		f.BoolVar(&o.trace, "trace", false, "...")
//	}
//
//	// Validate checks the flag values, before anything is opened, and
//	// rejects with usageErrorf("--max must be >= 0, not %d", o.max).
//	func (o *lookupOptions) Validate() error { ... }
//
//	func newLookupCommand(ios *IOStreams) *cobra.Command {
//		var opts lookupOptions
//		c := &cobra.Command{
//			Use:     "lookup PATH OFFSET",
//			Short:   "...",
//			Long:    "... names every output field and the exit codes ...",
//			Example: "  kseg lookup -o json data/orders-0 1234 | jq .batch",
//			Args:    cobra.ExactArgs(2),
//			RunE: func(c *cobra.Command, args []string) error {
//				// Positional arguments are parsed here
//				// (usageErrorf("OFFSET must be ..., not %q", args[1])),
//				// then the flags are validated.
//				opts.path = args[0]
//				...
//				if err := opts.Validate(); err != nil {
//					return err
//				}
//				return runLookup(ios, opts)
//			},
//		}
//		opts.AddFlags(c.Flags())
//		return c
//	}
//
//	func runLookup(ios *IOStreams, opts lookupOptions) error {
//		// call inspect/verify/rebuild, then render with newLister or
//		// printObject; never branch on -o. A negative answer is written
//		// first, then reported with errNegative(reason) (exit 1). The
//		// contract's JSON structs (with their json tags) live here, made
//		// from the plain structs the packages below return.
//	}
//
// then add newLookupCommand(ios) to the list in NewRootCommand. Use RunE,
// never Run. Declare Args (cobra.ExactArgs(n), cobra.MinimumNArgs(1), ...)
// or leave it nil for a command that takes no arguments; every Args failure
// is made a usage error (exit 2) for you. Any other error from RunE exits 2
// with "kseg: <error>"; wrap it with the file and what was being done.

// NewRootCommand builds the kseg command tree over ios. It keeps no state
// outside the returned command and ios, so another program can embed it as
// a subcommand of its own.
// rootLong is kseg's help.
const rootLong = `kseg reads Apache Kafka partition directories offline: it lists segments and
index entries, answers offset and timestamp lookups with the broker's own
algorithms (and shows each step), checks a whole data directory, and rebuilds
broken indexes byte for byte as broker recovery would. Inputs are only read,
except by rebuild.

PATH arguments may be a data directory, a partition directory
(<topic>-<partition>) or a single segment file (.log, .index, .timeindex,
.txnindex).

Output goes to stdout as a table (-o table, for people: the columns an
operator scans, fitted to the terminal's width, taken from COLUMNS, else
the terminal, else no limit; -o wide: every field), JSON Lines (-o json:
one object per line, stable fields) or CSV (-o csv, header row first);
verify also writes JUnit XML (-o junit). Tables show sizes in KiB/MiB,
grouped counts and RFC 3339 times (UTC, or local with --local); JSON and
CSV keep the raw numbers. Errors, warnings and progress go to stderr;
Ctrl-C stops a read-only command at once (exit 130).

Exit codes:
  0  success
  1  the answer is negative (verify found errors; lookup target not in the log)
  2  could not do the job (bad arguments, unreadable path, not a Kafka file)`

func NewRootCommand(ios *IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:     "kseg",
		Short:   "Inspect and repair Kafka partition data on disk, offline",
		Long:    rootLong,
		Version: versionText(),
		// Execute prints errors, once, with a hint for usage errors.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetVersionTemplate("{{.Version}}")
	// Declared here so cobra does not also claim -v.
	root.Flags().Bool("version", false, "print kseg's version")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })

	addGlobalFlags(root, ios)
	root.AddCommand(
		newLsCommand(ios),
		newDumpIndexCommand(ios),
		newLookupCommand(ios),
		newLookupTimeCommand(ios),
		newDumpLogCommand(ios),
		newVerifyCommand(ios),
		newRebuildCommand(ios),
		newGenCommand(ios),
		newCoordinatorCommand(ios),
		newDumpSnapshotCommand(ios),
		newDumpCheckpointCommand(ios),
		newFindCommand(ios),
		newGroupsCommand(ios),
		newDiffCommand(ios),
		newTimelineCommand(ios),
		newMetadataCommand(ios),
		newTxnsCommand(ios),
		newRetentionCommand(ios),
		newCleanerCommand(ios),
		newReportCommand(ios),
	)
	setCompletions(root)
	guardCommands(root)
	return root
}

// addGlobalFlags adds -o, --no-color, -q and --local to root: they write
// straight into ios; like pflag's BoolVar, binding starts each from its
// default.
func addGlobalFlags(root *cobra.Command, ios *IOStreams) {
	ios.format = FormatTable
	pf := root.PersistentFlags()
	pf.VarP(&ios.format, "output", "o", "output format: "+formatList())
	pf.BoolVar(&ios.noColor, "no-color", false, "no ANSI colour (also off when NO_COLOR is set or stdout is not a terminal)")
	pf.BoolVarP(&ios.quiet, "quiet", "q", false, "no progress output")
	pf.BoolVar(&ios.local, "local", false, "tables show times in the local time zone instead of UTC")
	_ = root.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []cobra.Completion{
			cobra.CompletionWithDesc(string(FormatTable), "the columns an operator scans, fitted to the terminal"),
			cobra.CompletionWithDesc(string(FormatWide), "a table of every field"),
			cobra.CompletionWithDesc(string(FormatJSON), "JSON Lines, one object per line"),
			cobra.CompletionWithDesc(string(FormatCSV), "CSV with a header row"),
			cobra.CompletionWithDesc(string(FormatJUnit), "JUnit XML (verify only)"),
		}, cobra.ShellCompDirectiveNoFileComp
	})
}

// guardCommands walks the tree once every subcommand is added, so that no
// command has to remember the exit-code rules:
//
//   - a leaf command's Args validator (noArgs when it declared none)
//     returns a usageError: wrong argument counts exit 2 with the hint;
//   - a leaf command's RunE has its errors marked as runError, which is how
//     Execute tells "could not do the job" from cobra's own complaints about
//     the command line (unknown command, required or exclusive flags).
//
// Commands with subcommands keep cobra's default, which reports an unknown
// subcommand with suggestions.
func guardCommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		guardCommands(sub)
	}
	if c.HasSubCommands() {
		return
	}
	validate := c.Args
	if validate == nil {
		validate = noArgs
	}
	c.Args = func(c *cobra.Command, args []string) error {
		if err := validate(c, args); err != nil {
			return &usageError{err: err}
		}
		if f := c.Flag("output"); f != nil && f.Value.String() == string(FormatJUnit) && c.Annotations[annotationJUnit] == "" {
			return usageErrorf("-o junit is for kseg verify only; %s writes table, wide, json or csv", c.Name())
		}
		return nil
	}
	if run := c.RunE; run != nil {
		c.RunE = func(c *cobra.Command, args []string) error {
			return markRunError(run(c, args))
		}
	}
}

// annotationJUnit marks a command that writes -o junit (verify); every
// other command rejects it as a usage error.
const annotationJUnit = "kseg/junit"

// noArgs is the Args of a command that declared none. (cobra.NoArgs would
// call a stray argument an "unknown command", which misleads on a leaf.)
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q (%s takes none)", args[0], c.Name())
	}
	return nil
}

// Execute runs kseg with the process's arguments and streams and returns
// the exit code; main passes it to os.Exit.
func Execute() int {
	ios := System()
	root := NewRootCommand(ios)
	defer exitOnInterrupt(root, ios, os.Args[1:])()
	return execute(root, ios, os.Args[1:])
}

// execute runs root (built over ios) with args: it runs the command,
// flushes stdout, prints any error once ("kseg: <error>") and maps it to an
// exit code.
func execute(root *cobra.Command, ios *IOStreams, args []string) (code int) {
	// A panic is a bug, never an answer: the user gets one line and exit
	// 2, not a goroutine dump. Damaged input must not panic at all (the
	// fault guard, fileio.GuardFaults, turns a file cut short under its
	// mapping into an error); verify's workers recover their own panics
	// into errors naming the segment, since this one sees only the main
	// goroutine's.
	defer func() {
		if r := recover(); r != nil {
			_ = ios.Flush()
			fmt.Fprintf(ios.ErrOut, "kseg: internal error: %v\n", r)
			code = exitFailed
		}
	}()
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(protectRelativeTimes(root, args))
	failed, err := root.ExecuteC()
	if ferr := ios.Flush(); ferr != nil && err == nil {
		err = &runError{err: fmt.Errorf("writing output: %w", ferr)}
	}
	reportError(ios.ErrOut, failed, err)
	return exitCode(err)
}

package cmd

import (
	"github.com/spf13/cobra"
)

// Shell completion. cobra adds "kseg completion bash|zsh|fish|powershell",
// which prints a script that calls "kseg __complete ..." for candidates;
// setCompletions says what each command's arguments complete to, so that
// TAB offers partition directories and segment files, and no files where a
// number or an id is expected.

// segmentExts are the file name extensions of segment files.
var segmentExts = []cobra.Completion{"log", "index", "timeindex", "txnindex"}

// completePaths completes a PATH argument: directories (a data directory,
// a partition directory) and files with the given extensions.
func completePaths(exts ...cobra.Completion) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// completeDirs completes a directory argument.
func completeDirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completeNothing offers no candidate and no file names.
func completeNothing(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeThenNothing completes the first argument with first and offers
// nothing for the later ones (OFFSET).
func completeThenNothing(first cobra.CompletionFunc) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return first(c, args, toComplete)
		}
		return completeNothing(c, args, toComplete)
	}
}

// completeTimestamps completes lookup-time's TIMESTAMP.
func completeTimestamps(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return completePaths(segmentExts...)(c, args, toComplete)
	}
	if len(args) > 1 {
		return completeNothing(c, args, toComplete)
	}
	return []cobra.Completion{
		cobra.CompletionWithDesc("earliest", "the log start offset"),
		cobra.CompletionWithDesc("latest", "the log end offset"),
		cobra.CompletionWithDesc("max", "the record with the largest timestamp"),
		cobra.CompletionWithDesc("now-1h", "an hour ago (also -1h, -30m, -2d, -1w)"),
	}, cobra.ShellCompDirectiveNoFileComp
}

// setCompletions adds cobra's completion command now (rather than when the
// root first runs, so that the generated docs show it and a shell name it
// does not know is refused) and sets the argument completion of every
// command that does not set its own.
func setCompletions(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Long += `

The script completes command names, flags, partition directories and
segment files. Load it in the current shell, e.g.

  source <(kseg completion bash)

or install it once as each shell's help (kseg completion SHELL --help) says.`
		// cobra would print the help for an unknown shell and exit 0.
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("kseg has no completion for %q: bash, zsh, fish or powershell", args[0])
			}
			return c.Help()
		}
	}
	byName := map[string]cobra.CompletionFunc{
		"ls":          completePaths(segmentExts...),
		"dump-index":  completePaths(segmentExts...),
		"dump-log":    completePaths("log"),
		"lookup":      completeThenNothing(completePaths(segmentExts...)),
		"lookup-time": completeTimestamps,
		"verify":      completePaths(segmentExts...),
		"rebuild":     completePaths(segmentExts...),
		"gen":         completeDirs,
		"coordinator": completeNothing,
		"find":        completePaths(segmentExts...),
		"groups":      completeDirs,
		"diff":        completeDirs,
		"timeline":    completePaths(segmentExts...),
	}
	for _, c := range root.Commands() {
		if fn, ok := byName[c.Name()]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = fn
		}
	}
}

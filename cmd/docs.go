package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The command reference in docs/ is generated from the commands themselves
// (their Use, Short, Long, Example and flags), so that it says exactly
// what "kseg <command> --help" says: markdown pages under
// docs/reference/ and man pages under docs/man/, written by "make docs"
// (go run cmd/gendocs.go docs). A test regenerates them and compares.

// docsDate is the date in the man pages' headers: fixed, so that the
// generated files only change when the commands do.
var docsDate = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// docsRoot is the command tree as the docs describe it: built over
// streams that are not terminals, each Long kept as help prints it (in a
// fenced block: its columns and lists are laid out for a terminal).
func docsRoot() *cobra.Command {
	ios, _, _, _ := Test()
	root := NewRootCommand(ios)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		if c.Long != "" {
			c.Long = "```text\n" + strings.TrimRight(c.Long, "\n") + "\n```"
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// WriteDocs writes the command reference under dir: dir/reference/*.md
// (one page per command, linked to each other) and dir/man/*.1. Files of
// those two directories that no command produces any more are removed.
func WriteDocs(dir string) error {
	ref, man := filepath.Join(dir, "reference"), filepath.Join(dir, "man")
	for _, d := range []string{ref, man} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		old, err := filepath.Glob(filepath.Join(d, "kseg*"))
		if err != nil {
			return err
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if err := doc.GenMarkdownTree(docsRoot(), ref); err != nil {
		return fmt.Errorf("markdown reference: %w", err)
	}
	date := docsDate
	header := &doc.GenManHeader{Title: "KSEG", Section: "1", Date: &date, Source: "kseg", Manual: "kseg manual"}
	if err := doc.GenManTree(docsRoot(), header, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The examples in docs/how-kafka-indexes-work.md and docs/runbook.md are
// real kseg output: every ```console block there is a session, lines
// starting with "$ " are commands and the lines after one are what it
// printed (stderr, then stdout, as a terminal shows a command that warns
// while it works and prints its table at the end). This test runs each
// document's sessions in order in a fresh directory and compares;
// go test ./cmd -run TestDocExamples -update rewrites the outputs.
//
// Commands: kseg ..., and to damage files as a crash or a disk would:
// truncate -s SIZE FILE, rm FILE.

var exampleDocs = []string{"how-kafka-indexes-work.md", "runbook.md", filepath.Join("..", "README.md")}

type docCommand struct {
	line   int // 0-based line of the "$ " line in the document
	args   []string
	output []string // lines, as in the document
	end    int      // the line after the output
}

// parseSessions finds the commands of every console block.
func parseSessions(lines []string) []docCommand {
	var out []docCommand
	in := false
	var cur *docCommand
	flush := func(end int) {
		if cur != nil {
			cur.end = end
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		switch {
		case !in && strings.HasPrefix(l, "```console"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			flush(i)
			in = false
		case in && strings.HasPrefix(l, "$ "):
			flush(i)
			cur = &docCommand{line: i, args: strings.Fields(strings.TrimPrefix(l, "$ "))}
		case in && cur != nil:
			cur.output = append(cur.output, l)
		}
	}
	return out
}

// docStreams sets the streams of a documented command: tables fitted to
// 100 columns, and a clock on which a run takes 2 ms.
func docStreams(ios *IOStreams) {
	ios.SetTerminalWidth(100)
	ios.SetNow(tickingClock(2 * time.Millisecond))
}

// runDocCommand runs one command in dir and returns what it printed.
func runDocCommand(t *testing.T, dir string, c docCommand) string {
	t.Helper()
	switch c.args[0] {
	case "kseg":
		var out, errOut string
		var code int
		t.Run(strconv.Itoa(c.line+1), func(t *testing.T) {
			t.Chdir(dir)
			out, errOut, code = runKseg(t, docStreams, c.args[1:]...)
		})
		_ = code // the document shows what was printed; exit codes are for the other tests
		return errOut + out
	case "truncate":
		if len(c.args) != 4 || c.args[1] != "-s" {
			t.Fatalf("line %d: truncate -s SIZE FILE", c.line+1)
		}
		n, err := strconv.ParseInt(c.args[2], 10, 64)
		if err != nil {
			t.Fatalf("line %d: %v", c.line+1, err)
		}
		if err := os.Truncate(filepath.Join(dir, c.args[3]), n); err != nil {
			t.Fatalf("line %d: %v", c.line+1, err)
		}
	case "rm":
		for _, f := range c.args[1:] {
			if err := os.Remove(filepath.Join(dir, f)); err != nil {
				t.Fatalf("line %d: %v", c.line+1, err)
			}
		}
	default:
		t.Fatalf("line %d: the examples run kseg, truncate and rm, not %s", c.line+1, c.args[0])
	}
	return ""
}

func TestDocExamples(t *testing.T) {
	for _, name := range exampleDocs {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(docsDir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (the document is part of the project)", err)
			}
			lines := strings.Split(string(b), "\n")
			cmds := parseSessions(lines)
			if len(cmds) == 0 {
				t.Fatalf("%s has no console examples", name)
			}
			dir := t.TempDir()
			var rewritten []string
			last := 0
			for _, c := range cmds {
				got := runDocCommand(t, dir, c)
				gotLines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
				if got == "" {
					gotLines = nil
				}
				if *update {
					rewritten = append(rewritten, lines[last:c.line+1]...)
					rewritten = append(rewritten, gotLines...)
					last = c.end
					continue
				}
				if strings.Join(gotLines, "\n") != strings.Join(c.output, "\n") {
					t.Errorf("%s:%d: $ %s\n--- got\n%s\n--- document\n%s", name, c.line+1, strings.Join(c.args, " "),
						strings.Join(gotLines, "\n"), strings.Join(c.output, "\n"))
				}
			}
			if *update {
				rewritten = append(rewritten, lines[last:]...)
				out := []byte(strings.Join(rewritten, "\n"))
				if !bytes.Equal(out, b) {
					if err := os.WriteFile(path, out, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

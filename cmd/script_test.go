package cmd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary double as the kseg executable: a script's
// "exec kseg ..." runs this binary under the name kseg, which calls
// Execute() and exits with its code, exactly as main does.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"kseg": func() { os.Exit(ksegMain()) },
	})
}

// TestScripts runs every script in testdata/script (top level of the
// module). Each script may use:
//
//	exitcode N kseg args...   run kseg and require exit code exactly N
//	$REAL                     the real broker fixtures (absolute path)
//	[real]                    condition: those fixtures are present
//
// go test ./cmd -run TestScripts -update rewrites the files that cmp
// compares against inside the scripts.
func TestScripts(t *testing.T) {
	realDir := ""
	if abs, err := filepath.Abs(realFixtures); err == nil {
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
			realDir = abs
		}
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			if realDir != "" {
				env.Setenv("REAL", realDir)
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "real" {
				return realDir != "", nil
			}
			return false, errors.New("unknown condition " + strconv.Quote(cond))
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"truncate": cmdTruncate,
		},
	})
}

// cmdExitcode implements "exitcode N command args...": it runs the command
// as exec does (stdout and stderr are then available to stdout, stderr and
// cmp) and fails unless the exit code is exactly N. "! exec" could only say
// "not zero", and kseg's 1 and 2 mean different things.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode (give the expected code instead)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil || want < 0 {
		ts.Fatalf("exitcode: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("exitcode: running %s: %v", args[1], err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdTruncate implements "truncate FILE SIZE": cut or zero-extend a file,
// to damage a generated partition the way a crash or a disk would.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE SIZE")
	}
	size, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		ts.Fatalf("truncate: bad size %q", args[1])
	}
	ts.Check(os.Truncate(ts.MkAbs(args[0]), size))
}

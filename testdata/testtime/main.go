// Command testtime runs one or more `go test -json` commands at once, prints
// what go test prints without -v (each package's result, and the output of
// every test that failed), then where the time went: the slowest packages
// and tests. It exits 1 when a command failed or a test did not pass. It
// lives under testdata so that ./... leaves it out of the module's
// packages; `make test` and `make check` run it:
//
//	go run ./testdata/testtime [-top N] [-json FILE] 'go test -json -race ./inspect' 'go test -json ./cmd'
//
// Each argument is one command, split at spaces (no quoting).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is a line of `go test -json` (cmd/test2json).
type event struct {
	Label   string // testtime's, in its -json file
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// run holds what has been seen of every command's events.
type run struct {
	mu       sync.Mutex
	out      io.Writer
	raw      io.Writer            // every event line, when -json is given
	output   map[string]*buffered // a running test's output, by package and test
	seq      int
	started  map[string]time.Time // when a top-level test last started or resumed
	packages []result
	tests    []result
	failed   []string // tests and packages that failed
}

type buffered struct {
	seq  int // when the test started: tests print in that order
	data []byte
}

type result struct {
	name    string
	elapsed float64
	action  string
}

func (r *run) event(line []byte, label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var e event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
		fmt.Fprintf(r.out, "%s\n", line) // not an event: say it as it came
		return
	}
	if r.raw != nil {
		if label != "" { // kept for -from
			r.raw.Write(fmt.Appendf(nil, "{\"Label\":%q,", label))
			line = line[1:]
		}
		r.raw.Write(line)
		r.raw.Write([]byte{'\n'})
	}
	if label == "" {
		label = e.Label
	}
	key := e.Package + " " + e.Test
	switch e.Action {
	case "output", "build-output":
		if e.Test == "" {
			// The package's own lines: its result ("ok", "FAIL",
			// "PASS" dropped) and what it printed outside any test.
			if o := strings.TrimSpace(e.Output); o != "PASS" && o != "FAIL" && !strings.HasPrefix(o, "=== ") {
				if strings.HasPrefix(o, "ok ") || strings.HasPrefix(o, "FAIL\t") || strings.HasPrefix(o, "?") {
					fmt.Fprintf(r.out, "%s%s", label, e.Output)
				} else {
					fmt.Fprint(r.out, e.Output)
				}
			}
			return
		}
		b := r.output[key]
		if b == nil {
			r.seq++
			b = &buffered{seq: r.seq}
			r.output[key] = b
		}
		b.data = append(b.data, e.Output...)
	case "run", "cont":
		if e.Test != "" && !strings.Contains(e.Test, "/") {
			r.started[key] = e.Time
		}
	case "pass", "skip", "fail":
		// A test's Elapsed leaves out its parallel subtests, which run
		// after its function returns: a top-level test is timed from when
		// it started, or resumed after t.Parallel, to its end.
		if start, ok := r.started[key]; ok {
			e.Elapsed = max(e.Elapsed, e.Time.Sub(start).Seconds())
			delete(r.started, key)
		}
		if e.Action == "fail" && !strings.Contains(e.Test, "/") {
			name := e.Package
			if e.Test != "" {
				name += " " + e.Test
			}
			r.failed = append(r.failed, name)
		}
		switch {
		case e.Test == "":
			r.packages = append(r.packages, result{label + e.Package, e.Elapsed, e.Action})
		case !strings.Contains(e.Test, "/"):
			r.tests = append(r.tests, result{label + e.Package + " " + e.Test, e.Elapsed, e.Action})
		}
		// A failed test's output is printed once, with its subtests'; a
		// failed package's tests still running (a panic, a timeout) too.
		prefix := key + "/"
		if e.Test == "" {
			prefix = e.Package + " "
		}
		var done []*buffered
		for k, o := range r.output {
			if k == key || strings.HasPrefix(k, prefix) {
				done = append(done, o)
				if !strings.Contains(e.Test, "/") {
					delete(r.output, k)
				}
			}
		}
		if e.Action == "fail" && !strings.Contains(e.Test, "/") {
			sort.Slice(done, func(i, j int) bool { return done[i].seq < done[j].seq })
			for _, o := range done {
				r.out.Write(o.data)
			}
		}
	}
}

// label is what a command's packages are prefixed with in the report: the
// flags that differ between the commands ("-race", "-short"), so that the
// same package run twice is told apart.
func labels(cmds [][]string) []string {
	count := map[string]int{}
	for _, c := range cmds {
		for _, a := range c {
			if strings.HasPrefix(a, "-") {
				count[a]++
			}
		}
	}
	out := make([]string, len(cmds))
	for i, c := range cmds {
		var l []string
		for _, a := range c {
			if strings.HasPrefix(a, "-") && count[a] < len(cmds) && !strings.HasPrefix(a, "-run") {
				l = append(l, a)
			}
		}
		if len(l) > 0 {
			out[i] = "[" + strings.Join(l, " ") + "] "
		}
	}
	return out
}

func main() { os.Exit(testtime()) }

func testtime() int {
	top := flag.Int("top", 10, "how many of the slowest tests to list")
	raw := flag.String("json", "", "also write every event line to this file")
	from := flag.String("from", "", "read the events of an earlier run from this file (a -json file) instead of running commands")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testtime [-top N] [-json FILE] 'go test -json ...'...\n       testtime [-top N] -from FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if (flag.NArg() == 0) == (*from == "") {
		flag.Usage()
		return 2
	}
	r := &run{out: os.Stdout, output: map[string]*buffered{}, started: map[string]time.Time{}}
	if *raw != "" {
		f, err := os.Create(*raw)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtime:", err)
			return 2
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		r.raw = w
	}
	var cmds [][]string
	for _, a := range flag.Args() {
		cmds = append(cmds, strings.Fields(a))
	}
	start := time.Now()
	lab := labels(cmds)
	var wg sync.WaitGroup
	failed := make([]error, len(cmds))
	for i, args := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed[i] = runCommand(r, args, lab[i])
		}()
	}
	if *from != "" {
		f, err := os.Open(*from)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtime:", err)
			return 2
		}
		defer f.Close()
		r.out = io.Discard
		if err := scanEvents(r, f, ""); err != nil {
			fmt.Fprintln(os.Stderr, "testtime:", err)
			return 2
		}
		r.out = os.Stdout
	}
	wg.Wait()
	wall := time.Since(start)

	sort.SliceStable(r.packages, func(i, j int) bool { return r.packages[i].elapsed > r.packages[j].elapsed })
	sort.SliceStable(r.tests, func(i, j int) bool { return r.tests[i].elapsed > r.tests[j].elapsed })
	// A package's time is its test binary's run (building it is not
	// counted); a test's includes its subtests, and parallel tests
	// overlap.
	if *from == "" {
		fmt.Printf("\nwhere the time went (%s in all): the slowest packages\n", wall.Round(time.Second))
	} else {
		fmt.Printf("where the time went: the slowest packages\n")
	}
	for _, p := range r.packages[:min(*top/2, len(r.packages))] {
		fmt.Printf("  %8.1fs  %s\n", p.elapsed, p.name)
	}
	fmt.Println("and tests:")
	for _, t := range r.tests[:min(*top, len(r.tests))] {
		fmt.Printf("  %8.1fs  %s\n", t.elapsed, t.name)
	}
	code := 0
	for i, err := range failed {
		if err != nil {
			fmt.Printf("%s: %v\n", strings.Join(cmds[i], " "), err)
			code = 1
		}
	}
	if len(r.failed) > 0 {
		fmt.Printf("FAILED: %s\n", strings.Join(r.failed, ", "))
		code = 1
	}
	return code
}

// runCommand runs args, passing its stdout's events to r and its stderr
// through, and returns its failure.
func runCommand(r *run, args []string, label string) error {
	c := exec.Command(args[0], args[1:]...)
	c.Stderr = os.Stderr
	stdout, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	scanErr := scanEvents(r, stdout, label)
	if scanErr != nil {
		io.Copy(io.Discard, stdout)
	}
	if err := c.Wait(); err != nil {
		return err
	}
	return scanErr
}

// scanEvents passes every line of events to r.
func scanEvents(r *run, events io.Reader, label string) error {
	sc := bufio.NewScanner(events)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		r.event(bytes.Clone(sc.Bytes()), label)
	}
	return sc.Err()
}

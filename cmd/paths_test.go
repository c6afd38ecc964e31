package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestPathSpellings runs every command that takes a PATH with the path
// spelled with "..", "./", "//", a trailing "/" and through symbolic links
// to the partition and to the data directory, and checks that each answers
// exactly as for the plain path: the same exit code, and the same lines once
// the spelling given is replaced by the plain one (the contract's "Paths
// given with .." section: file fields print the path as given).
func TestPathSpellings(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	part := filepath.Join(data, "orders-0")
	if _, err := kafkagen.Generate(part, kafkagen.Options{Seed: 14, Segments: 3, Batches: 12, IndexIntervalBytes: 300, Transactions: true}); err != nil {
		t.Fatal(err)
	}
	sideWrite(t, filepath.Join(data, "recovery-point-offset-checkpoint"), "0\n1\norders 0 20\n")
	sideWrite(t, filepath.Join(data, "log-start-offset-checkpoint"), "0\n1\norders 0 0\n")
	if err := os.Symlink(part, filepath.Join(root, "orders-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(root, "data-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(part)
	if err != nil {
		t.Fatal(err)
	}
	var snapshot string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".snapshot") {
			snapshot = e.Name()
		}
	}
	const seg = "00000000000000000000"

	// Each spelling of the partition directory, and the data directory
	// each implies (the same directory spelled the same way).
	spellings := []struct{ name, part, data string }{
		{"dotdot", data + "/../data/orders-0", data + "/../data"},
		{"dot", data + "/./orders-0", data + "/."},
		{"double-slash", data + "//orders-0", data + "//"},
		{"trailing-slash", part + "/", data + "/"},
		{"via-x-dotdot", root + "/x/../data/orders-0/", root + "/x/../data/"},
		{"symlinked-partition", filepath.Join(root, "orders-link"), ""},
		{"symlinked-data-dir", filepath.Join(root, "data-link", "orders-0"), filepath.Join(root, "data-link")},
	}
	// Commands, with P for the partition directory and D for the data
	// directory.
	commands := [][]string{
		{"ls", "P"},
		{"ls", "--segments", "D"},
		{"verify", "--verbose", "--recovery-plan", "P"},
		{"verify", "D"},
		{"dump-log", "--records", "P"},
		{"dump-log", "P/" + seg + ".log"},
		{"dump-index", "P/" + seg + ".index"},
		{"dump-index", "P/" + seg + ".timeindex"},
		{"dump-index", "P"},
		{"lookup", "--trace", "P", "25"},
		{"lookup", "P/" + seg + ".log", "3"},
		{"lookup-time", "--trace", "P", "earliest"},
		{"lookup-time", "P", "1700000000100"},
		{"rebuild", "--dry-run", "P"},
		{"dump-snapshot", "P"},
		{"dump-snapshot", "P/" + snapshot},
		{"dump-checkpoint", "P"},
		{"dump-checkpoint", "P/leader-epoch-checkpoint"},
		{"dump-checkpoint", "D"},
		{"dump-checkpoint", "D/recovery-point-offset-checkpoint"},
		{"find", "--from-offset", "10", "--to-offset", "20", "P"},
		{"find", "--max", "3", "--from-offset", "0", "D"},
		{"diff", "--records", "P", "P"},
	}
	expand := func(args []string, p, d string) []string {
		out := []string{"-o", "json", "--no-color", "-q"}
		for _, a := range args {
			switch {
			case a == "P", strings.HasPrefix(a, "P/"):
				a = p + a[1:]
				if strings.HasSuffix(p, "/") && len(a) > len(p) && a[len(p)] == '/' {
					a = p + a[len(p)+1:]
				}
			case a == "D", strings.HasPrefix(a, "D/"):
				a = d + a[1:]
			}
			out = append(out, a)
		}
		return out
	}
	for _, c := range commands {
		wantOut, wantErr, wantCode := runKseg(t, nil, expand(c, part, data)...)
		if wantCode == 2 {
			t.Fatalf("%v on the plain path: exit 2: %s", c, wantErr)
		}
		if strings.TrimSpace(wantOut) == "" {
			t.Fatalf("%v on the plain path printed nothing", c)
		}
		for _, s := range spellings {
			usesData := false
			for _, a := range c {
				usesData = usesData || a == "D" || strings.HasPrefix(a, "D/")
			}
			if usesData && s.data == "" {
				continue
			}
			args := expand(c, s.part, s.data)
			out, errOut, code := runKseg(t, nil, args...)
			if code != wantCode {
				t.Errorf("%s: %v: exit %d, the plain path's %d\n%s", s.name, args, code, wantCode, errOut)
				continue
			}
			given := []string{s.part, s.data}
			canon := []string{part, data}
			if s.name == "symlinked-partition" {
				given, canon = given[:1], canon[:1]
			}
			got := strings.Split(normalisePaths(t, out, given, canon), "\n")
			want := strings.Split(wantOut, "\n")
			if len(got) != len(want) {
				t.Errorf("%s: %v: %d lines, the plain path's %d", s.name, args, len(got), len(want))
				continue
			}
			for i := range got {
				// The recovery plan's estimate is a measured rate.
				if g, w := estimate.ReplaceAllString(got[i], ""), estimate.ReplaceAllString(want[i], ""); g != w {
					t.Errorf("%s: %v: line %d differs from the plain path's\n got (normalised) %s\nplain %s", s.name, args, i+1, g, w)
					break
				}
			}
		}
	}
}

// groups reads __consumer_offsets partitions: the real fixtures', spelled
// the same ways (read in place, through a symbolic link to them).
func TestPathSpellingsGroups(t *testing.T) {
	real := realFixturesIfAny()
	if real == "" {
		t.Skipf("real broker fixtures not found at %s", realFixtures)
	}
	abs, err := filepath.Abs(filepath.Join(real, "cp-kraft-multiseg-compacted"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	link := filepath.Join(root, "data-link")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(abs, "__consumer_offsets-13")
	want, _, code := runKseg(t, nil, "-o", "json", "groups", part)
	if code != exitOK || strings.TrimSpace(want) == "" {
		t.Fatalf("groups on the plain path: exit %d, %q", code, want)
	}
	for _, p := range []string{abs + "/../" + filepath.Base(abs) + "/__consumer_offsets-13", abs + "//./__consumer_offsets-13/", filepath.Join(link, "__consumer_offsets-13")} {
		out, errOut, code := runKseg(t, nil, "-o", "json", "groups", p)
		if code != exitOK || normalisePaths(t, out, []string{p}, []string{part}) != want {
			t.Errorf("groups %s: exit %d %s\n%s\nwant\n%s", p, code, errOut, out, want)
		}
	}
}

var estimate = regexp.MustCompile(`"estimate":(null|\{[^}]*\})`)

// TestDumpIndexDotDotNamesOneFile is the reported case: an .index named
// through a/b/../b/ dumps that one file, printed as given.
func TestDumpIndexDotDotNamesOneFile(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := kafkagen.Generate(filepath.Join("a", "demo-0"), kafkagen.Options{Seed: 3, Batches: 40, IndexIntervalBytes: 500}); err != nil {
		t.Fatal(err)
	}
	name := "a/demo-0/../demo-0/00000000000000000000.index"
	out, errOut, code := runKseg(t, nil, "-o", "json", "dump-index", name)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("want several offset index entries, got %q", out)
	}
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e["file"] != name {
			t.Errorf("file %v, want %s (the path as given)", e["file"], name)
		}
		if _, ok := e["position"]; !ok {
			t.Errorf("not an offset index entry: %s", l)
		}
	}
}

// normalisePaths rewrites, in every line, each spelling given[i] (and its
// cleaned form) to canon[i], as a path joined from it would print had the
// plain path been given.
func normalisePaths(t *testing.T, out string, given, canon []string) string {
	t.Helper()
	mark := regexp.MustCompile("\x00+(/*)(.?)")
	fix := func(s string) string {
		for i, g := range given {
			s = strings.ReplaceAll(s, g, canon[i]+"\x00")
			if c := filepath.Clean(g); c != canon[i] {
				s = strings.ReplaceAll(s, c, canon[i]+"\x00")
			}
		}
		return mark.ReplaceAllStringFunc(s, func(m string) string {
			sub := mark.FindStringSubmatch(m)
			if sub[2] == "" || sub[2] == "\"" || sub[2] == " " || sub[2] == ":" {
				return sub[2]
			}
			return "/" + sub[2]
		})
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		b.WriteString(fix(l))
	}
	return b.String()
}

// find and timeline resolve their PATHs alike (resolveSortedPartitions):
// each PATH in turn, what discovery skipped warned about in the command's
// own words, each PATH's partitions in partition order (orders-2 before
// orders-10) and the PATHs in the order given; a PATH that does not
// resolve stops the command after the warnings of those before it.
func TestFindAndTimelineResolveAlike(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, p := range []string{"data/orders-0", "data/orders-10", "data/orders-2", "data2/a-0"} {
		sideGen(t, p, kafkagen.Options{Batches: 3})
	}
	for _, d := range []string{"data/notes", "data/orders-3.0123456789abcdef0123456789abcdef-delete"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	skipped := func(words string) string {
		return "kseg: warning: data/notes: " + words + ": not a <topic>-<partition> directory\n" +
			"kseg: warning: data/orders-3.0123456789abcdef0123456789abcdef-delete: " + words + ": partition directory being deleted or moved (-delete)\n"
	}
	order := regexp.MustCompile(`"partition_dir":"([^"]+)"`)
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"-o", "json", "find", "--from-offset", "0", "--to-offset", "0"}, "not searched"},
		{[]string{"-o", "json", "timeline", "--per-partition"}, "not read"},
	} {
		out, errOut, code := runKseg(t, nil, append(c.args, "data", "data2")...)
		if code != 0 || errOut != skipped(c.words) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant:\n%s", c.args, code, errOut, skipped(c.words))
		}
		var dirs []string
		for _, m := range order.FindAllStringSubmatch(out, -1) {
			dirs = append(dirs, m[1])
		}
		if want := []string{"orders-0", "orders-2", "orders-10", "a-0"}; !slices.Equal(dirs, want) {
			t.Errorf("%v: partitions %v, want %v", c.args, dirs, want)
		}
		out, errOut, code = runKseg(t, nil, append(c.args, "data", "nosuch")...)
		if want := skipped(c.words) + "kseg: nosuch: no such file or directory\nkseg: hint: check the path\n"; code != 2 || out != "" || errOut != want {
			t.Errorf("%v with a missing PATH: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", c.args, code, out, errOut, want)
		}
	}
}

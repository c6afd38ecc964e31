package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/rebuild"
)

func corrupt(kind error) error {
	return fmt.Errorf("looking up: %w", &fileio.CorruptError{File: filepath.Join("data", "orders-0", "00000000000000000368.log"), Position: 4242, Offset: -1, Err: fmt.Errorf("%w: detail", kind)})
}

func TestNextStep(t *testing.T) {
	dir := filepath.Join("data", "orders-0")
	for _, tc := range []struct {
		cmd  string
		err  error
		want string // "" for no hint; else every ";"-separated part must appear
	}{
		{"lookup", corrupt(fileio.ErrTorn), "log.truncated|kseg verify " + dir + "|kseg rebuild --dry-run --truncate-log " + dir},
		{"lookup", corrupt(fileio.ErrCorruptHeader), "log.corrupt-header|kseg verify " + dir},
		{"lookup-time", corrupt(fileio.ErrCRC), "log.crc|kseg verify " + dir},
		{"dump-log", corrupt(fileio.ErrCorruptRecords), "log.records|kseg dump-log --salvage"},
		{"dump-log", corrupt(fileio.ErrTooLarge), "log.records"},
		{"rebuild", corrupt(fileio.ErrCorruptHeader), "kseg rebuild --dry-run --truncate-log " + dir + " shows the cut"},
		{"verify", corrupt(fileio.ErrFault), "shrank while kseg read it"},
		{"rebuild", fmt.Errorf("%w (nothing written)", rebuild.ErrLocked), "stop the broker|--out DIR|--force"},
		{"lookup", &fs.PathError{Op: "open", Path: "x.index", Err: fs.ErrPermission}, "read access|broker's user"},
		{"ls", withHint(errors.New("x"), "do this"), "do this"},
		{"dump-index", errors.New("x.index: byte position 8: 3 trailing bytes (run kseg verify .)"), ""},
		{"lookup", errors.New("disk on fire"), ""},
		{"lookup", nil, ""},
	} {
		got := nextStep(tc.cmd, tc.err)
		if tc.want == "" {
			if got != "" {
				t.Errorf("%s %v: hint %q, want none", tc.cmd, tc.err, got)
			}
			continue
		}
		for _, part := range strings.Split(tc.want, "|") {
			if !strings.Contains(got, part) {
				t.Errorf("%s %v: hint %q lacks %q", tc.cmd, tc.err, got, part)
			}
		}
	}
}

func TestReportErrorHint(t *testing.T) {
	sub := &cobra.Command{Use: "lookup"}
	var buf bytes.Buffer
	reportError(&buf, sub, markRunError(corrupt(fileio.ErrCRC)))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "kseg: looking up: data/orders-0/00000000000000000368.log: byte position 4242: crc mismatch") ||
		!strings.HasPrefix(lines[1], "kseg: hint: verify reports this as log.crc; run kseg verify data/orders-0") {
		t.Errorf("report:\n%s", buf.String())
	}
	buf.Reset()
	reportError(&buf, sub, usageErrorf("bad"))
	if strings.Contains(buf.String(), "hint") {
		t.Errorf("usage errors get the --help line only: %q", buf.String())
	}
}

// End to end: a damaged log, a PATH with several partitions, a missing
// PATH: the error names the file and position, the hint the next command.
func TestErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(dir, "demo-0"), kafkagen.Options{Seed: 2, Batches: 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kafkagen.Generate(filepath.Join(dir, "other-0"), kafkagen.Options{Seed: 3, Batches: 5}); err != nil {
		t.Fatal(err)
	}
	s := &m.Segments[0]
	b := s.Batches[3]
	f, err := os.OpenFile(m.LogPath(s), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0, 0, 0, 1}, b.Position+8) // batch length 1: impossible
	f.Close()

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"lookup", "demo-0", fmt.Sprint(b.LastOffset)}, []string{
			"kseg: " + filepath.Join("demo-0", "00000000000000000000.log") + fmt.Sprintf(": byte position %d: corrupt batch header: batch length 1", b.Position),
			"kseg: hint: verify reports this as log.corrupt-header; run kseg verify demo-0 to list every problem; kseg rebuild --dry-run --truncate-log demo-0"}},
		{[]string{"lookup", ".", "1"}, []string{
			"kseg: . holds 2 partitions (demo-0, other-0): name one partition directory",
			"kseg: hint: kseg ls . lists them; give one, e.g. demo-0"}},
		{[]string{"verify", "demo-0/nope"}, []string{
			"kseg: demo-0/nope: no such file or directory",
			"kseg: hint: check the path; kseg ls demo-0 lists the partitions kseg finds there"}},
	} {
		_, stderr, code := runIn(t, dir, tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != 2 || len(lines) != len(tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s", tc.args, code, stderr)
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%v: line %d\n%s\nwant it to start with\n%s", tc.args, i, lines[i], w)
			}
		}
	}
}

// A PATH one or two levels above data directories: the hint lists them
// and the commands to run.
func TestHintListsDataDirsBelow(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"brokers/b1/orders-0", "brokers/b1/orders-1", "brokers/b2/orders-2", "backup/x/y/deep-0"} {
		if _, err := kafkagen.Generate(filepath.Join(dir, p), kafkagen.Options{Seed: 1, Batches: 3}); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := runIn(t, dir, "ls", "brokers")
	want := "kseg: hint: brokers holds no partition itself, but data directories below it: " +
		filepath.Join("brokers", "b1") + " (2 partitions), " + filepath.Join("brokers", "b2") + " (1 partition); " +
		"list them with kseg ls brokers/b1 brokers/b2, check them with kseg verify brokers/b1 brokers/b2\n"
	if code != 2 || !strings.HasSuffix(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to end with\n%s", code, stderr, want)
	}
	// Two levels down is found too; three is not looked at.
	_, stderr, _ = runIn(t, dir, "ls", ".")
	if !strings.Contains(stderr, "brokers/b1 (2 partitions), brokers/b2 (1 partition);") || strings.Contains(stderr, "deep") {
		t.Errorf("from the top: %s", stderr)
	}
}

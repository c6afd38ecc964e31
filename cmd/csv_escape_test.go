package cmd

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestCSVEscapesControlBytes: ESC and other control bytes in directory
// names and checkpoint keys reach CSV escaped as in the table ("\x1b"),
// never raw; the CSV still parses, and a cell starting with "=" is left
// as data (the contract says so).
func TestCSVEscapesControlBytes(t *testing.T) {
	dataDir := t.TempDir()
	topic := "ev\x1b[31mil"
	part := filepath.Join(dataDir, topic+"-0")
	if _, err := kafkagen.Generate(part, kafkagen.Options{Seed: 9, Segments: 1, Batches: 5}); err != nil {
		t.Fatal(err)
	}
	cp := "0\n2\n" + topic + " 0 5\n=cmd|calc 1 7\n"
	if err := os.WriteFile(filepath.Join(dataDir, "recovery-point-offset-checkpoint"), []byte(cp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ls", "-o", "csv", dataDir},
		{"dump-checkpoint", "-o", "csv", filepath.Join(dataDir, "recovery-point-offset-checkpoint")},
		{"verify", "-o", "csv", dataDir},
	} {
		out, errOut, code := runKseg(t, nil, args...)
		if code != 0 && code != 1 {
			t.Fatalf("kseg %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(errOut, 0x1b) {
			t.Errorf("kseg %s: a raw ESC byte in the output:\n%q\n%q", strings.Join(args, " "), out, errOut)
		}
		if _, err := csv.NewReader(strings.NewReader(out)).ReadAll(); err != nil {
			t.Errorf("kseg %s: not CSV: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] != "verify" && !strings.Contains(out, `ev\x1b[31mil`) {
			t.Errorf("kseg %s: the name is not shown escaped:\n%s", strings.Join(args, " "), out)
		}
		if args[0] == "dump-checkpoint" && !strings.Contains(out, "=cmd|calc-1,7") {
			t.Errorf("dump-checkpoint: the \"=cmd|calc\" key is not kept as data:\n%s", out)
		}
	}
}

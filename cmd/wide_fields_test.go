package cmd

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestWideShowsEveryJSONField: the contract's -o wide is "the table with
// every field of the JSON form". For each table command, every field of
// its JSON lines (summary lines apart, and kind where one kind is listed)
// is a column of its wide table.
func TestWideShowsEveryJSONField(t *testing.T) {
	t.Chdir(t.TempDir())
	sideGen(t, "data/tx-0", kafkagen.Options{Topic: "tx", Segments: 2, Batches: 20, Transactions: true})
	header := regexp.MustCompile(`^[a-z_]+(  +[a-z_.]+)+\s*$`)
	for _, args := range [][]string{
		{"dump-log", "data/tx-0"},
		{"dump-log", "--records", "data/tx-0"},
		{"dump-snapshot", "data/tx-0"},
		{"dump-checkpoint", "data/tx-0"},
		{"find", "data", "--from-offset", "0"},
		{"timeline", "data"},
		{"timeline", "--per-partition", "data"},
	} {
		fields := map[string]bool{}
		kinds := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(sideRun(t, 0, append([]string{"-o", "json"}, args...))), "\n") {
			var o map[string]any
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, line)
			}
			if o["kind"] == "summary" {
				continue
			}
			kinds[o["kind"].(string)] = true
			for k := range o {
				fields[k] = true
			}
		}
		if len(kinds) == 1 {
			delete(fields, "kind")
		}
		shown := map[string]bool{}
		for _, line := range strings.Split(sideRun(t, 0, append([]string{"-o", "wide"}, args...)), "\n") {
			if header.MatchString(line) {
				for _, name := range strings.Fields(line) {
					shown[name] = true
				}
			}
		}
		var missing []string
		for f := range fields {
			if !shown[f] {
				missing = append(missing, f)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("kseg -o wide %s: no column for the JSON fields %s", strings.Join(args, " "), strings.Join(missing, ", "))
		}
	}
}

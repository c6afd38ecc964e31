package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestMetadataReal: the image of two real metadata logs in every format
// (goldens), read in place: kafka40-kraft-snappy-retention from its log
// alone (three topics, a committed bootstrap transaction), and
// cp-kraft-multiseg-compacted from its latest snapshot and the log after
// it.
func TestMetadataReal(t *testing.T) {
	real := requireRealFixtures(t)
	before := hashTree(t, real)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"metadata-kafka40", []string{"metadata", "kafka40-kraft-snappy-retention"}},
		{"metadata-multiseg", []string{"metadata", "cp-kraft-multiseg-compacted/__cluster_metadata-0"}},
	} {
		for _, f := range formats {
			out, stderr, code := runIn(t, real, append([]string{"-o", string(f.format)}, tc.args...)...)
			if code != 0 || stderr != "" {
				t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
			}
			assertGolden(t, tc.name+"."+f.ext, out)
		}
		assertTableGoldens(t, real, tc.name, 0, tc.args...)
	}
	assertTreeUnchanged(t, real, before)
}

// metadataJSON runs kseg metadata -o json and returns its lines by kind.
func metadataJSON(t *testing.T, code int, args ...string) map[string][]map[string]any {
	t.Helper()
	out := sideRun(t, code, append([]string{"-o", "json", "metadata"}, args...))
	lines := map[string][]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		lines[m["kind"].(string)] = append(lines[m["kind"].(string)], m)
	}
	return lines
}

// TestMetadataCommand: kseg gen --metadata, then kseg metadata at the end,
// at an offset and a time, for one topic; the exit codes.
func TestMetadataCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	sideRun(t, 0, []string{"gen", "--metadata", "--seed", "7", "--changes", "120", "--segment-bytes", "8192", "data/__cluster_metadata-0"},
		`wrote data/__cluster_metadata-0: log end offset`, `snapshot 0+\d+-0+\d+\.checkpoint \(end offset \d+`)
	end := metadataJSON(t, 0, "data")
	sum := end["summary"][0]
	if sum["unapplied"] != 0.0 || sum["incomplete"] != nil || sum["snapshot"] == nil {
		t.Errorf("summary %v", sum)
	}
	topics := map[string]bool{}
	for _, l := range end["topic"] {
		topics[l["name"].(string)] = true
	}
	if !topics["txn-committed"] || topics["txn-aborted"] || topics["doomed"] || !topics["late"] {
		t.Errorf("topics %v: want txn-committed and late, not txn-aborted or doomed", topics)
	}
	if len(end["broker"]) != 3 || len(end["controller"]) != 1 || len(end["feature"]) != 2 {
		t.Errorf("%d brokers, %d controllers, %d features", len(end["broker"]), len(end["controller"]), len(end["feature"]))
	}
	// Without the snapshot (below its end): the log's transactions, the
	// bootstrap's and the topic's committed, one aborted.
	if first := metadataJSON(t, 0, "data", "--offset", "300")["summary"][0]; first["committed_transactions"] != 2.0 || first["aborted_transactions"] != 1.0 || first["snapshot"] != nil {
		t.Errorf("--offset 300: %v", first)
	}
	// Before the topic's removal, doomed is there; --topic keeps its lines.
	early := metadataJSON(t, 0, "data", "--offset", "40", "--topic", "doomed")
	if len(early["topic"]) != 1 || len(early["partition"]) != 2 || len(early["broker"]) != 0 || early["summary"][0]["target_offset"] != 40.0 {
		t.Errorf("--offset 40 --topic doomed: %v", early)
	}
	sideRun(t, 0, []string{"metadata", "data", "--topic", "orders"}, `^topic +partition +leader +replicas +isr`, `(?m)^orders +TopicId: \S+  PartitionCount: 3  ReplicationFactor: 3  Configs: `, `(?m)^  orders +0 +\d`)
	sideRun(t, 1, []string{"metadata", "data", "--topic", "nope"}, `stderr:no topic "nope" in the image`)
	sideRun(t, 0, []string{"-o", "json", "metadata", "data", "--at", "0"}, `"target_offset":-1,`, `"topics":0,`)
	sideRun(t, 2, []string{"metadata", "data", "--at", "0", "--offset", "3"}, `stderr:give --at or --offset, not both`)
	sideRun(t, 2, []string{"metadata", "data", "--offset", "-3"}, `stderr:--offset must be >= 0`)
	sideGen(t, "other/orders-0", kafkagen.Options{Batches: 2})
	sideRun(t, 2, []string{"metadata", "other"}, `stderr:no KRaft metadata log`, `stderr:hint:`)
	// Damage: the image up to it is printed, the error names the file and
	// position, exit 2.
	logs, _ := filepath.Glob(filepath.Join("data", "__cluster_metadata-0", "*.log"))
	log := logs[len(logs)-1] // after the snapshot (damage it covers changes nothing)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 0xff
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sideRun(t, 2, []string{"-o", "json", "metadata", "data"}, `"kind":"summary"`, `stderr:`+regexp.QuoteMeta(filepath.Base(log))+`.*position \d+`)
}

package cmd

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// txns, retention and cleaner: exit codes, the JSON lines' kinds and
// fields, every field a column of -o wide, and bad settings refused with
// where they came from.
func TestAnalysisCommands(t *testing.T) {
	t.Chdir(t.TempDir())
	sideGen(t, "data/orders-0", kafkagen.Options{Topic: "orders", Segments: 3, Batches: 30, Transactions: true, OpenTransactions: 1, DataDirCheckpoints: true})
	sideGen(t, filepath.Join("data", "events-1"), kafkagen.Options{Topic: "events", Segments: 2, Batches: 20, DataDirCheckpoints: true})
	at := "--at=2023-11-15T00:00:00Z"
	fields := map[string][]string{
		"open_transaction":    {"partition_dir", "producer_id", "producer_epoch", "first_offset", "last_offset", "first_timestamp", "last_timestamp", "age_ms", "batches", "coordinator", "verdict", "config_source"},
		"partition":           {"partition_dir", "log_end_offset", "high_watermark", "last_stable_offset", "lso_lag", "open_transactions", "producer_state_from"},
		"retention_partition": {"partition_dir", "segments", "deletable", "bytes_freed", "blocked_by", "config", "config_source"},
		"segment":             {"partition_dir", "segment", "base_offset", "size", "largest_timestamp", "largest_timestamp_source", "deleted_by", "kept_because", "eligible_at"},
		"compaction": {"partition_dir", "first_dirty_offset", "checkpoint_offset", "checkpoint_reset", "first_uncleanable_offset", "uncleanable_because",
			"clean_bytes", "cleanable_bytes", "cleanable_ratio", "min_cleanable_ratio", "max_compaction_delay_ms", "would_clean", "why_not"},
	}
	header := regexp.MustCompile(`^[a-z_]+(  +[a-z_.]+)+\s*$`)
	for _, tc := range []struct {
		args  []string
		code  int
		kinds []string
	}{
		{[]string{"txns", at, "data"}, 1, []string{"open_transaction", "partition"}},
		{[]string{"retention", at, "--config", "retention.ms=3600000", "data"}, 0, []string{"segment", "partition"}},
		{[]string{"cleaner", at, "--config", "cleanup.policy=compact", "data"}, 0, []string{"compaction"}},
	} {
		out := sideRun(t, tc.code, append([]string{"-o", "json"}, tc.args...))
		seen := map[string]bool{}
		jsonFields := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var o map[string]any
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			kind := o["kind"].(string)
			seen[kind] = true
			key := kind
			if kind == "partition" && tc.args[0] == "retention" {
				key = "retention_partition"
			}
			for _, f := range fields[key] {
				if _, ok := o[f]; !ok {
					t.Errorf("%s: %s line without %s: %s", tc.args[0], kind, f, line)
				}
			}
			for k := range o {
				jsonFields[k] = true
			}
		}
		for _, k := range tc.kinds {
			if !seen[k] {
				t.Errorf("%s: no %s line:\n%s", tc.args[0], k, out)
			}
		}
		shown := map[string]bool{}
		for _, line := range strings.Split(sideRun(t, tc.code, append([]string{"-o", "wide"}, tc.args...)), "\n") {
			if header.MatchString(line) {
				for _, name := range strings.Fields(line) {
					shown[name] = true
				}
			}
		}
		if len(tc.kinds) == 1 {
			delete(jsonFields, "kind")
		}
		for f := range jsonFields {
			if !shown[f] {
				t.Errorf("kseg -o wide %s: no column for %s", tc.args[0], f)
			}
		}
		sideRun(t, tc.code, append([]string{"-o", "csv"}, tc.args...), "partition_dir")
	}
	// The open transaction is late, and the LSO it holds is the cleaner's bound.
	sideRun(t, 1, []string{"-o", "json", "txns", at, "data/orders-0"}, `"verdict":"late"`, `"producer_state_from":"00000000000000000`)
	// Bad settings: exit 2, saying where.
	sideWrite(t, "server.properties", "log.retention.ms=1000\nlog.cleaner.min.cleanable.ratio=half\n")
	sideRun(t, 2, []string{"retention", "--server-properties", "server.properties", "data"}, "stderr:server.properties:2", "stderr:log.cleaner.min.cleanable.ratio")
	sideRun(t, 2, []string{"retention", "--config", "retention.ms=-2", "data"}, "stderr:at least -1")
	sideRun(t, 2, []string{"cleaner", "--config", "min.cleanable.dirty.ratio", "data"}, "stderr:KEY=VALUE")
	sideRun(t, 2, []string{"txns", "--server-properties", "missing.properties", "data"}, "stderr:missing.properties")
	// Flags take effect: retention by bytes.
	sideRun(t, 0, []string{"-o", "json", "retention", at, "--config", "retention.bytes=0", "--config", "retention.ms=-1", "data/events-1"}, `"deleted_by":"retention_bytes"`, `"retention.bytes":"flag"`)
}

// TestAnalysesReadTheMetadataImage: a data directory holding
// __cluster_metadata-0 gives the analyses the image's topic configs
// (config_source "topic"), the values kseg metadata shows for that topic,
// and --config still wins over them.
func TestAnalysesReadTheMetadataImage(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := kafkagen.GenerateMetadata(filepath.Join("data", "__cluster_metadata-0"), kafkagen.MetadataOptions{Seed: 3, Changes: 20, SnapshotAt: -1}); err != nil {
		t.Fatal(err)
	}
	sideGen(t, filepath.Join("data", "orders-0"), kafkagen.Options{Topic: "orders", Segments: 2, Batches: 10, DataDirCheckpoints: true})
	var want string
	for _, line := range strings.Split(strings.TrimSpace(sideRun(t, 0, []string{"-o", "json", "metadata", "--topic", "orders", "data"})), "\n") {
		var o struct {
			Kind    string            `json:"kind"`
			Configs map[string]string `json:"configs"`
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if o.Kind == "topic" {
			want = o.Configs["retention.ms"]
		}
	}
	if want == "" {
		t.Fatal("the generated image sets no retention.ms on orders")
	}
	at := "--at=2023-11-15T00:00:00Z"
	sideRun(t, 0, []string{"-o", "json", "retention", at, "data"}, `"retention.ms":"`+want+`"`, `"retention.ms":"topic"`)
	sideRun(t, 0, []string{"-o", "json", "retention", at, "--config", "retention.ms=1000", "data"}, `"retention.ms":"1000"`, `"retention.ms":"flag"`, `!"retention.ms":"topic"`)
}

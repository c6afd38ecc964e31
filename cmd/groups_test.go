package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestGroupsOnRealFixturesMatchDumpLog: on every real data directory that
// holds __consumer_offsets partitions, the committed offsets of groups are
// those the records dump-log --decoder shows give when applied in offset
// order (last commit wins, a tombstone removes; none of these logs is
// transactional, which the replay below checks), both at the end and as
// of the time of each record.
func TestGroupsOnRealFixturesMatchDumpLog(t *testing.T) {
	t.Parallel()
	real := requireRealFixtures(t)
	ents, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range ents {
		dir := filepath.Join(real, e.Name())
		parts, _ := filepath.Glob(filepath.Join(dir, "__consumer_offsets-*"))
		if !e.IsDir() || len(parts) == 0 {
			continue
		}
		checked++
		type rec struct {
			ts   int64
			key  string
			line string // "" for a tombstone
		}
		var recs []rec
		for _, p := range parts {
			out, stderr, code := runKseg(t, nil, "-o", "json", "dump-log", "--decoder", "consumer_offsets", p)
			if code != 0 {
				t.Fatalf("dump-log %s: exit %d: %s", p, code, stderr)
			}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r struct {
					Kind      string
					Offset    int64
					Timestamp int64
					Control   *struct{ Type string }
					Decoded   *struct {
						Type      string
						Key       map[string]any
						Value     map[string]any
						Tombstone bool
					}
				}
				var b struct {
					Kind            string
					IsTransactional bool `json:"is_transactional"`
				}
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				_ = json.Unmarshal([]byte(l), &b)
				if b.Kind == "batch" && b.IsTransactional {
					t.Fatalf("%s holds a transactional batch: this replay does not model it", p)
				}
				if r.Kind != "record" || r.Decoded == nil || r.Decoded.Type != "offset_commit" {
					continue
				}
				k := fmt.Sprintf("%v/%v/%v", r.Decoded.Key["group"], r.Decoded.Key["topic"], r.Decoded.Key["partition"])
				line := ""
				if !r.Decoded.Tombstone {
					v := r.Decoded.Value
					epoch := "null"
					if e, ok := v["leaderEpoch"].(float64); ok && e >= 0 {
						epoch = fmt.Sprint(e)
					}
					line = fmt.Sprintf("%s offset=%v epoch=%s meta=%v ts=%v source=%s@%d", k, v["offset"], epoch, v["metadata"], v["commitTimestamp"], filepath.Base(p), r.Offset)
				}
				recs = append(recs, rec{r.Timestamp, k, line})
			}
		}
		expect := func(at int64) []string {
			state := map[string]string{}
			for _, r := range recs {
				if r.ts > at {
					continue
				}
				if r.line == "" {
					delete(state, r.key)
				} else {
					state[r.key] = r.line
				}
			}
			var out []string
			for _, l := range state {
				out = append(out, l)
			}
			sort.Strings(out)
			return out
		}
		groupsAt := func(at int64) []string {
			args := []string{"-o", "json", "groups", dir}
			if at >= 0 {
				args = append(args, "--at", fmt.Sprint(at))
			}
			out, stderr, code := runKseg(t, nil, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("groups %s: exit %d: %s", dir, code, stderr)
			}
			var got []string
			n := 0
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var o map[string]any
				if err := json.Unmarshal([]byte(l), &o); err != nil {
					t.Fatal(err)
				}
				if o["kind"] == "summary" {
					if int(o["offsets"].(float64)) != n || int(o["partitions_read"].(float64)) != len(parts) {
						t.Errorf("%s: summary %s after %d offsets of %d partitions", dir, l, n, len(parts))
					}
					continue
				}
				n++
				epoch := "null"
				if o["leader_epoch"] != nil {
					epoch = fmt.Sprint(o["leader_epoch"])
				}
				got = append(got, fmt.Sprintf("%v/%v/%v offset=%v epoch=%s meta=%v ts=%v source=%v@%v", o["group"], o["topic"], o["partition"],
					o["offset"], epoch, o["metadata"], o["commit_timestamp"], o["source"], o["source_offset"]))
				if leo, ok := o["log_end_offset"].(float64); ok && o["lag"].(float64) != leo-o["offset"].(float64) {
					t.Errorf("%s: lag of %s", dir, l)
				}
			}
			sort.Strings(got)
			return got
		}
		times := []int64{-1}
		for _, r := range recs {
			times = append(times, r.ts, r.ts-1)
		}
		for _, at := range times {
			want := expect(1 << 62)
			if at >= 0 {
				want = expect(at)
			}
			if got := groupsAt(at); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s at %d:\n got  %v\n want %v", e.Name(), at, got, want)
			}
		}
	}
	if checked < 4 {
		t.Errorf("only %d real data directories hold __consumer_offsets", checked)
	}
}

// TestGroupsCommand: a generated data directory with a __consumer_offsets
// partition and the consumed partition beside it: the JSON lines with
// log end offset and lag, the filters, the table, and the exit codes.
func TestGroupsCommand(t *testing.T) {
	root := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(root, "orders-1"), kafkagen.Options{Seed: 4, Batches: 20})
	if err != nil {
		t.Fatal(err)
	}
	var log []byte
	recs := []kafkagen.Record{
		{OffsetDelta: 0, Timestamp: 1000, Key: kafkagen.OffsetCommitKey("billing", "orders", 1), Value: kafkagen.OffsetCommitValue(3, 40, 2, "", 1500, 0)},
		{OffsetDelta: 1, Timestamp: 1001, Key: kafkagen.OffsetCommitKey("billing", "orders", 2), Value: kafkagen.OffsetCommitValue(1, 9, 0, "m", 1501, 99)},
		{OffsetDelta: 2, Timestamp: 1002, Key: kafkagen.OffsetCommitKey("audit", "orders", 1), Value: kafkagen.OffsetCommitValue(4, 7, 1, "x", 1502, 0)},
	}
	log = kafkagen.AppendBatch(log, kafkagen.Batch{LeaderEpoch: 0, ProducerID: -1, Records: recs})
	log = kafkagen.AppendBatch(log, kafkagen.Batch{BaseOffset: 3, ProducerID: 5, Transactional: true,
		Records: []kafkagen.Record{{Timestamp: 1003, Key: kafkagen.OffsetCommitKey("audit", "orders", 2), Value: kafkagen.OffsetCommitValue(3, 1, 1, "", 1503, 0)}}})
	co := filepath.Join(root, "__consumer_offsets-4")
	if err := os.MkdirAll(co, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(co, inspect.SegmentName(0)+".log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, root)
	out, stderr, code := runKseg(t, nil, "-o", "json", "groups", root)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	leo := m.LogEndOffset
	want := fmt.Sprintf(`{"kind":"group_offset","group":"audit","topic":"orders","partition":1,"offset":7,"leader_epoch":1,"metadata":"x","commit_timestamp":1502,"source":"__consumer_offsets-4","source_offset":2,"log_end_offset":%d,"lag":%d}
{"kind":"group_offset","group":"billing","topic":"orders","partition":1,"offset":40,"leader_epoch":2,"metadata":"","commit_timestamp":1500,"source":"__consumer_offsets-4","source_offset":0,"log_end_offset":%d,"lag":%d}
{"kind":"group_offset","group":"billing","topic":"orders","partition":2,"offset":9,"leader_epoch":null,"metadata":"m","commit_timestamp":1501,"source":"__consumer_offsets-4","source_offset":1,"log_end_offset":null,"lag":null}
{"kind":"summary","groups":2,"offsets":3,"partitions_read":1,"pending_transactional":1}
`, leo, leo-7, leo, leo-40)
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, _, code = runKseg(t, nil, "-o", "json", "groups", co, "--group", "billing", "--topic", "orders", "--at", "1000")
	if code != 0 || !strings.HasPrefix(out, `{"kind":"group_offset","group":"billing","topic":"orders","partition":1,"offset":40,`) ||
		!strings.HasSuffix(out, `{"kind":"summary","groups":1,"offsets":1,"partitions_read":1,"pending_transactional":0}`+"\n") {
		t.Errorf("--group billing --at 1000 on the partition: exit %d\n%s", code, out)
	}
	out, _, code = runKseg(t, nil, "groups", root, "--group", "audit")
	if code != 0 || !strings.Contains(out, "1 group, 1 committed offset from 1 __consumer_offsets partition; 1 transactional offset commit pending") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	_, stderr, code = runKseg(t, nil, "groups", filepath.Join(root, "orders-1"))
	if code != 2 || !strings.Contains(stderr, "no __consumer_offsets partition") {
		t.Errorf("no __consumer_offsets: exit %d: %s", code, stderr)
	}
	_, _, code = runKseg(t, nil, "groups", root, "--at", "soon")
	if code != 2 {
		t.Errorf("bad --at: exit %d", code)
	}
	assertTreeUnchanged(t, root, before)
	// A torn tail: the offsets before it, a warning naming the file and byte, exit 2.
	if err := os.Truncate(filepath.Join(co, inspect.SegmentName(0)+".log"), int64(len(log)-3)); err != nil {
		t.Fatal(err)
	}
	before = hashTree(t, root)
	out, stderr, code = runKseg(t, nil, "-o", "json", "groups", root)
	if code != 2 || !strings.Contains(out, `"offsets":3,`) || !strings.Contains(stderr, "00000000000000000000.log: byte position") {
		t.Errorf("torn: exit %d\n%s\n%s", code, out, stderr)
	}
	assertTreeUnchanged(t, root, before)
}

// TestGroupsLooksUpOnlyLegalTopics: a commit for topic "../other/t" next
// to one for "t": the partition directory "../other/t-0" beside the data
// directory holds segments, but a name Kafka refuses (Topic.validate) is
// no partition of the data directory, so its lag is null; t-0's is known.
func TestGroupsLooksUpOnlyLegalTopics(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	for _, dir := range []string{filepath.Join(root, "other", "t-0"), filepath.Join(data, "t-0")} {
		if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Batches: 3}); err != nil {
			t.Fatal(err)
		}
	}
	writeCommits(t, filepath.Join(data, "__consumer_offsets-0"),
		kafkagen.Record{OffsetDelta: 0, Timestamp: 1000, Key: kafkagen.OffsetCommitKey("g", "../other/t", 0), Value: kafkagen.OffsetCommitValue(3, 1, 0, "", 1000, 0)},
		kafkagen.Record{OffsetDelta: 1, Timestamp: 1001, Key: kafkagen.OffsetCommitKey("g", "t", 0), Value: kafkagen.OffsetCommitValue(3, 1, 0, "", 1001, 0)},
	)
	out, stderr, code := runKseg(t, nil, "-o", "json", "groups", data)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"topic":"../other/t"`) || !strings.HasSuffix(lines[0], `"log_end_offset":null,"lag":null}`) ||
		!strings.Contains(lines[1], `"topic":"t"`) || strings.Contains(lines[1], `"lag":null`) {
		t.Errorf("got\n%s", out)
	}
}

// writeCommits writes dir, a __consumer_offsets partition of one segment
// holding one plain batch of recs (offset commits).
func writeCommits(t *testing.T, dir string, recs ...kafkagen.Record) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1, Records: recs})
	if err := os.WriteFile(filepath.Join(dir, inspect.SegmentName(0)+".log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
}

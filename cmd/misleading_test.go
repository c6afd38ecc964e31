package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// misledPartition writes a partition of 60 batches of up to 4 records
// (offsets 0..~150) and returns it with its manifest; damage says which
// index to damage: "index", whose entries then point two batches past
// theirs (the last ones past the end of the log), or "timeindex", whose
// timestamps are then 40 ms too low ("": neither).
func misledPartition(t *testing.T, damage string) (string, *kafkagen.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orders-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Batches: 60, RecordsPerBatch: 4, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	if err != nil {
		t.Fatal(err)
	}
	seg := &m.Segments[0]
	switch damage {
	case "index":
		gentest.EditOffsetIndex(t, m.IndexPath(seg), func(slot int, rel, pos *int32) {
			if next := slot + 3; next < len(seg.Batches) {
				*pos = int32(seg.Batches[next].Position)
			} else {
				*pos = int32(seg.LogSize + 100)
			}
		})
	case "timeindex":
		gentest.EditTimeIndex(t, m.TimeIndexPath(seg), func(_ int, ts *int64, _ *int32) { *ts -= 40 })
	}
	return dir, m
}

// TestCommandsThroughMisleadingIndexes: find, dump-log, lookup and
// lookup-time over a partition whose .index points past its batches and
// whose .timeindex is too low (issue 27's cases). find and dump-log print
// every record in range; lookup and lookup-time keep the broker's answer
// and add misleading_index with the scan's answer; each names the entry
// that misled it on stderr. Over the same partition with healthy indexes
// none says a word and the JSON has no misleading_index. timeline reads
// the damaged segment from its batch headers and says so. (find printed
// 68 of 70 records and nobody said anything before the rule.)
func TestCommandsThroughMisleadingIndexes(t *testing.T) {
	for _, damage := range []string{"", "index", "timeindex"} {
		dir, m := misledPartition(t, damage)
		index := m.IndexPath(&m.Segments[0])
		if damage == "timeindex" {
			index = m.TimeIndexPath(&m.Segments[0])
		}
		damaged := damage != ""
		quiet := func(what, stderr string) {
			t.Helper()
			switch {
			case damaged && !strings.Contains(stderr, "kseg: warning: misleading index entry: "+index+": slot "):
				t.Errorf("%s: stderr does not name the misleading entry: %q", what, stderr)
			case !damaged && stderr != "":
				t.Errorf("%s on healthy indexes: stderr %q", what, stderr)
			}
		}

		// timeline reads a segment whose entries mislead from its batch
		// headers, and says so.
		out, stderr, code := runKseg(t, nil, "-o", "json", "timeline", dir)
		_, sum := timelineLines(t, out)
		if want := map[bool]string{false: "timeindex", true: "batches"}[damaged]; code != 0 || sum.Source != want || sum.Records != m.LogEndOffset {
			t.Errorf("damage %q: timeline: exit %d, summary %+v, want source %s and %d records", damage, code, sum, want, m.LogEndOffset)
		}
		quiet("timeline", stderr)

		if damage != "timeindex" {
			misledByOffset(t, dir, index, damaged, quiet)
		}
		if damage != "index" {
			misledByTime(t, dir, m, index, damaged, quiet)
		}
	}
}

func misledByOffset(t *testing.T, dir, index string, damaged bool, quiet func(what, stderr string)) {
	out, stderr, code := runKseg(t, nil, "-o", "json", "find", dir, "--from-offset", "30", "--to-offset", "99")
	if n := len(jsonLines(t, out)); code != 0 || n != 70 {
		t.Errorf("damaged=%v: find --from-offset 30 --to-offset 99: exit %d, %d records, want 70", damaged, code, n)
	}
	quiet("find", stderr)

	out, stderr, code = runKseg(t, nil, "-o", "json", "dump-log", "--records", dir, "--from-offset", "30", "--to-offset", "99")
	records := 0
	for _, l := range jsonLines(t, out) {
		if l["kind"] == "record" {
			records++
		}
	}
	if code != 0 || records != 70 {
		t.Errorf("damaged=%v: dump-log --from-offset 30 --to-offset 99: exit %d, %d records, want 70", damaged, code, records)
	}
	quiet("dump-log", stderr)

	out, stderr, code = runKseg(t, nil, "-o", "json", "lookup", dir, "30")
	l := jsonLines(t, out)[0]
	quiet("lookup", stderr)
	mi, has := l["misleading_index"].(map[string]any)
	if code != 0 || has != damaged {
		t.Fatalf("damaged=%v: lookup 30: exit %d, misleading_index %v", damaged, code, l["misleading_index"])
	}
	if damaged {
		e := mi["entries"].([]any)[0].(map[string]any)
		by := mi["by_scan"].(map[string]any)
		bb, broker := by["batch"].(map[string]any), l["batch"].(map[string]any)
		if e["file"] != index || e["index"] != "offset" || e["problem"] == "" ||
			by["found"] != true || bb["base_offset"].(float64) > 30 || bb["last_offset"].(float64) < 30 ||
			broker["base_offset"].(float64) <= 30 {
			t.Errorf("lookup 30: entry %v, by_scan %v, the broker's batch %v", e, by, broker)
		}
	}
}

func misledByTime(t *testing.T, dir string, m *kafkagen.Manifest, index string, damaged bool, quiet func(what, stderr string)) {
	target := m.Segments[0].Batches[20].MaxTimestamp
	out, stderr, code := runKseg(t, nil, "-o", "json", "find", dir, "--from-time", strconv.FormatInt(target, 10))
	want := 0
	for _, b := range m.Segments[0].Batches {
		for _, r := range b.Records {
			if r.Timestamp >= target {
				want++
			}
		}
	}
	if n := len(jsonLines(t, out)); code != 0 || n != want {
		t.Errorf("damaged=%v: find --from-time %d: exit %d, %d records, want %d", damaged, target, code, n, want)
	}
	quiet("find --from-time", stderr)

	out, stderr, code = runKseg(t, nil, "-o", "json", "dump-log", "--records", dir, "--from-time", strconv.FormatInt(target, 10))
	records := 0
	for _, l := range jsonLines(t, out) {
		if l["kind"] == "record" {
			records++
		}
	}
	if code != 0 || records != want {
		t.Errorf("damaged=%v: dump-log --from-time %d: exit %d, %d records, want %d", damaged, target, code, records, want)
	}
	quiet("dump-log --from-time", stderr)

	out, stderr, code = runKseg(t, nil, "-o", "json", "lookup-time", dir, strconv.FormatInt(target, 10))
	l := jsonLines(t, out)[0]
	quiet("lookup-time", stderr)
	mi, has := l["misleading_index"].(map[string]any)
	if code != 0 || has != damaged {
		t.Fatalf("damaged=%v: lookup-time: exit %d, misleading_index %v", damaged, code, l["misleading_index"])
	}
	first := int64(-1) // the first record with a timestamp >= target
	for _, b := range m.Segments[0].Batches {
		for _, r := range b.Records {
			if first < 0 && r.Timestamp >= target {
				first = r.Offset
			}
		}
	}
	answer := l
	if damaged {
		answer = mi["by_scan"].(map[string]any)
		if e := mi["entries"].([]any)[0].(map[string]any); e["index"] != "time" || e["timestamp"] == nil {
			t.Errorf("lookup-time: entry %v", e)
		}
	}
	if answer["offset"].(float64) != float64(first) {
		t.Errorf("damaged=%v: lookup-time %d answers offset %v, the log's first record at or after it is %d", damaged, target, answer["offset"], first)
	}
}

// TestLookupWhereAMisleadingEntryLeadsToBytesThatFail: every .index entry
// points inside a record whose value reads as an entry of length 1, which
// the broker's file iterator refuses (CorruptRecordException). lookup
// fails as the broker's fetch does (exit 2, as before the rule) and names
// the entry and what a scan finds; find and dump-log, which start from the
// scan, print every record in range and report no damage: the log is
// whole.
func TestLookupWhereAMisleadingEntryLeadsToBytesThatFail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	trap := []byte("\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x01trap")
	var kvs []kafkagen.KeyValue
	for i := range 40 {
		v := []byte(fmt.Sprintf("value-%02d", i))
		if i == 5 {
			v = trap
		}
		kvs = append(kvs, kafkagen.KeyValue{Key: []byte(fmt.Sprintf("k%02d", i)), Value: v})
	}
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 2, RecordsPerBatch: 2, Records: kvs, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	if err != nil {
		t.Fatal(err)
	}
	seg := &m.Segments[0]
	log, err := os.ReadFile(m.LogPath(seg))
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(log, trap)
	gentest.EditOffsetIndex(t, m.IndexPath(seg), func(_ int, _, pos *int32) { *pos = int32(at) })

	out, stderr, code := runKseg(t, nil, "-o", "json", "lookup", dir, "30")
	if code != 2 || out != "" || !strings.Contains(stderr, "misleading index entry: "+m.IndexPath(seg)) ||
		!strings.Contains(stderr, "its read fails there; a scan of the segment finds offset 30") {
		t.Errorf("lookup: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	out, stderr, code = runKseg(t, nil, "-o", "json", "find", dir, "--from-offset", "20")
	if n := len(jsonLines(t, out)); code != 0 || n != 20 || strings.Contains(stderr, "damage") || !strings.Contains(stderr, "misleading index entry") {
		t.Errorf("find --from-offset 20: exit %d, %d records, stderr %q", code, n, stderr)
	}
	out, stderr, code = runKseg(t, nil, "-o", "json", "dump-log", "--records", dir, "--from-offset", "20")
	records := 0
	for _, l := range jsonLines(t, out) {
		if l["kind"] == "record" {
			records++
		}
	}
	if code != 0 || records != 20 || !strings.Contains(stderr, "misleading index entry") {
		t.Errorf("dump-log --from-offset 20: exit %d, %d records, stderr %q", code, records, stderr)
	}
}

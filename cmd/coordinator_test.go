package cmd

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kseg/kseg/inspect/internaltopics"
)

// stateDir matches the partition directories of the two state topics.
var stateDir = regexp.MustCompile(`^(__consumer_offsets|__transaction_state)-(\d+)$`)

// TestCoordinatorPartitionRealBrokers reads every record key that real
// brokers wrote into __consumer_offsets and __transaction_state partitions
// and checks that the id in it hashes to the partition it is in (the
// brokers ran with the default 50 partitions). Keys, as the coordinators
// write them: int16 key version, then the group id or transactional id as
// an int16-length string (offset commit keys, versions 0 and 1, continue
// with topic and partition; group metadata keys are version 2).
func TestCoordinatorPartitionRealBrokers(t *testing.T) {
	root := requireRealFixtures(t)
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, dir := range dirs {
		m := stateDir.FindStringSubmatch(filepath.Base(dir))
		if m == nil {
			continue
		}
		partition, _ := strconv.Atoi(m[2])
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		keys := 0
		for _, log := range logs {
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range recordKeys(t, log, data) {
				id, ok := stateKeyID(m[1], key)
				if !ok {
					continue
				}
				keys++
				checked[m[1]+" "+id] = true
				if got := internaltopics.CoordinatorPartition(id, defaultStatePartitions); got != int32(partition) {
					t.Errorf("%s: id %q is in partition %d, CoordinatorPartition says %d", log, id, partition, got)
				}
			}
		}
		if keys == 0 {
			t.Errorf("%s: no state keys found", dir)
		}
	}
	// The fixtures hold 5 group ids and 1 transactional id; if they become
	// unreadable this test must not pass by checking nothing.
	if len(checked) < 6 {
		t.Errorf("checked only %d distinct ids: %v", len(checked), checked)
	}
	t.Logf("checked %d ids: %v", len(checked), checked)
}

// stateKeyID extracts the group or transactional id from a state-topic key.
func stateKeyID(topic string, key []byte) (string, bool) {
	if len(key) < 4 {
		return "", false
	}
	version := int16(binary.BigEndian.Uint16(key))
	switch {
	case topic == groupMetadataTopic && version >= 0 && version <= 2:
	case topic == transactionStateTopic && version == 0:
	default:
		return "", false
	}
	n := int(int16(binary.BigEndian.Uint16(key[2:])))
	if n < 0 || 4+n > len(key) {
		return "", false
	}
	return string(key[4 : 4+n]), true
}

// recordKeys returns the keys of the records of every uncompressed,
// non-control v2 batch in a .log file, parsed with kmsg (an independent
// decoder).
func recordKeys(t *testing.T, name string, data []byte) [][]byte {
	t.Helper()
	var keys [][]byte
	for pos := 0; pos+12 <= len(data); {
		length := int(int32(binary.BigEndian.Uint32(data[pos+8:])))
		if length < 0 || pos+12+length > len(data) {
			t.Fatalf("%s: bad batch length %d at position %d", name, length, pos)
		}
		raw := data[pos : pos+12+length]
		pos += 12 + length
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			t.Fatalf("%s: batch at position %d: %v", name, pos, err)
		}
		if b.Magic != 2 || b.Attributes&0x07 != 0 || b.Attributes&0x20 != 0 {
			continue // older format, compressed, or a control batch
		}
		recs := b.Records
		for i := int32(0); i < b.NumRecords; i++ {
			l, n := binary.Varint(recs)
			if n <= 0 || l < 0 || int(l) > len(recs)-n {
				t.Fatalf("%s: bad record length in batch %d", name, b.FirstOffset)
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:n+int(l)]); err != nil {
				t.Fatalf("%s: record in batch %d: %v", name, b.FirstOffset, err)
			}
			keys = append(keys, r.Key)
			recs = recs[n+int(l):]
		}
	}
	return keys
}

func TestCoordinatorFieldsMatchJSON(t *testing.T) {
	assertColumnsMatchJSON(t, coordinatorResult{Kind: "group", ID: "g", Topic: "__consumer_offsets", Partitions: 50, Partition: 7}, coordinatorFields)
}

// The command's output in every format, for ids that stress the renderers,
// against testdata/golden/coordinator.txt.
func TestCoordinatorGolden(t *testing.T) {
	var b strings.Builder
	for _, args := range [][]string{
		{"--group", "my-consumer-group"},
		{"--transactional-id", "default_", "--partitions", "7"},
		{"--group=", "--partitions", "1"},
		{"--group", "日本語のグループ"},
		{"--group", "emoji-\U0001F680-group"},
		{"--group", "comma,\"quote\"\nnewline<&>\x1b[31m"},
	} {
		// wide is the table (every field is in it), junit is verify's.
		for _, format := range []OutputFormat{FormatTable, FormatJSON, FormatCSV} {
			full := append([]string{"coordinator", "-o", string(format)}, args...)
			stdout, stderr, code := runKseg(t, nil, full...)
			if code != 0 || stderr != "" {
				t.Errorf("kseg %s: exit %d, stderr %q", strings.Join(full, " "), code, stderr)
			}
			fmt.Fprintf(&b, "$ kseg %s\n%s\n", strconv.Quote(strings.Join(full, " ")), stdout)
		}
	}
	assertGolden(t, "coordinator.txt", b.String())
}

func TestCoordinatorRejects(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"coordinator"}, "kseg: give --group ID or --transactional-id ID\n"},
		{[]string{"coordinator", "--partitions", "5"}, "kseg: give --group ID or --transactional-id ID\n"},
		{[]string{"coordinator", "--group", "g", "--transactional-id", "t"}, "kseg: give either --group or --transactional-id, not both\n"},
		{[]string{"coordinator", "--group=", "--transactional-id="}, "kseg: give either --group or --transactional-id, not both\n"},
		{[]string{"coordinator", "--group", "g", "--partitions", "0"}, "kseg: --partitions must be between 1 and 2147483647, not 0\n"},
		{[]string{"coordinator", "--group", "g", "--partitions", "-1"}, "kseg: --partitions must be between 1 and 2147483647, not -1\n"},
		{[]string{"coordinator", "--group", "g", "--partitions", "9999999999"}, "kseg: --partitions must be between 1 and 2147483647, not 9999999999\n"},
		{[]string{"coordinator", "--group", "bad\xffutf8"}, "kseg: the id \"bad\\xffutf8\" is not valid UTF-8\n"},
		{[]string{"coordinator", "--transactional-id", "\xed\xa0\x80"}, "kseg: the id \"\\xed\\xa0\\x80\" is not valid UTF-8\n"}, // an encoded surrogate
	} {
		stdout, stderr, code := runKseg(t, nil, tc.args...)
		want := tc.stderr + "Run 'kseg coordinator --help' for usage.\n"
		if code != exitFailed || stdout != "" || stderr != want {
			t.Errorf("kseg %q: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", tc.args, code, stdout, stderr, want)
		}
	}
}

// The largest partition count a broker can have still works.
func TestCoordinatorMaxPartitions(t *testing.T) {
	stdout, _, code := runKseg(t, nil, "coordinator", "--group", "orders-consumer", "--partitions", "2147483647", "-o", "csv")
	// |−1204742690| % 2147483647 = 1204742690
	if want := "kind,id,topic,partitions,partition\ngroup,orders-consumer,__consumer_offsets,2147483647,1204742690\n"; code != 0 || stdout != want {
		t.Errorf("exit %d, stdout %q, want %q", code, stdout, want)
	}
}

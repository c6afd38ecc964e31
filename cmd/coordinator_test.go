package cmd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Golden values printed by OpenJDK 17 for each string: s.hashCode(), and
// Kafka's Utils.abs(h) % 50 and % 7, where Utils.abs(n) is
// (n == Integer.MIN_VALUE) ? 0 : Math.abs(n). For the negative hashes the
// comment gives (h & 0x7fffffff) % 50, the answer of the wrong function.
var javaHashGolden = []struct {
	s        string
	hash     int32
	p50, p07 int32
}{
	{"", 0, 0, 0},
	{"a", 97, 47, 6},
	{"hello", 99162322, 22, 0},
	{"Aa", 2112, 12, 5}, // a classic collision with "BB"
	{"BB", 2112, 12, 5},
	// hashCode == Integer.MIN_VALUE, which Math.abs leaves negative.
	{"polygenelubricants", math.MinInt32, 0, 0},
	{"GydZG_", math.MinInt32, 0, 0},
	{"DESIGNING WORKHOUSES", math.MinInt32, 0, 0},
	// Ids found in the real brokers' __consumer_offsets / __transaction_state.
	{"my-consumer-group", 1513705513, 13, 5},
	{"connect-group", 2056760284, 34, 5},
	{"APP-NAME", 1933651671, 21, 0},
	{"my-first-application", 1345035218, 18, 2},
	{"default_", 644280894, 44, 5},
	{"_confluent-controlcenter-5-1-2-1-command", 1853207063, 13, 1},
	// Negative hashes.
	{"zzzzzzzz", -1910022912, 12, 0},                // mask: 36
	{"orders-consumer", -1204742690, 40, 4},         // mask: 8
	{"kafka-streams-app", -2143363552, 2, 1},        // mask: 46
	{"ksql-service-0", -1479905458, 8, 3},           // mask: 40
	{"transactional-producer-1", -447076998, 48, 4}, // mask: 0
	{strings.Repeat("x", 1000), -1715418112, 12, 2}, // mask: 36
	{"payments-service-group", 1862017735, 35, 4},
	{"console-consumer-12345", 158455506, 6, 6},
	{"connect-cluster", 1440343063, 13, 5},
	{strings.Repeat("abc", 333), 627397602, 2, 6},
	// Non-ASCII in the BMP: one UTF-16 unit per rune.
	{"consumer-group-ü", 147483223, 23, 6},
	{"grüße", 98768023, 23, 4},
	{"日本語のグループ", -935085811, 11, 2},             // mask: 37
	{"Übergröße-Gruppe", -1498948022, 22, 5},    // mask: 26
	{"группа-потребителей", -1502395232, 32, 2}, // mask: 16
	{"מזהה", 46229560, 10, 6},
	{"\uffff", 65535, 35, 1},
	{"\x00", 0, 0, 0},
	{"x\x00y", 115441, 41, 4},
	{"-leading-dash", 1836629670, 20, 1},
	// Above U+FFFF: two UTF-16 units (the surrogate pair) per rune.
	{"\U0001F600", 1772899, 49, 2}, // 0xD83D*31 + 0xDE00
	{"emoji-\U0001F680-group", 349754300, 0, 0},
	{"\U0001D11E", 1772394, 44, 1},
	{"\U0001F44D\U0001F3FD", 1705111281, 31, 6},
	{"a\U00010000b", 57775201, 1, 1},
	{"tx-\U0010FFFF", 112549833, 33, 4},
}

func TestJavaStringHashCodeGolden(t *testing.T) {
	for _, g := range javaHashGolden {
		if got := javaStringHashCode(g.s); got != g.hash {
			t.Errorf("javaStringHashCode(%q) = %d, Java says %d", g.s, got, g.hash)
		}
		if got := coordinatorPartition(g.s, 50); got != g.p50 {
			t.Errorf("coordinatorPartition(%q, 50) = %d, want %d", g.s, got, g.p50)
		}
		if got := coordinatorPartition(g.s, 7); got != g.p07 {
			t.Errorf("coordinatorPartition(%q, 7) = %d, want %d", g.s, got, g.p07)
		}
	}
}

func TestKafkaAbs(t *testing.T) {
	for _, tc := range []struct{ in, want int32 }{
		{0, 0}, {1, 1}, {-1, 1}, {42, 42}, {-42, 42},
		{math.MaxInt32, math.MaxInt32}, {-math.MaxInt32, math.MaxInt32},
		{math.MinInt32, 0}, // Math.abs would give MinInt32 back
		{math.MinInt32 + 1, math.MaxInt32},
	} {
		if got := kafkaAbs(tc.in); got != tc.want {
			t.Errorf("kafkaAbs(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// referencePartition computes the same answer another way: the UTF-16 code
// units from the standard library, the polynomial in uint32 (arithmetic
// modulo 2^32, which is what int32 overflow is), abs and modulo in int64.
func referencePartition(s string, n int32) (hash int32, partition int32) {
	var h uint32
	for _, u := range utf16.Encode([]rune(s)) {
		h = h*31 + uint32(u)
	}
	hash = int32(h)
	a := int64(hash)
	switch {
	case a == math.MinInt32:
		a = 0
	case a < 0:
		a = -a
	}
	return hash, int32(a % int64(n))
}

// randomID draws a valid UTF-8 string from ranges that matter: ASCII,
// Latin-1, the rest of the BMP below and above the surrogate block, and the
// supplementary planes.
func randomID(r *rand.Rand) string {
	ranges := [][2]rune{{0x20, 0x7e}, {0x00, 0x1f}, {0xa0, 0xff}, {0x100, 0xd7ff}, {0xe000, 0xffff}, {0x10000, 0x10ffff}}
	n := r.IntN(40)
	if r.IntN(20) == 0 {
		n = 200 + r.IntN(2000)
	}
	var b strings.Builder
	for range n {
		rg := ranges[r.IntN(len(ranges))]
		b.WriteRune(rg[0] + r.Int32N(rg[1]-rg[0]+1))
	}
	return b.String()
}

func TestCoordinatorPartitionMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counts := [2]int{} // hashes seen negative / non-negative
	for range 20000 {
		s := randomID(r)
		n := 1 + r.Int32N(200)
		if r.IntN(10) == 0 {
			n = 1 + r.Int32N(math.MaxInt32)
		}
		wantHash, wantPart := referencePartition(s, n)
		if got := javaStringHashCode(s); got != wantHash {
			t.Fatalf("javaStringHashCode(%q) = %d, reference %d", s, got, wantHash)
		}
		got := coordinatorPartition(s, n)
		if got != wantPart || got < 0 || got >= n {
			t.Fatalf("coordinatorPartition(%q, %d) = %d, reference %d", s, n, got, wantPart)
		}
		if wantHash < 0 {
			counts[0]++
		} else {
			counts[1]++
		}
	}
	if counts[0] < 5000 || counts[1] < 5000 {
		t.Errorf("the random ids did not exercise both signs: %v", counts)
	}
}

func FuzzCoordinatorPartition(f *testing.F) {
	for _, g := range javaHashGolden {
		f.Add(g.s, int32(50))
	}
	f.Add("polygenelubricants", int32(math.MaxInt32))
	f.Fuzz(func(t *testing.T, s string, n int32) {
		if !utf8.ValidString(s) || n < 1 {
			t.Skip()
		}
		wantHash, wantPart := referencePartition(s, n)
		if got := javaStringHashCode(s); got != wantHash {
			t.Fatalf("javaStringHashCode(%q) = %d, reference %d", s, got, wantHash)
		}
		if got := coordinatorPartition(s, n); got != wantPart || got < 0 || got >= n {
			t.Fatalf("coordinatorPartition(%q, %d) = %d, reference %d", s, n, got, wantPart)
		}
	})
}

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
				if got := coordinatorPartition(id, defaultStatePartitions); got != int32(partition) {
					t.Errorf("%s: id %q is in partition %d, coordinatorPartition says %d", log, id, partition, got)
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

package internaltopics

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
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
		if got := JavaStringHashCode(g.s); got != g.hash {
			t.Errorf("JavaStringHashCode(%q) = %d, Java says %d", g.s, got, g.hash)
		}
		if got := CoordinatorPartition(g.s, 50); got != g.p50 {
			t.Errorf("CoordinatorPartition(%q, 50) = %d, want %d", g.s, got, g.p50)
		}
		if got := CoordinatorPartition(g.s, 7); got != g.p07 {
			t.Errorf("CoordinatorPartition(%q, 7) = %d, want %d", g.s, got, g.p07)
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
		if got := JavaStringHashCode(s); got != wantHash {
			t.Fatalf("JavaStringHashCode(%q) = %d, reference %d", s, got, wantHash)
		}
		got := CoordinatorPartition(s, n)
		if got != wantPart || got < 0 || got >= n {
			t.Fatalf("CoordinatorPartition(%q, %d) = %d, reference %d", s, n, got, wantPart)
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
		if got := JavaStringHashCode(s); got != wantHash {
			t.Fatalf("JavaStringHashCode(%q) = %d, reference %d", s, got, wantHash)
		}
		if got := CoordinatorPartition(s, n); got != wantPart || got < 0 || got >= n {
			t.Fatalf("CoordinatorPartition(%q, %d) = %d, reference %d", s, n, got, wantPart)
		}
	})
}

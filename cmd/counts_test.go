package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// A count's noun agrees with its number.
func TestCountAgreesInNumber(t *testing.T) {
	for _, c := range []struct {
		n    int
		word string
		want string
	}{
		{1, "group", "1 group"}, {0, "group", "0 groups"}, {2, "batch", "2 batches"}, {2, "entry", "2 entries"},
		{1, "entry", "1 entry"}, {3, "key", "3 keys"}, {2, "committed offset", "2 committed offsets"},
		{1234, "record", "1234 records"},
	} {
		if got := count(c.n, c.word); got != c.want {
			t.Errorf("count(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
	if got := countOf(int64(1234), "entry"); got != "1,234 entries" {
		t.Errorf("countOf = %q", got)
	}
}

// groups on a broker's __consumer_offsets holding one group says so in
// the singular ("1 groups" before), and every count of its footer agrees.
func TestGroupsFooterCounts(t *testing.T) {
	dir := filepath.Join(fixtures.Root(t), "cp-kraft-multiseg-compacted")
	out, stderr, code := runIn(t, ".", "groups", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "1 group, 1 committed offset from 1 __consumer_offsets partition; 0 transactional offset commits pending\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("footer:\n%s\nwant it to end with %q", out, want)
	}
	_, stderr, _ = runIn(t, ".", "groups", filepath.Join(fixtures.Root(t), "cp-kraft-snappy-small"))
	if !strings.Contains(stderr, "(found 1 other partition)") {
		t.Errorf("stderr %q does not say 1 other partition", stderr)
	}
}

package cmd

import (
	"strings"
	"testing"
)

// The contract's "Schema-registry values in dump-log --records and find":
// find prints a match with the same decoded object dump-log --records
// gives that record.
func TestFindDecodesSchemaRegistryValues(t *testing.T) {
	t.Chdir(t.TempDir())
	schemaDataDir(t)
	want := decodedOf(t, sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "orders-0"}))
	for _, args := range [][]string{
		{"-o", "json", "find", "orders-0", "--from-offset", "0"},
		{"-o", "json", "find", ".", "--topic", "orders", "--from-offset", "0"},
	} {
		got := decodedOf(t, sideRun(t, 0, args))
		if len(got) != len(want) {
			t.Fatalf("%s: %d matches, want %d", strings.Join(args, " "), len(got), len(want))
		}
		for off, w := range want {
			if w == "" || got[off] != w {
				t.Errorf("%s: offset %d decoded\n got %s\nwant %s", strings.Join(args, " "), off, got[off], w)
			}
		}
	}
}

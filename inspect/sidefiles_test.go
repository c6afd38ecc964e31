package inspect_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestLeaderEpochCheckpointIsTheSideFilesRead: the partition's one read of
// its leader-epoch-checkpoint gives what SideFiles gives, entries and
// errors alike, and a missing file is absent, not an error.
func TestLeaderEpochCheckpointIsTheSideFilesRead(t *testing.T) {
	for name, text := range map[string]string{
		"valid":   "0\n2\n0 0\n3 120\n",
		"corrupt": "0\n2\n0 0\n",
		"absent":  "",
	} {
		dir := filepath.Join(t.TempDir(), "orders-0")
		if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Batches: 3}); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "leader-epoch-checkpoint"))
		if text != "" {
			if err := os.WriteFile(filepath.Join(dir, "leader-epoch-checkpoint"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		p := tg.Partitions[0]
		got, want := p.LeaderEpochCheckpoint(), p.SideFiles().LeaderEpochs
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LeaderEpochCheckpoint %+v, SideFiles %+v", name, got, want)
		}
		switch name {
		case "valid":
			if got.Err != nil || !got.Present() || len(got.Value.Entries) != 2 {
				t.Errorf("%s: %+v", name, got)
			}
		case "corrupt":
			if got.Err == nil {
				t.Errorf("%s: no error for a checkpoint whose count says 2 and holds 1 entry", name)
			}
		case "absent":
			if got.Present() {
				t.Errorf("%s: present", name)
			}
		}
	}
}

package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// rebuild --truncate-log on a segment with a corrupt batch in its middle:
// broker recovery would cut it there, delete every later segment, delete
// the producer snapshots beyond the new log end and drop the leader epochs
// starting at or beyond it. --dry-run says so and writes nothing;
// --truncate-log does it, setting every removed or replaced file aside.
func TestRebuildTruncateLogAfterCut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 61, Segments: 3, Batches: 20, LeaderEpochBumps: true})
	if err != nil {
		t.Fatal(err)
	}
	s0 := &m.Segments[0]
	bad := s0.Batches[12]
	newEnd := s0.Batches[11].LastOffset + 1
	repairEdit(t, m.LogPath(s0), func(b []byte) []byte { b[bad.Position+30] ^= 0xff; return b })
	before := hashTree(t, dir)
	var snapshots []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		var off int64
		if _, err := fmt.Sscanf(e.Name(), "%d.snapshot", &off); err == nil && strings.HasSuffix(e.Name(), ".snapshot") && off > newEnd {
			snapshots = append(snapshots, e.Name())
		}
	}
	if len(snapshots) == 0 {
		t.Fatal("the generated partition has no snapshot beyond the cut")
	}

	out, errOut, code := runKseg(t, nil, "-o", "json", "rebuild", "--dry-run", "--truncate-log", dir)
	if code != exitOK {
		t.Fatalf("dry run: exit %d: %s", code, errOut)
	}
	assertTreeUnchanged(t, dir, before)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("dry run lists %d segments, want only the cut one (the later ones are deleted): %s", len(lines), out)
	}
	var line struct {
		Segment  string `json:"segment"`
		AfterCut struct {
			LogEndOffset  int64    `json:"log_end_offset"`
			LaterSegments []string `json:"later_segments"`
			Snapshots     []string `json:"snapshots"`
			Epochs        []struct {
				Epoch       int32 `json:"epoch"`
				StartOffset int64 `json:"start_offset"`
			} `json:"leader_epoch_entries"`
		} `json:"after_cut"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	ac := line.AfterCut
	wantLater := []string{filepath.Base(m.LogPath(&m.Segments[1])), filepath.Base(m.LogPath(&m.Segments[2]))}
	if ac.LogEndOffset != newEnd || !slices.Equal(ac.LaterSegments, wantLater) || !slices.Equal(ac.Snapshots, snapshots) ||
		len(ac.Epochs) != 2 || ac.Epochs[0].StartOffset != m.Segments[1].BaseOffset || ac.Epochs[1].StartOffset != m.Segments[2].BaseOffset {
		t.Errorf("after_cut %+v; want log end %d, later %v, snapshots %v, the epochs of segments 1 and 2", ac, newEnd, wantLater, snapshots)
	}
	if !strings.Contains(errOut, "LogLoader.recoverLog") || !strings.Contains(errOut, "LeaderEpochFileCache.truncateFromEnd") || !strings.Contains(errOut, "ProducerStateManager.truncateAndReload") {
		t.Errorf("the dry run's plan on stderr does not say what the broker does: %s", errOut)
	}

	_, errOut, code = runKseg(t, nil, "-o", "json", "rebuild", "--truncate-log", dir)
	if code != exitOK {
		t.Fatalf("truncate: exit %d: %s", code, errOut)
	}
	// Every removed file is set aside, byte for byte.
	aside := fmt.Sprintf(".cut-at-%d", newEnd)
	for name, sum := range before {
		later := false
		for _, s := range m.Segments[1:] {
			later = later || strings.HasPrefix(name, strings.TrimSuffix(filepath.Base(m.LogPath(&s)), ".log"))
		}
		if later || slices.Contains(snapshots, name) || name == "leader-epoch-checkpoint" {
			if _, err := os.Stat(filepath.Join(dir, name)); name != "leader-epoch-checkpoint" && err == nil {
				t.Errorf("%s is still there", name)
			}
			if got := hashTree(t, dir)[name+aside]; got != sum {
				t.Errorf("%s%s does not hold the old %s", name, aside, name)
			}
		}
	}
	epochs, err := os.ReadFile(filepath.Join(dir, "leader-epoch-checkpoint"))
	if err != nil || string(epochs) != fmt.Sprintf("0\n1\n%d %d\n", m.Segments[0].Batches[0].PartitionLeaderEpoch, m.Segments[0].BaseOffset) {
		t.Errorf("leader-epoch-checkpoint %q, want the first segment's epoch only", epochs)
	}
	// What is left is a healthy partition ending at the cut.
	out, _, code = runKseg(t, nil, "-o", "json", "verify", "--strict", dir)
	if code != exitOK {
		t.Errorf("verify --strict after the cut: exit %d: %s", code, out)
	}
	out, _, _ = runKseg(t, nil, "-o", "json", "lookup-time", dir, "latest")
	if !strings.Contains(out, fmt.Sprintf(`"offset":%d,`, newEnd)) {
		t.Errorf("log end after the cut: %s, want %d", out, newEnd)
	}
}

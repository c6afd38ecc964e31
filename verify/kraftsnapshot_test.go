package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestMetadataSnapshotChecks: a generated metadata partition's snapshot
// is clean; without its header it is a snapshot.header error at 0, without
// its footer a snapshot.footer error at its last batch, with a byte
// flipped a log.crc error on the snapshot at the batch's position; named
// alone or through its data directory, every -j. Nothing about the
// snapshot when it is whole.
func TestMetadataSnapshotChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(b []byte, s *kafkagen.MetadataSnapshotManifest) []byte
		want   func(s *kafkagen.MetadataSnapshotManifest) []string
	}{
		{"whole", func(b []byte, _ *kafkagen.MetadataSnapshotManifest) []byte { return b },
			func(*kafkagen.MetadataSnapshotManifest) []string { return nil }},
		{"no header", func(b []byte, s *kafkagen.MetadataSnapshotManifest) []byte { return b[s.HeaderEnd:] },
			func(*kafkagen.MetadataSnapshotManifest) []string { return []string{"error snapshot.header @0"} }},
		{"no footer", func(b []byte, s *kafkagen.MetadataSnapshotManifest) []byte { return b[:s.FooterPosition] },
			func(s *kafkagen.MetadataSnapshotManifest) []string {
				// The last batch left is the last data batch.
				return []string{fmt.Sprintf("error snapshot.footer @%d", lastDataBatch(t, s))}
			}},
		{"neither", func(b []byte, s *kafkagen.MetadataSnapshotManifest) []byte { return b[s.HeaderEnd:s.FooterPosition] },
			func(s *kafkagen.MetadataSnapshotManifest) []string {
				return []string{"error snapshot.header @0", fmt.Sprintf("error snapshot.footer @%d", lastDataBatch(t, s)-s.HeaderEnd)}
			}},
		{"bad CRC", func(b []byte, s *kafkagen.MetadataSnapshotManifest) []byte { b[s.HeaderEnd+90] ^= 0x40; return b },
			func(s *kafkagen.MetadataSnapshotManifest) []string {
				return []string{fmt.Sprintf("error log.crc @%d", s.HeaderEnd)}
			}},
		{"empty", func([]byte, *kafkagen.MetadataSnapshotManifest) []byte { return nil },
			func(*kafkagen.MetadataSnapshotManifest) []string { return []string{"error snapshot.header @0"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			dir := filepath.Join(data, "__cluster_metadata-0")
			m, err := kafkagen.GenerateMetadata(dir, kafkagen.MetadataOptions{Seed: 6, Changes: 80})
			if err != nil {
				t.Fatal(err)
			}
			s := m.Snapshot
			sfWrite(t, s.Path, tc.damage(sfRead(t, s.Path), s))
			want := tc.want(s)
			for _, path := range []string{s.Path, dir, data} {
				for _, jobs := range []int{1, 2} {
					fs, _ := verifyPath(t, path, Options{SideFiles: true, Jobs: jobs})
					var got []string
					for _, f := range fs {
						if f.File != s.Path {
							t.Errorf("%s -j %d: a finding on %s: %s %s", path, jobs, f.File, f.Check, f.Message)
							continue
						}
						if f.SegmentBaseOffset != nil || f.Severity != Severity(f.Check) {
							t.Errorf("%s -j %d: %+v: a snapshot's findings name no segment", path, jobs, f)
						}
						got = append(got, fmt.Sprintf("%s %s @%d", f.Severity, f.Check, *f.Position))
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s -j %d: %v, want %v", path, jobs, got, want)
					}
				}
			}
		})
	}
}

// lastDataBatch is the position of the snapshot's last data batch: the
// footer batch's position less that batch's size, read from the file.
func lastDataBatch(t *testing.T, s *kafkagen.MetadataSnapshotManifest) int64 {
	b := sfRead(t, s.Path)
	pos := s.HeaderEnd
	for {
		next := pos + 12 + int64(uint32(b[pos+8])<<24|uint32(b[pos+9])<<16|uint32(b[pos+10])<<8|uint32(b[pos+11]))
		if next >= s.FooterPosition {
			return pos
		}
		pos = next
	}
}

// TestMetadataSnapshotChecksDocumented: the snapshot check ids are rows of
// the contract with their severity.
func TestMetadataSnapshotChecksDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cli-contract.md"))
	if err != nil {
		t.Skip("docs/cli-contract.md not found")
	}
	for _, c := range SnapshotChecks() {
		if row := "| `" + c + "` | " + Severity(c) + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("no contract row %q", row)
		}
	}
}

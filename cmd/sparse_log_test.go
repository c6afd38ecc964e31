package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestSparseLogPastSegmentLimit: a .log extended (sparse) to 3 GiB is read
// up to 2147483647 bytes and no further: verify reports log.size, and
// dump-log --salvage ends with a damage range from there to the end of
// the file, instead of scanning the gigabyte no broker could open.
func TestSparseLogPastSegmentLimit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 4, Segments: 1, Batches: 10})
	if err != nil {
		t.Fatal(err)
	}
	const size = 3 << 30
	if err := os.Truncate(m.LogPath(&m.Segments[0]), size); err != nil {
		t.Skipf("cannot make a 3 GiB sparse file here: %v", err)
	}
	out, errOut, code := runKseg(t, nil, "verify", "-o", "json", dir)
	if code != 1 || !strings.Contains(out, `"check":"log.size","file":"`+m.LogPath(&m.Segments[0])+`","segment_base_offset":0,"position":2147483647`) ||
		!strings.Contains(out, "the 1073741825 bytes past it are not read") {
		t.Errorf("verify: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, errOut, code = runKseg(t, nil, "dump-log", "--salvage", "-o", "json", dir)
	if code != 1 || !strings.Contains(out, `"kind":"damage","segment":"00000000000000000000.log","position":2147483647,"end":3221225472`) {
		t.Errorf("dump-log --salvage: exit %d, stderr %q\n%.3000s", code, errOut, out)
	}
}

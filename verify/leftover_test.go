package verify

import (
	"path/filepath"
	"testing"
)

// TestLeftoverMessages: each file the broker deletes or renames at load is
// a segment.leftover warning saying what the broker does with it; any other
// set-aside file says why discovery skipped it.
func TestLeftoverMessages(t *testing.T) {
	m := generate(t, baseShape)
	_, log, idx, _ := segFiles(m, 0)
	files := map[string]string{
		filepath.Base(log) + ".deleted": "file renamed for asynchronous deletion (.deleted): the broker deletes it at load (LogLoader.removeTempFilesAndCollectSwapFiles)",
		filepath.Base(idx) + ".cleaned": "log cleaner or segment split output not yet swapped in (.cleaned): the broker deletes it at load, and any .swap file at or above its base offset with it",
		filepath.Base(log) + ".swap":    "interrupted segment swap of the log cleaner or a split (.swap): at load the broker deletes the segment files its offsets cover (producer snapshots included) and renames it into place",
		"0x.log":                        "not a segment file name: the broker deletes such files at load, or fails on a name it cannot parse",
	}
	for name := range files {
		writeFile(t, filepath.Join(m.Dir, name), nil)
	}
	got, _ := verifyPath(t, m.Dir, Options{})
	seen := 0
	for _, f := range got {
		want, ok := files[filepath.Base(f.File)]
		if !ok {
			t.Errorf("unexpected finding %s %s: %s", f.Check, f.File, f.Message)
			continue
		}
		seen++
		if f.Check != SegmentLeftover || f.Severity != SeverityWarning || f.Message != want {
			t.Errorf("%s: %s %s %q, want a segment.leftover warning %q", f.File, f.Severity, f.Check, f.Message, want)
		}
	}
	if seen != len(files) {
		t.Errorf("%d leftover findings, want %d: %+v", seen, len(files), got)
	}
}

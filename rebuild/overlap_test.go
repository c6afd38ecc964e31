package rebuild

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/recovery"
)

// TestApplyOverlap: in place with TruncateLog the overlapping tail is cut
// and saved (saved bytes + cut log = the old log); without it the log stays
// and the result reports the overlap.
func TestApplyOverlap(t *testing.T) {
	seg0, seg15, cutAt := gentest.OverlapLogs()
	for _, truncate := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "t-0")
		gentest.WriteLogs(t, dir, map[int64][]byte{0: seg0, 15: seg15})
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(tg, ApplyOptions{TruncateLog: truncate, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		log0 := tg.Partitions[0].Segments[0].Log
		r := res[0]
		if !errors.Is(r.Overlap, recovery.ErrOverlap) || res[1].Overlap != nil {
			t.Errorf("truncate=%v: overlap %v, %v", truncate, r.Overlap, res[1].Overlap)
		}
		got := gentest.ReadFileOrNil(t, log0)
		if !truncate {
			if !bytes.Equal(got, seg0) || r.TruncatedBytes != 0 || r.StopErr != nil {
				t.Errorf("without TruncateLog the log changed (%d bytes) or was planned cut (%+v)", len(got), r)
			}
			continue
		}
		saved := gentest.ReadFileOrNil(t, log0+TruncatedSuffix+strconv.FormatInt(cutAt, 10))
		if !bytes.Equal(got, seg0[:cutAt]) || !bytes.Equal(append(got, saved...), seg0) || r.ValidBytes != cutAt || !r.Changed {
			t.Errorf("cut log %d bytes + saved %d bytes, want %d + %d (%+v)", len(got), len(saved), cutAt, len(seg0)-int(cutAt), r)
		}
		if _, err := os.Stat(tg.Partitions[0].Segments[1].Log + TruncatedSuffix + "0"); err == nil {
			t.Error("the next segment was cut")
		}
	}
}

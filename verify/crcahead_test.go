package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// verifyBothWays verifies path with the checksums computed in the walk and
// taken from the helper goroutine (with every log, whatever its size), and
// fails unless the findings, in order, and the summaries are the same.
func verifyBothWays(t *testing.T, path string, o Options) []Finding {
	t.Helper()
	o.crcAhead = -1
	seq, seqSum := verifyPath(t, path, o)
	for _, jobs := range []int{1, 2} {
		o.crcAhead, o.Jobs = 1, jobs
		par, parSum := verifyPath(t, path, o)
		if !reflect.DeepEqual(par, seq) || parSum != seqSum {
			t.Fatalf("%s, -j %d, window %d: with checksums ahead:\n%s\n%+v\nin the walk:\n%s\n%+v", path, jobs, o.Window, describe(par), parSum, describe(seq), seqSum)
		}
	}
	return seq
}

// TestCRCAheadMatchesSequential: on every case of the damage matrix, with
// the smallest window (so that batches straddle windows) and the default
// one, and with and without --records, the findings of the check that
// takes its checksums from the helper are those of the sequential check,
// in the same order.
func TestCRCAheadMatchesSequential(t *testing.T) {
	for _, tc := range damageCases {
		t.Run(tc.name, func(t *testing.T) {
			shape := baseShape
			if tc.shape != nil {
				shape = *tc.shape
			}
			m := generate(t, shape)
			tc.damage(t, m)
			for _, window := range []int{inspect.ResyncWindow, 0} {
				for _, deep := range []bool{false, true} {
					verifyBothWays(t, m.Dir, Options{Records: deep, Window: window})
				}
			}
		})
	}
}

// TestCRCAheadManyWindows damages a log of many windows in several places
// (a flipped byte in a batch, a damaged length field, a batch larger than
// the window, a torn tail) and compares both ways.
func TestCRCAheadManyWindows(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 21, Segments: 2, Batches: 3000, RecordsPerBatch: 4, ValueSize: 100})
	s, log, _, _ := segFiles(m, 0)
	n := len(s.Batches)
	flipByte(t, log, s.Batches[n/5].Position+70)                        // contents: a CRC mismatch
	putU32(t, log, s.Batches[n/3].Position+8, 1<<20)                    // length: resync
	flipByte(t, log, s.Batches[n/2].Position+16)                        // magic
	truncateFile(t, log, s.Batches[n-1].Position+s.Batches[n-1].Size-9) // torn tail
	// A batch larger than the smallest window in the second segment.
	big := generate(t, kafkagen.Options{Seed: 22, Segments: 1, Batches: 40, RecordsPerBatch: 3, ValueSize: 40 << 10})
	got := verifyBothWays(t, m.Dir, Options{Window: inspect.ResyncWindow})
	if len(got) < 4 {
		t.Fatalf("want findings for every damage, got%s", describe(got))
	}
	verifyBothWays(t, big.Dir, Options{Window: inspect.ResyncWindow})
	verifyBothWays(t, m.Dir, Options{})
}

// TestCRCAheadCleanShapes compares both ways on the clean shapes of
// TestCleanShapes (batches larger than the window among them).
func TestCRCAheadCleanShapes(t *testing.T) {
	for _, sh := range shapes {
		m := generate(t, sh.o)
		for _, window := range []int{inspect.ResyncWindow, 0} {
			verifyBothWays(t, m.Dir, Options{Window: window})
		}
	}
}

// TestCRCAheadRealFixtures compares both ways on every real broker
// partition.
func TestCRCAheadRealFixtures(t *testing.T) {
	ents, err := os.ReadDir(realFixtures)
	if os.IsNotExist(err) {
		t.Skip("real broker fixtures not present (../shared/fixtures/real beside the module)")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			for _, window := range []int{inspect.ResyncWindow, 0} {
				verifyBothWays(t, filepath.Join(realFixtures, e.Name()), Options{Window: window, Records: true})
			}
		}
	}
}

// TestCRCAheadTakesChecksums walks a clean log through a window with the
// helper, as the log check does, and requires every batch's checksum to
// come from the helper and to be the one the walk would compute.
func TestCRCAheadTakesChecksums(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 23, Segments: 1, Batches: 2000, RecordsPerBatch: 5, ValueSize: 120})
	_, log, _, _ := segFiles(m, 0)
	f, err := fileio.Open(log, fileio.Options{CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := newCRCAhead(inspect.ResyncWindow)
	defer a.close()
	w := newWindow(f, log, f.Size(), nil)
	w.useAhead(a)
	defer w.ahead.quiesce() // before the file is closed: the helper may be reading ahead
	seq := newWindow(f, log, f.Size(), make([]byte, inspect.ResyncWindow))
	batches := 0
	for pos := int64(0); pos < f.Size(); batches++ {
		hdr, err := w.bytes(pos, min(int64(record.HeaderReadSize), f.Size()-pos))
		if err != nil {
			t.Fatal(err)
		}
		b, err := record.ParseBatch(hdr, pos, log)
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.crc(b.Magic, pos, b.Size)
		if err != nil {
			t.Fatal(err)
		}
		want, err := seq.crc(b.Magic, pos, b.Size)
		if err != nil || got != want || got != b.CRC {
			t.Fatalf("batch at %d: checksum %d from the helper, %d in the walk (%v), %d stored", pos, got, want, err, b.CRC)
		}
		pos = b.End()
	}
	// Only a batch cut by the end of a window is checksummed in the walk.
	if windows := f.Size()/int64(inspect.ResyncWindow) + 1; w.ahead.taken < int64(batches)-windows || batches < 2000 {
		t.Fatalf("%d of %d checksums came from the helper (%d windows)", w.ahead.taken, batches, windows)
	}
}

package verify

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// seedSegment returns the files of a small generated segment, for seeding
// the fuzz corpora. Fuzz workers run the setup of a fuzz function again for
// every batch of inputs, so the bytes are generated once per process.
func seedSegment(f *testing.F, o kafkagen.Options) (log, idx, tidx []byte) {
	f.Helper()
	seedMu.Lock()
	defer seedMu.Unlock()
	if s, ok := seeds[o.Seed]; ok {
		return s[0], s[1], s[2]
	}
	tmp, err := os.MkdirTemp("", "kseg-verify-seed")
	if err != nil {
		f.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	m, err := kafkagen.Generate(filepath.Join(tmp, "seed-0"), o)
	if err != nil {
		f.Fatal(err)
	}
	s := &m.Segments[0]
	var out [3][]byte
	for i, p := range []string{m.LogPath(s), m.IndexPath(s), m.TimeIndexPath(s)} {
		if out[i], err = os.ReadFile(p); err != nil {
			f.Fatal(err)
		}
	}
	seeds[o.Seed] = out
	return out[0], out[1], out[2]
}

var (
	seedMu sync.Mutex
	seeds  = map[int64][3][]byte{} // by gen seed; the options of one seed never change
)

// FuzzVerifySegment: a segment of arbitrary bytes is checked without an
// error or a panic, and every finding is well formed.
func FuzzVerifySegment(f *testing.F) {
	for _, o := range []kafkagen.Options{
		{Seed: 1, Batches: 8, IndexIntervalBytes: 500},
		{Seed: 2, Batches: 6, Magic: 1, Compression: "gzip", IndexIntervalBytes: kafkagen.IndexEveryBatch},
		{Seed: 3, Batches: 20, Transactions: true, IndexIntervalBytes: 300},
	} {
		log, idx, tidx := seedSegment(f, o)
		f.Add(log, idx, tidx, false)
		f.Add(log, idx, tidx, true)
	}
	checks := map[string]bool{}
	for _, c := range Checks() {
		checks[c] = true
	}
	f.Fuzz(func(t *testing.T, log, idx, tidx []byte, deep bool) {
		dir := filepath.Join(t.TempDir(), "fuzz-0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{".log": log, ".index": idx, ".timeindex": tidx} {
			if err := os.WriteFile(filepath.Join(dir, "00000000000000000000"+name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sum, err := Run(tg, Options{Jobs: 1, Records: deep}, func(f Finding) {
			n++
			if !checks[f.Check] || !ValidSeverity(f.Check, f.Severity) || f.Message == "" || f.File == "" {
				t.Fatalf("malformed finding %+v", f)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Errors+sum.Warnings+sum.Infos != n || sum.Bytes != int64(len(log)) {
			t.Fatalf("summary %+v, %d findings, %d log bytes", sum, n, len(log))
		}
	})
}

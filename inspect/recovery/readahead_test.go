package recovery

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// samePlans plans every partition of path with the read-ahead on every log
// and without it, and requires the same plans.
func samePlans(t *testing.T, name, path string) {
	t.Helper()
	target, err := inspect.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range target.Partitions {
		for _, interval := range []int64{0, IndexEveryBatch} {
			want, werr := PlanPartition(p, Options{IndexIntervalBytes: interval, readAheadMin: -1})
			got, gerr := PlanPartition(p, Options{IndexIntervalBytes: interval, readAheadMin: 1})
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s (interval %d): with the read-ahead %+v, %v; without %+v, %v", name, p.Dir, interval, got, gerr, want, werr)
			}
		}
	}
}

// TestPlanReadAheadMatchesSequential: broker recovery's plan is the same
// with the read-ahead as without, on generated partitions of many chunks,
// clean and damaged (a flipped byte, a cut tail, a damaged length), and on
// the real brokers' data.
func TestPlanReadAheadMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for i, shape := range []kafkagen.Options{
		{Segments: 2, Batches: 4000, RecordsPerBatch: 2, ValueSize: 150},
		{Segments: 1, Batches: 30, RecordsPerBatch: 300, ValueSize: 1024},
		{Segments: 2, Batches: 3000, Transactions: true},
		{Segments: 1, Batches: 2000, Magic: 1, Compression: "gzip"},
	} {
		for damage := range 4 {
			shape.Seed = int64(60 + 4*i + damage)
			m, err := kafkagen.Generate(filepath.Join(t.TempDir(), "p-0"), shape)
			if err != nil {
				t.Fatal(err)
			}
			s := &m.Segments[0]
			path := m.LogPath(s)
			b := s.Batches[len(s.Batches)/2+rng.IntN(len(s.Batches)/2)]
			d, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch damage {
			case 1:
				d[b.Position+b.Size-1] ^= 1
			case 2:
				d = d[:b.Position+b.Size/2]
			case 3:
				d[b.Position+9] ^= 0x10
			}
			if err := os.WriteFile(path, d, 0o644); err != nil {
				t.Fatal(err)
			}
			samePlans(t, fmt.Sprintf("shape %d damage %d", i, damage), m.Dir)
		}
	}
	root := fixturesDir(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			samePlans(t, e.Name(), filepath.Join(root, e.Name()))
		}
	}
}

package inspect_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// walkProgress walks p over r with Progress recording its calls, and
// returns them with the batches seen.
func walkProgress(t *testing.T, p *inspect.Partition, r inspect.LogRange) (calls [][2]int64, batches int) {
	t.Helper()
	r.Progress = func(done, total int64) { calls = append(calls, [2]int64{done, total}) }
	if err := p.Walk(r, func(inspect.WalkBatch) error { batches++; return nil }); err != nil {
		t.Fatal(err)
	}
	return calls, batches
}

func TestWalkProgress(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "big-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 9, Segments: 3, Batches: 120, RecordsPerBatch: 3, ValueSize: 20000})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	var total int64
	for i := range m.Segments {
		fi, err := os.Stat(m.LogPath(&m.Segments[i]))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
		total += fi.Size()
	}
	const step = 4 << 20
	if total < 3*step {
		t.Fatalf("partition of %d bytes: too small for the test", total)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, calls [][2]int64, want int64) {
		t.Helper()
		if len(calls) == 0 {
			t.Fatalf("%s: no Progress call", name)
		}
		for i, c := range calls {
			if c[1] != want || c[0] < 0 || c[0] > want {
				t.Errorf("%s: call %d = %v, total should be %d", name, i, c, want)
			}
			if i > 0 && i < len(calls)-1 && c[0]-calls[i-1][0] < step {
				t.Errorf("%s: call %d = %v after %v: steps of at least %d", name, i, c, calls[i-1], step)
			}
		}
		if last := calls[len(calls)-1]; last[0] != want {
			t.Errorf("%s: last call %v, want done == %d", name, last, want)
		}
		for _, c := range calls[:len(calls)-1] {
			if c[0] == want {
				t.Errorf("%s: call %v before the last: done == total is said once", name, c)
			}
		}
	}

	calls, n := walkProgress(t, p, inspect.LogRange{})
	check("whole partition", calls, total)
	if len(calls) < int(total/step)/2 {
		t.Errorf("%d calls for %d bytes", len(calls), total)
	}
	var all int
	for _, s := range m.Segments {
		all += len(s.Batches)
	}
	if n != all {
		t.Errorf("walk with Progress saw %d batches, want %d", n, all)
	}

	// From an offset in the second segment: the total starts at the batch
	// the fetch lookup finds there.
	s1 := &m.Segments[1]
	from := s1.Batches[10].BaseOffset
	calls, _ = walkProgress(t, p, inspect.LogRange{FromOffset: &from})
	check("from an offset", calls, sizes[1]-s1.Batches[10].Position+sizes[2])

	// Up to an offset in the second segment: the third is not counted, and
	// the walk stopping early still ends with done == total.
	to := s1.Batches[5].LastOffset
	calls, _ = walkProgress(t, p, inspect.LogRange{ToOffset: &to})
	check("up to an offset", calls, sizes[0]+sizes[1])

	calls, n = walkProgress(t, p, inspect.LogRange{MaxBatches: 3})
	check("three batches", calls, total)
	if n != 3 {
		t.Errorf("MaxBatches 3 with Progress: %d batches", n)
	}
}

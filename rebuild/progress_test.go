package rebuild

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/recovery"
)

func TestProgress(t *testing.T) {
	data := t.TempDir()
	var total int64
	for i, name := range []string{"big-0", "big-1"} {
		m, err := kafkagen.Generate(filepath.Join(data, name), kafkagen.Options{Seed: int64(i + 1), Segments: 2, Batches: 80, RecordsPerBatch: 3, ValueSize: 20000})
		if err != nil {
			t.Fatal(err)
		}
		for j := range m.Segments {
			fi, err := os.Stat(m.LogPath(&m.Segments[j]))
			if err != nil {
				t.Fatal(err)
			}
			total += fi.Size()
		}
	}
	if total < 3*inspect.MeterChunk {
		t.Fatalf("%d bytes: too small for the test", total)
	}
	tg, err := inspect.Resolve(data)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, calls [][2]int64, want int64, atLeast int) {
		t.Helper()
		if len(calls) < atLeast {
			t.Fatalf("%s: %d Progress calls, want at least %d", name, len(calls), atLeast)
		}
		for i, c := range calls {
			if c[1] != want || c[0] < 0 || c[0] > want {
				t.Errorf("%s: call %d = %v, total should be %d", name, i, c, want)
			}
			if i > 0 && i < len(calls)-1 && c[0]-calls[i-1][0] < inspect.MeterChunk {
				t.Errorf("%s: call %d = %v after %v", name, i, c, calls[i-1])
			}
		}
		if last := calls[len(calls)-1]; last[0] != want {
			t.Errorf("%s: last call %v, want done == %d", name, last, want)
		}
	}

	// Run: one count over every partition, finished once.
	var calls [][2]int64
	opts := ApplyOptions{DryRun: true}
	want, err := Run(tg, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Progress = func(done, total int64) { calls = append(calls, [2]int64{done, total}) }
	got, err := Run(tg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Run results change with Progress set")
	}
	check("Run", calls, total, int(total/inspect.MeterChunk)/2)
	finals := 0
	for _, c := range calls {
		if c[0] == total {
			finals++
		}
	}
	if finals != 1 {
		t.Errorf("Run: %d calls with done == total, want 1 (the partitions share one count)", finals)
	}

	// recovery.PlanPartition alone counts its own partition.
	p := tg.Partitions[0]
	var own int64
	for _, s := range p.Segments {
		fi, err := os.Stat(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		own += fi.Size()
	}
	calls = nil
	if _, err := recovery.PlanPartition(p, recovery.Options{Progress: func(done, total int64) { calls = append(calls, [2]int64{done, total}) }}); err != nil {
		t.Fatal(err)
	}
	check("recovery.PlanPartition", calls, own, 1)
}

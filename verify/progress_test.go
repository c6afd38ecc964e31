package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

type progressCall struct{ done, total int64 }

// recordProgress returns a Progress function that records its calls and
// fails the test if two calls overlap.
func recordProgress(t *testing.T, calls *[]progressCall) func(done, total int64) {
	var inside atomic.Bool
	return func(done, total int64) {
		if !inside.CompareAndSwap(false, true) {
			t.Errorf("Progress called while another call is running")
		}
		*calls = append(*calls, progressCall{done, total})
		inside.Store(false)
	}
}

// checkProgress asserts the calls count up to total, a step of at least
// inspect.MeterChunk apart except for the last, which reports done == total.
func checkProgress(t *testing.T, calls []progressCall, total int64) {
	t.Helper()
	if len(calls) == 0 {
		t.Fatal("Progress was never called")
	}
	for i, c := range calls {
		if c.total != total || c.done < 0 || c.done > total {
			t.Errorf("call %d: (%d, %d), total should be %d", i, c.done, c.total, total)
		}
		if i == 0 {
			continue
		}
		step := c.done - calls[i-1].done
		if step < 0 || (i < len(calls)-1 && step < inspect.MeterChunk) {
			t.Errorf("call %d: done %d after %d: steps must be >= %d bytes (except the last)", i, c.done, calls[i-1].done, inspect.MeterChunk)
		}
	}
	if last := calls[len(calls)-1]; last.done != total {
		t.Errorf("last call (%d, %d): want done == total", last.done, last.total)
	}
	for _, c := range calls[:len(calls)-1] {
		if c.done == total {
			t.Errorf("call (%d, %d) before the last: done == total is said once", c.done, c.total)
		}
	}
}

func logBytes(t *testing.T, m *kafkagen.Manifest) int64 {
	var n int64
	for i := range m.Segments {
		n += fileSize(t, m.LogPath(&m.Segments[i]))
	}
	return n
}

func TestProgress(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 5, Segments: 3, Batches: 120, RecordsPerBatch: 3, ValueSize: 20000})
	total := logBytes(t, m)
	if total < 3*inspect.MeterChunk {
		t.Fatalf("the partition is only %d bytes; the test needs several chunks", total)
	}
	want, wantSum := verifyPath(t, m.Dir, Options{Jobs: 2})
	for _, jobs := range []int{1, 2} {
		var calls []progressCall
		got, sum := verifyPath(t, m.Dir, Options{Jobs: jobs, Progress: recordProgress(t, &calls)})
		if !reflect.DeepEqual(got, want) || sum != wantSum {
			t.Errorf("jobs %d: findings or summary change with Progress set", jobs)
		}
		checkProgress(t, calls, total)
		if len(calls) < int(total/inspect.MeterChunk)/2 {
			t.Errorf("jobs %d: %d calls for %d bytes: progress should come every few MiB", jobs, len(calls), total)
		}
	}
}

// A torn tail is part of the work done: the last call still says done.
func TestProgressDamaged(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 5, Segments: 2, Batches: 40, ValueSize: 2000})
	log := m.LogPath(&m.Segments[1])
	truncateFile(t, log, fileSize(t, log)-100)
	var calls []progressCall
	tg, err := inspect.Resolve(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(tg, Options{Progress: recordProgress(t, &calls)}, func(Finding) {}); err != nil {
		t.Fatal(err)
	}
	checkProgress(t, calls, logBytes(t, m))
	if len(calls) != 1 {
		t.Errorf("%d calls for a partition smaller than one step, want the final one only", len(calls))
	}
}

// A run that cannot finish does not claim to be done.
func TestProgressFailedRun(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 5, Batches: 10})
	tg, err := inspect.Resolve(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.LogPath(&m.Segments[0])); err != nil {
		t.Fatal(err)
	}
	var calls []progressCall
	if _, err := Run(tg, Options{Progress: recordProgress(t, &calls)}, func(Finding) {}); err == nil {
		t.Fatal("Run over a removed log succeeded")
	}
	for _, c := range calls {
		if c.done == c.total {
			t.Errorf("call (%d, %d) after a failed run", c.done, c.total)
		}
	}
}

// StartPartition names every partition once, as its first segment starts;
// with one worker in the order the target lists them.
func TestStartPartition(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i, name := range []string{"a-0", "a-1", "b-0"} {
		generateAt(t, filepath.Join(dir, name), kafkagen.Options{Seed: int64(10 + i), Segments: 2, Batches: 20})
		want = append(want, name)
	}
	for _, jobs := range []int{1, 3} {
		var got []string
		verifyPath(t, dir, Options{Jobs: jobs, StartPartition: func(name string) { got = append(got, name) }})
		if jobs > 1 {
			sort.Strings(got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("jobs %d: StartPartition named %q, want %q", jobs, got, want)
		}
	}
}

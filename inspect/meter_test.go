package inspect_test

import (
	"sync"
	"testing"

	"github.com/kseg/kseg/inspect"
)

// Readers on several goroutines report files of uneven sizes to one meter:
// the calls come one at a time, done never goes back, steps are at least a
// chunk, and the last call says done == total once.
func TestMeterConcurrentReaders(t *testing.T) {
	const files, size = 24, 3*inspect.MeterChunk + 12345
	var mu sync.Mutex
	var calls [][2]int64
	m := inspect.NewMeter(func(done, total int64) {
		if !mu.TryLock() {
			t.Error("progress function called while another call runs")
			return
		}
		calls = append(calls, [2]int64{done, total})
		mu.Unlock()
	}, func() int64 { return files * size })
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var counted int64
			for f := g; f < files; f += 4 {
				for pos := int64(0); pos < size; pos += 100000 {
					m.Advance(&counted, pos)
				}
				m.Done(&counted, size)
			}
		}()
	}
	wg.Wait()
	m.Finish()
	m.Finish()
	if len(calls) < files*3/2 {
		t.Fatalf("%d calls for %d bytes", len(calls), files*size)
	}
	for i, c := range calls {
		if c[1] != files*size {
			t.Fatalf("call %d total %d", i, c[1])
		}
		if i > 0 && c[0] < calls[i-1][0] {
			t.Errorf("call %d: done %d after %d", i, c[0], calls[i-1][0])
		}
		if i > 0 && i < len(calls)-1 && c[0]-calls[i-1][0] < inspect.MeterChunk {
			t.Errorf("call %d: step %d below a chunk", i, c[0]-calls[i-1][0])
		}
		if c[0] == c[1] && i != len(calls)-1 {
			t.Errorf("call %d says done before the last", i)
		}
	}
	if last := calls[len(calls)-1]; last[0] != last[1] {
		t.Errorf("last call %v", last)
	}
	var nilMeter *inspect.Meter
	var counted int64
	nilMeter.Advance(&counted, 1<<40)
	nilMeter.Done(&counted, 1<<40)
	nilMeter.Finish()
	if inspect.NewMeter(nil, func() int64 { t.Error("total asked for without a callback"); return 10 }) != nil {
		t.Error("NewMeter(nil) should be nil")
	}
}

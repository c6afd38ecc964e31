package inspect_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
)

// TestInOrder: every job runs once, on a worker index in range that no
// other job holds at the same time; the results are used in order, each
// after its job; no more than ahead jobs are running or waiting to be
// used; and once use says stop, nothing later is used and few jobs start.
func TestInOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		for _, n := range []int{0, 1, 7, 200} {
			const ahead = 6
			ran := make([]atomic.Int32, n)
			busy := make([]atomic.Bool, workers)
			var outstanding, most atomic.Int32
			var mu sync.Mutex
			var used []int
			inspect.InOrder(n, workers, ahead, func(w, i int) {
				if w < 0 || w >= workers || !busy[w].CompareAndSwap(false, true) {
					t.Errorf("-j %d: job %d on worker %d, out of range or busy", workers, i, w)
					return
				}
				defer busy[w].Store(false)
				o := outstanding.Add(1)
				for m := most.Load(); o > m && !most.CompareAndSwap(m, o); m = most.Load() {
				}
				if i%5 == 0 {
					time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
				}
				ran[i].Add(1)
			}, func(i int) bool {
				if ran[i].Load() != 1 {
					t.Errorf("-j %d: job %d used before it ran", workers, i)
				}
				outstanding.Add(-1)
				mu.Lock()
				used = append(used, i)
				mu.Unlock()
				return true
			})
			if len(used) != n {
				t.Fatalf("-j %d, %d jobs: %d used", workers, n, len(used))
			}
			for k, i := range used {
				if i != k || ran[i].Load() != 1 {
					t.Fatalf("-j %d: used %v; job %d ran %d times", workers, used, i, ran[i].Load())
				}
			}
			if limit := int32(max(ahead, workers)); most.Load() > limit {
				t.Errorf("-j %d: %d jobs running or waiting at once, more than %d", workers, most.Load(), limit)
			}
		}
	}
	for _, workers := range []int{1, 3} {
		var started atomic.Int32
		var last int
		inspect.InOrder(100, workers, 4, func(_, i int) { started.Add(1) }, func(i int) bool {
			last = i
			return i < 10
		})
		if last != 10 {
			t.Errorf("-j %d: last job used %d, want 10 (use said stop there)", workers, last)
		}
		if s := started.Load(); s > 10+1+4 {
			t.Errorf("-j %d: %d jobs started after a stop at job 10 with 4 ahead", workers, s)
		}
	}
}

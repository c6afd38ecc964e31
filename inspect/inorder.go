package inspect

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// InOrder runs do(w, i) for every i in [0, n) on workers goroutines (w,
// 0 <= w < workers, says which: per-worker state such as buffers is the
// caller's, indexed by it), which take the i in order, and calls use(i)
// on the caller's goroutine for each i in order, once do(_, i) has
// returned: the jobs run in parallel, their results come out as if they
// had run one by one. At most ahead jobs are running or done and not yet
// used, so the results waiting stay bounded when an early job is slow.
// When use returns false, the jobs not yet started are skipped (neither
// do nor use is called for them), and InOrder returns once the running
// ones have finished.
//
// A worker takes a ticket, then the next job (no goroutine hands the
// jobs out), and with one worker the caller's goroutine runs the jobs
// itself: each hand-over of a job or a result wakes a sleeping thread,
// which on a virtual machine costs as much as checking a small segment's
// indexes (docs/performance.md). verify's segments and ls's partitions
// are run this way.
func InOrder(n, workers, ahead int, do func(w, i int), use func(i int) bool) {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for i := range n {
			do(0, i)
			if !use(i) {
				return
			}
		}
		return
	}
	tickets := make(chan struct{}, max(ahead, workers))
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				tickets <- struct{}{}
				i := int(next.Add(1) - 1)
				if i >= n {
					<-tickets
					return
				}
				if !stop.Load() {
					do(w, i)
				}
				close(done[i])
			}
		})
	}
	for i := range n {
		<-done[i]
		if !stop.Load() && !use(i) {
			stop.Store(true)
		}
		<-tickets
	}
	wg.Wait()
}

// EachPartition runs do(i) for i in [0, n) on up to GOMAXPROCS goroutines
// through InOrder (a few jobs are not worth a goroutine: one per 16), and
// progress, when set, on the caller's goroutine after each in order. It
// stops starting jobs at the first error and returns the errors joined.
func EachPartition(n int, do func(i int) error, progress func(done, total int64)) error {
	workers := min(runtime.GOMAXPROCS(0), n/16+1)
	errs := make([]error, n)
	InOrder(n, workers, 4*workers+16, func(_, i int) { errs[i] = do(i) }, func(i int) bool {
		if progress != nil {
			progress(int64(i+1), int64(n))
		}
		return errs[i] == nil
	})
	return errors.Join(errs...)
}

// Package fuzzcheck holds what the fuzz targets of inspect and its
// codec packages check beyond "no panic": allocation bounds and positioned
// *fileio.CorruptErrors. Only tests import it.
package fuzzcheck

import (
	"errors"
	"runtime"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
)

// Allocated runs fn and returns how many bytes it allocated (the whole
// process's count: fuzz functions run one at a time).
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Slack is the allocation every bound below allows on top of what it
// scales with the input: fixed costs (decoders, regexp and JSON state). The
// race detector makes sync.Pool drop items, so pooled state is rebuilt
// there and the slack is larger; either way it is far below what a length
// or count taken from disk unchecked would cost (up to gigabytes).
func Slack() uint64 {
	if RaceEnabled {
		return 32 << 20
	}
	return 1 << 20
}

// WantCorrupt requires err to be a *CorruptError naming file with a
// position inside [0, size] (or -1, unknown) and wrapping one of kinds.
func WantCorrupt(t testing.TB, what string, err error, file string, size int64, kinds ...error) {
	t.Helper()
	var ce *fileio.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v (%T) is not a *CorruptError", what, err, err)
	}
	if ce.File != file || ce.Position < -1 || ce.Position > size {
		t.Fatalf("%s: error names %q at position %d (file %q of %d bytes): %v", what, ce.File, ce.Position, file, size, err)
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return
		}
	}
	t.Fatalf("%s: error %v is not of the expected kinds %v", what, err, kinds)
}

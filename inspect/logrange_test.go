package inspect_test

import (
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
)

func TestLogRangeContains(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	r := inspect.LogRange{FromOffset: p(10), ToOffset: p(20), FromTime: p(1000), ToTime: p(2000)}
	for _, tc := range []struct {
		off, ts int64
		want    bool
	}{
		{10, 1000, true}, {20, 2000, true}, {15, 1500, true},
		{9, 1500, false}, {21, 1500, false}, {15, 999, false}, {15, 2001, false},
	} {
		if got := r.Contains(&record.Record{Offset: tc.off, Timestamp: tc.ts}); got != tc.want {
			t.Errorf("(%d, %d): %v, want %v", tc.off, tc.ts, got, tc.want)
		}
	}
	if !(inspect.LogRange{}).Contains(&record.Record{Offset: -5, Timestamp: -1}) {
		t.Error("an empty range contains every record")
	}
}

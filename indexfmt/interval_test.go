package indexfmt

import "testing"

// TestIndexInterval pins the one resolution of an index.interval.bytes
// option: the zero value is the broker's default, IndexEveryBatch is 0,
// and a negative value is refused as LogConfig's atLeast(0) refuses it.
func TestIndexInterval(t *testing.T) {
	for _, tc := range []struct {
		option, want int64
		err          bool
	}{
		{0, 4096, false},
		{IndexEveryBatch, 0, false},
		{1, 1, false},
		{4096, 4096, false},
		{1 << 20, 1 << 20, false},
		{-2, 0, true},
		{-4096, 0, true},
	} {
		got, err := IndexInterval(tc.option)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("IndexInterval(%d) = %d, %v; want %d, error %v", tc.option, got, err, tc.want, tc.err)
		}
	}
}

package xxh32

import "testing"

// TestSum: the reference values of XXH32 with seed 0 (xxhash's own test
// vectors), for inputs below and above the 16-byte stripe.
func TestSum(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
		{"Nobody inspects the spammish repetition", 0xe2293b2f},
	} {
		if got := Sum([]byte(c.in), 0); got != c.want {
			t.Errorf("Sum(%q, 0) = %#08x, want %#08x", c.in, got, c.want)
		}
	}
}

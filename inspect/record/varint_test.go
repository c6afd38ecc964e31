package record

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func TestReadVarintExamples(t *testing.T) {
	// Section 2.6 examples.
	for _, c := range []struct {
		in   []byte
		want int32
	}{
		{[]byte{0x00}, 0},
		{[]byte{0x01}, -1},
		{[]byte{0x02}, 1},
		{[]byte{0x08}, 4},
		{[]byte{0x0C}, 6},
		{[]byte{0x80, 0x01}, 64},
		{[]byte{0x7f}, -64},
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0x0f}, math.MaxInt32},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, math.MinInt32},
	} {
		v, n := ReadVarint(append(c.in, 0xAA)) // a following byte must not be consumed
		if v != c.want || n != len(c.in) {
			t.Errorf("ReadVarint(% x) = %d, %d; want %d, %d", c.in, v, n, c.want, len(c.in))
		}
		l, m := ReadVarlong(c.in)
		if l != int64(c.want) || m != len(c.in) {
			t.Errorf("ReadVarlong(% x) = %d, %d; want %d, %d", c.in, l, m, c.want, len(c.in))
		}
	}
}

func TestReadVarintLimits(t *testing.T) {
	// A 5th byte with its continuation bit set: too long (the broker throws).
	if _, n := ReadVarint([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}); n >= 0 {
		t.Errorf("6-byte varint accepted (n=%d)", n)
	}
	if _, n := ReadVarint([]byte{0xff, 0xff, 0xff, 0xff, 0xff}); n >= 0 {
		t.Errorf("5th byte with the high bit set accepted (n=%d)", n)
	}
	// Bits of the 5th byte beyond 32 are dropped, as the broker's int shift drops them.
	if v, n := ReadVarint([]byte{0x80, 0x80, 0x80, 0x80, 0x7f}); n != 5 || v != 0x78000000 {
		t.Errorf("5th byte 0x7f: %d, %d; want %d, 5 (z = 0xf0000000)", v, n, 0x78000000)
	}
	if v, n := ReadVarint([]byte{0x80, 0x80, 0x80, 0x80, 0x10}); n != 5 || v != 0 {
		t.Errorf("5th byte 0x10 (bit 32 only): %d, %d; want 0, 5", v, n)
	}
	// Truncated input: n == 0.
	for _, in := range [][]byte{nil, {0x80}, {0xff, 0xff, 0xff, 0xff}} {
		if v, n := ReadVarint(in); n != 0 || v != 0 {
			t.Errorf("ReadVarint(% x) = %d, %d; want 0, 0", in, v, n)
		}
		if v, n := ReadVarlong(in); n != 0 || v != 0 {
			t.Errorf("ReadVarlong(% x) = %d, %d; want 0, 0", in, v, n)
		}
	}
	// Varlong: 10 bytes at most.
	ten := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}
	if v, n := ReadVarlong(ten); n != 10 || v != 1<<62 {
		t.Errorf("10-byte varlong: %d, %d; want 1<<62, 10", v, n)
	}
	allOnes := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	if v, n := ReadVarlong(allOnes); n != 10 || v != math.MinInt64 {
		t.Errorf("ReadVarlong(% x) = %d, %d; want MinInt64, 10", allOnes, v, n)
	}
	if v, n := ReadVarlong(append(ten[:9:9], 0x7e)); n != 10 || v != 0 {
		t.Errorf("10th byte 0x7e (bits past 64 dropped): %d, %d; want 0, 10", v, n)
	}
	if _, n := ReadVarlong(append(ten[:9:9], 0x81, 0x00)); n >= 0 {
		t.Errorf("11-byte varlong accepted (n=%d)", n)
	}
}

// TestReadVarintDifferential compares with encoding/binary, whose signed varint is the
// same zig-zag LEB128 encoding.
func TestReadVarintDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100_000; i++ {
		x := int64(r.Uint64()) >> r.IntN(64)
		buf := binary.AppendVarint(nil, x)
		if v, n := ReadVarlong(buf); v != x || n != len(buf) {
			t.Fatalf("ReadVarlong(% x) = %d, %d; want %d, %d", buf, v, n, x, len(buf))
		}
		y := int32(x)
		buf = binary.AppendVarint(nil, int64(y))
		if v, n := ReadVarint(buf); v != y || n != len(buf) {
			t.Fatalf("ReadVarint(% x) = %d, %d; want %d, %d", buf, v, n, y, len(buf))
		}
		// And arbitrary bytes: where binary.Uvarint takes at most 5 bytes (4 for the
		// last group's legal range), both must agree.
		var junk [6]byte
		binary.LittleEndian.PutUint32(junk[:], r.Uint32())
		junk[4], junk[5] = byte(r.Uint32()), byte(r.Uint32())
		u, m := binary.Uvarint(junk[:])
		v, n := ReadVarint(junk[:])
		switch {
		case m > 0 && m <= 5 && u <= math.MaxUint32:
			if n != m || v != int32(uint32(u)>>1)^-int32(u&1) {
				t.Fatalf("ReadVarint(% x) = %d, %d; Uvarint %d, %d", junk, v, n, u, m)
			}
		case m > 5 || m < 0 || (m == 0 && n != 0):
			if n >= 0 && n != 5 {
				t.Fatalf("ReadVarint(% x) = %d, %d; Uvarint %d, %d", junk, v, n, u, m)
			}
		}
	}
}

func TestReadVarintNoAlloc(t *testing.T) {
	buf := binary.AppendVarint(nil, -123456)
	if a := testing.AllocsPerRun(100, func() { ReadVarint(buf); ReadVarlong(buf) }); a != 0 {
		t.Errorf("%.0f allocations", a)
	}
}

package record

// Zig-zag varints as the v2 record format stores them (broker: ByteUtils.readVarint,
// ByteUtils.readVarlong): unsigned LEB128, 7 bits a byte, low group first, high bit set
// = more bytes follow, then zig-zag decoding n = (z >>> 1) ^ -(z & 1).
//
// Both readers follow encoding/binary's convention for the byte count:
//
//	n > 0   the value was decoded from b[:n]
//	n == 0  b ended before the last byte of the varint (the broker's BufferUnderflowException)
//	n < 0   the varint is too long (5 bytes for a varint, 10 for a varlong, and the last
//	        one still has its continuation bit set); -n bytes were examined. The broker
//	        throws IllegalArgumentException, surfacing as "Found invalid record structure".
//
// Neither allocates.

const (
	maxVarintLen  = 5
	maxVarlongLen = 10
)

// ReadVarint decodes a zig-zag varint (int32, at most 5 bytes) from the start of b.
// As in the broker, bits of the 5th byte that do not fit in 32 bits are dropped
// silently.
func ReadVarint(b []byte) (v int32, n int) {
	var z uint32
	for i := 0; i < maxVarintLen; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		z |= uint32(c&0x7f) << (7 * uint(i))
		if c&0x80 == 0 {
			return int32(z>>1) ^ -int32(z&1), i + 1
		}
	}
	return 0, -maxVarintLen
}

// ReadVarlong decodes a zig-zag varlong (int64, at most 10 bytes) from the start of b.
// As in the broker, bits of the 10th byte that do not fit in 64 bits are dropped
// silently.
func ReadVarlong(b []byte) (v int64, n int) {
	var z uint64
	for i := 0; i < maxVarlongLen; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		z |= uint64(c&0x7f) << (7 * uint(i))
		if c&0x80 == 0 {
			return int64(z>>1) ^ -int64(z&1), i + 1
		}
	}
	return 0, -maxVarlongLen
}

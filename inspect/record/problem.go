package record

import "fmt"

// Minimal sizes used to bound what a header may claim.
const (
	minV2Record   = 7 // length, attributes, timestamp delta, offset delta, key length, value length, header count: 1 byte each at least
	maxLegacyCode = 3 // codecs 0-3 in magic 0/1 (zstd is rejected with magic < 2)
	maxV2Codec    = 4
)

// HeaderProblem says what is impossible in a header that ParseBatch
// accepted, or "" when nothing is. The broker's file path checks only the
// size and the CRC (DefaultRecordBatch.ensureValid); these are the limits
// every batch a broker wrote satisfies, checked so that a damaged header
// whose CRC still matches (the v2 CRC does not cover the magic) is caught.
func HeaderProblem(b *Batch) string {
	if b.Magic > 2 || b.Magic < 0 {
		return fmt.Sprintf("magic %d is not 0, 1 or 2", b.Magic)
	}
	codec := b.Attributes & AttrCompressionMask
	if b.Magic < 2 {
		if codec > maxLegacyCode {
			return fmt.Sprintf("compression codec %d is not valid in a magic %d message", codec, b.Magic)
		}
		return ""
	}
	switch {
	case codec > maxV2Codec:
		return fmt.Sprintf("unknown compression codec %d", codec)
	case b.RecordCount < 0:
		return fmt.Sprintf("negative record count %d", b.RecordCount)
	case int64(b.RecordCount) > int64(b.LastOffsetDelta)+1:
		return fmt.Sprintf("record count %d does not fit in offsets %d..%d (last offset delta %d)", b.RecordCount, b.BaseOffset, b.LastOffset, b.LastOffsetDelta)
	case codec == 0 && int64(b.RecordCount)*minV2Record > b.Size-V2HeaderSize:
		return fmt.Sprintf("record count %d cannot fit in %d bytes of uncompressed records", b.RecordCount, b.Size-V2HeaderSize)
	}
	return ""
}

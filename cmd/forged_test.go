//go:build linux

package cmd

import (
	"encoding/binary"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
)

// forgedBatch is a v2 batch of one record whose payload, compressed with
// codec, is payload as given.
func forgedBatch(base int64, codec record.Compression, payload []byte) []byte {
	b := limV2Header(base, 0, 1, 1700000000000, payload)
	b[22] = byte(codec)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], limCastagnoli))
	return b
}

// TestForgedDecompressedSizes: a compressed payload whose own header
// claims a size over the decompression cap (a raw Snappy length of 2^32-1
// in 25 bytes, a Zstandard frame content size of 2^62) is reported by
// verify --records as log.records naming the claim and the cap (it used
// to count as clean), and dump-log --records says what was claimed.
func TestForgedDecompressedSizes(t *testing.T) {
	snappyPayload := append([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, make([]byte, 20)...)
	zstdPayload := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0}
	zstdPayload = binary.LittleEndian.AppendUint64(zstdPayload, 1<<62)
	zstdPayload = append(zstdPayload, 0x01, 0x00, 0x00) // last block, raw, empty
	cases := []struct {
		name    string
		codec   record.Compression
		payload []byte
		claim   string
	}{
		{"snappy", record.CompressionSnappy, snappyPayload, "declares 4294967295 bytes decompressed, over the cap of 67108864 bytes"},
		{"zstd", record.CompressionZstd, zstdPayload, "declares 4611686018427387904 bytes decompressed, over the cap of 67108864 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo-0")
			log := append(limV2Batch(0, 0, 1, 1700000000000), forgedBatch(1, c.codec, c.payload)...)
			limWrite(t, dir, map[string][]byte{inspect.SegmentName(0) + ".log": log})
			out, errOut, code := runKseg(t, nil, "verify", "--records", "-o", "json", dir)
			if code != 1 || !strings.Contains(out, `"check":"log.records"`) || !strings.Contains(out, c.claim) {
				t.Errorf("verify --records: exit %d, stderr %q\n%s\nwant exit 1 with log.records saying %q", code, errOut, out, c.claim)
			}
			_, errOut, code = runKseg(t, nil, "dump-log", "--records", dir)
			if code != exitFailed || !strings.Contains(errOut, c.claim) {
				t.Errorf("dump-log --records: exit %d, stderr %q; want 2 and %q", code, errOut, c.claim)
			}
		})
	}
}

// TestBatchOverDecodeCap: a batch over the 64 MiB verify decodes (its
// payload zeros, its CRC right) is reported by verify --records as
// log.records, not passed over in silence.
func TestBatchOverDecodeCap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo-0")
	payload := make([]byte, 64<<20)
	log := limV2Header(0, 0, 1, 1700000000000, payload)
	limWrite(t, dir, map[string][]byte{inspect.SegmentName(0) + ".log": log})
	out, errOut, code := runKseg(t, nil, "verify", "--records", "-o", "json", dir)
	if code != 1 || !strings.Contains(out, `"check":"log.records"`) || !strings.Contains(out, "records not checked: the batch is 67108925 bytes") {
		t.Errorf("verify --records: exit %d, stderr %q\n%.1500s", code, errOut, out)
	}
}

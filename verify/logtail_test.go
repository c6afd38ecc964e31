package verify

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestLogTailMessages pins the finding verify makes for each way a .log
// can end in bytes that hold no batch, message and all: each is a
// different Damage the log iterator reports (a short tail, an entry
// running past the end, a header that cannot be a batch), told apart by
// its cause, whether a batch follows and whether the bytes are zero.
func TestLogTailMessages(t *testing.T) {
	badLength := make([]byte, 40) // offset 0, length 5: below the minimum of 14
	binary.BigEndian.PutUint32(badLength[8:], 5)
	copy(badLength[12:], bytes.Repeat([]byte{0xff}, 28))
	cases := []struct {
		name  string
		tail  []byte
		torn  bool // instead: cut the last batch in half
		check string
		msg   func(size, left, need int64) string
	}{
		{name: "short tail", tail: []byte("0123456789"), check: LogTruncated, msg: func(size, left, _ int64) string {
			return fmt.Sprintf("%d bytes after the last batch, too few for a batch header; broker recovery would truncate the segment to %d bytes, dropping %d", left, size, left)
		}},
		{name: "short zero tail", tail: make([]byte, 17), check: LogTruncated, msg: func(size, left, _ int64) string {
			return fmt.Sprintf("zero-filled tail of %d bytes, too few for a batch header; broker recovery would truncate the segment to %d bytes, dropping %d", left, size, left)
		}},
		{name: "zero tail", tail: make([]byte, 300<<10), check: LogTruncated, msg: func(size, left, _ int64) string {
			return fmt.Sprintf("zero-filled tail (a preallocated .log, or blocks never written before an unclean shutdown); broker recovery would truncate the segment to %d bytes, dropping %d", size, left)
		}},
		{name: "length below the minimum", tail: badLength, check: LogCorruptHeader, msg: func(_, left, _ int64) string {
			return fmt.Sprintf("corrupt batch header: batch length 5 is smaller than the minimum record overhead (14); no valid batch follows: broker recovery would truncate the segment here, dropping %d bytes", left)
		}},
		{name: "text", tail: []byte("this is not a record batch, just text left behind by something else"), check: LogCorruptHeader, msg: func(_, left, _ int64) string {
			return fmt.Sprintf("magic 99 is not 0, 1 or 2 and the length field %d runs past the end of the file; no valid batch follows: broker recovery would truncate the segment here, dropping %d bytes",
				binary.BigEndian.Uint32([]byte("not ")), left)
		}},
		{name: "torn batch", torn: true, check: LogTruncated, msg: func(size, left, need int64) string {
			return fmt.Sprintf("the last batch is incomplete: it needs %d bytes, %d are left (a torn write); broker recovery would truncate the segment to %d bytes, dropping %d", need, left, size, left)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := generate(t, kafkagen.Options{Seed: 11, Segments: 1, Batches: 20})
			s, log, _, _ := segFiles(m, 0)
			size := fileSize(t, log)
			need := int64(0)
			if tc.torn {
				b := s.Batches[len(s.Batches)-1]
				size, need = b.Position, b.Size
				truncateFile(t, log, b.Position+b.Size/2)
			} else {
				appendBytes(t, log, tc.tail)
			}
			left := fileSize(t, log) - size
			got, _ := verifyPath(t, m.Dir, Options{})
			expect(t, got, want{tc.check, base(log), size})
			if w := tc.msg(size, left, need); got[0].Message != w {
				t.Errorf("message\n  %s\nwant\n  %s", got[0].Message, w)
			}
		})
	}
}

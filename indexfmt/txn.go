package indexfmt

import (
	"fmt"
	"io"
)

// TxnIndex reads a .txnindex file: 34-byte AbortedTxn entries appended with
// plain writes (no preallocation, no padding). Like the broker's iteration
// (TransactionIndex.iterator) a partial trailing entry is ignored.
type TxnIndex struct {
	r    io.ReaderAt
	size int64
}

// NewTxnIndex reads a transaction index of the given length.
func NewTxnIndex(r io.ReaderAt, size int64) *TxnIndex { return &TxnIndex{r: r, size: size} }

// Entries is floor(size / 34).
func (x *TxnIndex) Entries() int { return int(x.size / TxnEntrySize) }

// TrailingBytes is size % 34.
func (x *TxnIndex) TrailingBytes() int { return int(x.size % TxnEntrySize) }

// Entry reads entry n.
func (x *TxnIndex) Entry(n int) (AbortedTxn, error) {
	if n < 0 || n >= x.Entries() {
		return AbortedTxn{}, fmt.Errorf("transaction index entry %d out of range [0, %d)", n, x.Entries())
	}
	var b [TxnEntrySize]byte
	if err := readFull(x.r, b[:], int64(n)*TxnEntrySize); err != nil {
		return AbortedTxn{}, fmt.Errorf("transaction index entry %d: %w", n, err)
	}
	return DecodeTxnEntry(b[:]), nil
}

// SanityCheck is the broker's TransactionIndex.sanityCheck, run at load for
// every segment: an entry whose last offset is below the segment's base
// offset makes the broker rebuild the segment; a version byte > 0 makes
// iteration fail (KafkaException "Unexpected aborted transaction version").
func (x *TxnIndex) SanityCheck(baseOffset int64) error {
	for i := 0; i < x.Entries(); i++ {
		t, err := x.Entry(i)
		if err != nil {
			return err
		}
		if v := t.VersionByte(); v > 0 {
			return fmt.Errorf("%w: entry %d: unexpected aborted transaction version %d", ErrCorruptIndex, i, v)
		}
		if t.LastOffset < baseOffset {
			return fmt.Errorf("%w: entry %d: last offset of aborted transaction %d is less than start offset %d", ErrCorruptIndex, i, t.LastOffset, baseOffset)
		}
	}
	return nil
}

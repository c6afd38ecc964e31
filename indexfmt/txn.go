package indexfmt

import (
	"errors"
	"fmt"
)

// ErrTxnVersion: a transaction-index entry whose version byte is > 0. The
// broker fails on it while iterating (KafkaException "Unexpected aborted
// transaction version"), which is not the CorruptIndexException that makes
// the loader rebuild the segment: loading the log fails instead. Errors
// carrying it also wrap ErrCorruptIndex.
var ErrTxnVersion = errors.New("unexpected aborted transaction version")

// TxnIndex reads a .txnindex file: 34-byte AbortedTxn entries appended with
// plain writes (no preallocation, no padding). Like the broker's iteration
// (TransactionIndex.iterator) a partial trailing entry is ignored.
//
// A TxnIndex holds no state of its own besides its reader: over bytes it
// may be shared between goroutines, over a file as its SlotReader allows.
type TxnIndex struct {
	size int64
	s    slots
}

// NewTxnIndex reads a transaction index held in memory.
func NewTxnIndex(b []byte) *TxnIndex { return NewTxnIndexFrom(byteSlots(b)) }

// NewTxnIndexFrom reads a transaction index through r (a file: see
// SlotReader). A negative size is taken as 0.
func NewTxnIndexFrom(r SlotReader) *TxnIndex {
	return &TxnIndex{size: max(r.Size(), 0), s: slots{r, TxnEntrySize}}
}

// Entries is floor(size / 34).
func (x *TxnIndex) Entries() int { return int(x.size / TxnEntrySize) }

// TrailingBytes is size % 34.
func (x *TxnIndex) TrailingBytes() int { return int(x.size % TxnEntrySize) }

// Entry reads entry n.
func (x *TxnIndex) Entry(n int) (AbortedTxn, error) {
	if n < 0 || n >= x.Entries() {
		return AbortedTxn{}, fmt.Errorf("transaction index entry %d out of range [0, %d)", n, x.Entries())
	}
	b, err := x.s.slot(n, x.Entries()-1)
	if err != nil {
		return AbortedTxn{}, fmt.Errorf("transaction index %w", err)
	}
	return DecodeTxnEntry(b), nil
}

// SanityCheck is the broker's TransactionIndex.sanityCheck, run at load for
// every segment. Entries are read in order and, as in the broker's iterator,
// each entry's version is checked before its last offset:
//   - a version byte > 0 (AbortedTxn.version reads byte 0 only, as a signed
//     byte, so 0x0001 passes and 0x0100 fails) is ErrTxnVersion, also
//     wrapping ErrCorruptIndex; the broker's load fails;
//   - a last offset below the segment's base offset is ErrCorruptIndex;
//     the broker rebuilds the segment.
//
// A partial trailing entry is ignored, as by the broker.
func (x *TxnIndex) SanityCheck(baseOffset int64) error {
	for i := 0; i < x.Entries(); i++ {
		t, err := x.Entry(i)
		if err != nil {
			return err
		}
		if v := t.VersionByte(); v > 0 {
			return fmt.Errorf("%w: %w: entry %d at byte %d: version %d", ErrCorruptIndex, ErrTxnVersion, i, int64(i)*TxnEntrySize, v)
		}
		if t.LastOffset < baseOffset {
			return fmt.Errorf("%w: entry %d at byte %d: last offset of aborted transaction %d is less than start offset %d", ErrCorruptIndex, i, int64(i)*TxnEntrySize, t.LastOffset, baseOffset)
		}
	}
	return nil
}

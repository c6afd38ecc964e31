package indexfmt_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

// FuzzIndexEntries reads the same bytes as each index format, slot by slot.
// Every whole slot decodes to an entry that encodes back to exactly its
// bytes (offset index, time index, transaction index), with the absolute
// offset base + relative offset; bytes after the last whole slot are
// trailing bytes, never an entry. The transaction index sanity check fails
// exactly when, scanning in order, an entry has a version byte above 0
// (ErrTxnVersion) or a last offset below the base (ErrCorruptIndex), and
// names the first such entry's kind.
func FuzzIndexEntries(f *testing.F) {
	f.Add([]byte{}, int64(0))
	f.Add(indexfmt.AppendOffsetEntry(indexfmt.AppendOffsetEntry(nil, 0, 0), 7, 4096), int64(100))
	f.Add(indexfmt.AppendTimeEntry(nil, 1700000000000, 3), int64(5))
	f.Add(indexfmt.AppendTxnEntry(indexfmt.AppendTxnEntry(nil, indexfmt.AbortedTxn{ProducerID: 1, FirstOffset: 5, LastOffset: 9, LastStableOffset: 5}),
		indexfmt.AbortedTxn{Version: 0x0100, LastOffset: 1}), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, base int64) {
		ox := indexfmt.NewOffsetIndex(data, base)
		if ox.Slots()*indexfmt.OffsetEntrySize+ox.TrailingBytes() != len(data) {
			t.Fatalf("offset index: %d slots and %d trailing bytes for %d bytes", ox.Slots(), ox.TrailingBytes(), len(data))
		}
		for i := 0; i < ox.Slots(); i++ {
			e, err := ox.Entry(i)
			raw := data[i*indexfmt.OffsetEntrySize : (i+1)*indexfmt.OffsetEntrySize]
			if err != nil || !bytes.Equal(indexfmt.AppendOffsetEntry(nil, e.RelativeOffset, e.Position), raw) || e.Offset != base+int64(e.RelativeOffset) {
				t.Fatalf("offset slot %d: %+v, %v; bytes %x", i, e, err, raw)
			}
		}
		if _, err := ox.Entry(ox.Slots()); err == nil {
			t.Fatalf("offset index: slot %d past the end read", ox.Slots())
		}

		tx := indexfmt.NewTimeIndex(data, base)
		if tx.Slots()*indexfmt.TimeEntrySize+tx.TrailingBytes() != len(data) {
			t.Fatalf("time index: %d slots and %d trailing bytes for %d bytes", tx.Slots(), tx.TrailingBytes(), len(data))
		}
		for i := 0; i < tx.Slots(); i++ {
			e, err := tx.Entry(i)
			raw := data[i*indexfmt.TimeEntrySize : (i+1)*indexfmt.TimeEntrySize]
			if err != nil || !bytes.Equal(indexfmt.AppendTimeEntry(nil, e.Timestamp, e.RelativeOffset), raw) || e.Offset != base+int64(e.RelativeOffset) {
				t.Fatalf("time slot %d: %+v, %v; bytes %x", i, e, err, raw)
			}
		}

		xx := indexfmt.NewTxnIndex(data)
		if xx.Entries()*indexfmt.TxnEntrySize+xx.TrailingBytes() != len(data) {
			t.Fatalf("txn index: %d entries and %d trailing bytes for %d bytes", xx.Entries(), xx.TrailingBytes(), len(data))
		}
		var wantErr, wantVersion bool
		for i := 0; i < xx.Entries(); i++ {
			e, err := xx.Entry(i)
			raw := data[i*indexfmt.TxnEntrySize : (i+1)*indexfmt.TxnEntrySize]
			if err != nil || !bytes.Equal(indexfmt.AppendTxnEntry(nil, e), raw) || e.VersionByte() != int8(raw[0]) {
				t.Fatalf("txn entry %d: %+v, %v; bytes %x", i, e, err, raw)
			}
			if !wantErr && (e.VersionByte() > 0 || e.LastOffset < base) {
				wantErr, wantVersion = true, e.VersionByte() > 0
			}
		}
		err := xx.SanityCheck(base)
		switch {
		case wantErr != (err != nil):
			t.Fatalf("txn SanityCheck(%d): %v; a failing entry: %v", base, err, wantErr)
		case err != nil && (!errors.Is(err, indexfmt.ErrCorruptIndex) || errors.Is(err, indexfmt.ErrTxnVersion) != wantVersion):
			t.Fatalf("txn SanityCheck(%d): %v; version failure expected: %v", base, err, wantVersion)
		}
	})
}

package indexfmt_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Golden bytes of one entry of each kind, big-endian, signed fields.
func TestEntryEncodings(t *testing.T) {
	if got, want := indexfmt.AppendOffsetEntry(nil, 0x01020304, -2), mustHex("01020304fffffffe"); !bytes.Equal(got, want) {
		t.Errorf("offset entry %x, want %x", got, want)
	}
	if got, want := indexfmt.AppendTimeEntry([]byte{0xaa}, 1_700_000_000_123, 7), mustHex("aa0000018bcfe5687b00000007"); !bytes.Equal(got, want) {
		t.Errorf("time entry %x, want %x", got, want)
	}
	txn := indexfmt.AbortedTxn{ProducerID: 983493, FirstOffset: 137, LastOffset: 299, LastStableOffset: 200}
	wantTxn := mustHex("0000" + "00000000000f01c5" + "0000000000000089" + "000000000000012b" + "00000000000000c8")
	got := indexfmt.AppendTxnEntry(nil, txn)
	if !bytes.Equal(got, wantTxn) || len(got) != indexfmt.TxnEntrySize {
		t.Errorf("txn entry %x, want %x", got, wantTxn)
	}
	// TransactionIndexTest.testAbortedTxnSerde.
	if back := indexfmt.DecodeTxnEntry(got); back != txn || back.VersionByte() != 0 {
		t.Errorf("DecodeTxnEntry = %+v", back)
	}
	neg := indexfmt.AbortedTxn{Version: -1, ProducerID: -1, FirstOffset: math.MinInt64, LastOffset: math.MaxInt64, LastStableOffset: -2}
	if back := indexfmt.DecodeTxnEntry(indexfmt.AppendTxnEntry(nil, neg)); back != neg {
		t.Errorf("round trip of extremes = %+v", back)
	}
	// Decoded through the reader types.
	x := offsetIdx(indexfmt.AppendOffsetEntry(nil, -5, math.MaxInt32), 100)
	if e, err := x.Entry(0); err != nil || e != (indexfmt.OffsetEntry{Offset: 95, RelativeOffset: -5, Position: math.MaxInt32}) {
		t.Errorf("offset Entry = %+v, %v", e, err)
	}
	tx := timeIdx(indexfmt.AppendTimeEntry(nil, -1, math.MaxInt32), 1)
	if e, err := tx.Entry(0); err != nil || e != (indexfmt.TimeEntry{Timestamp: -1, Offset: 1 + math.MaxInt32, RelativeOffset: math.MaxInt32}) {
		t.Errorf("time Entry = %+v, %v", e, err)
	}
	ti := indexfmt.NewTxnIndex(append(bytes.Clone(wantTxn), wantTxn...))
	for i := range 2 {
		if e, err := ti.Entry(i); err != nil || e != txn {
			t.Errorf("txn Entry(%d) = %+v, %v", i, e, err)
		}
	}
	if _, err := ti.Entry(2); err == nil {
		t.Error("txn Entry(2) of 2: no error")
	}
}

func TestRelativeOffset(t *testing.T) {
	for _, c := range []struct {
		base, offset int64
		rel          int32
		ok           bool
	}{
		{100, 100, 0, true},
		{100, 101, 1, true},
		{100, 100 + math.MaxInt32, math.MaxInt32, true},
		{100, 101 + math.MaxInt32, 0, false},
		{100, 99, 0, false},
		{0, math.MaxInt64, 0, false},
		// offset - base computed with 64-bit wrap-around, as in Java's
		// toRelative: MaxInt64 - (-1) wraps to MinInt64, which is < 0.
		{-1, math.MaxInt64, 0, false},
		// ... and MinInt64 - MaxInt64 wraps to 1, which the broker accepts.
		{math.MaxInt64, math.MinInt64, 1, true},
	} {
		rel, err := indexfmt.RelativeOffset(c.base, c.offset)
		if c.ok != (err == nil) || rel != c.rel {
			t.Errorf("RelativeOffset(%d, %d) = %d, %v", c.base, c.offset, rel, err)
		}
		if err != nil && !errors.Is(err, indexfmt.ErrOffsetOverflow) {
			t.Errorf("RelativeOffset(%d, %d): %v is not ErrOffsetOverflow", c.base, c.offset, err)
		}
	}
}

// OffsetIndex.append: strictly increasing offsets, each relative to the base.
func TestOffsetIndexBuilder(t *testing.T) {
	const base = 45
	b := indexfmt.NewOffsetIndexBuilder(base)
	if b.Entries() != 0 || len(b.Bytes()) != 0 {
		t.Fatal("new builder not empty")
	}
	// OffsetIndexTest.appendOutOfOrder.
	if err := b.Append(51, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(50, 1); !errors.Is(err, indexfmt.ErrInvalidOffset) {
		t.Fatalf("smaller offset: %v", err)
	}
	if err := b.Append(51, 1); !errors.Is(err, indexfmt.ErrInvalidOffset) {
		t.Fatalf("equal offset: %v (the broker requires strictly greater)", err)
	}
	if err := b.Append(52, 9); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(base+math.MaxInt32+1, 10); !errors.Is(err, indexfmt.ErrOffsetOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	if err := b.Append(base+math.MaxInt32, 10); err != nil {
		t.Fatal(err)
	}
	want := mustHex("00000006" + "00000000" + "00000007" + "00000009" + "7fffffff" + "0000000a")
	if b.Entries() != 3 || !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("Entries %d Bytes %x, want 3 and %x (failed appends must not write)", b.Entries(), b.Bytes(), want)
	}

	// The first entry may be at the base offset but not below it.
	b = indexfmt.NewOffsetIndexBuilder(base)
	if err := b.Append(base-1, 0); !errors.Is(err, indexfmt.ErrOffsetOverflow) {
		t.Fatalf("first entry below base: %v", err)
	}
	if err := b.Append(base, 0); err != nil || b.Entries() != 1 {
		t.Fatalf("first entry at base: %v", err)
	}

	// Round trip through the reader.
	b = indexfmt.NewOffsetIndexBuilder(1_000_000)
	for i := range 100 {
		if err := b.Append(1_000_000+int64(3*i+1), int32(4096*i)); err != nil {
			t.Fatal(err)
		}
	}
	x := offsetIdx(b.Bytes(), 1_000_000)
	if x.Slots() != 100 || x.TrailingBytes() != 0 {
		t.Fatalf("Slots %d", x.Slots())
	}
	for i := range 100 {
		if e, err := x.Entry(i); err != nil || e.Offset != 1_000_000+int64(3*i+1) || e.Position != int32(4096*i) {
			t.Fatalf("Entry(%d) = %+v, %v", i, e, err)
		}
	}
	if err := x.SanityCheck(); err != nil {
		t.Fatal(err)
	}
}

// TimeIndex.maybeAppend.
func TestTimeIndexBuilder(t *testing.T) {
	const base = 45
	b := indexfmt.NewTimeIndexBuilder(base)
	// The empty index's last entry is (-1, base): a timestamp of -1 (v0
	// data, NO_TIMESTAMP) is skipped, and so is anything smaller, without
	// error; nothing is checked about the offset until an entry exists.
	for _, ts := range []int64{-1, -5, math.MinInt64} {
		if err := b.MaybeAppend(ts, base+3); err != nil || b.Entries() != 0 {
			t.Fatalf("MaybeAppend(%d) on empty: %v, %d entries", ts, err, b.Entries())
		}
	}
	if err := b.MaybeAppend(-1, base-1); err != nil {
		t.Fatalf("skipped entry with an offset below base: %v", err)
	}
	// The first entry needs a timestamp >= 0 and an offset that fits.
	if err := b.MaybeAppend(0, base-1); !errors.Is(err, indexfmt.ErrOffsetOverflow) {
		t.Fatalf("first entry below base: %v", err)
	}
	if err := b.MaybeAppend(0, base); err != nil || b.Entries() != 1 {
		t.Fatalf("first entry (0, base): %v", err)
	}
	// Equal timestamp: skipped, whatever the (not smaller) offset, even one
	// that would not fit: it is never written.
	if err := b.MaybeAppend(0, base+10); err != nil || b.Entries() != 1 {
		t.Fatalf("equal timestamp: %v, %d entries", err, b.Entries())
	}
	if err := b.MaybeAppend(0, base+math.MaxInt32+5); err != nil || b.Entries() != 1 {
		t.Fatalf("equal timestamp, unfit offset: %v", err)
	}
	// Larger timestamp with an equal offset is appended.
	if err := b.MaybeAppend(7, base); err != nil || b.Entries() != 2 {
		t.Fatalf("larger timestamp, equal offset: %v", err)
	}
	if err := b.MaybeAppend(9, base+20); err != nil || b.Entries() != 3 {
		t.Fatal(err)
	}
	// Smaller offset: InvalidOffsetException, checked before the timestamp.
	for _, ts := range []int64{10, 9, 3} {
		if err := b.MaybeAppend(ts, base+19); !errors.Is(err, indexfmt.ErrInvalidOffset) || errors.Is(err, indexfmt.ErrInvalidTimestamp) {
			t.Fatalf("smaller offset, timestamp %d: %v", ts, err)
		}
	}
	// Smaller timestamp: IllegalStateException, not InvalidOffsetException.
	if err := b.MaybeAppend(8, base+20); !errors.Is(err, indexfmt.ErrInvalidTimestamp) || errors.Is(err, indexfmt.ErrInvalidOffset) {
		t.Fatalf("smaller timestamp: %v", err)
	}
	if err := b.MaybeAppend(10, base+math.MaxInt32+1); !errors.Is(err, indexfmt.ErrOffsetOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	want := mustHex("0000000000000000" + "00000000" + "0000000000000007" + "00000000" + "0000000000000009" + "00000014")
	if b.Entries() != 3 || !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("Entries %d Bytes %x, want %x", b.Entries(), b.Bytes(), want)
	}

	// TimeIndexTest.testAppend (without the full check, which is the
	// caller's): after 29 entries (i*10, base+i*10), an offset below the last
	// fails and a larger one is accepted.
	b = indexfmt.NewTimeIndexBuilder(base)
	for i := int64(1); i <= 29; i++ {
		if err := b.MaybeAppend(i*10, i*10+base); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.MaybeAppend(10000, (30-2)*10); !errors.Is(err, indexfmt.ErrInvalidOffset) {
		t.Fatalf("testAppend offset 280: %v", err)
	}
	if err := b.MaybeAppend(10000, 1000); err != nil || b.Entries() != 30 {
		t.Fatalf("testAppend (10000, 1000): %v", err)
	}
	x := timeIdx(b.Bytes(), base)
	if e, err := x.LastEntry(); err != nil || e.Timestamp != 10000 || e.Offset != 1000 {
		t.Fatalf("LastEntry = %+v, %v", e, err)
	}
	if err := x.SanityCheck(); err != nil {
		t.Fatal(err)
	}
	// TimeIndexTest.testLastEntry.
	b = indexfmt.NewTimeIndexBuilder(base)
	if err := b.MaybeAppend(1, base+1); err != nil {
		t.Fatal(err)
	}
	if e, err := timeIdx(b.Bytes(), base).LastEntry(); err != nil || e != (indexfmt.TimeEntry{Timestamp: 1, Offset: base + 1, RelativeOffset: 1}) {
		t.Fatalf("LastEntry = %+v, %v", e, err)
	}
}

package indexfmt_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
)

// OffsetIndex.sanityCheck: entries != 0 && lastOffset < baseOffset, then
// length % 8 != 0.
func TestOffsetSanityCheck(t *testing.T) {
	const base = 20
	valid := offsetBytes([]int32{1, 5, 9}, []int32{0, 100, 200})
	lastNegative := offsetBytes([]int32{1, 5, -1}, []int32{0, 100, 200})
	for _, c := range []struct {
		name string
		b    []byte
		want string // substring of the error, "" for none
	}{
		{"empty", nil, ""},
		{"valid", valid, ""},
		// OffsetIndexTest.testSanityLastOffsetEqualToBaseOffset (the check
		// was "<=" before 2.0, KAFKA-7076).
		{"last offset equal to base", offsetBytes([]int32{0}, []int32{0}), ""},
		{"zero-padded: last slot reads as the base offset", append(bytes.Clone(valid), make([]byte, 16)...), ""},
		{"all zero", make([]byte, 64), ""},
		{"last offset below base", lastNegative, "last offset is 19 which is less than the base offset 20"},
		{"only a middle slot below base", offsetBytes([]int32{1, -7, 9}, []int32{0, 1, 2}), ""},
		{"size not a multiple of 8", append(bytes.Clone(valid), 1), "found 25 bytes which is neither positive nor a multiple of 8"},
		{"shorter than one slot", []byte{0, 0, 0}, "found 3 bytes"},
		{"both: the offset test comes first", append(bytes.Clone(lastNegative), 1, 2), "last offset is 19"},
	} {
		err := offsetIdx(c.b, base).SanityCheck()
		checkSanity(t, c.name, err, c.want)
	}
}

// TimeIndex.sanityCheck: last timestamp < slot 0's timestamp, then last offset
// < base offset, then length % 12 != 0.
func TestTimeSanityCheck(t *testing.T) {
	const base = 45
	valid := timeBytes([]int64{10, 20, 30}, []int32{10, 20, 30})
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, ""},
		{"valid", valid, ""},
		{"one entry", timeBytes([]int64{7}, []int32{0}), ""},
		{"equal first and last timestamps", timeBytes([]int64{10, 10}, []int32{1, 2}), ""},
		{"last timestamp below first", timeBytes([]int64{10, 20, 9}, []int32{1, 2, 3}), "last timestamp is 9 which is less than the first timestamp 10"},
		{"zero-padded with a positive first timestamp", append(bytes.Clone(valid), make([]byte, 24)...), "last timestamp is 0 which is less than the first timestamp 10"},
		{"zero-padded with first timestamp 0", append(timeBytes([]int64{0, 5}, []int32{0, 1}), make([]byte, 12)...), ""},
		{"all zero", make([]byte, 36), ""},
		{"last offset below base", timeBytes([]int64{10, 20}, []int32{1, -3}), "last offset is 42 which is less than the first offset 45"},
		{"size not a multiple of 12", append(bytes.Clone(valid), 0, 0), "found 38 bytes which is neither positive nor a multiple of 12"},
		{"timestamp and offset: timestamp first", timeBytes([]int64{10, 5}, []int32{1, -1}), "last timestamp is 5"},
		{"offset and size: offset first", append(timeBytes([]int64{10, 20}, []int32{1, -1}), 0), "last offset is 44"},
	} {
		err := timeIdx(c.b, base).SanityCheck()
		checkSanity(t, c.name, err, c.want)
	}
}

func checkSanity(t *testing.T, name string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return
	}
	if !errors.Is(err, indexfmt.ErrCorruptIndex) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want ErrCorruptIndex with %q", name, err, want)
	}
}

// TransactionIndex.sanityCheck and the version-byte quirk of AbortedTxn.
func TestTxnSanityCheck(t *testing.T) {
	// TransactionIndexTest.testSanityCheck's entries.
	txns := []indexfmt.AbortedTxn{
		{ProducerID: 0, FirstOffset: 0, LastOffset: 10, LastStableOffset: 11},
		{ProducerID: 1, FirstOffset: 5, LastOffset: 15, LastStableOffset: 13},
		{ProducerID: 2, FirstOffset: 18, LastOffset: 35, LastStableOffset: 25},
		{ProducerID: 3, FirstOffset: 32, LastOffset: 50, LastStableOffset: 40},
	}
	enc := func(ts ...indexfmt.AbortedTxn) []byte {
		var b []byte
		for _, t := range ts {
			b = indexfmt.AppendTxnEntry(b, t)
		}
		return b
	}
	open := func(b []byte) *indexfmt.TxnIndex { return indexfmt.NewTxnIndex(b) }
	withVersion := func(v uint16, t indexfmt.AbortedTxn) indexfmt.AbortedTxn { t.Version = int16(v); return t }

	if err := open(enc(txns...)).SanityCheck(0); err != nil {
		t.Fatalf("valid index: %v", err)
	}
	if err := open(nil).SanityCheck(1000); err != nil {
		t.Fatalf("empty index: %v", err)
	}
	// Reopened with a larger start offset: entry 0's last offset 10 < 100.
	err := open(enc(txns...)).SanityCheck(100)
	if !errors.Is(err, indexfmt.ErrCorruptIndex) || errors.Is(err, indexfmt.ErrTxnVersion) ||
		!strings.Contains(err.Error(), "entry 0 at byte 0") || !strings.Contains(err.Error(), "less than start offset 100") {
		t.Fatalf("start offset 100: %v", err)
	}
	// Last offset equal to the start offset passes; the first entry below
	// it is reported.
	err = open(enc(txns...)).SanityCheck(15)
	if err == nil || !strings.Contains(err.Error(), "entry 0 ") {
		t.Fatalf("start offset 15: %v", err)
	}
	if err := open(enc(txns[1:]...)).SanityCheck(15); err != nil {
		t.Fatalf("last offset equal to start offset: %v", err)
	}

	// Only the high byte of the i16 counts, as a signed byte, and only a
	// value > 0 fails.
	for _, c := range []struct {
		version uint16
		fails   bool
	}{
		{0x0000, false}, {0x0001, false}, {0x00ff, false}, {0x0100, true}, {0x7f00, true}, {0x8000, false}, {0xff00, false}, {0xffff, false},
	} {
		b := enc(txns[0], withVersion(c.version, txns[1]), txns[2])
		err := open(b).SanityCheck(0)
		if !c.fails {
			if err != nil {
				t.Errorf("version %#04x: %v", c.version, err)
			}
			continue
		}
		if !errors.Is(err, indexfmt.ErrTxnVersion) || !errors.Is(err, indexfmt.ErrCorruptIndex) || !strings.Contains(err.Error(), "entry 1 at byte 34") {
			t.Errorf("version %#04x: %v, want ErrTxnVersion at entry 1", c.version, err)
		}
	}
	if v := withVersion(0x0100, txns[0]).VersionByte(); v != 1 {
		t.Errorf("VersionByte of 0x0100 = %d", v)
	}
	if v := withVersion(0x8001, txns[0]).VersionByte(); v != -128 {
		t.Errorf("VersionByte of 0x8001 = %d", v)
	}

	// Within one entry the version is read first (the broker's iterator
	// fails before sanityCheck sees the entry); across entries, order wins.
	bad := withVersion(0x0100, indexfmt.AbortedTxn{LastOffset: 1})
	if err := open(enc(bad)).SanityCheck(100); !errors.Is(err, indexfmt.ErrTxnVersion) {
		t.Errorf("bad version and low last offset in one entry: %v", err)
	}
	if err := open(enc(txns[0], bad)).SanityCheck(100); errors.Is(err, indexfmt.ErrTxnVersion) || !errors.Is(err, indexfmt.ErrCorruptIndex) {
		t.Errorf("low last offset before a bad version: %v", err)
	}

	// A partial trailing entry is ignored, even a bad one.
	b := append(enc(txns...), 0x01, 0x00, 0, 0, 0)
	x := open(b)
	if x.Entries() != 4 || x.TrailingBytes() != 5 {
		t.Fatalf("Entries %d TrailingBytes %d", x.Entries(), x.TrailingBytes())
	}
	if err := x.SanityCheck(0); err != nil {
		t.Fatalf("partial trailing entry: %v", err)
	}
}

package verify

import (
	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/record"
)

// checkTxnIndex checks a .txnindex (TransactionIndex, AbortedTxn): whole
// 34-byte entries, version byte 0, last offsets (the ABORT markers, which
// lie in this segment) strictly increasing and inside the segment, first
// offsets not above last offsets. It runs after the log pass, which gives
// the segment's last offset. With the log present, a file of more entries
// than the log could justify (record.MaxTxnIndexEntries) is a
// txnindex.size error and only that many entries are checked: the rest is
// not read (a sparse 100 GiB file costs nothing).
func (c *segChecker) checkTxnIndex(x *indexfmt.TxnIndex, size int64, name string, hasLog bool) {
	entries := int64(x.Entries())
	if bound := record.MaxTxnIndexEntries(c.logSize); hasLog && entries > bound {
		c.add(TxnIndexSize, name, ptr(bound*indexfmt.TxnEntrySize), nil,
			"%d entries (%d bytes), but the log's %d bytes hold at most %d ABORT markers (one batch of at least %d bytes each), so at most %d entries: no broker wrote the rest; only the first %d are checked",
			entries, size, c.logSize, bound, record.MinMarkerBatchSize, bound, bound)
		entries = bound
	}
	if tb := x.TrailingBytes(); tb != 0 {
		at := size - int64(tb)
		c.add(TxnIndexSize, name, ptr(at), nil,
			"%d bytes after the last whole entry (size %d is not a multiple of %d): a broker's iteration ignores them, and its next append lands after them, out of step",
			tb, size, indexfmt.TxnEntrySize)
	}
	var prev int64
	for i := 0; i < int(entries); i++ {
		e, err := x.Entry(i)
		if err != nil {
			c.fail(err)
			return
		}
		at := int64(i) * indexfmt.TxnEntrySize
		if v := e.VersionByte(); v != 0 {
			c.add(TxnIndexVersion, name, ptr(at), ptr(e.LastOffset),
				"entry %d: version field %d (byte 0 reads %d, AbortedTxn.version): a broker loading this segment fails with \"Unexpected aborted transaction version\"",
				i, e.Version, v)
		}
		switch {
		case e.LastOffset < c.base:
			c.add(TxnIndexRange, name, ptr(at), ptr(e.LastOffset),
				"entry %d: last offset %d (the ABORT marker) is below the segment's base offset %d: TransactionIndex.sanityCheck fails and the broker rebuilds the segment at load",
				i, e.LastOffset, c.base)
		case c.hasBatch && !c.tailDamage && e.LastOffset > c.lastOff:
			c.add(TxnIndexRange, name, ptr(at), ptr(e.LastOffset),
				"entry %d: last offset %d (the ABORT marker) is beyond the segment's last batch (last offset %d); the marker's own segment holds the entry",
				i, e.LastOffset, c.lastOff)
		case e.FirstOffset > e.LastOffset:
			c.add(TxnIndexRange, name, ptr(at), ptr(e.LastOffset),
				"entry %d: first offset %d is above the last offset %d", i, e.FirstOffset, e.LastOffset)
		case i > 0 && e.LastOffset <= prev:
			c.add(TxnIndexOrder, name, ptr(at), ptr(e.LastOffset),
				"entry %d: last offset %d is not above the previous entry's %d (TransactionIndex.append requires increasing last offsets; fetches collect aborted transactions in that order)",
				i, e.LastOffset, prev)
		}
		prev = e.LastOffset
	}
}

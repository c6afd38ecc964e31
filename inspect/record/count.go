package record

// BatchCount is a batch's first offset and record count, the one place
// they are worked out. A v2 header and an uncompressed legacy message (one
// record, at the last offset) give them; a legacy compressed wrapper only
// when its inner messages are read (the broker's
// LegacyFileChannelRecordBatch.baseOffset decompresses it for the first
// one): feed Record the records as they are decoded.
type BatchCount struct {
	FirstOffset int64 // -1 while no record has been read
	RecordCount int64
	fromRecords bool
}

// HeaderCount is what b's header says; FromRecords reports a compressed
// wrapper, whose records must be fed to Record.
func HeaderCount(b *Batch) BatchCount {
	switch {
	case b.Magic >= 2:
		return BatchCount{FirstOffset: b.BaseOffset, RecordCount: int64(b.RecordCount)}
	case b.Compression() == CompressionNone:
		return BatchCount{FirstOffset: b.LastOffset, RecordCount: 1}
	}
	return RecordsCount()
}

// RecordsCount counts from the records fed to Record alone, whatever the
// header says (dump-log shows a legacy entry whose message does not decode
// with no records).
func RecordsCount() BatchCount { return BatchCount{FirstOffset: -1, fromRecords: true} }

// FromRecords reports whether the count comes from the records.
func (c *BatchCount) FromRecords() bool { return c.fromRecords }

// Record counts one decoded record (only when FromRecords).
func (c *BatchCount) Record(r *Record) {
	if !c.fromRecords {
		return
	}
	if c.RecordCount == 0 {
		c.FirstOffset = r.Offset
	}
	c.RecordCount++
}

package inspect

import "fmt"

// BatchDetail is a batch with the two facts a legacy compressed wrapper
// only gives up when its inner messages are read: its first offset (the
// broker's LegacyFileChannelRecordBatch.baseOffset) and its record count.
type BatchDetail struct {
	Batch       Batch
	FirstOffset int64
	RecordCount int64
}

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

// Detail completes b, read from seg: for v2 batches and uncompressed legacy
// messages straight from the header; for a compressed wrapper by
// decompressing it (BatchCount).
func (seg *Segment) Detail(b Batch, dec *RecordDecoder) (BatchDetail, error) {
	c := HeaderCount(&b)
	d := BatchDetail{Batch: b, FirstOffset: c.FirstOffset, RecordCount: c.RecordCount}
	if !c.FromRecords() {
		return d, nil
	}
	entry, err := seg.ReadEntry(&b, nil)
	if err != nil {
		// As before the records are read: the header's values.
		d.FirstOffset, d.RecordCount = b.BaseOffset, int64(b.RecordCount)
		return d, err
	}
	err = dec.Records(seg.LogName, entry, &b, func(r *Record) error { c.Record(r); return nil })
	d.FirstOffset, d.RecordCount = c.FirstOffset, c.RecordCount
	return d, err
}

// Describe opens the segment with the given base offset and completes b
// with Detail.
func (p *Partition) Describe(segmentBaseOffset int64, b Batch) (BatchDetail, error) {
	for _, sf := range p.Segments {
		if sf.BaseOffset != segmentBaseOffset {
			continue
		}
		seg, err := OpenSegment(sf)
		if err != nil {
			return BatchDetail{}, err
		}
		defer seg.Close()
		var dec RecordDecoder
		return seg.Detail(b, &dec)
	}
	return BatchDetail{}, fmt.Errorf("%s: no segment with base offset %d", p.Dir, segmentBaseOffset)
}

package inspect

import (
	"fmt"

	"github.com/kseg/kseg/inspect/record"
)

// BatchDetail is a batch with the two facts a legacy compressed wrapper
// only gives up when its inner messages are read: its first offset (the
// broker's LegacyFileChannelRecordBatch.baseOffset) and its record count.
type BatchDetail struct {
	Batch       record.Batch
	FirstOffset int64
	RecordCount int64
}

// Detail completes b, read from seg: for v2 batches and uncompressed legacy
// messages straight from the header; for a compressed wrapper by
// decompressing it (BatchCount).
func (seg *Segment) Detail(b record.Batch, dec *record.RecordDecoder) (BatchDetail, error) {
	c := record.HeaderCount(&b)
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
	err = dec.Records(seg.LogName, entry, &b, func(r *record.Record) error { c.Record(r); return nil })
	d.FirstOffset, d.RecordCount = c.FirstOffset, c.RecordCount
	return d, err
}

// Describe opens the segment with the given base offset and completes b
// with Detail.
func (p *Partition) Describe(segmentBaseOffset int64, b record.Batch) (BatchDetail, error) {
	for _, sf := range p.Segments {
		if sf.BaseOffset != segmentBaseOffset {
			continue
		}
		seg, err := OpenSegment(sf, SegmentOptions{})
		if err != nil {
			return BatchDetail{}, err
		}
		defer seg.Close()
		var dec record.RecordDecoder
		return seg.Detail(b, &dec)
	}
	return BatchDetail{}, fmt.Errorf("%s: no segment with base offset %d", p.Dir, segmentBaseOffset)
}

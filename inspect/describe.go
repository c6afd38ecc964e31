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

// Detail completes b, read from seg: for v2 batches and uncompressed legacy
// messages straight from the header; for a compressed wrapper by
// decompressing it.
func (seg *Segment) Detail(b Batch, dec *RecordDecoder) (BatchDetail, error) {
	d := BatchDetail{Batch: b, FirstOffset: b.BaseOffset, RecordCount: int64(b.RecordCount)}
	if b.Magic >= 2 {
		return d, nil
	}
	if b.Compression() == CompressionNone {
		d.FirstOffset, d.RecordCount = b.LastOffset, 1
		return d, nil
	}
	entry, err := seg.ReadEntry(&b, nil)
	if err != nil {
		return d, err
	}
	d.RecordCount = 0
	d.FirstOffset = -1
	err = dec.Records(seg.LogName, entry, &b, func(r *Record) error {
		if d.RecordCount == 0 {
			d.FirstOffset = r.Offset
		}
		d.RecordCount++
		return nil
	})
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

package cmd

import "github.com/kseg/kseg/inspect"

// batchJSON is the contract's "batch" object of lookup and lookup-time.
type batchJSON struct {
	BaseOffset   int64  `json:"base_offset"`
	LastOffset   int64  `json:"last_offset"`
	Position     int64  `json:"position"`
	Size         int64  `json:"size"`
	Magic        int8   `json:"magic"`
	MaxTimestamp int64  `json:"max_timestamp"`
	RecordCount  int64  `json:"record_count"`
	Compression  string `json:"compression"`
}

// newBatchJSON renders a batch whose legacy details (first offset and
// record count of a compressed wrapper) were filled in by
// inspect.Describe.
func newBatchJSON(d inspect.BatchDetail) *batchJSON {
	b := d.Batch
	return &batchJSON{
		BaseOffset:   d.FirstOffset,
		LastOffset:   b.LastOffset,
		Position:     b.Position,
		Size:         b.Size,
		Magic:        b.Magic,
		MaxTimestamp: b.MaxTimestamp,
		RecordCount:  d.RecordCount,
		Compression:  b.Compression().String(),
	}
}

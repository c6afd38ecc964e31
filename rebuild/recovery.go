package rebuild

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/recovery"
)

// The plan is broker recovery's, read-only, in inspect/recovery (below
// both verify and rebuild, which compare with it and write it). These
// names keep rebuild's API whole.

// DefaultIndexIntervalBytes is the broker's index.interval.bytes default.
const DefaultIndexIntervalBytes = recovery.DefaultIndexIntervalBytes

// IndexEveryBatch asks for index.interval.bytes = 0 in
// Options.IndexIntervalBytes.
const IndexEveryBatch = recovery.IndexEveryBatch

// Options are the broker settings recovery depends on (recovery.Options).
type Options = recovery.Options

// SegmentPlan is what broker recovery leaves for one segment
// (recovery.SegmentPlan).
type SegmentPlan = recovery.SegmentPlan

// ErrOverlap marks a batch whose offsets reach the next segment's base
// offset (recovery.ErrOverlap).
var ErrOverlap = recovery.ErrOverlap

// ErrUnrecoverable marks a segment broker recovery cannot rebuild
// (recovery.ErrUnrecoverable).
var ErrUnrecoverable = recovery.ErrUnrecoverable

// PlanPartition runs broker recovery over every segment of p
// (recovery.PlanPartition). Nothing is written.
func PlanPartition(p *inspect.Partition, opts Options) ([]SegmentPlan, error) {
	return recovery.PlanPartition(p, opts)
}

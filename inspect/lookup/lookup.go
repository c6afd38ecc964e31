// Package lookup answers kseg lookup and kseg lookup-time as the broker
// serving the partition would: Partition.LookupOffset and
// Partition.LookupTime with the indexes the broker's loader rebuilds for
// a segment whose index file is missing (LogLoader.loadSegmentFiles),
// computed in memory by broker recovery's plan (inspect/recovery; the
// broker's default index.interval.bytes; nothing is written). inspect
// cannot build them itself (recovery sits above it), so this is the entry
// point a Go caller uses to get the command's answer.
package lookup

import (
	"path/filepath"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/recovery"
)

// Options are a lookup's options besides the recovered indexes.
type Options struct {
	// Trace records the steps of the search (inspect.TraceStep).
	Trace bool
}

func brokerOptions(opts Options) inspect.LookupOptions {
	return inspect.LookupOptions{Trace: opts.Trace, RecoveredIndexes: RecoveredIndexes}
}

// Offset is kseg lookup: the batch holding offset target, as the broker
// finds it.
func Offset(p *inspect.Partition, target int64, opts Options) (*inspect.OffsetLookup, error) {
	return p.LookupOffset(target, brokerOptions(opts))
}

// Time is kseg lookup-time: the first offset whose timestamp is at least
// target (or inspect's special targets), as the broker finds it.
func Time(p *inspect.Partition, target int64, opts Options) (*inspect.TimeLookup, error) {
	return p.LookupTime(target, brokerOptions(opts))
}

// RecoveredIndexes plans the recovery of the one segment sf and returns
// the offset and time index it would write (inspect.LookupOptions).
func RecoveredIndexes(sf inspect.SegmentFiles) (index, timeIndex []byte, err error) {
	one := &inspect.Partition{Dir: filepath.Dir(sf.Log), Segments: []inspect.SegmentFiles{sf}, SingleSegment: true}
	plans, err := recovery.PlanPartition(one, recovery.Options{})
	if err != nil && len(plans) == 0 {
		return nil, nil, err
	}
	return plans[0].Index, plans[0].TimeIndex, nil
}

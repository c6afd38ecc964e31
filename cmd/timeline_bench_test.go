package cmd

import (
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// BenchmarkTimeline charts the traffic of 16 partitions ("many": one
// segment each, read through their time indexes) and of a data directory
// of many small partitions ("datadir"), in process, as JSON Lines.
func BenchmarkTimeline(b *testing.B) {
	for _, set := range []string{"many", "datadir"} {
		dir := gentest.BenchData(b, set)
		gentest.Warm(b, dir)
		b.Run(set, func(b *testing.B) {
			for b.Loop() {
				runInProcess(b, 0, "-o", "json", "timeline", "--per-partition", dir)
			}
		})
	}
}

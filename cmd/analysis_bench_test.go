package cmd

import (
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// BenchmarkAnalysesDataDir runs txns, retention and cleaner (with
// cleanup.policy=compact, else it skips every partition) over the data
// dir of many small partitions as whole processes, each round after an
// ls of it: x-ls is the analysis's time over ls's (the goal: at most 2).
func BenchmarkAnalysesDataDir(b *testing.B) {
	bin := benchBinary(b)
	dir := gentest.BenchData(b, "datadir")
	gentest.Warm(b, dir)
	for _, args := range [][]string{
		{"txns", "-q", "-o", "json", dir},
		{"retention", "-q", "-o", "json", dir},
		{"cleaner", "-q", "-o", "json", "--config", "cleanup.policy=compact", dir},
	} {
		b.Run(args[0], func(b *testing.B) {
			var dl, da time.Duration
			for b.Loop() {
				t0 := time.Now()
				runProcess(b, bin, "ls", "-q", "-o", "json", dir)
				t1 := time.Now()
				runProcess(b, bin, args...)
				da += time.Since(t1)
				dl += t1.Sub(t0)
			}
			b.ReportMetric(da.Seconds()/dl.Seconds(), "x-ls")
		})
	}
}

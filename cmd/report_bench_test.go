package cmd

import (
	"testing"
	"time"

	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/verify/report"
)

// BenchmarkReportPage builds kseg report's page of the data dir of many
// small partitions ("datadir": make bench's 2000 partitions of three
// segments, or KSEG_BENCH_PARTITIONS of them) as runReport does: the
// targets, report.Build (verify, ls, traffic, the analyses) and
// report.WriteHTML. page-bytes is the page's size, write-ms/op the
// time WriteHTML took of it.
func BenchmarkReportPage(b *testing.B) {
	dir := gentest.BenchData(b, "datadir")
	gentest.Warm(b, dir)
	var size, partitions int64
	var write time.Duration
	for b.Loop() {
		targets, err := resolveTargets([]string{dir})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := report.Build(targets, report.Options{Paths: []string{dir}, Now: 1700006400000, Generated: 1700006400000, Version: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		var w countingWriter
		t0 := time.Now()
		if err := report.WriteHTML(&w, rep); err != nil {
			b.Fatal(err)
		}
		write += time.Since(t0)
		size, partitions = w.n, int64(rep.Partitions)
	}
	b.ReportMetric(float64(size), "page-bytes")
	b.ReportMetric(float64(partitions), "partitions")
	b.ReportMetric(write.Seconds()*1e3/float64(b.N), "write-ms/op")
}

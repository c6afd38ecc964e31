package cmd

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/verify"
)

var recoveryPlanColumns = []column[verify.RecoveryPlan]{
	textColumn("partition", func(p verify.RecoveryPlan) string { return p.Partition }),
	boolColumn("clean_shutdown", func(p verify.RecoveryPlan) bool { return p.CleanShutdown }),
	intColumn("recovery_point", func(p verify.RecoveryPlan) int64 { return p.RecoveryPoint }),
	textColumn("recovery_point_source", func(p verify.RecoveryPlan) string { return p.RecoveryPointSource }),
	intColumn("log_end_offset", func(p verify.RecoveryPlan) int64 { return p.LogEndOffset }),
	intColumn("segment_count", func(p verify.RecoveryPlan) int { return p.SegmentCount }),
	textColumn("segments", func(p verify.RecoveryPlan) string {
		switch n := len(p.Segments); {
		case n == 0:
			return ""
		case n == 1:
			return p.Segments[0].Segment
		default:
			return p.Segments[0].Segment + " .. " + p.Segments[n-1].Segment
		}
	}),
	intColumn("bytes", func(p verify.RecoveryPlan) int64 { return p.Bytes }),
	{name: "estimate.seconds", right: true, cell: func(p verify.RecoveryPlan) string {
		if p.Estimate == nil {
			return ""
		}
		return strconv.FormatFloat(p.Estimate.Seconds, 'f', 3, 64)
	}},
}

// printRecoveryPlans writes verify --recovery-plan's lines: the plan of
// every partition of the targets, each with an estimate from kseg's own
// read rate in this run (scanned .log bytes over the elapsed time). In
// JSON they come before the summary line; in the table view they are a
// second table; CSV has one table only, so they go to stderr.
func printRecoveryPlans(ios *IOStreams, targets []*inspect.Target, scanned int64, elapsed time.Duration) error {
	rate := 0.0
	if elapsed > 0 && scanned > 0 {
		rate = float64(scanned) / elapsed.Seconds()
	}
	var plans []verify.RecoveryPlan
	for _, t := range targets {
		ps, err := verify.PlanRecovery(t)
		if err != nil {
			return fmt.Errorf("planning recovery of %s: %w", t.Path, err)
		}
		plans = append(plans, ps...)
	}
	for i := range plans {
		plans[i].SetEstimate(rate)
	}
	switch ios.Format() {
	case FormatCSV, FormatJUnit:
		for _, p := range plans {
			est := "no estimate"
			if p.Estimate != nil {
				est = fmt.Sprintf("about %.3f s at %.0f bytes/s", p.Estimate.Seconds, p.Estimate.ScanRateBytesPerSecond)
			}
			fmt.Fprintf(ios.ErrOut, "kseg: recovery plan for %s: %d segments, %d bytes from recovery point %d (%s), %s\n",
				escapeControl(p.Partition), p.SegmentCount, p.Bytes, p.RecoveryPoint, p.RecoveryPointSource, est)
		}
		return nil
	case FormatTable, FormatWide:
		fmt.Fprintln(ios.Out)
	}
	l := newLister(ios, recoveryPlanColumns)
	for _, p := range plans {
		l.Add(p)
	}
	if rate > 0 {
		l.Footer("estimates at kseg's read rate in this run: %.0f bytes/s (a broker also rebuilds indexes and producer state, with num.recovery.threads.per.data.dir threads)", rate)
	}
	return l.Close()
}

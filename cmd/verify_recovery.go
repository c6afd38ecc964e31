package cmd

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/verify"
)

// recoveryPlanJSON is the contract's recovery_plan line, made from a
// verify.StartupRecovery; the table columns read it too.
type recoveryPlanJSON struct {
	Kind                string                `json:"kind"`
	Partition           string                `json:"partition"`
	Dir                 string                `json:"dir"`
	CleanShutdown       bool                  `json:"clean_shutdown"`
	RecoveryPoint       int64                 `json:"recovery_point"`
	RecoveryPointSource string                `json:"recovery_point_source"`
	LogEndOffset        int64                 `json:"log_end_offset"`
	Segments            []recoverySegmentJSON `json:"segments"` // [] when none
	SegmentCount        int                   `json:"segment_count"`
	Bytes               int64                 `json:"bytes"`
	Estimate            *recoveryEstimateJSON `json:"estimate"`
}

type recoverySegmentJSON struct {
	Segment    string `json:"segment"`
	BaseOffset int64  `json:"base_offset"`
	Bytes      int64  `json:"bytes"`
	Reason     string `json:"reason"`
}

type recoveryEstimateJSON struct {
	ScanRateBytesPerSecond float64 `json:"scan_rate_bytes_per_second"`
	Seconds                float64 `json:"seconds"`
}

func recoveryPlanLine(p verify.StartupRecovery) recoveryPlanJSON {
	out := recoveryPlanJSON{Kind: "recovery_plan", Partition: p.Partition, Dir: p.Dir, CleanShutdown: p.CleanShutdown,
		RecoveryPoint: p.RecoveryPoint, RecoveryPointSource: p.RecoveryPointSource, LogEndOffset: p.LogEndOffset,
		Segments: make([]recoverySegmentJSON, len(p.Segments)), SegmentCount: p.SegmentCount, Bytes: p.Bytes}
	for i, s := range p.Segments {
		out.Segments[i] = recoverySegmentJSON(s)
	}
	if p.Estimate != nil {
		out.Estimate = &recoveryEstimateJSON{ScanRateBytesPerSecond: p.Estimate.ScanRateBytesPerSecond, Seconds: p.Estimate.Seconds}
	}
	return out
}

var recoveryPlanColumns = []column[recoveryPlanJSON]{
	textColumn("partition", func(p recoveryPlanJSON) string { return p.Partition }),
	boolColumn("clean_shutdown", func(p recoveryPlanJSON) bool { return p.CleanShutdown }),
	intColumn("recovery_point", func(p recoveryPlanJSON) int64 { return p.RecoveryPoint }),
	textColumn("recovery_point_source", func(p recoveryPlanJSON) string { return p.RecoveryPointSource }),
	intColumn("log_end_offset", func(p recoveryPlanJSON) int64 { return p.LogEndOffset }),
	intColumn("segment_count", func(p recoveryPlanJSON) int { return p.SegmentCount }),
	textColumn("segments", func(p recoveryPlanJSON) string {
		switch n := len(p.Segments); {
		case n == 0:
			return ""
		case n == 1:
			return p.Segments[0].Segment
		default:
			return p.Segments[0].Segment + " .. " + p.Segments[n-1].Segment
		}
	}),
	intColumn("bytes", func(p recoveryPlanJSON) int64 { return p.Bytes }),
	{name: "estimate.seconds", right: true, cell: func(p recoveryPlanJSON) string {
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
	var plans []verify.StartupRecovery
	for _, t := range targets {
		ps, err := verify.PlanStartupRecovery(t)
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
			fmt.Fprintf(ios.ErrOut, "kseg: recovery plan for %s: %s, %s from recovery point %d (%s), %s\n",
				escapeControl(p.Partition), count(p.SegmentCount, "segment"), count(p.Bytes, "byte"), p.RecoveryPoint, p.RecoveryPointSource, est)
		}
		return nil
	case FormatTable, FormatWide:
		fmt.Fprintln(ios.Out)
	}
	l := newLister(ios, recoveryPlanColumns)
	for _, p := range plans {
		l.Add(recoveryPlanLine(p))
	}
	if rate > 0 {
		l.Footer("estimates at kseg's read rate in this run: %.0f bytes/s (a broker also rebuilds indexes and producer state, with num.recovery.threads.per.data.dir threads)", rate)
	}
	return l.Close()
}

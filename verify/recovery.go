package verify

import (
	"errors"
	"math"
	"os"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/sidefile"
)

// StartupRecovery says which segments of one partition a broker recovers at
// its next start after an unclean shutdown (LogLoader): every segment from
// the one holding the partition's recovery point to the end
// (LogLoader.recoverLog: segments.values(recoveryPoint, +inf)), plus any
// earlier segment it rebuilds whatever the shutdown (a missing .index, a
// .txnindex entry below the base offset; LogLoader.loadSegmentFiles).
// Recovery reads each of those .log files whole (LogSegment.recover), so
// their size is the work.
type StartupRecovery struct {
	Partition string // the directory's name
	Dir       string
	// CleanShutdown: the data directory holds .kafka_cleanshutdown, so the
	// next start skips the recovery of RecoveryPoint onwards (the
	// always-rebuilt segments are still rebuilt).
	CleanShutdown bool
	// RecoveryPoint is what the broker starts from: the
	// recovery-point-offset-checkpoint entry, or 0 when the file has none
	// for the partition or cannot be read. RecoveryPointSource says which:
	// "checkpoint", "absent" or "unreadable".
	RecoveryPoint       int64
	RecoveryPointSource string
	LogEndOffset        int64
	Segments            []StartupSegment
	SegmentCount        int
	Bytes               int64 // .log bytes to recover
	Estimate            *RecoveryEstimate
}

// StartupSegment is one segment a broker would recover, and why.
type StartupSegment struct {
	Segment    string
	BaseOffset int64
	Bytes      int64
	// Reason: "recovery_point" (at or after the recovery point: only after
	// an unclean shutdown), "index_missing" or "txnindex_below_base"
	// (rebuilt at every start).
	Reason string
}

// RecoveryEstimate is how long recovering Bytes takes at a scan rate kseg
// measured while reading the same disk: a rough guide, since a broker
// also builds indexes and replays producer state (and runs
// num.recovery.threads.per.data.dir threads per directory).
type RecoveryEstimate struct {
	ScanRateBytesPerSecond float64
	Seconds                float64
}

// Reasons a segment is in a recovery plan.
const (
	ReasonRecoveryPoint     = "recovery_point"
	ReasonIndexMissing      = "index_missing"
	ReasonTxnIndexBelowBase = "txnindex_below_base"
)

// SetEstimate fills in the time estimate for a scan rate in bytes per
// second (no estimate when the rate is not positive).
func (p *StartupRecovery) SetEstimate(rate float64) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		p.Estimate = nil
		return
	}
	p.Estimate = &RecoveryEstimate{ScanRateBytesPerSecond: rate, Seconds: float64(p.Bytes) / rate}
}

// PlanStartupRecovery returns the startup recovery of every partition of t, in t's
// order. A target naming a single segment plans its whole partition.
func PlanStartupRecovery(t *inspect.Target) ([]StartupRecovery, error) {
	var dd *sidefile.DataDirFiles
	if t.DataDir != "" {
		dd = sidefile.ReadDataDirFiles(t.DataDir)
	}
	var out []StartupRecovery
	for _, p := range t.Partitions {
		if p.SingleSegment {
			full, err := inspect.ReadPartition(p.Dir)
			if err != nil {
				return nil, err
			}
			p = full
		}
		plan, err := planStartupRecovery(p, dd)
		if err != nil {
			return nil, err
		}
		out = append(out, plan)
	}
	return out, nil
}

func planStartupRecovery(p *inspect.Partition, dd *sidefile.DataDirFiles) (StartupRecovery, error) {
	rs := inspect.StartOfRecovery(p.Segments, p.Topic, p.Partition, dd)
	plan := StartupRecovery{Partition: p.Name(), Dir: p.Dir, CleanShutdown: rs.Clean, RecoveryPoint: rs.Point, RecoveryPointSource: rs.Source}
	ends, err := partitionEnds(p, nil)
	if err != nil {
		return plan, err
	}
	plan.LogEndOffset = ends.end
	first := rs.First
	for i, sf := range p.Segments {
		reason := ""
		switch {
		case i >= first:
			reason = ReasonRecoveryPoint
		case sf.Index == "":
			reason = ReasonIndexMissing
		default:
			below, err := txnIndexBelowBase(sf)
			if err != nil {
				return plan, err
			}
			if below {
				reason = ReasonTxnIndexBelowBase
			}
		}
		if reason == "" {
			continue
		}
		var size int64
		if sf.Log != "" {
			st, err := os.Stat(sf.Log)
			if err != nil {
				return plan, err
			}
			size = st.Size()
		}
		plan.Segments = append(plan.Segments, StartupSegment{Segment: sf.Name(), BaseOffset: sf.BaseOffset, Bytes: size, Reason: reason})
		plan.Bytes += size
	}
	plan.SegmentCount = len(plan.Segments)
	return plan, nil
}

// txnIndexBelowBase is TransactionIndex.sanityCheck failing with
// CorruptIndexException (an entry's last offset below the base), which
// makes the loader rebuild the segment. (A version byte above 0 makes the
// load fail instead; verify reports it as txnindex.version.)
func txnIndexBelowBase(sf inspect.SegmentFiles) (bool, error) {
	if sf.TxnIndex == "" {
		return false, nil
	}
	f, err := fileio.Open(sf.TxnIndex, fileio.Options{Mapped: true})
	if err != nil {
		return false, err
	}
	defer f.Close()
	// Entries past what the log could justify are not read (txnindex.size
	// reports them): a sparse file of billions of entries is not scanned.
	size := f.Size()
	if b, ok := sf.TxnIndexBound(); ok {
		size = min(size, b*indexfmt.TxnEntrySize)
	}
	err = indexfmt.NewTxnIndexFrom(fileio.NewIndexSlots(f, size)).SanityCheck(sf.BaseOffset)
	switch {
	case err == nil, errors.Is(err, indexfmt.ErrTxnVersion):
		return false, nil
	case errors.Is(err, indexfmt.ErrCorruptIndex):
		return true, nil
	}
	return false, err
}

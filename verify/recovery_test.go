package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/sidefile"
)

func rpPlan(t *testing.T, path string) StartupRecovery {
	t.Helper()
	tg, err := inspect.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := PlanStartupRecovery(tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 {
		t.Fatalf("%d plans", len(plans))
	}
	return plans[0]
}

// rpWant lists the segments (by index in the manifest) and reasons a plan
// must hold, and checks the byte total against the .log sizes.
func rpWant(t *testing.T, name string, p StartupRecovery, m *kafkagen.Manifest, idx []int, reasons []string) {
	t.Helper()
	var bytes int64
	ok := len(p.Segments) == len(idx) && p.SegmentCount == len(idx)
	for k, i := range idx {
		if !ok {
			break
		}
		s := p.Segments[k]
		ok = s.BaseOffset == m.Segments[i].BaseOffset && s.Bytes == m.Segments[i].LogSize && s.Reason == reasons[k] &&
			s.Segment == kafkagen.SegmentName(s.BaseOffset)+".log"
		bytes += m.Segments[i].LogSize
	}
	if !ok || p.Bytes != bytes || p.LogEndOffset != m.LogEndOffset {
		b, _ := json.Marshal(p)
		t.Errorf("%s: plan %s\n  want segments %v (%v), %d bytes, log end %d", name, b, idx, reasons, bytes, m.LogEndOffset)
	}
}

func TestPlanStartupRecovery(t *testing.T) {
	data, dir, m := sfDataDir(t, kafkagen.Options{Seed: 41, Segments: 4, Batches: 30})
	rp := func(off int64) {
		sfWrite(t, filepath.Join(data, sidefile.RecoveryPointCheckpointFile),
			sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: off}}))
	}
	r := ReasonRecoveryPoint
	s2 := m.Segments[2].BaseOffset

	rp(s2 + 3) // inside segment 2
	p := rpPlan(t, dir)
	rpWant(t, "inside segment 2", p, m, []int{2, 3}, []string{r, r})
	if p.RecoveryPoint != s2+3 || p.RecoveryPointSource != "checkpoint" || p.CleanShutdown || p.Partition != "orders-0" {
		t.Errorf("plan header %+v", p)
	}
	rp(s2) // at its base
	rpWant(t, "at segment 2's base", rpPlan(t, dir), m, []int{2, 3}, []string{r, r})
	rp(s2 - 1) // the last offset of segment 1
	rpWant(t, "end of segment 1", rpPlan(t, dir), m, []int{1, 2, 3}, []string{r, r, r})
	rp(m.LogEndOffset + 50) // beyond the log: the last segment still
	rpWant(t, "beyond the log", rpPlan(t, dir), m, []int{3}, []string{r})

	// A clean shutdown marker: the same segments, flagged.
	sfWrite(t, filepath.Join(data, sidefile.CleanShutdownFile), []byte(`{"version":0,"brokerEpoch":5}`))
	if p := rpPlan(t, dir); !p.CleanShutdown {
		t.Errorf("clean shutdown not seen")
	}
	os.Remove(filepath.Join(data, sidefile.CleanShutdownFile))

	// No entry for the partition, or an unreadable file: from 0.
	sfWrite(t, filepath.Join(data, sidefile.RecoveryPointCheckpointFile), []byte("0\n1\nother 0 5\n"))
	p = rpPlan(t, dir)
	rpWant(t, "absent", p, m, []int{0, 1, 2, 3}, []string{r, r, r, r})
	if p.RecoveryPointSource != "absent" || p.RecoveryPoint != 0 {
		t.Errorf("absent: %+v", p)
	}
	sfWrite(t, filepath.Join(data, sidefile.RecoveryPointCheckpointFile), []byte("0\n2\norders 0 99999\n"))
	p = rpPlan(t, dir)
	rpWant(t, "unreadable", p, m, []int{0, 1, 2, 3}, []string{r, r, r, r})
	if p.RecoveryPointSource != "unreadable" {
		t.Errorf("unreadable: %+v", p)
	}

	// Segments rebuilt at every start: a missing .index, a .txnindex entry
	// below the base offset.
	rp(m.Segments[3].BaseOffset)
	os.Remove(m.IndexPath(&m.Segments[0]))
	txn := make([]byte, 34)
	sfWrite(t, m.TxnIndexPath(&m.Segments[1]), txn) // last offset 0 < base
	rpWant(t, "always rebuilt", rpPlan(t, dir), m, []int{0, 1, 3}, []string{ReasonIndexMissing, ReasonTxnIndexBelowBase, r})

	// A single segment file plans its partition.
	rpWant(t, "segment path", rpPlan(t, m.LogPath(&m.Segments[2])), m, []int{0, 1, 3}, []string{ReasonIndexMissing, ReasonTxnIndexBelowBase, r})
}

func TestRecoveryPlanEstimate(t *testing.T) {
	p := StartupRecovery{Partition: "a-0", Dir: "d/a-0", RecoveryPointSource: "absent", Bytes: 3000}
	p.SetEstimate(1500)
	if p.Estimate == nil || p.Estimate.Seconds != 2 || p.Estimate.ScanRateBytesPerSecond != 1500 {
		t.Errorf("estimate %+v", p.Estimate)
	}
	for _, rate := range []float64{0, -1} {
		p.SetEstimate(rate)
		if p.Estimate != nil {
			t.Errorf("rate %v: estimate %+v", rate, p.Estimate)
		}
	}
}

// TestPlanRecoveryRealFixtures: the unclean 2.6 directory (no clean
// shutdown marker) recovers from its checkpointed recovery points.
func TestPlanRecoveryRealFixtures(t *testing.T) {
	dir := filepath.Join(realFixtures, "zk-kafka26-unclean-noindex")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("real broker fixtures not present (../shared/fixtures/real beside the module)")
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	plans, err := PlanStartupRecovery(tg)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != len(tg.Partitions) {
		t.Fatalf("%d plans for %d partitions", len(plans), len(tg.Partitions))
	}
	for _, p := range plans {
		if p.CleanShutdown || p.SegmentCount == 0 || !strings.HasPrefix(p.Dir, dir) {
			t.Errorf("%+v", p)
		}
		var sum int64
		for _, s := range p.Segments {
			sum += s.Bytes
		}
		if sum != p.Bytes {
			t.Errorf("%s: bytes %d, segments sum to %d", p.Partition, p.Bytes, sum)
		}
	}
	clean, err := inspect.Resolve(filepath.Join(realFixtures, "cp-kraft-multiseg-compacted"))
	if err != nil {
		t.Fatal(err)
	}
	plans, err = PlanStartupRecovery(clean)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if !p.CleanShutdown {
			t.Errorf("%s: the directory has .kafka_cleanshutdown", p.Partition)
		}
		// __consumer_offsets-13 is checkpointed at 25, its log end: only
		// the active segment 21 is in the plan.
		if p.Partition == "__consumer_offsets-13" && (p.RecoveryPoint != 25 || p.SegmentCount != 1 || p.Segments[0].BaseOffset != 21) {
			t.Errorf("__consumer_offsets-13: %+v", p)
		}
	}
}

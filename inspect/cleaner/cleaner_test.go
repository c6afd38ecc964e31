package cleaner

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

const (
	now  = int64(1_750_000_000_000)
	hour = int64(3_600_000)
)

func config(t *testing.T, flags ...string) *topicconfig.Config {
	t.Helper()
	r, err := topicconfig.New(topicconfig.Inputs{Flags: append([]string{"cleanup.policy=compact"}, flags...)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Topic("t")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Four segments at 0, 10, 20, 30 (active) of 1000, 2000, 3000 and 500
// bytes, log end 35.
func input(cfg *topicconfig.Config, checkpoint *int64, lso int64, ts ...int64) Input {
	segs := []Segment{{0, 1000, now - 10*hour, now - 12*hour}, {10, 2000, now - 5*hour, now - 6*hour}, {20, 3000, now - hour, now - 2*hour}, {30, 500, now, math.MaxInt64}}
	for i, t := range ts {
		segs[i].LargestTimestamp = t
	}
	return Input{Segments: segs, LogStartOffset: 0, LogEndOffset: 35, LastStableOffset: lso, Checkpoint: checkpoint, Config: cfg, Now: now}
}

func i64(v int64) *int64 { return &v }

func TestHandWorked(t *testing.T) {
	def := config(t)
	for _, tc := range []struct {
		name                          string
		in                            Input
		dirty                         int64
		reset, because                string
		uncleanable, clean, cleanable int64
		delay                         int64
		would                         bool
		why                           string
	}{
		// No checkpoint: everything below the active segment is dirty.
		{"no checkpoint", input(def, nil, 35), 0, "", BoundActiveSegment, 30, 0, 6000, 0, true, ""},
		// The checkpoint at 20: 3000 of 6000 bytes dirty, ratio 0.5, not above 0.5.
		{"checkpoint at 20", input(def, i64(20), 35), 20, "", BoundActiveSegment, 30, 3000, 3000, 0, false, WhyBelowMinRatio},
		// In the middle of a segment: that segment counts as clean and as cleanable.
		{"checkpoint at 15", input(def, i64(15), 35), 15, "", BoundActiveSegment, 30, 3000, 5000, 0, true, ""},
		{"checkpoint below start", func() Input { in := input(def, i64(3), 35); in.LogStartOffset = 5; return in }(), 5, ResetBelowLogStart, BoundActiveSegment, 30, 1000, 6000, 0, true, ""},
		{"checkpoint beyond end", input(def, i64(99), 35), 0, ResetBeyondLogEnd, BoundActiveSegment, 30, 0, 6000, 0, true, ""},
		{"checkpoint at the end", input(def, i64(35), 35), 35, "", BoundActiveSegment, 30, 6500, 0, 0, false, WhyNothingCleanable},
		// An open transaction at 12 holds the LSO: the cleaner stops at its segment (10).
		{"open transaction", input(def, nil, 12), 0, "", BoundLastStableOffset, 10, 0, 1000, 0, true, ""},
		{"open transaction at a segment base", input(def, nil, 20), 0, "", BoundLastStableOffset, 20, 0, 3000, 0, true, ""},
		// min.compaction.lag.ms 3h: segment 20 (largest now-1h) is too young.
		{"min compaction lag", input(config(t, "min.compaction.lag.ms=10800000"), nil, 35), 0, "", BoundMinCompactionLag, 20, 0, 3000, 0, true, ""},
		// Exactly at the lag: largest == now - lag is not > it, so cleanable.
		{"min lag exact", input(config(t, "min.compaction.lag.ms=3600000"), nil, 35), 0, "", BoundActiveSegment, 30, 0, 6000, 0, true, ""},
		// max.compaction.lag.ms 1h: the dirty segment's first batch (now-2h) is an
		// hour overdue, so compaction is due although the ratio is not above 0.5.
		{"max compaction lag", input(config(t, "max.compaction.lag.ms=3600000"), i64(20), 35), 20, "", BoundActiveSegment, 30, 3000, 3000, hour, true, ""},
		{"disabled", input(config(t, "log.cleaner.enable=false"), nil, 35), 0, "", BoundActiveSegment, 30, 0, 6000, 0, false, WhyCleanerDisabled},
	} {
		c := Clean(tc.in)
		if c.FirstDirtyOffset != tc.dirty || c.CheckpointReset != tc.reset || c.UncleanableBecause != tc.because || c.FirstUncleanableOffset != tc.uncleanable ||
			c.CleanBytes != tc.clean || c.CleanableBytes != tc.cleanable || c.MaxCompactionDelayMs != tc.delay || c.WouldClean != tc.would || c.WhyNot != tc.why {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
	// Empty: one empty active segment.
	c := Clean(Input{Segments: []Segment{{0, 0, -1, math.MaxInt64}}, Config: def, Now: now})
	if c.WhyNot != WhyEmpty || !math.IsNaN(c.CleanableRatio) {
		t.Errorf("empty: %+v", c)
	}
}

// model is the cleaner's rules written from the contract with offsets
// walked one by one: a segment "holds" an offset when it is the last one
// with base <= offset (the first one below every base).
func model(in Input) (dirty, uncleanable, clean, cleanable, delay int64, would bool) {
	segs := in.Segments
	n := len(segs)
	holds := func(off int64) int {
		h := 0
		for i := range segs {
			if segs[i].BaseOffset <= off {
				h = i
			}
		}
		return h
	}
	dirty = in.LogStartOffset
	if in.Checkpoint != nil && *in.Checkpoint >= in.LogStartOffset && *in.Checkpoint <= in.LogEndOffset {
		dirty = *in.Checkpoint
	}
	active := segs[n-1].BaseOffset
	// dirty non-active segments: from the one holding dirty, below active
	var dirtyNonActive []int
	if dirty <= active {
		for i := holds(dirty); i < n-1; i++ {
			dirtyNonActive = append(dirtyNonActive, i)
		}
	}
	bounds := []int64{in.LastStableOffset, active}
	if lag := in.Config.MinCompactionLagMs; lag > 0 {
		for _, i := range dirtyNonActive {
			if segs[i].LargestTimestamp > in.Now-lag {
				bounds = append(bounds, segs[i].BaseOffset)
				break
			}
		}
	}
	b := bounds[0]
	for _, x := range bounds {
		b = min(b, x)
	}
	u := max(dirty, b)
	uncleanable = active
	if u < active {
		uncleanable = segs[holds(u)].BaseOffset
	}
	from := min(dirty, uncleanable)
	if from != uncleanable {
		for i := holds(from); i < n && segs[i].BaseOffset < uncleanable; i++ {
			cleanable += segs[i].Size
		}
	}
	for i := 0; i < n && segs[i].BaseOffset < dirty; i++ {
		clean += segs[i].Size
	}
	earliest := int64(math.MaxInt64)
	for _, i := range dirtyNonActive {
		if ts := segs[i].FirstBatchTimestamp; ts > 0 && ts < earliest {
			earliest = ts
		}
	}
	if until := in.Now - in.Config.MaxCompactionLagMs; earliest < until {
		delay = until - earliest
	}
	total := clean + cleanable
	would = total > 0 && (delay > 0 && cleanable > 0 || float64(cleanable)/float64(total) > in.Config.MinCleanableRatio)
	return
}

func TestDifferentialGenerated(t *testing.T) {
	for seed := uint64(0); seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 1 + rng.IntN(5)
		var segs []Segment
		off := int64(rng.IntN(50))
		for i := 0; i < n; i++ {
			s := Segment{BaseOffset: off, Size: int64(rng.IntN(3) * rng.IntN(5000)), LargestTimestamp: now - int64(rng.IntN(48))*hour, FirstBatchTimestamp: now - int64(rng.IntN(72))*hour}
			if rng.IntN(8) == 0 {
				s.FirstBatchTimestamp = math.MaxInt64
			}
			segs = append(segs, s)
			off += 1 + int64(rng.IntN(20))
		}
		leo := off + int64(rng.IntN(3))
		in := Input{Segments: segs, LogStartOffset: min(segs[0].BaseOffset+int64(rng.IntN(10)), leo), LogEndOffset: leo, Now: now}
		in.LastStableOffset = in.LogStartOffset + rng.Int64N(leo-in.LogStartOffset+1)
		if rng.IntN(3) > 0 {
			in.Checkpoint = i64(rng.Int64N(leo+10) - 5)
		}
		flags := []string{}
		if rng.IntN(2) == 0 {
			flags = append(flags, "min.compaction.lag.ms="+[]string{"0", "3600000", "36000000"}[rng.IntN(3)])
		}
		if rng.IntN(2) == 0 {
			flags = append(flags, "max.compaction.lag.ms="+[]string{"3600000", "86400000", "360000000"}[rng.IntN(3)])
		}
		if rng.IntN(2) == 0 {
			flags = append(flags, "min.cleanable.dirty.ratio="+[]string{"0", "0.1", "0.5", "0.9", "1"}[rng.IntN(5)])
		}
		r, err := topicconfig.New(topicconfig.Inputs{Flags: append([]string{"cleanup.policy=compact"}, flags...)})
		if err != nil {
			continue // min.compaction.lag.ms above max.compaction.lag.ms: LogConfig.validate refuses it
		}
		if in.Config, err = r.Topic("t"); err != nil {
			t.Fatal(err)
		}
		c := Clean(in)
		dirty, unc, clean, cleanable, delay, would := model(in)
		if c.FirstDirtyOffset != dirty || c.FirstUncleanableOffset != unc || c.CleanBytes != clean || c.CleanableBytes != cleanable || c.MaxCompactionDelayMs != delay || c.WouldClean != would {
			t.Fatalf("seed %d: %+v\nmodel dirty %d uncleanable %d clean %d cleanable %d delay %d would %v\ninput %+v %v", seed, c, dirty, unc, clean, cleanable, delay, would, in, flags)
		}
	}
}

// Through the files: an open transaction holds the LSO and the cleaner,
// and the answer names its producer; the checkpoint comes from the data
// directory.
func TestOpenTransactionHoldsCleaner(t *testing.T) {
	dir := t.TempDir()
	t0 := now - 10*hour
	gentest.WriteLogs(t, filepath.Join(dir, "c-0"), map[int64][]byte{
		0:  gentest.Concat(gentest.Data(0, 5, t0), gentest.TxnData(5, 3, t0, 42, true)),
		8:  gentest.Concat(gentest.Data(8, 5, t0)),
		13: gentest.Concat(gentest.Data(13, 2, t0)),
	})
	write := func(name string, e []sidefile.OffsetCheckpointEntry) {
		if err := os.WriteFile(filepath.Join(dir, name), sidefile.AppendOffsetCheckpoint(nil, e), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(sidefile.ReplicationCheckpointFile, []sidefile.OffsetCheckpointEntry{{Topic: "c", Partition: 0, Offset: 15}})
	write(sidefile.CleanerCheckpointFile, []sidefile.OffsetCheckpointEntry{{Topic: "c", Partition: 0, Offset: 2}})
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := topicconfig.New(topicconfig.Inputs{Flags: []string{"cleanup.policy=compact"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze([]*inspect.Target{tg}, Options{Now: now, Configs: r})
	if err != nil {
		t.Fatal(err)
	}
	pt := rep.Partitions[0]
	if pt.Err != nil || pt.FirstDirtyOffset != 2 || pt.UncleanableBecause != BoundLastStableOffset || pt.FirstUncleanableOffset != 0 ||
		pt.CleanableBytes != 0 || pt.WhyNot != WhyNothingCleanable || pt.LSOHeldBy == nil || pt.LSOHeldBy.ProducerID != 42 || pt.LSOHeldBy.FirstOffset != 5 {
		t.Fatalf("%+v %+v", pt.Compaction, pt.LSOHeldBy)
	}
	// Not compacted: skipped.
	r, _ = topicconfig.New(topicconfig.Inputs{})
	if rep, _ := Analyze([]*inspect.Target{tg}, Options{Now: now, Configs: r}); len(rep.Partitions) != 0 || rep.Skipped != 1 {
		t.Fatalf("delete topic: %+v", rep)
	}
}

// Generated partitions on disk through Analyze, against the model fed
// from the generator's manifest (sizes, largest and first-batch
// timestamps) and the checkpoints written: the LSO is the high watermark
// (no transactions).
func TestGeneratedOnDisk(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		dir := t.TempDir()
		opts := kafkagen.Options{Seed: seed, Segments: 1 + rng.IntN(5), Batches: 5 + rng.IntN(20), StartOffset: int64(rng.IntN(100)),
			Timestamps: []string{"increasing", "jumping", "random"}[rng.IntN(3)], Traffic: []string{"", "steady", "stop"}[rng.IntN(3)]}
		m, err := kafkagen.Generate(filepath.Join(dir, "c-0"), opts)
		if err != nil {
			t.Fatal(err)
		}
		in := Input{LogEndOffset: m.LogEndOffset}
		for _, s := range m.Segments {
			in.Segments = append(in.Segments, Segment{BaseOffset: s.BaseOffset, Size: s.LogSize, LargestTimestamp: s.MaxTimestamp, FirstBatchTimestamp: s.Batches[0].MaxTimestamp})
		}
		base := in.Segments[0].BaseOffset
		in.LogStartOffset = base + rng.Int64N(in.LogEndOffset-base+1)
		hw := min(max(base+rng.Int64N(in.LogEndOffset-base+1), in.LogStartOffset), in.LogEndOffset)
		in.LastStableOffset = hw
		cp := rng.Int64N(in.LogEndOffset+20) - 10
		if rng.IntN(4) > 0 {
			in.Checkpoint = &cp
			writeCheckpoint(t, filepath.Join(dir, sidefile.CleanerCheckpointFile), "c", cp)
		}
		writeCheckpoint(t, filepath.Join(dir, sidefile.ReplicationCheckpointFile), "c", hw)
		writeCheckpoint(t, filepath.Join(dir, sidefile.LogStartOffsetCheckpointFile), "c", in.LogStartOffset)
		if err := os.WriteFile(filepath.Join(dir, sidefile.CleanShutdownFile), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		in.Now = kafkagen.DefaultStartTimestamp + rng.Int64N(4*hour)
		flags := []string{"cleanup.policy=compact", "min.compaction.lag.ms=" + []string{"0", "60000", "600000"}[rng.IntN(3)],
			"max.compaction.lag.ms=" + []string{"600000", "3600000", "86400000"}[rng.IntN(3)], "min.cleanable.dirty.ratio=" + []string{"0", "0.3", "0.9"}[rng.IntN(3)]}
		r, err := topicconfig.New(topicconfig.Inputs{Flags: flags})
		if err != nil {
			t.Fatal(err)
		}
		if in.Config, err = r.Topic("c"); err != nil {
			t.Fatal(err)
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze([]*inspect.Target{tg}, Options{Now: in.Now, Configs: r})
		if err != nil || rep.Partitions[0].Err != nil {
			t.Fatal(err, rep.Partitions[0].Err)
		}
		c := rep.Partitions[0]
		dirty, unc, clean, cleanable, delay, would := model(in)
		if c.Input.LastStableOffset != hw || c.FirstDirtyOffset != dirty || c.FirstUncleanableOffset != unc || c.CleanBytes != clean || c.CleanableBytes != cleanable || c.MaxCompactionDelayMs != delay || c.WouldClean != would {
			t.Fatalf("seed %d: %+v (lso %d)\nmodel dirty %d uncleanable %d clean %d cleanable %d delay %d would %v (hw %d, %v)", seed, c.Compaction, c.Input.LastStableOffset, dirty, unc, clean, cleanable, delay, would, hw, flags)
		}
	}
}

func writeCheckpoint(t *testing.T, path, topic string, offset int64) {
	t.Helper()
	if err := os.WriteFile(path, sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: topic, Partition: 0, Offset: offset}}), 0o644); err != nil {
		t.Fatal(err)
	}
}

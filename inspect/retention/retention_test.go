package retention

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

const (
	now  = int64(1_750_000_000_000)
	day  = int64(86_400_000)
	week = 7 * day
)

// seg is a hand-built segment: batches of the given sizes, each of one
// record, all at timestamp ts.
type seg struct {
	ts    int64
	sizes []int
}

// build writes a partition "t-0" of segs (an empty segment has no
// sizes), with a high watermark and log start checkpoint when given, and
// analyses it.
func build(t *testing.T, segs []seg, hw, logStart *int64, flags ...string) Partition {
	t.Helper()
	dir := t.TempDir()
	logs := map[int64][]byte{}
	off := int64(0)
	for _, s := range segs {
		base := off
		logs[base] = []byte{}
		for _, n := range s.sizes {
			logs[base] = append(logs[base], gentest.Sized(off, 0, s.ts, n)...)
			off++
		}
	}
	gentest.WriteLogs(t, filepath.Join(dir, "t-0"), logs)
	off = 0
	for _, s := range segs {
		if len(s.sizes) == 0 { // its largest timestamp is the .log's mtime
			mt := time.UnixMilli(s.ts)
			if err := os.Chtimes(filepath.Join(dir, "t-0", inspect.SegmentName(off)+".log"), mt, mt); err != nil {
				t.Fatal(err)
			}
		}
		off += int64(len(s.sizes))
	}
	if hw != nil {
		write(t, filepath.Join(dir, sidefile.ReplicationCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "t", Partition: 0, Offset: *hw}}))
	}
	if logStart != nil {
		write(t, filepath.Join(dir, sidefile.LogStartOffsetCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "t", Partition: 0, Offset: *logStart}}))
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := topicconfig.New(topicconfig.Inputs{Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze([]*inspect.Target{tg}, Options{Now: now, Configs: r})
	if err != nil {
		t.Fatal(err)
	}
	if pt := rep.Partitions[0]; pt.Err != nil {
		t.Fatal(pt.Err)
	}
	return rep.Partitions[0]
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func i64(v int64) *int64 { return &v }

// fates is "deleted_by|kept_because" per segment.
func fates(p Partition) string {
	s := ""
	for _, g := range p.Segments {
		if g.DeletedBy != "" {
			s += g.DeletedBy + " "
		} else {
			s += g.KeptBecause + " "
		}
	}
	return s
}

func TestHandWorked(t *testing.T) {
	old := now - 10*day
	for _, tc := range []struct {
		name     string
		segs     []seg
		hw, ls   *int64
		flags    []string
		want     string
		blocked  string // "segment reason waiting"
		freed    int64
		eligible int64 // of the first segment, 0: not checked
	}{
		{
			// A producer clock a day ahead: the middle segment's largest
			// timestamp is in the future, and the old segment behind it waits.
			name: "future timestamp", segs: []seg{{old, []int{100}}, {now + day, []int{100}}, {now - 9*day, []int{100}}}, hw: i64(3),
			want: "retention_ms future_timestamp not_reached ", blocked: "00000000000000000001.log future_timestamp 1", freed: 100, eligible: old + week + 1,
		},
		{
			// Uneven segments: 670 bytes for 400 allowed. Deleting the
			// first (100) leaves 570; the second (300) would leave 270,
			// under the limit, so it stays.
			name: "retention.bytes", segs: []seg{{now, []int{100}}, {now, []int{300}}, {now, []int{70}}, {now, []int{100, 100}}}, hw: i64(5),
			flags: []string{"retention.bytes=400", "retention.ms=-1"}, want: "retention_bytes within_retention_bytes not_reached not_reached ", freed: 100,
		},
		{
			name: "retention.bytes exact", segs: []seg{{now, []int{100}}, {now, []int{300}}, {now, []int{70}}}, hw: i64(3),
			flags: []string{"retention.bytes=70", "retention.ms=-1"}, want: "retention_bytes retention_bytes within_retention_bytes ", freed: 400,
		},
		{
			// The high watermark (4) inside the second segment (3..5): the
			// first goes, the second's upper bound (6) is above it.
			name: "high watermark behind", segs: []seg{{old, []int{100, 100, 100}}, {old, []int{100, 100, 100}}, {old, []int{100}}}, hw: i64(4),
			want: "retention_ms beyond_high_watermark not_reached ", blocked: "00000000000000000003.log beyond_high_watermark 1", freed: 300,
		},
		{
			name: "no high watermark checkpoint", segs: []seg{{old, []int{100}}, {old, []int{100}}},
			want: "beyond_high_watermark not_reached ", blocked: "00000000000000000000.log beyond_high_watermark 1",
		},
		{
			// An empty active segment is never deleted; the ones before it are.
			name: "empty active segment", segs: []seg{{old, []int{100}}, {old, []int{100}}, {old, nil}}, hw: i64(2),
			want: "retention_ms retention_ms empty_last_segment ", freed: 200,
		},
		{
			// The active segment itself can go.
			name: "active segment deleted", segs: []seg{{old, []int{100}}, {old, []int{100}}}, hw: i64(2),
			want: "retention_ms retention_ms ", freed: 200,
		},
		{
			// Compact only: the log start offset (3) alone deletes, the
			// segments whose next segment starts at or below it.
			name: "compact only", segs: []seg{{old, []int{100, 100}}, {old, []int{100, 100}}, {old, []int{100}}}, hw: i64(5), ls: i64(3),
			flags: []string{"cleanup.policy=compact"}, want: "log_start_offset compact_only not_reached ", freed: 200,
		},
		{
			name: "within retention.ms", segs: []seg{{now - 6*day, []int{100}}, {now - day, []int{100}}}, hw: i64(2),
			want: "within_retention_ms not_reached ",
		},
		{
			name: "log start then time", segs: []seg{{now, []int{100}}, {old, []int{100}}, {now, []int{100}}}, hw: i64(3), ls: i64(1),
			want: "log_start_offset retention_ms within_retention_ms ", freed: 200,
		},
	} {
		p := build(t, tc.segs, tc.hw, tc.ls, tc.flags...)
		if got := fates(p); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		blocked := ""
		if b := p.BlockedBy; b != nil {
			blocked = fmt.Sprintf("%s %s %d", b.Segment, b.Reason, b.Waiting)
		}
		if blocked != tc.blocked || p.BytesFreed != tc.freed {
			t.Errorf("%s: blocked %q freed %d, want %q %d", tc.name, blocked, p.BytesFreed, tc.blocked, tc.freed)
		}
		if tc.eligible != 0 && (p.Segments[0].EligibleAt == nil || *p.Segments[0].EligibleAt != tc.eligible) {
			t.Errorf("%s: eligible_at %v", tc.name, p.Segments[0].EligibleAt)
		}
	}
}

// model is the pass written from the contract, independently: each rule
// deletes the longest prefix of the segments left whose every segment
// passes (high watermark at or above its upper bound, the rule, not an
// empty last segment); the retention.bytes rule passes segment j when the
// sizes up to and including j sum to at most size - retention.bytes.
func model(sizes, ts, bases []int64, leo, hw, logStart, now int64, compact, del bool, rms, rbytes int64) (deleted []string, firstKept int, reason string) {
	n := len(sizes)
	deleted = make([]string, n)
	start := 0
	upper := func(j int) int64 {
		if j+1 < n {
			return bases[j+1]
		}
		return leo
	}
	prefix := func(rule string, ok func(j int) (bool, string)) {
		for j := start; j < n; j++ {
			if hw < upper(j) {
				reason = "beyond_high_watermark"
				break
			}
			if pass, why := ok(j); !pass {
				reason = why
				break
			}
			if j == n-1 && sizes[j] == 0 {
				reason = "empty_last_segment"
				break
			}
			deleted[j] = rule
			start = j + 1
		}
	}
	prefix("log_start_offset", func(j int) (bool, string) {
		if j+1 < n && bases[j+1] <= logStart {
			return true, ""
		}
		if !del {
			return false, "compact_only"
		}
		if rbytes >= 0 {
			return false, "within_retention_bytes"
		}
		return false, "within_retention_ms"
	})
	if del {
		var total int64
		for j := start; j < n; j++ {
			total += sizes[j]
		}
		if rbytes >= 0 && total >= rbytes {
			from := start
			prefix("retention_bytes", func(j int) (bool, string) {
				var sum int64
				for k := from; k <= j; k++ {
					sum += sizes[k]
				}
				return sum <= total-rbytes, "within_retention_bytes"
			})
		}
		if rms >= 0 {
			prefix("retention_ms", func(j int) (bool, string) {
				if now-ts[j] > rms {
					return true, ""
				}
				if ts[j] > now {
					return false, "future_timestamp"
				}
				return false, "within_retention_ms"
			})
		}
	}
	return deleted, start, reason
}

// Generated partitions (random sizes, timestamps, checkpoints and
// configuration) through Pass, against the model.
func TestPassDifferential(t *testing.T) {
	for seed := uint64(0); seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(6)
		var sizes, ts, bases []int64
		off := int64(rng.IntN(100))
		for i := 0; i < n; i++ {
			bases = append(bases, off)
			size := int64(rng.IntN(4) * rng.IntN(1000))
			sizes, ts = append(sizes, size), append(ts, now+int64(rng.IntN(21)-15)*day)
			if size > 0 || rng.IntN(3) == 0 {
				off += 1 + int64(rng.IntN(10))
			}
		}
		leo := off
		if sizes[n-1] == 0 {
			leo = bases[n-1]
		}
		logStart := bases[0] + int64(rng.IntN(int(leo-bases[0]+1)))
		hw := min(max(int64(rng.IntN(int(leo+5))), logStart), leo)
		cfg := &topicconfig.Config{Delete: rng.IntN(4) > 0, RetentionMs: []int64{-1, week, 3 * day, 0}[rng.IntN(4)], RetentionBytes: []int64{-1, 0, 500, 1500, 3000}[rng.IntN(5)]}
		cfg.Compact = !cfg.Delete || rng.IntN(2) == 0
		p := Partition{Config: cfg, LogStartOffset: logStart, LogEndOffset: leo, HighWatermark: hw}
		for i := range sizes {
			p.Segments = append(p.Segments, Segment{Files: inspect.SegmentFiles{BaseOffset: bases[i]}, Size: sizes[i], LargestTimestamp: ts[i]})
		}
		Pass(&p, now)
		deleted, firstKept, reason := model(sizes, ts, bases, leo, hw, logStart, now, cfg.Compact, cfg.Delete, cfg.RetentionMs, cfg.RetentionBytes)
		for i, s := range p.Segments {
			want := deleted[i]
			switch {
			case want == "" && i == firstKept:
				want = reason
			case want == "":
				want = "not_reached"
			}
			got := s.DeletedBy
			if got == "" {
				got = s.KeptBecause
			}
			if got != want {
				t.Fatalf("seed %d: segment %d (base %d size %d ts %d): %s, model %s (hw %d log start %d leo %d, %+v)", seed, i, bases[i], sizes[i], ts[i], got, want, hw, logStart, leo, *cfg)
			}
			// eligible_at: largest + retention.ms + 1 when the topic deletes by time.
			if (s.EligibleAt != nil) != (cfg.Delete && cfg.RetentionMs >= 0) || s.EligibleAt != nil && *s.EligibleAt != ts[i]+cfg.RetentionMs+1 {
				t.Fatalf("seed %d: eligible_at %v", seed, s.EligibleAt)
			}
		}
		// blocked_by: a later kept segment older than retention.ms.
		waiting := 0
		if cfg.Delete && cfg.RetentionMs >= 0 {
			for i := firstKept + 1; i < n; i++ {
				if now-ts[i] > cfg.RetentionMs {
					waiting++
				}
			}
		}
		if (waiting > 0) != (p.BlockedBy != nil) || p.BlockedBy != nil && p.BlockedBy.Waiting != waiting {
			t.Fatalf("seed %d: blocked_by %+v, model waiting %d", seed, p.BlockedBy, waiting)
		}
	}
}

// Tiered topics: nothing is predicted, and the answer says so.
func TestRemoteStorage(t *testing.T) {
	p := build(t, []seg{{now - 10*day, []int{100}}, {now, []int{100}}}, i64(2), nil, "remote.storage.enable=true", "remote.log.storage.system.enable=true")
	if fates(p) != "remote_storage not_reached " || len(p.Notes) != 1 || p.BytesFreed != 0 {
		t.Fatalf("%s %v", fates(p), p.Notes)
	}
}

// Absurd retention: eligible_at overflows to null, nothing is deleted by time.
func TestAbsurdRetention(t *testing.T) {
	p := build(t, []seg{{now - 10*day, []int{100}}, {now, []int{100}}}, i64(2), nil, "retention.ms=9223372036854775807")
	if fates(p) != "within_retention_ms not_reached " || p.Segments[0].EligibleAt != nil {
		t.Fatalf("%s %v", fates(p), p.Segments[0].EligibleAt)
	}
}

// The active segment's largest timestamp after an unclean shutdown: its
// time index lacks the entry a close appends, so the batches after its
// last entry count (as recovery reads them); after a clean shutdown the
// last entry is the broker's answer.
func TestActiveSegmentWithoutClosingEntry(t *testing.T) {
	for _, clean := range []bool{false, true} {
		dir := t.TempDir()
		pdir := filepath.Join(dir, "t-0")
		old := now - 10*day
		gentest.WriteLogs(t, pdir, map[int64][]byte{
			0: gentest.Sized(0, 0, old, 100),
			1: gentest.Concat(gentest.Sized(1, 0, old, 100), gentest.Sized(2, 0, now+day, 100)),
		})
		// Segment 1's time index: one entry (old, offset 1), no closing entry.
		tidx := binary.BigEndian.AppendUint64(nil, uint64(old))
		tidx = binary.BigEndian.AppendUint32(tidx, 0)
		write(t, filepath.Join(pdir, inspect.SegmentName(1)+".timeindex"), tidx)
		write(t, filepath.Join(pdir, inspect.SegmentName(0)+".timeindex"), append(binary.BigEndian.AppendUint64(nil, uint64(old)), 0, 0, 0, 0))
		write(t, filepath.Join(dir, sidefile.ReplicationCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "t", Partition: 0, Offset: 3}}))
		if clean {
			write(t, filepath.Join(dir, sidefile.CleanShutdownFile), nil)
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze([]*inspect.Target{tg}, Options{Now: now})
		if err != nil || rep.Partitions[0].Err != nil {
			t.Fatal(err, rep.Partitions[0].Err)
		}
		p := rep.Partitions[0]
		want, fate := now+day, "retention_ms future_timestamp "
		if clean {
			want, fate = old, "retention_ms retention_ms "
		}
		if p.Segments[1].LargestTimestamp != want || fates(p) != fate {
			t.Errorf("clean shutdown %v: largest %d (want %d), %s", clean, p.Segments[1].LargestTimestamp, want, fates(p))
		}
	}
}

// Generated partitions on disk (kafkagen: random timestamp patterns,
// segment counts, start offsets; random high watermark and log start
// checkpoints; a clean shutdown, so every largest timestamp is the time
// index's last entry) through Analyze, against the model fed from the
// generator's manifest: sizes, largest timestamps (the segment's max
// batch timestamp) and offsets known independently of the readers.
func TestGeneratedOnDisk(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		dir := t.TempDir()
		opts := kafkagen.Options{Seed: seed, Segments: 1 + rng.IntN(5), Batches: 5 + rng.IntN(20), StartOffset: int64(rng.IntN(100)),
			Timestamps: []string{"increasing", "jumping", "random", "equal"}[rng.IntN(4)], Traffic: []string{"", "steady", "stop"}[rng.IntN(3)],
			EmptyActiveSegment: rng.IntN(4) == 0}
		m, err := kafkagen.Generate(filepath.Join(dir, "g-0"), opts)
		if err != nil {
			t.Fatal(err)
		}
		var sizes, ts, bases []int64
		for _, s := range m.Segments {
			sizes, ts, bases = append(sizes, s.LogSize), append(ts, s.MaxTimestamp), append(bases, s.BaseOffset)
		}
		leo := m.LogEndOffset
		logStart := bases[0] + rng.Int64N(leo-bases[0]+1)
		hw := bases[0] + rng.Int64N(leo-bases[0]+3)
		write(t, filepath.Join(dir, sidefile.ReplicationCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "g", Partition: 0, Offset: hw}}))
		write(t, filepath.Join(dir, sidefile.LogStartOffsetCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "g", Partition: 0, Offset: logStart}}))
		write(t, filepath.Join(dir, sidefile.CleanShutdownFile), nil)
		hw = min(max(hw, logStart), leo)
		// An empty active segment has no timestamp: its .log's mtime.
		if n := len(sizes); sizes[n-1] == 0 {
			fi, err := os.Stat(m.LogPath(&m.Segments[n-1]))
			if err != nil {
				t.Fatal(err)
			}
			ts[n-1] = fi.ModTime().UnixMilli()
		}
		span := ts[0] - kafkagen.DefaultStartTimestamp
		at := kafkagen.DefaultStartTimestamp + rng.Int64N(max(span, 1)+2*3600_000)
		rms := []int64{-1, 60_000, 600_000, 3_600_000}[rng.IntN(4)]
		rbytes := []int64{-1, 0, 5000, 20000, 100000}[rng.IntN(5)]
		policy := []string{"delete", "compact", "compact,delete"}[rng.IntN(3)]
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := topicconfig.New(topicconfig.Inputs{Flags: []string{fmt.Sprintf("retention.ms=%d", rms), fmt.Sprintf("retention.bytes=%d", rbytes), "cleanup.policy=" + policy}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze([]*inspect.Target{tg}, Options{Now: at, Configs: r})
		if err != nil || rep.Partitions[0].Err != nil {
			t.Fatal(err, rep.Partitions[0].Err)
		}
		p := rep.Partitions[0]
		del := policy != "compact"
		deleted, firstKept, reason := model(sizes, ts, bases, leo, hw, logStart, at, policy != "delete", del, rms, rbytes)
		for i, s := range p.Segments {
			want := deleted[i]
			switch {
			case want == "" && i == firstKept:
				want = reason
			case want == "":
				want = "not_reached"
			}
			got := s.DeletedBy
			if got == "" {
				got = s.KeptBecause
			}
			if got != want || s.Size != sizes[i] || s.LargestTimestamp != ts[i] {
				t.Fatalf("seed %d segment %d: %s size %d ts %d; model %s size %d ts %d (hw %d start %d leo %d now %d %s ms %d bytes %d)",
					seed, i, got, s.Size, s.LargestTimestamp, want, sizes[i], ts[i], hw, logStart, leo, at, policy, rms, rbytes)
			}
		}
	}
}

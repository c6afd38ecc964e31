package replica_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/replica"
	"github.com/kseg/kseg/inspect/sidefile"
)

// rec is one record of a replica's history: its offset, the leader epoch
// of the batch that wrote it, and what it holds (content names the
// producer's record; two replicas agree at an offset when it is equal).
type rec struct {
	offset  int64
	epoch   int32
	content string
}

// history is records from..to-1 written in epoch, with content tag.
func history(from, to int64, epoch int32, tag string) []rec {
	var out []rec
	for o := from; o < to; o++ {
		out = append(out, rec{o, epoch, fmt.Sprintf("%s-%d", tag, o)})
	}
	return out
}

func concat(parts ...[]rec) []rec {
	var out []rec
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// layout says how a replica lays its history out: batch sizes (cycled),
// a segment roll every rollEvery batches, the records the cleaner removed,
// and whether leader-epoch-checkpoint is written (else epochs come from
// the batches).
type layout struct {
	batchSizes []int
	rollEvery  int
	removed    map[int64]bool
	noEpochs   bool // write batches without a leader epoch, and no checkpoint
	checkpoint []sidefile.EpochEntry
	noCheck    bool // no leader-epoch-checkpoint file
}

func writeReplica(t *testing.T, dir string, hist []rec, l layout) *replica.Replica {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var segs [][]byte
	var bases []int64
	batches := 0
	for i, bi := 0, 0; i < len(hist); bi++ {
		n := l.batchSizes[bi%len(l.batchSizes)]
		j := i
		for j < len(hist) && j-i < n && hist[j].epoch == hist[i].epoch {
			j++
		}
		b := kafkagen.Batch{BaseOffset: hist[i].offset, LeaderEpoch: hist[i].epoch, ProducerID: -1}
		if l.noEpochs {
			b.LeaderEpoch = -1
		}
		for _, r := range hist[i:j] {
			if l.removed[r.offset] {
				continue
			}
			b.Records = append(b.Records, kafkagen.Record{OffsetDelta: int32(r.offset - b.BaseOffset), Timestamp: 1000 + r.offset,
				Key: []byte(fmt.Sprintf("k%d", r.offset%7)), Value: []byte(r.content)})
		}
		i = j
		if len(b.Records) == 0 {
			continue // the cleaner drops a batch it empties
		}
		if batches%l.rollEvery == 0 {
			segs = append(segs, nil)
			bases = append(bases, b.BaseOffset)
		}
		batches++
		segs[len(segs)-1] = kafkagen.AppendBatch(segs[len(segs)-1], b)
	}
	for k, s := range segs {
		if err := os.WriteFile(filepath.Join(dir, inspect.SegmentName(bases[k])+".log"), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !l.noCheck && !l.noEpochs {
		cp := l.checkpoint
		if cp == nil {
			for _, r := range hist {
				if len(cp) == 0 || cp[len(cp)-1].Epoch != r.epoch {
					cp = append(cp, sidefile.EpochEntry{Epoch: r.epoch, StartOffset: r.offset})
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, sidefile.LeaderEpochCheckpointFile), sidefile.AppendLeaderEpochCheckpoint(nil, cp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := replica.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type outcome struct {
	diffs      []string // "kind offset [compaction]"
	divergence string
}

func compare(t *testing.T, left, right *replica.Replica) outcome {
	t.Helper()
	var o outcome
	d, err := replica.Compare(left, right, replica.Options{}, func(x replica.Difference) error {
		s := fmt.Sprintf("%s %d", x.Kind, x.Offset)
		if x.RemovedByCompaction {
			s += " compaction"
		}
		o.diffs = append(o.diffs, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Damage) > 0 {
		t.Fatalf("damage: %v", d.Damage)
	}
	opt := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	var rounds []string
	for _, r := range d.Rounds {
		rounds = append(rounds, fmt.Sprintf("%d->(%d,%d)=%d", r.RequestedEpoch, r.LeaderEpoch, r.LeaderEndOffset, r.TruncateTo))
	}
	o.divergence = fmt.Sprintf("leo %d/%d compared [%d,%d) first %s truncate %s rounds %s past %d agree %v epochs %s/%s",
		d.LeftLogEndOffset, d.RightLogEndOffset, d.ComparedFrom, d.ComparedTo, opt(d.FirstDifference), opt(d.Truncation),
		strings.Join(rounds, ";"), d.LeftRecordsPastTruncation, d.Agree(), left.EpochSource, right.EpochSource)
	return o
}

// kinds summarises difference lines as "kind from..to" runs.
func kinds(diffs []string) string {
	var out []string
	var kind string
	var first, last int64 = -1, -1
	flush := func() {
		if first >= 0 {
			out = append(out, fmt.Sprintf("%s %d..%d", kind, first, last))
		}
	}
	for _, d := range diffs {
		var k, extra string
		var off int64
		fmt.Sscanf(d, "%s %d %s", &k, &off, &extra)
		if extra != "" {
			k += "(" + extra + ")"
		}
		if k != kind || off != last+1 {
			flush()
			kind, first = k, off
		}
		last = off
	}
	flush()
	return strings.Join(out, ", ")
}

// TestReplicaPairs: pairs of replicas with different batch and segment
// boundaries, each outcome worked out by hand from the broker's rules.
func TestReplicaPairs(t *testing.T) {
	small := layout{batchSizes: []int{1, 3, 2}, rollEvery: 4}
	big := layout{batchSizes: []int{7, 5}, rollEvery: 2}
	common := concat(history(0, 20, 1, "a"), history(20, 40, 2, "b"))
	for _, c := range []struct {
		name        string
		left, right []rec
		ll, rl      layout
		diffs, div  string
	}{
		{
			name: "identical", left: common, right: common, ll: small, rl: big,
			div: "leo 40/40 compared [0,40) first null truncate 40 rounds 2->(2,40)=40 past 0 agree true epochs checkpoint/checkpoint",
		},
		{
			name: "identical, epochs from the batches", left: common, right: common,
			ll: layout{batchSizes: []int{4}, rollEvery: 3, noCheck: true}, rl: layout{batchSizes: []int{9}, rollEvery: 1, noCheck: true},
			div: "leo 40/40 compared [0,40) first null truncate 40 rounds 2->(2,40)=40 past 0 agree true epochs batches/batches",
		},
		{
			name: "lagging follower", left: common[:27], right: common, ll: big, rl: small,
			diffs: "only_right 27..39",
			div:   "leo 27/40 compared [0,27) first null truncate 27 rounds 2->(2,40)=27 past 0 agree false epochs checkpoint/checkpoint",
		},
		{
			// The old leader (left) went on writing in epoch 2 after the
			// new leader (right), which had only up to 30, was elected in
			// epoch 3 uncleanly: right answers epoch 2 with (2, 30).
			name:  "unclean election, one epoch",
			left:  concat(common, history(40, 50, 2, "lost")),
			right: concat(common[:30], history(30, 45, 3, "new")),
			ll:    small, rl: big,
			diffs: "conflict 30..44, only_left 45..49",
			div:   "leo 50/45 compared [0,45) first 30 truncate 30 rounds 2->(2,30)=30 past 20 agree false epochs checkpoint/checkpoint",
		},
		{
			// Left led epoch 3 (never seen by right) from 25; right led
			// epochs 2 (from 15) and 4 (from 30). Left asks for 3, right
			// answers (2, 30); left does not know epoch 2 and truncates to
			// where its epoch 1 ends (25), then asks for 1: right answers
			// (1, 15) and left truncates to 15 (KIP-279).
			name:  "unclean elections, several epochs",
			left:  concat(history(0, 20, 1, "a"), history(20, 25, 1, "left1"), history(25, 40, 3, "left3")),
			right: concat(history(0, 15, 1, "a"), history(15, 30, 2, "right2"), history(30, 50, 4, "right4")),
			ll:    small, rl: big,
			diffs: "conflict 15..39, only_right 40..49",
			div:   "leo 40/50 compared [0,40) first 15 truncate 15 rounds 3->(2,30)=25;1->(1,15)=15 past 25 agree false epochs checkpoint/checkpoint",
		},
		{
			name:  "unclean elections, several epochs, epochs from the batches",
			left:  concat(history(0, 20, 1, "a"), history(20, 25, 1, "left1"), history(25, 40, 3, "left3")),
			right: concat(history(0, 15, 1, "a"), history(15, 30, 2, "right2"), history(30, 50, 4, "right4")),
			ll:    layout{batchSizes: []int{2}, rollEvery: 3, noCheck: true}, rl: layout{batchSizes: []int{6}, rollEvery: 2, noCheck: true},
			diffs: "conflict 15..39, only_right 40..49",
			div:   "leo 40/50 compared [0,40) first 15 truncate 15 rounds 3->(2,30)=25;1->(1,15)=15 past 25 agree false epochs batches/batches",
		},
		{
			// The cleaner ran on right only: records inside batches
			// removed (not differences) and a whole batch dropped.
			name: "compaction on one side", left: common, right: common, ll: small,
			rl: layout{batchSizes: []int{7, 5}, rollEvery: 2, removed: map[int64]bool{1: true, 2: true, 7: true, 8: true, 9: true, 10: true, 11: true, 33: true}},
			// Gaps inside a batch's offset range on the right are
			// compaction; a whole batch missing (7..11) is a difference
			// (the contract: only a gap inside a batch's range there).
			diffs: "only_left(compaction) 1..2, only_left 7..11, only_left(compaction) 33..33",
			div:   "leo 40/40 compared [0,40) first 7 truncate 40 rounds 2->(2,40)=40 past 0 agree false epochs checkpoint/checkpoint",
		},
		{
			name: "no epochs on either side", left: common[:35], right: common,
			ll: layout{batchSizes: []int{3}, rollEvery: 5, noEpochs: true}, rl: layout{batchSizes: []int{4}, rollEvery: 5, noEpochs: true},
			diffs: "only_right 35..39",
			div:   "leo 35/40 compared [0,35) first null truncate null rounds  past 0 agree false epochs none/none",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			left := writeReplica(t, filepath.Join(root, "left", "orders-0"), c.left, c.ll)
			right := writeReplica(t, filepath.Join(root, "right", "orders-0"), c.right, c.rl)
			o := compare(t, left, right)
			if got := kinds(o.diffs); got != c.diffs {
				t.Errorf("differences %q, want %q", got, c.diffs)
			}
			if o.divergence != c.div {
				t.Errorf("divergence\n got  %s\n want %s", o.divergence, c.div)
			}
		})
	}
}

// TestEndOffsetFor is LeaderEpochFileCache.endOffsetFor's cases.
func TestEndOffsetFor(t *testing.T) {
	c := replica.EpochCache{{Epoch: 2, StartOffset: 10}, {Epoch: 5, StartOffset: 40}, {Epoch: 7, StartOffset: 90}}
	for _, x := range []struct {
		req       int32
		wantEpoch int32
		wantOff   int64
	}{
		{7, 7, 120},  // the latest: the log end offset
		{6, 5, 90},   // unknown, between: the floor epoch, the next start
		{5, 5, 90},   // known, older: its end is the next epoch's start
		{2, 2, 40},   // the oldest known
		{1, 1, 10},   // older than any known: the request, the first start
		{8, -1, -1},  // newer than any known
		{-1, -1, -1}, // undefined
	} {
		e, o := c.EndOffsetFor(x.req, 120)
		if e != x.wantEpoch || o != x.wantOff {
			t.Errorf("endOffsetFor(%d) = (%d, %d), want (%d, %d)", x.req, e, o, x.wantEpoch, x.wantOff)
		}
	}
	if got := fmt.Sprint(c.TruncateFromEnd(40)); got != "[{2 10}]" {
		t.Errorf("truncateFromEnd(40) = %s", got)
	}
}

// TestTruncationFallbacks: the follower's high watermark when epochs
// cannot answer, and a plain one-round answer.
func TestTruncationFallbacks(t *testing.T) {
	hw := int64(20)
	e := func(pairs ...int64) replica.EpochCache {
		var c replica.EpochCache
		for i := 0; i < len(pairs); i += 2 {
			c = append(c, sidefile.EpochEntry{Epoch: int32(pairs[i]), StartOffset: pairs[i+1]})
		}
		return c
	}
	for _, c := range []struct {
		name             string
		follower, leader replica.Side
		want             int64
		ok               bool
		rounds           int
	}{
		{"follower without epochs: its high watermark", replica.Side{LogEndOffset: 40, HighWatermark: &hw}, replica.Side{Epochs: e(1, 0), LogEndOffset: 50}, 20, true, 1},
		{"follower without epochs nor high watermark", replica.Side{LogEndOffset: 40}, replica.Side{Epochs: e(1, 0), LogEndOffset: 50}, 0, false, 1},
		{"leader older than the follower: high watermark", replica.Side{Epochs: e(5, 0), LogEndOffset: 40, HighWatermark: &hw}, replica.Side{Epochs: e(3, 0), LogEndOffset: 100}, 20, true, 1},
		{"leader older, no high watermark", replica.Side{Epochs: e(5, 0), LogEndOffset: 40}, replica.Side{Epochs: e(3, 0), LogEndOffset: 100}, 0, false, 1},
		{"leader moved on: the end of the follower's epoch there", replica.Side{Epochs: e(1, 0, 2, 10), LogEndOffset: 30}, replica.Side{Epochs: e(1, 0, 2, 10, 3, 25), LogEndOffset: 50}, 25, true, 1},
		{"the high watermark above the log end: the log end", replica.Side{LogEndOffset: 15, HighWatermark: &hw}, replica.Side{Epochs: e(1, 0), LogEndOffset: 50}, 15, true, 1},
	} {
		got, rounds, ok := replica.Truncation(c.follower, c.leader)
		if got != c.want || ok != c.ok || len(rounds) != c.rounds {
			t.Errorf("%s: %d %v %+v, want %d %v with %d rounds", c.name, got, ok, rounds, c.want, c.ok, c.rounds)
		}
		// The last round is listed whatever its answer; it says when it
		// sent the follower to a high watermark that is not known.
		if n := len(rounds); n > 0 && (!rounds[n-1].Final || rounds[n-1].NoHighWatermark == ok) {
			t.Errorf("%s: last round %+v", c.name, rounds[n-1])
		}
	}
}

// TestHighWatermarkBoundedAtOpen: a replication-offset-checkpoint entry
// outside [log start, log end] is bounded as the broker loads it
// (UnifiedLog.updateHighWatermark), so a follower without epochs
// truncates inside its log, not to -5 or past its end.
func TestHighWatermarkBoundedAtOpen(t *testing.T) {
	for _, c := range []struct{ hw, want int64 }{{-5, 0}, {math.MinInt64, 0}, {12, 12}, {99, 20}, {math.MaxInt64, 20}} {
		data := t.TempDir()
		cp := sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "t", Partition: 0, Offset: c.hw}})
		if err := os.WriteFile(filepath.Join(data, sidefile.ReplicationCheckpointFile), cp, 0o644); err != nil {
			t.Fatal(err)
		}
		writeReplica(t, filepath.Join(data, "t-0"), history(0, 20, 1, "a"), layout{batchSizes: []int{4}, rollEvery: 2, noEpochs: true})
		target, err := inspect.Resolve(filepath.Join(data, "t-0")) // with its data directory
		if err != nil {
			t.Fatal(err)
		}
		left, err := replica.Open(target.Partitions[0])
		if err != nil {
			t.Fatal(err)
		}
		right := writeReplica(t, filepath.Join(t.TempDir(), "t-0"), history(0, 30, 1, "a"), layout{batchSizes: []int{4}, rollEvery: 2})
		if left.HighWatermark == nil || *left.HighWatermark != c.want {
			t.Errorf("checkpointed %d: high watermark %v, want %d", c.hw, left.HighWatermark, c.want)
		}
		if x, _, ok := replica.Truncation(left.Side(), right.Side()); !ok || x != c.want {
			t.Errorf("checkpointed %d: truncation %d %v, want %d", c.hw, x, ok, c.want)
		}
	}
}

// TestCorruptBatchIsDamage: one flipped byte in a record value of
// right's third batch (offsets 6..8 of batches of 3, segments of 4
// batches) makes its CRC fail. That batch is damage, never a conflict:
// without salvage the rest of its segment (offsets 6..11) is not read and
// the damage names the file and the batch's byte position; with salvage
// only that batch is skipped (its range listed), and the records after it
// are compared and agree.
func TestCorruptBatchIsDamage(t *testing.T) {
	root := t.TempDir()
	hist := history(0, 30, 1, "a")
	l := layout{batchSizes: []int{3}, rollEvery: 4}
	left := writeReplica(t, filepath.Join(root, "left", "orders-0"), hist, l)
	right := writeReplica(t, filepath.Join(root, "right", "orders-0"), hist, l)
	var pos, end int64
	seg := right.Partition.Segments[0]
	n := 0
	if err := right.Partition.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		if n == 2 {
			pos, end = w.Batch.Position, w.Batch.End()
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(seg.Log)
	if err != nil {
		t.Fatal(err)
	}
	v := bytes.Index(b[pos:end], []byte("a-8")) // offset 8's value
	if v < 0 {
		t.Fatal("no value a-8 in the third batch")
	}
	b[pos+int64(v)] ^= 0x20 // "A-8": the records still decode
	if err := os.WriteFile(seg.Log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, salvage := range []bool{false, true} {
		var diffs []string
		d, err := replica.Compare(left, right, replica.Options{Salvage: salvage}, func(x replica.Difference) error {
			diffs = append(diffs, fmt.Sprintf("%s %d", x.Kind, x.Offset))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "only_left 6..11"
		if salvage {
			want = "only_left 6..8"
		}
		if got := kinds(diffs); got != want || d.Conflicts != 0 {
			t.Errorf("salvage %v: differences %q (%d conflicts), want %q", salvage, got, d.Conflicts, want)
		}
		switch {
		case !salvage:
			var ce *fileio.CorruptError
			if len(d.Damage) != 1 || !errors.As(d.Damage[0], &ce) || !errors.Is(ce, fileio.ErrCRC) || ce.File != seg.Log || ce.Position != pos || len(d.Skipped) != 0 {
				t.Errorf("damage %v, skipped %v; want a crc mismatch at %s position %d", d.Damage, d.Skipped, seg.Log, pos)
			}
		default:
			if len(d.Damage) != 0 || len(d.Skipped) != 1 || d.Skipped[0].Position != pos || d.Skipped[0].End != end ||
				!errors.Is(d.Skipped[0].Err, fileio.ErrCRC) || d.SkippedRanges != 1 || d.SkippedBytes != end-pos {
				t.Errorf("salvage: damage %v, skipped %+v (%d ranges, %d bytes); want [%d, %d)", d.Damage, d.Skipped, d.SkippedRanges, d.SkippedBytes, pos, end)
			}
		}
	}
}

// endOffsetForByScan is LeaderEpochFileCache.endOffsetFor written as a
// walk over every entry: the floor and higher entries of requested.
func endOffsetForByScan(c replica.EpochCache, requested int32, leo int64) (int32, int64) {
	if requested == replica.UndefinedEpoch {
		return replica.UndefinedEpoch, replica.UndefinedEpochOffset
	}
	if len(c) > 0 && c[len(c)-1].Epoch == requested {
		return requested, leo
	}
	floor, higher := -1, -1
	for i, e := range c {
		if e.Epoch <= requested {
			floor = i
		}
		if e.Epoch > requested && higher < 0 {
			higher = i
		}
	}
	switch {
	case higher < 0:
		return replica.UndefinedEpoch, replica.UndefinedEpochOffset
	case floor < 0:
		return requested, c[higher].StartOffset
	}
	return c[floor].Epoch, c[higher].StartOffset
}

// TestEndOffsetForAgainstAScan: the binary search answers as the walk over
// every entry, for every epoch around random caches.
func TestEndOffsetForAgainstAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		var c replica.EpochCache
		epoch, off := int32(rng.IntN(3)), int64(rng.IntN(5))
		for range rng.IntN(12) {
			c = append(c, sidefile.EpochEntry{Epoch: epoch, StartOffset: off})
			epoch += 1 + int32(rng.IntN(3))
			off += 1 + int64(rng.IntN(9))
		}
		for req := int32(-1); req <= epoch+1; req++ {
			e, o := c.EndOffsetFor(req, off+5)
			we, wo := endOffsetForByScan(c, req, off+5)
			if e != we || o != wo {
				t.Fatalf("%v: endOffsetFor(%d) = (%d, %d), the scan says (%d, %d)", c, req, e, o, we, wo)
			}
		}
	}
}

// epochLadder is two caches of n epochs each that interleave: the
// follower led the odd epochs 1, 3, ... 2n-1 (epoch 2k+1 from offset
// 2k+1), the leader the even ones 0, 2, ... 2n-2 and 2n (epoch 2k from
// 2k). Each round the leader answers with the epoch below the one asked,
// which the follower does not know: one round per follower epoch (KIP-279).
func epochLadder(n int) (follower, leader replica.EpochCache) {
	for k := range n {
		follower = append(follower, sidefile.EpochEntry{Epoch: int32(2*k + 1), StartOffset: int64(2*k + 1)})
		leader = append(leader, sidefile.EpochEntry{Epoch: int32(2 * k), StartOffset: int64(2 * k)})
	}
	leader = append(leader, sidefile.EpochEntry{Epoch: int32(2 * n), StartOffset: int64(2 * n)})
	return follower, leader
}

// TestTruncationThroughManyEpochs: 50,000 rounds, one per follower epoch:
// round k asks for epoch 2n-1-2k, the leader answers (2n-2-2k, its start
// of epoch 2n-2k), and the follower, which has no epoch 2n-2-2k,
// truncates to where its epoch 2n-1-2k starts; the last round asks for 1
// and gets (0, 2), an epoch the follower does not know either but older
// than any it has (endOffsetFor answers the request itself), so it
// truncates to 1 and is done. The first and last rounds are worked out
// again with the scan (endOffsetForByScan).
func TestTruncationThroughManyEpochs(t *testing.T) {
	const n = 50_000
	f, l := epochLadder(n)
	leo := int64(2*n + 10)
	got, rounds, ok := replica.Truncation(replica.Side{Epochs: f, LogEndOffset: leo}, replica.Side{Epochs: l, LogEndOffset: leo})
	if !ok || got != 1 || len(rounds) != n {
		t.Fatalf("truncation %d %v after %d rounds, want 1 after %d", got, ok, len(rounds), n)
	}
	for k, r := range rounds {
		want := replica.Round{RequestedEpoch: int32(2*n - 1 - 2*k), LeaderEpoch: int32(2*n - 2 - 2*k), LeaderEndOffset: int64(2*n - 2*k), TruncateTo: int64(2*n - 1 - 2*k), Final: k == n-1}
		if r != want {
			t.Fatalf("round %d: %+v, want %+v", k, r, want)
		}
		if k >= 50 && k < n-50 {
			continue
		}
		cache := f.TruncateFromEnd(int64(2*n + 1 - 2*k)) // what the follower has at round k
		le, lo := endOffsetForByScan(l, r.RequestedEpoch, leo)
		fe, fo := endOffsetForByScan(cache, le, leo)
		if le != r.LeaderEpoch || lo != r.LeaderEndOffset || (fe != le) == r.Final || min(fo, lo) != r.TruncateTo {
			t.Fatalf("round %d: %+v; the scan says (%d, %d), then (%d, %d)", k, r, le, lo, fe, fo)
		}
	}
}

// BenchmarkTruncationManyEpochs: the truncation of a follower through
// 300,000 epochs the leader lacks (one round each, epochLadder).
func BenchmarkTruncationManyEpochs(b *testing.B) {
	f, l := epochLadder(300_000)
	leo := int64(600_010)
	for b.Loop() {
		if _, rounds, ok := replica.Truncation(replica.Side{Epochs: f, LogEndOffset: leo}, replica.Side{Epochs: l, LogEndOffset: leo}); !ok || len(rounds) != 300_000 {
			b.Fatal(len(rounds), ok)
		}
	}
}

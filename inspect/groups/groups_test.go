package groups_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/groups"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
	"github.com/kseg/kseg/inspect/record"
)

// logBuilder writes a __consumer_offsets log batch by batch, numbering
// offsets and timestamps (timestamp = 1000 + offset).
type logBuilder struct {
	buf  []byte
	next int64
}

func (l *logBuilder) ts() int64 { return 1000 + l.next }

func (l *logBuilder) batch(pid int64, txn bool, recs ...[2][]byte) {
	b := kafkagen.Batch{BaseOffset: l.next, LeaderEpoch: 3, ProducerID: pid, Transactional: txn}
	for i, r := range recs {
		b.Records = append(b.Records, kafkagen.Record{OffsetDelta: int32(i), Timestamp: l.ts() + int64(i), Key: r[0], Value: r[1]})
	}
	l.buf = kafkagen.AppendBatch(l.buf, b)
	l.next += int64(len(recs))
}

func (l *logBuilder) marker(pid int64, commit bool) {
	l.buf = kafkagen.AppendEndTxnMarker(l.buf, l.next, 3, pid, 0, commit, 1, l.ts())
	l.next++
}

func commit(group, topic string, p int32, version int16, offset int64, epoch int32, meta string) [2][]byte {
	return [2][]byte{kafkagen.OffsetCommitKey(group, topic, p), kafkagen.OffsetCommitValue(version, offset, epoch, meta, 5000+offset, 9000)}
}

func tombstone(group, topic string, p int32) [2][]byte {
	return [2][]byte{kafkagen.OffsetCommitKey(group, topic, p), nil}
}

func writePartition(t *testing.T, dir string, segments ...*logBuilder) *inspect.Partition {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := int64(0)
	for _, s := range segments {
		if err := os.WriteFile(filepath.Join(dir, inspect.SegmentName(base)+".log"), s.buf, 0o644); err != nil {
			t.Fatal(err)
		}
		base = s.next
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func render(offsets []groups.Offset) string {
	var b strings.Builder
	for _, o := range offsets {
		e := "null"
		if o.LeaderEpoch != nil {
			e = fmt.Sprint(*o.LeaderEpoch)
		}
		fmt.Fprintf(&b, "%s/%s/%d=%d epoch=%s meta=%q ts=%d @%s:%d\n", o.Group, o.Topic, o.Partition, o.Offset, e, o.Metadata, o.CommitTimestamp, o.Source, o.SourceOffset)
	}
	return b.String()
}

// TestLoadReplaysLikeTheCoordinator: a __consumer_offsets partition of two
// segments holding commits of every value version, group metadata and
// KIP-848 records, tombstones, and transactional commits committed,
// aborted, overtaken by a later plain commit, and left open; the state at
// the end and at two earlier times, each written out by hand.
func TestLoadReplaysLikeTheCoordinator(t *testing.T) {
	var s1, s2 logBuilder
	s1.batch(-1, false,
		commit("g1", "orders", 0, 0, 10, -1, "v0"), // 0
		commit("g1", "orders", 1, 1, 11, -1, "v1"), // 1
		commit("g1", "orders", 2, 2, 12, -1, "v2"), // 2
	)
	s1.batch(-1, false,
		[2][]byte{kafkagen.GroupMetadataKey("g1"), []byte{0, 3, 0, 0}},         // 3: no offsets (value not even decodable)
		[2][]byte{kafkagen.ConsumerGroupMetadataKey("g2"), []byte{0, 0, 0, 1}}, // 4: KIP-848: no offsets
		commit("g1", "orders", 0, 3, 20, 7, "v3"),                              // 5: replaces offset 10
	)
	s1.batch(7, true, commit("g1", "orders", 1, 3, 100, 7, "txn7")) // 6: pending under 7
	s1.batch(8, true, commit("g1", "orders", 2, 3, 200, 7, "txn8")) // 7: pending under 8
	s1.marker(7, true)                                              // 8: g1/orders/1 = 100
	s1.batch(-1, false, commit("g2", "audit", 0, 4, 30, 2, "v4"))   // 9
	s2.next = s1.next
	s2.marker(8, false)                                                // 10: drops 200
	s2.batch(9, true, commit("g3", "x", 0, 3, 5, -1, "open"))          // 11: never closed
	s2.batch(10, true, commit("g4", "y", 0, 3, 50, 1, "txn10"))        // 12
	s2.batch(-1, false, commit("g4", "y", 0, 3, 60, 1, "plain later")) // 13: later than 12
	s2.marker(10, true)                                                // 14: 50 loses to 60
	s2.batch(-1, false, tombstone("g1", "orders", 0))                  // 15: removes g1/orders/0
	s2.batch(11, true, commit("g5", "z", 0, 3, 70, 1, "txn11"))        // 16
	s2.batch(-1, false, tombstone("g5", "z", 0))                       // 17: removes the pending one too
	s2.marker(11, true)                                                // 18: nothing left to apply
	p := writePartition(t, filepath.Join(t.TempDir(), "__consumer_offsets-7"), &s1, &s2)

	load := func(at *int64) *groups.State {
		st := groups.NewState()
		if err := st.Load(p, groups.Options{At: at}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := load(nil)
	want := `g1/orders/1=100 epoch=7 meta="txn7" ts=5100 @__consumer_offsets-7:6
g1/orders/2=12 epoch=null meta="v2" ts=5012 @__consumer_offsets-7:2
g2/audit/0=30 epoch=2 meta="v4" ts=5030 @__consumer_offsets-7:9
g4/y/0=60 epoch=1 meta="plain later" ts=5060 @__consumer_offsets-7:13
`
	if got := render(st.Offsets()); got != want {
		t.Errorf("state at the end:\n%s\nwant\n%s", got, want)
	}
	if got := render(st.Pending()); got != "g3/x/0=5 epoch=null meta=\"open\" ts=5005 @__consumer_offsets-7:11\n" {
		t.Errorf("pending at the end: %s", got)
	}
	if st.Undecodable != 0 || st.Partitions != 1 {
		t.Errorf("undecodable %d, partitions %d", st.Undecodable, st.Partitions)
	}

	// As of the time of offset 7 (ts 1007): both transactions still open.
	at := int64(1007)
	st = load(&at)
	want = `g1/orders/0=20 epoch=7 meta="v3" ts=5020 @__consumer_offsets-7:5
g1/orders/1=11 epoch=null meta="v1" ts=5011 @__consumer_offsets-7:1
g1/orders/2=12 epoch=null meta="v2" ts=5012 @__consumer_offsets-7:2
`
	if got := render(st.Offsets()); got != want {
		t.Errorf("state at %d:\n%s\nwant\n%s", at, got, want)
	}
	if n := len(st.Pending()); n != 2 {
		t.Errorf("pending at %d: %d, want 2", at, n)
	}
	// As of offset 1 (ts 1001): the first two commits.
	at = 1001
	if got := render(load(&at).Offsets()); got != "g1/orders/0=10 epoch=null meta=\"v0\" ts=5010 @__consumer_offsets-7:0\ng1/orders/1=11 epoch=null meta=\"v1\" ts=5011 @__consumer_offsets-7:1\n" {
		t.Errorf("state at %d:\n%s", at, got)
	}
}

// TestLoadReportsDamage: a torn tail stops the replay there; what came
// before is loaded and the error names the file and position.
func TestLoadReportsDamage(t *testing.T) {
	var s logBuilder
	s.batch(-1, false, commit("g", "t", 0, 3, 1, 0, ""))
	good := len(s.buf)
	s.batch(-1, false, commit("g", "t", 0, 3, 2, 0, ""))
	s.buf = s.buf[:len(s.buf)-5]
	p := writePartition(t, filepath.Join(t.TempDir(), "__consumer_offsets-0"), &s)
	st := groups.NewState()
	err := st.Load(p, groups.Options{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte position %d", good)) || !strings.Contains(err.Error(), "00000000000000000000.log") {
		t.Fatalf("error %v: want the torn batch's file and position %d", err, good)
	}
	if got := render(st.Offsets()); !strings.HasPrefix(got, "g/t/0=1 ") {
		t.Errorf("state before the damage: %q", got)
	}
}

// TestLogEndOffset: the log end offset of a partition beside the
// __consumer_offsets ones, and none for an absent one.
func TestLogEndOffset(t *testing.T) {
	root := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(root, "orders-3"), kafkagen.Options{Seed: 1, Segments: 2, Batches: 5})
	if err != nil {
		t.Fatal(err)
	}
	leo, ok, err := groups.LogEndOffset(root, "orders", 3)
	if err != nil || !ok || leo != m.LogEndOffset {
		t.Errorf("log end offset %d %v %v, want %d", leo, ok, err, m.LogEndOffset)
	}
	if _, ok, err := groups.LogEndOffset(root, "orders", 4); ok || err != nil {
		t.Errorf("absent partition: ok %v err %v", ok, err)
	}
}

// TestLoadMatchesReplayOfGeneratedPartitions: generated __consumer_offsets
// partitions (commits of value versions 1-4, tombstones, transactional
// commits committed and aborted, several segments, compression,
// compaction gaps) give, at the end and as of random times, the state a
// plain replay of the generator's own record list gives: last commit
// wins, a tombstone removes (also from open transactions), a COMMIT
// applies the producer's pending commits unless a later record set the
// key, an ABORT drops them.
func TestLoadMatchesReplayOfGeneratedPartitions(t *testing.T) {
	for i, o := range []kafkagen.Options{
		{Transactions: true},
		{Transactions: true, Compression: "lz4", Segments: 3, CompactionGaps: true},
		{Compression: "gzip", Segments: 2, Timestamps: "random"},
		{Magic: 1, Segments: 2},
	} {
		o.Seed = int64(i + 1)
		o.ConsumerOffsets = true
		o.Batches = 40
		o.RecordsPerBatch = 5
		dir := filepath.Join(t.TempDir(), "__consumer_offsets-3")
		m, err := kafkagen.Generate(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		p, err := inspect.ReadPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		replay := func(at int64) (map[string]int64, int) {
			state := map[string]int64{}
			pending := map[int64]map[string]int64{}
			for _, b := range m.Batches() {
				for _, r := range b.Records {
					if r.Timestamp > at {
						continue
					}
					k := string(r.Key)
					switch {
					case b.Control:
						if b.ControlType == 1 {
							for pk, off := range pending[b.ProducerID] {
								if cur, ok := state[pk]; !ok || off > cur {
									state[pk] = off
								}
							}
						}
						delete(pending, b.ProducerID)
					case r.Value == nil:
						delete(state, k)
						for _, m := range pending {
							delete(m, k)
						}
					case b.Transactional:
						if pending[b.ProducerID] == nil {
							pending[b.ProducerID] = map[string]int64{}
						}
						pending[b.ProducerID][k] = r.Offset
					default:
						state[k] = r.Offset
					}
				}
			}
			n := 0
			for _, m := range pending {
				n += len(m)
			}
			return state, n
		}
		all := m.Batches()
		last := all[len(all)-1].MaxTimestamp
		times := []int64{1 << 62, last, last - 100, m.Options.StartTimestamp + 50, m.Options.StartTimestamp}
		for _, at := range times {
			want, wantPending := replay(at)
			st := groups.NewState()
			if err := st.Load(p, groups.Options{At: &at}); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, o := range st.Offsets() {
				got[string(kafkagen.OffsetCommitKey(o.Group, o.Topic, o.Partition))] = o.SourceOffset
				if o.Offset != o.SourceOffset {
					t.Errorf("%d: committed offset %d from record %d: the generator commits the record's offset", i, o.Offset, o.SourceOffset)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || len(st.Pending()) != wantPending || st.Undecodable != 0 {
				t.Errorf("options %d at %d: state %v pending %d (undecodable %d), replay %v pending %d", i, at, got, len(st.Pending()), st.Undecodable, want, wantPending)
			}
			if at == 1<<62 && len(want) < 3 {
				t.Errorf("options %d: only %d offsets at the end: the test exercises little", i, len(want))
			}
		}
	}
}

// TestKeyVersionZero: an offset commit written with OffsetCommitKey
// version 0 (brokers before 0.9 wrote it) is the same key as version 1: a
// later version 1 commit replaces it and a tombstone removes it.
func TestKeyVersionZero(t *testing.T) {
	keyV0 := func(group, topic string, p int32) []byte {
		k := append([]byte{0, 0}, kafkagen.OffsetCommitKey(group, topic, p)[2:]...)
		return k
	}
	var s logBuilder
	s.batch(-1, false,
		[2][]byte{keyV0("old", "t", 0), kafkagen.OffsetCommitValue(0, 5, -1, "zero", 7000, 0)},
		[2][]byte{keyV0("old", "t", 1), kafkagen.OffsetCommitValue(0, 6, -1, "", 7001, 0)},
		[2][]byte{keyV0("old", "t", 2), kafkagen.OffsetCommitValue(0, 7, -1, "", 7002, 0)},
	)
	s.batch(-1, false, commit("old", "t", 1, 3, 8, 1, "v1 key"), tombstone("old", "t", 2))
	p := writePartition(t, filepath.Join(t.TempDir(), "__consumer_offsets-1"), &s)
	st := groups.NewState()
	if err := st.Load(p, groups.Options{}); err != nil {
		t.Fatal(err)
	}
	want := `old/t/0=5 epoch=null meta="zero" ts=7000 @__consumer_offsets-1:0
old/t/1=8 epoch=1 meta="v1 key" ts=5008 @__consumer_offsets-1:3
`
	if got := render(st.Offsets()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLogEndOffsetOnlyOfLegalTopics: a commit names its topic, and a
// topic name read from a record is a path only when Kafka would accept
// it (Topic.validate). A partition directory reached through "../" from
// the data directory holds segments, so looking it up would answer; it
// must not be looked up. A legal name beside it answers.
func TestLogEndOffsetOnlyOfLegalTopics(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	for _, dir := range []string{filepath.Join(root, "other", "t-0"), filepath.Join(data, "t-0")} {
		if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Batches: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if leo, ok, err := groups.LogEndOffset(data, "t", 0); err != nil || !ok || leo <= 0 {
		t.Fatalf("t-0: %d %v %v", leo, ok, err)
	}
	for _, c := range []struct {
		topic string
		p     int32
	}{{"../other/t", 0}, {"..", 0}, {".", 0}, {"", 0}, {"t", -1}, {"t/../t", 0}} {
		if leo, ok, err := groups.LogEndOffset(data, c.topic, c.p); ok || err != nil {
			t.Errorf("LogEndOffset(%q, %d) = %d, %v, %v: looked up a name that is no topic's", c.topic, c.p, leo, ok, err)
		}
	}
}

// naiveReplay is the coordinator's replay written plainly, as a reference
// for State: maps of whole keys, a filter applied to the result at the
// end (not during the replay), pending commits per producer.
func naiveReplay(t *testing.T, p *inspect.Partition, keep func(groups.Key) bool) (offsets, pending []string) {
	t.Helper()
	committed := map[groups.Key]groups.Offset{}
	open := map[int64]map[groups.Key]groups.Offset{}
	var dec record.RecordDecoder
	err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		b := w.Batch
		return dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
			if b.IsControl() {
				_, typ, _ := record.ParseControlKey(r.Key)
				m := open[b.ProducerID]
				delete(open, b.ProducerID)
				if typ == record.ControlCommit {
					for k, o := range m {
						if cur, ok := committed[k]; !ok || o.SourceOffset > cur.SourceOffset {
							committed[k] = o
						}
					}
				}
				return nil
			}
			d := internaltopics.Decode(internaltopics.ConsumerOffsets, r.Key, r.Value)
			if d.Type != internaltopics.TypeOffsetCommit {
				return nil
			}
			g, _ := d.Key.Get("group")
			tp, _ := d.Key.Get("topic")
			pn, _ := d.Key.Get("partition")
			k := groups.Key{Group: g.(string), Topic: tp.(string), Partition: int32(pn.(int64))}
			if d.Tombstone {
				delete(committed, k)
				for _, m := range open {
					delete(m, k)
				}
				return nil
			}
			off, _ := d.Value.Get("offset")
			meta, _ := d.Value.Get("metadata")
			o := groups.Offset{Key: k, Offset: off.(int64), Metadata: meta.(string), Source: p.Name(), SourceOffset: r.Offset}
			if v, ok := d.Value.Get("commitTimestamp"); ok {
				o.CommitTimestamp = v.(int64)
			}
			if v, ok := d.Value.Get("leaderEpoch"); ok && v.(int64) >= 0 {
				e := int32(v.(int64))
				o.LeaderEpoch = &e
			}
			if b.IsTransactional() {
				if open[b.ProducerID] == nil {
					open[b.ProducerID] = map[groups.Key]groups.Offset{}
				}
				open[b.ProducerID][k] = o
			} else {
				committed[k] = o
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range committed {
		if keep(k) {
			offsets = append(offsets, render([]groups.Offset{o}))
		}
	}
	for _, m := range open {
		for k, o := range m {
			if keep(k) {
				pending = append(pending, render([]groups.Offset{o}))
			}
		}
	}
	sort.Strings(offsets)
	sort.Strings(pending)
	return offsets, pending
}

// TestStateAgainstAPlainReplay: random __consumer_offsets logs (commits of
// a few groups and topics to partitions dense, sparse, far apart and
// negative, tombstones, transactions committed, aborted and left open,
// metadata empty or not) replayed by State, unfiltered and with each
// filter applied during the replay, give exactly what the plain replay
// keeps of its whole result.
func TestStateAgainstAPlainReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 27))
	groupNames, topicNames := []string{"a", "b", "c"}, []string{"x", "y"}
	partition := func() int32 {
		switch rng.IntN(10) {
		case 0:
			return int32(rng.Uint32()) // anywhere, negative included
		case 1:
			return int32(100 + rng.IntN(3000)) // sparse
		}
		return int32(rng.IntN(40)) // dense
	}
	for round := range 40 {
		var lb logBuilder
		for range 60 {
			pid := int64(rng.IntN(4))
			switch rng.IntN(10) {
			case 0:
				lb.marker(pid, rng.IntN(2) == 0)
				continue
			case 1:
				lb.batch(-1, false, tombstone(groupNames[rng.IntN(3)], topicNames[rng.IntN(2)], partition()))
				continue
			}
			var recs [][2][]byte
			for range 1 + rng.IntN(30) {
				meta := ""
				if rng.IntN(4) == 0 {
					meta = fmt.Sprintf("m%d", rng.IntN(100))
				}
				recs = append(recs, commit(groupNames[rng.IntN(3)], topicNames[rng.IntN(2)], partition(), int16(rng.IntN(5)), rng.Int64N(1000)-10, int32(rng.IntN(5))-1, meta))
			}
			if rng.IntN(3) == 0 {
				lb.batch(pid, true, recs...)
			} else {
				lb.batch(-1, false, recs...)
			}
		}
		p := writePartition(t, filepath.Join(t.TempDir(), "__consumer_offsets-3"), &lb)
		for _, f := range []groups.Options{{}, {Group: "a"}, {Topic: "y"}, {Group: "b", Topic: "x"}, {Group: "nope"}} {
			keep := func(k groups.Key) bool {
				return (f.Group == "" || k.Group == f.Group) && (f.Topic == "" || k.Topic == f.Topic)
			}
			wantOffsets, wantPending := naiveReplay(t, p, keep)
			st := groups.NewState()
			if err := st.Load(p, f); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range st.Offsets() {
				got = append(got, render([]groups.Offset{o}))
			}
			var gotPending []string
			for _, o := range st.Pending() {
				gotPending = append(gotPending, render([]groups.Offset{o}))
			}
			sort.Strings(gotPending)
			if !sortedByKey(st.Offsets()) {
				t.Errorf("round %d %+v: offsets not in key order", round, f)
			}
			sort.Strings(got)
			if strings.Join(got, "") != strings.Join(wantOffsets, "") || st.Len() != len(wantOffsets) {
				t.Errorf("round %d %+v: offsets (%d)\n%s\nwant (%d)\n%s", round, f, st.Len(), strings.Join(got, ""), len(wantOffsets), strings.Join(wantOffsets, ""))
			}
			if strings.Join(gotPending, "") != strings.Join(wantPending, "") || st.PendingCount() != len(wantPending) {
				t.Errorf("round %d %+v: pending\n%s\nwant\n%s", round, f, strings.Join(gotPending, ""), strings.Join(wantPending, ""))
			}
		}
	}
}

// sortedByKey reports whether offsets are in (group, topic, partition)
// order.
func sortedByKey(offsets []groups.Offset) bool {
	return slices.IsSortedFunc(offsets, func(a, b groups.Offset) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// TestStateBytesPerOffset: the state one group's commits of 200,000
// partitions of one topic leave (gentest.ManyCommits; a consumer of a
// topic that large commits them all at once) is at most 48 bytes an
// offset: the heap held after a forced collection, with the state alive.
// With --group or --topic naming no commit, the filter applies during the
// replay and the state holds nothing. (Before: about 410 bytes an
// offset, and the filters applied only when listing.)
func TestStateBytesPerOffset(t *testing.T) {
	const n = 200_000
	dir := filepath.Join(t.TempDir(), "__consumer_offsets-0")
	gentest.ManyCommits(t, dir, "g", "orders", n)
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	held := func(opts groups.Options) (int64, *groups.State) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		st := groups.NewState()
		if err := st.Load(p, opts); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc), st
	}
	all, st := held(groups.Options{})
	t.Logf("%d offsets: %d bytes held, %.1f an offset", st.Len(), all, float64(all)/n)
	if st.Len() != n || all > 48*n {
		t.Errorf("%d offsets held in %d bytes, over 48 an offset", st.Len(), all)
	}
	runtime.KeepAlive(st)
	for _, o := range []groups.Options{{Group: "nope"}, {Topic: "nope"}} {
		b, st := held(o)
		if st.Len() != 0 || b > 1<<20 {
			t.Errorf("%+v: %d offsets held in %d bytes", o, st.Len(), b)
		}
		runtime.KeepAlive(st)
	}
}

// TestGroupsLagAgainstTheDataDirectory: Groups, as a Go caller sees it,
// replays a data directory's __consumer_offsets partitions and gives each
// committed offset the lag behind its partition's log end offset when
// that partition is in the directory (none for a negative offset, none
// for a partition that is not there), counting the groups; a target
// without a __consumer_offsets partition is ErrNoPartitions.
func TestGroupsLagAgainstTheDataDirectory(t *testing.T) {
	root := t.TempDir()
	m, err := kafkagen.Generate(filepath.Join(root, "orders-0"), kafkagen.Options{Seed: 2, Segments: 1, Batches: 6})
	if err != nil {
		t.Fatal(err)
	}
	var s logBuilder
	s.batch(-1, false, commit("a", "orders", 0, 3, 4, 1, ""), commit("a", "orders", 9, 3, 4, 1, ""), commit("b", "orders", 0, 3, -1, 1, ""))
	writePartition(t, filepath.Join(root, "__consumer_offsets-0"), &s)
	tg, err := inspect.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	r, err := groups.Groups(tg, groups.Options{})
	if err != nil || len(r.Damaged) != 0 {
		t.Fatalf("%v %v", err, r)
	}
	var got []string
	n, err := r.EachLagged(func(l groups.Lagged) error {
		s := fmt.Sprintf("%s/%d", l.Group, l.Partition)
		if l.LogEndOffset != nil {
			s += fmt.Sprintf(" leo=%d", *l.LogEndOffset)
		}
		if l.Lag != nil {
			s += fmt.Sprintf(" lag=%d", *l.Lag)
		}
		got = append(got, s)
		return nil
	})
	want := []string{fmt.Sprintf("a/0 leo=%d lag=%d", m.LogEndOffset, m.LogEndOffset-4), "a/9", fmt.Sprintf("b/0 leo=%d", m.LogEndOffset)}
	if err != nil || n != 2 || strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("%d groups: %q, want %q (%v)", n, got, want, err)
	}
	other, err := inspect.Resolve(filepath.Join(root, "orders-0"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := groups.Groups(other, groups.Options{}); !errors.Is(err, groups.ErrNoPartitions) {
		t.Errorf("no __consumer_offsets partition: %v", err)
	}
}

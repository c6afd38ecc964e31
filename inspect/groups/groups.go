// Package groups rebuilds consumer groups' committed offsets from
// __consumer_offsets partitions, offline, as the group coordinator does
// when it loads one: the library behind `kseg groups`.
//
// The replay follows the coordinator of Kafka 3.7 and later
// (CoordinatorLoaderImpl feeding GroupCoordinatorShard.replay and
// replayEndTransactionMarker, which hand offset commits to
// OffsetMetadataManager.replay / replayEndTransactionMarker); the older
// GroupMetadataManager.loadGroupsAndOffsets reaches the same state:
//
//   - records are applied in offset order;
//   - an offset commit (key version 0 or 1) outside a transaction sets the
//     committed offset of (group, topic, partition); a tombstone (null
//     value) removes it, and removes that key from every open transaction;
//   - an offset commit in a transactional batch is kept pending under the
//     batch's producer id; the producer's COMMIT marker applies each one
//     unless a commit written later in the log (a larger record offset) is
//     already there, and its ABORT marker drops them;
//   - group metadata (key version 2) and the KIP-848 group records (key
//     versions 3 and up) carry no offsets and change none.
//
// Records are read with inspect's log walk and decoded with
// internaltopics; nothing here parses bytes itself.
package groups

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
)

// Topic is the name of the group coordinator's topic.
const Topic = "__consumer_offsets"

// Key names a committed offset: (group, topic, partition).
type Key struct {
	Group     string
	Topic     string
	Partition int32
}

// Offset is one committed offset, as the coordinator holds it after the
// load.
type Offset struct {
	Key
	Offset int64
	// LeaderEpoch is nil when the value has none (version < 3, or -1).
	LeaderEpoch     *int32
	Metadata        string
	CommitTimestamp int64
	// Source is the __consumer_offsets partition directory (its name) and
	// SourceOffset the offset of the record that set this offset.
	Source       string
	SourceOffset int64
}

// Options tune a load.
type Options struct {
	// At, when set, applies only records whose timestamp is <= *At: the
	// state as of that time. Markers are records too: a COMMIT written
	// after At leaves its offsets pending.
	At *int64
	// Group and Topic, when not "", keep only the commits of that group
	// and of that consumed topic. They are applied to each record as it
	// is replayed, so the state never holds another key: every rule of
	// the replay (a commit, a tombstone, a COMMIT or ABORT marker) acts on
	// one key at a time, and a key kept has the same answer as without
	// the filter.
	Group, Topic string
}

// keep reports whether the filters keep commits of group for topic.
func (o *Options) keep(group, topic string) bool {
	return (o.Group == "" || group == o.Group) && (o.Topic == "" || topic == o.Topic)
}

// State is the result of loading one or more partitions. It is kept
// compact (docs/reliability.md states the bound): group and topic names
// once per distinct (group, topic) pair; per pair, the committed offsets
// of its partitions in a table indexed by partition number (32 bytes a
// slot) while the partitions are dense, as a consumer's are, and in a map
// for the partitions too far apart; a non-empty metadata string beside.
type State struct {
	// pairs are the distinct (group, topic) pairs met, numbered by
	// pairIDs, each with its table of offsets.
	pairs   []Key
	tables  []pairTable
	pairIDs map[[2]string]uint32
	last    struct {
		group, topic string
		id           uint32
		ok           bool
	}
	n    int                // committed offsets held
	meta map[slotKey]string // the non-empty metadata of offsets
	// pending holds, per producer id, the transactional offset commits not
	// yet committed or aborted.
	pending map[int64]map[slotKey]pendingCommit
	sources []string // the partitions loaded (a slot's source)
	// Partitions is how many partitions were loaded.
	Partitions int
	// Undecodable counts offset commit records whose key or value did not
	// decode (skipped, as the broker would fail the load instead).
	Undecodable int
}

// slotKey names a committed offset: its (group, topic) pair's number and
// the partition.
type slotKey struct {
	pair      uint32
	partition int32
}

// slot is a committed offset as the state holds it (32 bytes).
type slot struct {
	offset, commitTimestamp, sourceOffset int64
	leaderEpoch                           int32  // -1: none
	source                                uint32 // index into State.sources; noSource: an empty slot
}

const noSource = ^uint32(0)

// pendingCommit is a transactional commit waiting for its marker.
type pendingCommit struct {
	slot
	metadata string
}

// pairTable holds the committed offsets of one (group, topic) pair:
// partition p in the dense slots when p < size, else in sparse. The dense
// slots grow to a partition p only while p < 2*n+8 (n the offsets the
// table holds), so there are at most 2*N+8 of them for the N offsets the
// table ever held at once; a partition in sparse stays there. They are
// kept in chunks of 1024, so growing copies at most one chunk (a single
// slice would hold its old and new arrays at once while it grows).
type pairTable struct {
	chunks [][]slot // dense slot p: chunks[p>>chunkBits][p&chunkMask]
	size   int      // dense slots
	sparse map[int32]slot
	n      int // offsets held
}

const (
	chunkBits = 10
	chunkMask = 1<<chunkBits - 1
)

// dense is p's dense slot, nil when p is not below size.
func (t *pairTable) dense(p int32) *slot {
	if p < 0 || int(p) >= t.size {
		return nil
	}
	return &t.chunks[p>>chunkBits][p&chunkMask]
}

func (t *pairTable) get(p int32) (slot, bool) {
	if v, ok := t.sparse[p]; ok {
		return v, true
	}
	if d := t.dense(p); d != nil && d.source != noSource {
		return *d, true
	}
	return slot{}, false
}

// set stores v for p; it reports whether p had no offset before.
func (t *pairTable) set(p int32, v slot) bool {
	if _, ok := t.sparse[p]; ok {
		t.sparse[p] = v
		return false
	}
	d := t.dense(p)
	switch {
	case d != nil && d.source != noSource:
		*d = v
		return false
	case d != nil:
		*d = v
	case p >= 0 && int64(p) < 2*int64(t.n)+8:
		for t.size <= int(p) {
			if t.size&chunkMask == 0 {
				t.chunks = append(t.chunks, nil)
			}
			c := &t.chunks[len(t.chunks)-1]
			*c = append(*c, slot{source: noSource})
			t.size++
		}
		*t.dense(p) = v
	default:
		if t.sparse == nil {
			t.sparse = map[int32]slot{}
		}
		t.sparse[p] = v
	}
	t.n++
	return true
}

// remove removes p's offset; it reports whether there was one.
func (t *pairTable) remove(p int32) bool {
	if _, ok := t.sparse[p]; ok {
		delete(t.sparse, p)
	} else if d := t.dense(p); d != nil && d.source != noSource {
		*d = slot{source: noSource}
	} else {
		return false
	}
	t.n--
	return true
}

// each calls fn with the table's partitions in increasing order.
func (t *pairTable) each(fn func(p int32, v slot) error) error {
	sparse := make([]int32, 0, len(t.sparse))
	for p := range t.sparse {
		sparse = append(sparse, p)
	}
	slices.Sort(sparse)
	for p := range int32(t.size) {
		for len(sparse) > 0 && sparse[0] < p {
			if err := fn(sparse[0], t.sparse[sparse[0]]); err != nil {
				return err
			}
			sparse = sparse[1:]
		}
		if v := t.dense(p); v.source != noSource {
			if err := fn(p, *v); err != nil {
				return err
			}
		}
	}
	for _, p := range sparse {
		if err := fn(p, t.sparse[p]); err != nil {
			return err
		}
	}
	return nil
}

// NewState returns an empty state.
func NewState() *State {
	return &State{meta: map[slotKey]string{}, pending: map[int64]map[slotKey]pendingCommit{}, pairIDs: map[[2]string]uint32{}}
}

// pairID numbers (group, topic), the same number each time.
func (s *State) pairID(group, topic string) uint32 {
	if l := &s.last; l.ok && l.group == group && l.topic == topic {
		return l.id // commits come in runs of one group and topic
	}
	id, ok := s.pairIDs[[2]string{group, topic}]
	if !ok {
		id = uint32(len(s.pairs))
		s.pairs = append(s.pairs, Key{Group: group, Topic: topic})
		s.tables = append(s.tables, pairTable{})
		s.pairIDs[[2]string{group, topic}] = id
	}
	s.last.group, s.last.topic, s.last.id, s.last.ok = group, topic, id, true
	return id
}

// offset is the Offset of key k held in v.
func (s *State) offset(k slotKey, v slot, metadata string) Offset {
	o := Offset{Key: s.pairs[k.pair], Offset: v.offset, Metadata: metadata, CommitTimestamp: v.commitTimestamp,
		Source: s.sources[v.source], SourceOffset: v.sourceOffset}
	o.Partition = k.partition
	if v.leaderEpoch >= 0 {
		e := v.leaderEpoch
		o.LeaderEpoch = &e
	}
	return o
}

// Len is how many committed offsets the state holds.
func (s *State) Len() int { return s.n }

// EachOffset calls fn with each committed offset, sorted by group, topic,
// partition, one at a time (nothing is built per offset but the one
// handed out); it stops at fn's first error and returns it.
func (s *State) EachOffset(fn func(Offset) error) error {
	order := make([]uint32, len(s.pairs))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return compareKeys(s.pairs[a], s.pairs[b]) })
	for _, id := range order {
		err := s.tables[id].each(func(p int32, v slot) error {
			k := slotKey{id, p}
			return fn(s.offset(k, v, s.meta[k]))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Offsets returns the committed offsets sorted by group, topic, partition
// (EachOffset's, gathered).
func (s *State) Offsets() []Offset {
	out := make([]Offset, 0, s.n)
	_ = s.EachOffset(func(o Offset) error { out = append(out, o); return nil })
	return out
}

// PendingCount is how many transactional offset commits are still open
// at the end of the log (a key open under two producers counts twice).
func (s *State) PendingCount() int {
	n := 0
	for _, m := range s.pending {
		n += len(m)
	}
	return n
}

// Pending returns the transactional offset commits still open at the end
// of the log (neither committed nor aborted), sorted by key.
func (s *State) Pending() []Offset {
	var out []Offset
	for _, m := range s.pending {
		for k, p := range m {
			out = append(out, s.offset(k, p.slot, p.metadata))
		}
	}
	slices.SortFunc(out, func(a, b Offset) int {
		return cmp.Or(compareKeys(a.Key, b.Key), cmp.Compare(a.SourceOffset, b.SourceOffset))
	})
	return out
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// Load replays the records of p (a __consumer_offsets partition) into s,
// keeping only the commits opts keeps. Damage stops the replay of the
// damaged segment (a broker's recovery would cut the log there): the
// state holds what came before it, and the damage is returned as a
// *fileio.CorruptError after the rest is loaded.
func (s *State) Load(p *inspect.Partition, opts Options) error {
	s.Partitions++
	s.sources = append(s.sources, p.Name())
	source := uint32(len(s.sources) - 1)
	var dec record.RecordDecoder
	err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		b := w.Batch
		return dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
			if opts.At != nil && r.Timestamp > *opts.At {
				return nil
			}
			if b.IsControl() {
				s.replayMarker(b.ProducerID, r)
				return nil
			}
			s.replayRecord(&opts, source, b, r)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	return nil
}

// replayMarker is replayEndTransactionMarker: the producer's pending
// commits are applied (COMMIT) or dropped (ABORT). A later non-
// transactional commit of the same key wins over an earlier pending one.
func (s *State) replayMarker(producerID int64, r *record.Record) {
	_, typ, err := record.ParseControlKey(r.Key)
	if err != nil || typ != record.ControlCommit && typ != record.ControlAbort {
		return
	}
	pending := s.pending[producerID]
	delete(s.pending, producerID)
	if typ != record.ControlCommit {
		return
	}
	for k, p := range pending {
		if cur, ok := s.tables[k.pair].get(k.partition); !ok || p.sourceOffset > cur.sourceOffset {
			s.set(k, p.slot, p.metadata)
		}
	}
}

// set makes v, with metadata, the committed offset of k.
func (s *State) set(k slotKey, v slot, metadata string) {
	if s.tables[k.pair].set(k.partition, v) {
		s.n++
	}
	if metadata != "" {
		s.meta[k] = metadata
	} else {
		delete(s.meta, k)
	}
}

// replayRecord is OffsetMetadataManager.replay for one data record.
func (s *State) replayRecord(opts *Options, source uint32, b *record.Batch, r *record.Record) {
	d := internaltopics.Decode(internaltopics.ConsumerOffsets, r.Key, r.Value)
	if d.Type != internaltopics.TypeOffsetCommit {
		return // group metadata and KIP-848 records carry no offsets
	}
	key, ok := offsetKey(d)
	if !ok || d.Error != "" || d.Note != "" {
		s.Undecodable++
		return
	}
	if !opts.keep(key.Group, key.Topic) {
		return
	}
	k := slotKey{pair: s.pairID(key.Group, key.Topic), partition: key.Partition}
	if d.Tombstone {
		if s.tables[k.pair].remove(k.partition) {
			s.n--
		}
		delete(s.meta, k)
		for _, m := range s.pending {
			delete(m, k)
		}
		return
	}
	o, ok := offsetValue(d)
	if !ok {
		s.Undecodable++
		return
	}
	v := slot{offset: o.Offset, commitTimestamp: o.CommitTimestamp, sourceOffset: r.Offset, leaderEpoch: -1, source: source}
	if o.LeaderEpoch != nil {
		v.leaderEpoch = *o.LeaderEpoch
	}
	if b.IsTransactional() {
		m := s.pending[b.ProducerID]
		if m == nil {
			m = map[slotKey]pendingCommit{}
			s.pending[b.ProducerID] = m
		}
		m[k] = pendingCommit{v, o.Metadata}
		return
	}
	s.set(k, v, o.Metadata)
}

func offsetKey(d internaltopics.Decoded) (Key, bool) {
	g, ok1 := d.Key.Get("group")
	t, ok2 := d.Key.Get("topic")
	p, ok3 := d.Key.Get("partition")
	gs, ok4 := g.(string)
	ts, ok5 := t.(string)
	pn, ok6 := p.(int64)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return Key{}, false
	}
	return Key{Group: gs, Topic: ts, Partition: int32(pn)}, true
}

func offsetValue(d internaltopics.Decoded) (Offset, bool) {
	var o Offset
	off, _ := d.Value.Get("offset")
	var ok bool
	if o.Offset, ok = off.(int64); !ok {
		return o, false
	}
	if v, ok := d.Value.Get("leaderEpoch"); ok {
		if e, ok := v.(int64); ok && e >= 0 {
			e32 := int32(e)
			o.LeaderEpoch = &e32
		}
	}
	if v, ok := d.Value.Get("metadata"); ok {
		o.Metadata, _ = v.(string)
	}
	if v, ok := d.Value.Get("commitTimestamp"); ok {
		o.CommitTimestamp, _ = v.(int64)
	}
	return o, true
}

// ErrNoPartitions: no __consumer_offsets partition was given.
var ErrNoPartitions = errors.New("no " + Topic + " partition")

// Partitions picks the __consumer_offsets partitions of a target.
func Partitions(t *inspect.Target) []*inspect.Partition {
	var out []*inspect.Partition
	for _, p := range t.Partitions {
		if p.Topic == Topic {
			out = append(out, p)
		}
	}
	return out
}

// EndOffsets answers the log end offsets of the partitions of one data
// directory, for the lag of committed offsets: the directory is listed
// once, only a name in the listing is looked up (LogEndOffset), and each
// answer is kept. It holds one entry per partition directory of the data
// directory at most, however many offsets ask (two million commits for
// partitions that are not there cost nothing but the listing).
type EndOffsets struct {
	dataDir string
	dirs    map[string]bool // partition directory names in dataDir
	known   map[string]endOffset
}

type endOffset struct {
	leo int64
	ok  bool
}

// NewEndOffsets lists dataDir ("" or a directory that cannot be listed:
// no offset is known).
func NewEndOffsets(dataDir string) *EndOffsets {
	e := &EndOffsets{dataDir: dataDir, dirs: map[string]bool{}, known: map[string]endOffset{}}
	if dataDir == "" {
		return e
	}
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		return e
	}
	for _, d := range ents {
		if t, _, ok := inspect.ParsePartitionDirName(d.Name()); ok && inspect.ValidTopicName(t) {
			e.dirs[d.Name()] = true
		}
	}
	return e
}

// Of is the log end offset of topic's partition (LogEndOffset), ok false
// when the data directory holds no such partition.
func (e *EndOffsets) Of(topic string, partition int32) (leo int64, ok bool, err error) {
	if !inspect.ValidTopicName(topic) || partition < 0 {
		return 0, false, nil
	}
	name := topic + "-" + strconv.FormatInt(int64(partition), 10)
	if !e.dirs[name] {
		return 0, false, nil
	}
	if k, done := e.known[name]; done {
		return k.leo, k.ok, nil
	}
	leo, ok, err = LogEndOffset(e.dataDir, topic, partition)
	e.known[name] = endOffset{leo, ok && err == nil} // an error is said once
	return leo, ok, err
}

// Lag is a committed offset's lag behind its partition's log end offset
// (Of): nil when the offset is negative, as kafka-consumer-groups shows no
// lag for -1 (ConsumerGroupCommand.getLag: no negative offset is a
// position, and leo - -2^63 does not fit).
func Lag(o Offset, leo int64) *int64 {
	if o.Offset < 0 {
		return nil
	}
	lag := leo - o.Offset
	return &lag
}

// LogEndOffset returns the log end offset of the partition directory
// <topic>-<partition> under dataDir (the broker's answer to ListOffsets
// "latest", inspect.TimestampLatest); ok is false when the directory is not
// there or holds no segment, and when topic is not a legal topic name
// (inspect.ValidTopicName) or partition is negative: the names come from
// records, and no such name is a partition of dataDir (nothing outside it
// is looked at).
func LogEndOffset(dataDir, topic string, partition int32) (leo int64, ok bool, err error) {
	if !inspect.ValidTopicName(topic) || partition < 0 {
		return 0, false, nil
	}
	p, err := inspect.ReadPartition(filepath.Join(dataDir, fmt.Sprintf("%s-%d", topic, partition)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, false, nil
		}
		return 0, false, err
	}
	if len(p.Segments) == 0 {
		return 0, false, nil
	}
	r, err := p.LookupTime(inspect.TimestampLatest, inspect.LookupOptions{})
	if err != nil || !r.Found {
		return 0, false, err
	}
	return r.Offset, true, nil
}

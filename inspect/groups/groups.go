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
	"path/filepath"
	"slices"

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
}

// State is the result of loading one or more partitions.
type State struct {
	offsets map[Key]Offset
	// pending holds, per producer id, the transactional offset commits not
	// yet committed or aborted.
	pending map[int64]map[Key]Offset
	// Partitions is how many partitions were loaded.
	Partitions int
	// Undecodable counts offset commit records whose key or value did not
	// decode (skipped, as the broker would fail the load instead).
	Undecodable int
}

// NewState returns an empty state.
func NewState() *State {
	return &State{offsets: map[Key]Offset{}, pending: map[int64]map[Key]Offset{}}
}

// Offsets returns the committed offsets sorted by group, topic, partition.
func (s *State) Offsets() []Offset {
	out := make([]Offset, 0, len(s.offsets))
	for _, o := range s.offsets {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Offset) int { return compareKeys(a.Key, b.Key) })
	return out
}

// Pending returns the transactional offset commits still open at the end
// of the log (neither committed nor aborted), sorted by key.
func (s *State) Pending() []Offset {
	var out []Offset
	for _, m := range s.pending {
		for _, o := range m {
			out = append(out, o)
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

// Load replays the records of p (a __consumer_offsets partition) into s.
// Damage stops the replay of the damaged segment (a broker's recovery
// would cut the log there): the state holds what came before it, and the
// damage is returned as a *fileio.CorruptError after the rest is loaded.
func (s *State) Load(p *inspect.Partition, opts Options) error {
	s.Partitions++
	source := p.Name()
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
			s.replayRecord(source, b, r)
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
	for k, o := range pending {
		if cur, ok := s.offsets[k]; !ok || o.SourceOffset > cur.SourceOffset {
			s.offsets[k] = o
		}
	}
}

// replayRecord is OffsetMetadataManager.replay for one data record.
func (s *State) replayRecord(source string, b *record.Batch, r *record.Record) {
	d := internaltopics.Decode(internaltopics.ConsumerOffsets, r.Key, r.Value)
	if d.Type != internaltopics.TypeOffsetCommit {
		return // group metadata and KIP-848 records carry no offsets
	}
	k, ok := offsetKey(d)
	if !ok || d.Error != "" || d.Note != "" {
		s.Undecodable++
		return
	}
	if d.Tombstone {
		delete(s.offsets, k)
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
	o.Key, o.Source, o.SourceOffset = k, source, r.Offset
	if b.IsTransactional() {
		m := s.pending[b.ProducerID]
		if m == nil {
			m = map[Key]Offset{}
			s.pending[b.ProducerID] = m
		}
		m[k] = o
		return
	}
	s.offsets[k] = o
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

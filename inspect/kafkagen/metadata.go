package kafkagen

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// MetadataOptions say what KRaft metadata partition GenerateMetadata
// writes: the log of a cluster whose controller creates topics, moves
// leaders, shrinks and expands ISRs, changes configs, fences brokers,
// deletes a topic, commits a metadata transaction and aborts another, and
// takes a snapshot. The zero value of each field is a sensible choice.
type MetadataOptions struct {
	Seed int64
	// Brokers is the number of brokers, ids 1..Brokers (default 3); node
	// 1 is also the controller.
	Brokers int
	// Topics is the number of topics created at the start (default 4),
	// each with PartitionsPerTopic partitions (default 3) of replication
	// factor min(3, Brokers).
	Topics, PartitionsPerTopic int
	// Changes is the number of batches of changes after the start
	// (default 200); the scenario's fixed events (the transactions, the
	// deletion, a late topic) come at fixed fractions of them.
	Changes int
	// Bytes, when > 0, replaces Changes: batches of changes are written
	// until the log holds this many bytes (big logs; see
	// MetadataBenchOptions). The fixed events come within the first 2000
	// batches.
	Bytes int64
	// SegmentBytes rolls a segment when the next batch would make it
	// larger (default 1 MiB).
	SegmentBytes int64
	// SnapshotAt: the snapshot is taken at the first batch boundary
	// outside a transaction at or after this offset (0: after half the
	// changes, or half of Bytes; -1: no snapshot).
	SnapshotAt int64
	// DeleteBeforeSnapshot deletes the segments whose records all lie
	// below the snapshot's end offset, as the metadata log's cleaning
	// does once a snapshot covers them: the log then starts after 0, and
	// only the snapshot holds what came before.
	DeleteBeforeSnapshot bool
	// StartTimestamp is the first batch's append time (default
	// DefaultStartTimestamp).
	StartTimestamp int64
	// OmitEvents leaves MetadataManifest.Events empty (big logs).
	OmitEvents bool
}

// MetadataBenchOptions returns options for a metadata log of about bytes
// bytes: 50 topics of 20 partitions on 6 brokers, 256 MiB segments, no
// snapshot (the image reads every record), no event list.
func MetadataBenchOptions(seed, bytes int64) MetadataOptions {
	return MetadataOptions{Seed: seed, Brokers: 6, Topics: 50, PartitionsPerTopic: 20, Bytes: bytes, SegmentBytes: 256 << 20, SnapshotAt: -1, OmitEvents: true}
}

// MetadataManifest is what GenerateMetadata wrote.
type MetadataManifest struct {
	// Log is the partition's segments, as Generate describes them (the
	// deleted ones left out); Log.LogEndOffset is the log end offset.
	Log *Manifest
	// LogStartOffset is the first remaining segment's base offset.
	LogStartOffset int64
	// Events are the records of the log in offset order, those of
	// deleted segments included (not with OmitEvents); control records
	// are not events.
	Events []MetadataEvent
	// Snapshot is the snapshot written, nil when none.
	Snapshot *MetadataSnapshotManifest
	// LeaderChanges are the offsets of the LEADER_CHANGE control batches.
	LeaderChanges []int64
}

// MetadataSnapshotManifest describes the snapshot file.
type MetadataSnapshotManifest struct {
	Path      string
	EndOffset int64 // the log offset it covers up to, exclusive
	Epoch     int32 // the leader epoch of the record at EndOffset-1
	// Records are its metadata records, with the snapshot's own offsets
	// (the header batch holds offset 0).
	Records []MetadataEvent
	// HeaderEnd is where the header batch ends (the first data batch's
	// position); FooterPosition is the footer batch's position.
	HeaderEnd, FooterPosition int64
	// LastContainedLogTimestamp is the header's: the append time of the
	// batch holding EndOffset-1.
	LastContainedLogTimestamp int64
}

// MetadataTopicID is the metadata topic's fixed id in partition.metadata
// (Uuid.METADATA_TOPIC_ID, Uuid(0, 1)).
const MetadataTopicID = "AAAAAAAAAAAAAAAAAAAAAQ"

// GenerateMetadata writes a __cluster_metadata-0 directory at dir (created;
// it must not exist or be empty), deterministically from the seed: the
// metadata log (segments with their indexes, written as a broker's
// appends write them), leader-epoch-checkpoint, partition.metadata,
// quorum-state and the snapshot.
func GenerateMetadata(dir string, o MetadataOptions) (*MetadataManifest, error) {
	o = o.resolved()
	if o.Brokers < 1 || o.Topics < 0 || o.PartitionsPerTopic < 1 || o.Changes < 0 || o.Bytes < 0 {
		return nil, fmt.Errorf("gen: metadata options out of range: %+v", o)
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	g, err := newGenerator(dir, Options{Seed: o.Seed, Topic: "__cluster_metadata", LeaderEpoch: 1, StartTimestamp: o.StartTimestamp,
		Segments: 1, Batches: 1, RecordsPerBatch: 1, ValueSize: 1, IndexIntervalBytes: DefaultIndexIntervalBytes, OmitRecords: true, Compression: "none", Magic: 2})
	if err != nil {
		return nil, err
	}
	m := &metaGen{g: g, o: o, rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x6b7261667467656e)), // "kraftgen"
		man: &MetadataManifest{}, state: newMetaState()}
	if err := m.run(); err != nil {
		if g.seg != nil && g.seg.f != nil {
			g.seg.f.Close()
		}
		return nil, err
	}
	return m.man, nil
}

func (o MetadataOptions) resolved() MetadataOptions {
	if o.Brokers == 0 {
		o.Brokers = 3
	}
	if o.Topics == 0 {
		o.Topics = 4
	}
	if o.PartitionsPerTopic == 0 {
		o.PartitionsPerTopic = 3
	}
	if o.Changes == 0 {
		o.Changes = 200
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 1 << 20
	}
	if o.StartTimestamp == 0 {
		o.StartTimestamp = DefaultStartTimestamp
	}
	return o
}

// metaState is the image the generator's records build, kept to choose
// valid changes and to write the snapshot.
type metaState struct {
	features map[string]int16
	brokers  map[int32]*metaBroker
	topics   []*metaTopic // by creation; removed ones taken out
	configs  map[[2]string]map[string]string
}

type metaBroker struct {
	epoch  int64
	fenced bool
}

type metaTopic struct {
	name, id string
	parts    []*metaPart
}

type metaPart struct {
	replicas, isr               []int32
	leader                      int32
	leaderEpoch, partitionEpoch int32
}

func newMetaState() *metaState {
	return &metaState{features: map[string]int16{}, brokers: map[int32]*metaBroker{}, configs: map[[2]string]map[string]string{}}
}

// apply keeps the state as the image rules would (the generator writes
// only records they accept).
func (s *metaState) apply(e *MetadataEvent) {
	switch e.Type {
	case FeatureLevelRecord:
		s.features[e.Feature] = e.Level
	case RegisterBrokerRecord:
		s.brokers[e.Broker] = &metaBroker{epoch: e.BrokerEpoch, fenced: e.Fenced == 1}
	case BrokerRegistrationChangeRecord:
		if e.Fenced != 0 {
			s.brokers[e.Broker].fenced = e.Fenced == 1
		}
	case TopicRecord:
		s.topics = append(s.topics, &metaTopic{name: e.Topic, id: e.TopicID})
	case PartitionRecord:
		t := s.topic(e.TopicID)
		t.parts = append(t.parts, &metaPart{replicas: e.Replicas, isr: e.ISR, leader: e.Leader, leaderEpoch: e.LeaderEpoch, partitionEpoch: e.PartitionEpoch})
	case PartitionChangeRecord:
		p := s.topic(e.TopicID).parts[e.Partition]
		if e.ISR != nil {
			p.isr = e.ISR
		}
		if e.Leader != NoLeaderChange {
			p.leader = e.Leader
			p.leaderEpoch++
		}
		p.partitionEpoch++
	case RemoveTopicRecord:
		i := slices.IndexFunc(s.topics, func(t *metaTopic) bool { return t.id == e.TopicID })
		delete(s.configs, [2]string{"2", s.topics[i].name})
		s.topics = slices.Delete(s.topics, i, i+1)
	case ConfigRecord:
		k := [2]string{strconv.Itoa(int(e.ResourceType)), e.ResourceName}
		if e.ConfigValue == nil {
			delete(s.configs[k], e.ConfigName)
			if len(s.configs[k]) == 0 {
				delete(s.configs, k)
			}
			return
		}
		if s.configs[k] == nil {
			s.configs[k] = map[string]string{}
		}
		s.configs[k][e.ConfigName] = *e.ConfigValue
	}
}

func (s *metaState) topic(id string) *metaTopic {
	for _, t := range s.topics {
		if t.id == id {
			return t
		}
	}
	return nil
}

// metaGen writes the log.
type metaGen struct {
	g     *generator
	o     MetadataOptions
	rng   *rand.Rand
	man   *MetadataManifest
	state *metaState

	batch    []MetadataEvent // records of the batch being built
	inTxn    bool
	txn      []MetadataEvent // records of the open transaction, applied at its end
	voters   []int32
	snapDone bool
	lastTs   int64 // append time of the last batch written
	topicSeq int
}

func (m *metaGen) run() error {
	g, o := m.g, m.o
	if err := g.openSegment(0); err != nil {
		return err
	}
	m.voters = []int32{1}
	if err := m.leaderChange(); err != nil {
		return err
	}
	// Bootstrap records in a transaction, as a 3.8+ controller writes them.
	m.add(MetadataEvent{Type: BeginTransactionRecord})
	m.add(MetadataEvent{Type: FeatureLevelRecord, Feature: "metadata.version", Level: 21})
	m.add(MetadataEvent{Type: FeatureLevelRecord, Feature: "group.version", Level: 1})
	m.add(MetadataEvent{Type: EndTransactionRecord})
	if err := m.flush(); err != nil {
		return err
	}
	m.add(MetadataEvent{Type: RegisterControllerRecord, Broker: 1, Host: "controller-1", Port: 9093})
	for b := int32(1); b <= int32(o.Brokers); b++ {
		m.add(m.registerBroker(b))
	}
	if err := m.flush(); err != nil {
		return err
	}
	for b := int32(1); b <= int32(o.Brokers); b++ {
		m.add(MetadataEvent{Type: BrokerRegistrationChangeRecord, Broker: b, BrokerEpoch: m.state.brokers[b].epoch, Fenced: -1})
	}
	m.add(config(4, "", "log.retention.hours", ptrTo("72")))
	m.add(config(4, "1", "log.cleaner.threads", ptrTo("2")))
	if err := m.flush(); err != nil {
		return err
	}
	names := []string{"orders", "payments", "clicks", "audit"}
	for i := 0; i < o.Topics; i++ {
		name := "topic-" + strconv.Itoa(i)
		if i < len(names) {
			name = names[i]
		}
		if err := m.createTopic(name, o.PartitionsPerTopic, false); err != nil {
			return err
		}
	}
	if err := m.createTopic("doomed", 2, false); err != nil {
		return err
	}
	n := o.Changes
	if o.Bytes > 0 {
		n = 2000 // the fixed events' scale; the loop goes on by size
	}
	for i := 0; ; i++ {
		if o.Bytes > 0 && m.written() >= o.Bytes || o.Bytes == 0 && i >= n {
			break
		}
		if err := m.step(i, n); err != nil {
			return err
		}
		if err := m.maybeSnapshot(i, n); err != nil {
			return err
		}
	}
	if err := g.finish(); err != nil {
		return err
	}
	return m.finish()
}

// written is the bytes of log written so far.
func (m *metaGen) written() int64 {
	var n int64
	for _, s := range m.g.man.Segments {
		n += s.LogSize
	}
	return n + m.g.seg.idx.size
}

// step writes the i-th batch of changes (of about n).
func (m *metaGen) step(i, n int) error {
	switch {
	case i == n/4:
		// A committed metadata transaction: a topic whose records span
		// several batches (as a controller writes a large creation).
		return m.createTopic("txn-committed", 6, true)
	case i == n/3:
		// An aborted one: its topic never reaches the image.
		m.add(MetadataEvent{Type: BeginTransactionRecord})
		id := m.newTopicID("txn-aborted")
		m.add(MetadataEvent{Type: TopicRecord, Topic: "txn-aborted", TopicID: id})
		if err := m.flush(); err != nil {
			return err
		}
		for p := int32(0); p < 2; p++ {
			m.add(m.partitionRecord(id, p, 2))
		}
		if err := m.flush(); err != nil {
			return err
		}
		m.add(MetadataEvent{Type: AbortTransactionRecord})
		return m.flush()
	case i == n/2:
		t := m.state.topics[slices.IndexFunc(m.state.topics, func(t *metaTopic) bool { return t.name == "doomed" })]
		m.add(MetadataEvent{Type: RemoveTopicRecord, TopicID: t.id, Topic: t.name})
		return m.flush()
	case i == 2*n/3:
		return m.createTopic("late", 4, false)
	case m.rng.IntN(50) == 0 && i < n, m.rng.IntN(20000) == 0:
		// Elections: often while the scenario runs, rarely after.
		return m.leaderChange()
	}
	for k := 1 + m.rng.IntN(8); k > 0; k-- {
		m.randomChange()
	}
	return m.flush()
}

// randomChange adds one change to the batch.
func (m *metaGen) randomChange() {
	r := m.rng.IntN(100)
	switch {
	case r < 55 && len(m.state.topics) > 0:
		t := m.state.topics[m.rng.IntN(len(m.state.topics))]
		pid := m.rng.IntN(len(t.parts))
		p := t.parts[pid]
		e := MetadataEvent{Type: PartitionChangeRecord, TopicID: t.id, Topic: t.name, Partition: int32(pid), Leader: NoLeaderChange}
		switch {
		case len(p.isr) > 1 && m.rng.IntN(10) < 4: // a follower leaves the ISR
			var isr []int32
			drop := p.isr[1+m.rng.IntN(len(p.isr)-1)]
			if drop == p.leader {
				drop = p.isr[0]
			}
			for _, b := range p.isr {
				if b != drop {
					isr = append(isr, b)
				}
			}
			e.ISR = isr
		case len(p.isr) < len(p.replicas): // one replica catches up
			var isr []int32
			added := false
			for _, b := range p.replicas {
				switch {
				case slices.Contains(p.isr, b):
					isr = append(isr, b)
				case !added:
					isr, added = append(isr, b), true
				}
			}
			e.ISR = isr
		default: // the leader moves within the ISR, or the partition goes offline and back
			e.Leader = p.isr[m.rng.IntN(len(p.isr))]
			if m.rng.IntN(20) == 0 {
				e.Leader = -1
			}
		}
		m.add(e)
	case r < 70:
		keys := []string{"retention.ms", "cleanup.policy", "segment.bytes", "min.insync.replicas", "retention.bytes"}
		k := m.rng.IntN(len(keys))
		var value *string
		if m.rng.IntN(4) > 0 {
			value = ptrTo([]string{strconv.Itoa(3_600_000 * (1 + m.rng.IntN(720))), []string{"delete", "compact", "compact,delete"}[m.rng.IntN(3)],
				strconv.Itoa(1 << (20 + m.rng.IntN(11))), strconv.Itoa(1 + m.rng.IntN(3)), strconv.Itoa(1 << (28 + m.rng.IntN(8)))}[k])
		}
		key := keys[k]
		if m.rng.IntN(5) == 0 || len(m.state.topics) == 0 {
			m.add(config(4, strconv.Itoa(1+m.rng.IntN(m.o.Brokers)), key, value))
			return
		}
		m.add(config(2, m.state.topics[m.rng.IntN(len(m.state.topics))].name, key, value))
	case r < 80:
		b := int32(1 + m.rng.IntN(m.o.Brokers))
		st := m.state.brokers[b]
		if m.rng.IntN(8) == 0 {
			m.add(m.registerBroker(b)) // a restart: a new epoch, fenced
			return
		}
		f := int8(1)
		if st.fenced {
			f = -1
		}
		m.add(MetadataEvent{Type: BrokerRegistrationChangeRecord, Broker: b, BrokerEpoch: st.epoch, Fenced: f})
	default:
		m.add(MetadataEvent{Type: NoOpRecord})
	}
}

func config(typ int8, name, key string, value *string) MetadataEvent {
	return MetadataEvent{Type: ConfigRecord, ResourceType: typ, ResourceName: name, ConfigName: key, ConfigValue: value}
}

func ptrTo(s string) *string { return &s }

func (m *metaGen) registerBroker(b int32) MetadataEvent {
	// The broker epoch is the offset of the record (the controller's
	// choice: QuorumController assigns the offset of the registration).
	return MetadataEvent{Type: RegisterBrokerRecord, Broker: b, BrokerEpoch: m.g.st.nextOffset + int64(len(m.batch)), Fenced: 1,
		Host: "broker-" + strconv.Itoa(int(b)), Port: 9092, LogDirs: []string{incarnation(b, -1)}}
}

func (m *metaGen) newTopicID(name string) string {
	m.topicSeq++
	return topicID(m.o.Seed+int64(m.topicSeq), name)
}

func (m *metaGen) partitionRecord(id string, p int32, rf int) MetadataEvent {
	var replicas []int32
	for k := 0; k < rf; k++ {
		replicas = append(replicas, 1+(p+int32(k))%int32(m.o.Brokers))
	}
	return MetadataEvent{Type: PartitionRecord, TopicID: id, Partition: p, Replicas: replicas, ISR: slices.Clone(replicas),
		Leader: replicas[0], Directories: []string{}}
}

// createTopic writes a topic's creation: TopicRecord, its PartitionRecords
// and a config, in one batch, or in a transaction over several.
func (m *metaGen) createTopic(name string, parts int, txn bool) error {
	id := m.newTopicID(name)
	rf := min(3, m.o.Brokers)
	if txn {
		m.add(MetadataEvent{Type: BeginTransactionRecord})
	}
	m.add(MetadataEvent{Type: TopicRecord, Topic: name, TopicID: id})
	for p := 0; p < parts; p++ {
		if txn && p%2 == 0 {
			if err := m.flush(); err != nil {
				return err
			}
		}
		m.add(m.partitionRecord(id, int32(p), rf))
	}
	m.add(config(2, name, "retention.ms", ptrTo("604800000")))
	if txn {
		if err := m.flush(); err != nil {
			return err
		}
		m.add(MetadataEvent{Type: EndTransactionRecord})
	}
	return m.flush()
}

// add puts a record in the batch being built, keeping the state (a
// transaction's records wait for its end; an abort drops them).
func (m *metaGen) add(e MetadataEvent) {
	e.Offset = m.g.st.nextOffset + int64(len(m.batch))
	switch e.Type {
	case BeginTransactionRecord:
		m.inTxn, m.txn = true, nil
	case EndTransactionRecord:
		for i := range m.txn {
			m.state.apply(&m.txn[i])
		}
		m.inTxn, m.txn = false, nil
	case AbortTransactionRecord:
		m.inTxn, m.txn = false, nil
	default:
		if m.inTxn {
			m.txn = append(m.txn, e)
		} else {
			m.state.apply(&e)
		}
	}
	m.batch = append(m.batch, e)
}

// flush writes the batch being built.
func (m *metaGen) flush() error {
	if len(m.batch) == 0 {
		return nil
	}
	g := m.g
	g.st.wall += 1 + m.rng.Int64N(20)
	values := make([][]byte, len(m.batch))
	for i := range m.batch {
		m.batch[i].Timestamp = g.st.wall
		v, err := AppendMetadataRecord(nil, m.batch[i])
		if err != nil {
			return err
		}
		values[i] = v
	}
	if !m.o.OmitEvents {
		m.man.Events = append(m.man.Events, m.batch...)
	}
	m.batch = m.batch[:0]
	return m.write(false, nil, values, int16(-1))
}

// leaderChange starts a new epoch with a LEADER_CHANGE control batch, as
// a newly elected KRaft leader writes one.
func (m *metaGen) leaderChange() error {
	if len(m.man.LeaderChanges) > 0 { // the first leader's epoch starts the log
		m.g.epoch++
		m.g.man.LeaderEpochs = append(m.g.man.LeaderEpochs, EpochEntry{Epoch: m.g.epoch, StartOffset: m.g.st.nextOffset})
	}
	m.g.st.wall += 1 + m.rng.Int64N(20)
	m.man.LeaderChanges = append(m.man.LeaderChanges, m.g.st.nextOffset)
	return m.write(true, [][]byte{controlKey(controlLeaderChange)}, [][]byte{leaderChangeValue(1, m.voters)}, controlLeaderChange)
}

// write appends one batch of the given records at the log end, rolling
// the segment first when it would grow past SegmentBytes.
func (m *metaGen) write(control bool, keys, values [][]byte, controlType int16) error {
	g := m.g
	base := g.st.nextOffset
	var crc uint32
	g.batch, crc = appendKRaftBatch(g.batch[:0], base, g.epoch, g.st.wall, control, keys, values)
	if g.seg.idx.size > 0 && g.seg.idx.size+int64(len(g.batch)) > m.o.SegmentBytes {
		if err := g.roll(); err != nil {
			return err
		}
	}
	last := base + int64(len(values)) - 1
	p := &g.p
	*p = pending{bytes: g.batch, lastOffset: last}
	attrs := int16(0)
	if control {
		attrs = attrControl
	}
	p.man = BatchManifest{Size: int64(len(g.batch)), Magic: 2, BaseOffset: base, LastOffset: last,
		MaxTimestamp: g.st.wall, BaseTimestamp: g.st.wall, Control: control, Compression: "none", Attributes: attrs, CRC: crc,
		LastOffsetDelta: int32(len(values) - 1), RecordCount: int32(len(values)), PartitionLeaderEpoch: g.epoch,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, ControlType: controlType, CoordinatorEpoch: -1}
	g.st.nextOffset = last + 1
	m.lastTs = g.st.wall
	return g.appendBatch(p)
}

// maybeSnapshot takes the snapshot once the log passed the point asked
// for, at a batch boundary outside a transaction.
func (m *metaGen) maybeSnapshot(i, n int) error {
	o := m.o
	if m.snapDone || o.SnapshotAt < 0 || m.inTxn {
		return nil
	}
	switch {
	case o.SnapshotAt > 0 && m.g.st.nextOffset < o.SnapshotAt:
		return nil
	case o.SnapshotAt == 0 && o.Bytes > 0 && m.written() < o.Bytes/2:
		return nil
	case o.SnapshotAt == 0 && o.Bytes == 0 && i < n/2:
		return nil
	}
	m.snapDone = true
	return m.writeSnapshot()
}

// writeSnapshot writes the image as records (MetadataImage.write's order:
// features, the cluster, topics, configs) between a SnapshotHeader batch
// and a SnapshotFooter batch, offsets from 0, named by the log end offset
// and the current epoch (Snapshots.filenameFromSnapshotId).
func (m *metaGen) writeSnapshot() error {
	s := m.state
	end, epoch := m.g.st.nextOffset, m.g.epoch
	var recs []MetadataEvent
	for _, f := range slices.Sorted(maps.Keys(s.features)) {
		recs = append(recs, MetadataEvent{Type: FeatureLevelRecord, Feature: f, Level: s.features[f]})
	}
	for _, b := range slices.Sorted(maps.Keys(s.brokers)) {
		e := m.registerBroker(b)
		e.BrokerEpoch, e.Fenced = s.brokers[b].epoch, 0
		if s.brokers[b].fenced {
			e.Fenced = 1
		}
		recs = append(recs, e)
	}
	recs = append(recs, MetadataEvent{Type: RegisterControllerRecord, Broker: 1, Host: "controller-1", Port: 9093})
	for _, t := range s.topics {
		recs = append(recs, MetadataEvent{Type: TopicRecord, Topic: t.name, TopicID: t.id})
		for pid, p := range t.parts {
			recs = append(recs, MetadataEvent{Type: PartitionRecord, TopicID: t.id, Topic: t.name, Partition: int32(pid),
				Replicas: p.replicas, ISR: p.isr, Leader: p.leader, LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch, Directories: []string{}})
		}
	}
	keys := slices.SortedFunc(maps.Keys(s.configs), func(a, b [2]string) int {
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		return cmp.Compare(a[1], b[1])
	})
	for _, k := range keys {
		typ, _ := strconv.Atoi(k[0])
		for _, name := range slices.Sorted(maps.Keys(s.configs[k])) {
			recs = append(recs, config(int8(typ), k[1], name, ptrTo(s.configs[k][name])))
		}
	}
	sm := &MetadataSnapshotManifest{EndOffset: end, Epoch: epoch, LastContainedLogTimestamp: m.lastTs}
	sm.Path = filepath.Join(m.g.dir, fmt.Sprintf("%020d-%010d.checkpoint", end, epoch))
	ts := m.lastTs + 5
	var file []byte
	file, _ = appendKRaftBatch(file, 0, epoch, ts, true, [][]byte{controlKey(controlSnapshotHeader)}, [][]byte{snapshotHeaderValue(m.lastTs)})
	sm.HeaderEnd = int64(len(file))
	off := int64(1)
	for len(recs) > 0 {
		n := min(len(recs), 50)
		values := make([][]byte, n)
		for i := range values {
			recs[i].Offset, recs[i].Timestamp = off+int64(i), ts
			v, err := AppendMetadataRecord(nil, recs[i])
			if err != nil {
				return err
			}
			values[i] = v
		}
		sm.Records = append(sm.Records, recs[:n]...)
		file, _ = appendKRaftBatch(file, off, epoch, ts, false, nil, values)
		off += int64(n)
		recs = recs[n:]
	}
	sm.FooterPosition = int64(len(file))
	file, _ = appendKRaftBatch(file, off, epoch, ts, true, [][]byte{controlKey(controlSnapshotFooter)}, [][]byte{snapshotFooterValue()})
	if err := os.WriteFile(sm.Path, file, 0o644); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	m.man.Snapshot = sm
	return nil
}

// finish writes the metadata partition's own files, and deletes the
// segments the snapshot covers when asked.
func (m *metaGen) finish() error {
	g := m.g
	dir := g.dir
	if err := os.WriteFile(filepath.Join(dir, "partition.metadata"), []byte("version: 0\ntopic_id: "+MetadataTopicID), 0o644); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	g.man.TopicID = MetadataTopicID
	qs := fmt.Sprintf(`{"clusterId":"","leaderId":1,"leaderEpoch":%d,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}`, g.epoch)
	if err := os.WriteFile(filepath.Join(dir, "quorum-state"), []byte(qs), 0o644); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	m.man.Log = g.man
	if m.o.DeleteBeforeSnapshot && m.man.Snapshot != nil {
		keep := g.man.Segments[:0]
		for _, s := range g.man.Segments {
			if s.NextOffset <= m.man.Snapshot.EndOffset && !s.Active {
				for _, sfx := range []string{".log", ".index", ".timeindex", ".txnindex"} {
					if err := os.Remove(filepath.Join(dir, SegmentName(s.BaseOffset)+sfx)); err != nil && !os.IsNotExist(err) {
						return fmt.Errorf("gen: %w", err)
					}
				}
				continue
			}
			keep = append(keep, s)
		}
		g.man.Segments = keep
	}
	m.man.LogStartOffset = g.man.Segments[0].BaseOffset
	return nil
}

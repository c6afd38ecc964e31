package kafkagen

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Generate writes a partition directory at dir (created; it must not exist
// or be empty) as a Kafka 4.1+ broker would leave it after appending the
// generated batches one produce request at a time and shutting down
// cleanly (or, with Options.PreallocatedIndexBytes, while still running).
// The same Options always give the same bytes.
func Generate(dir string, opts Options) (*Manifest, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	g, err := newGenerator(dir, o)
	if err != nil {
		return nil, err
	}
	if err := g.run(); err != nil {
		if g.seg != nil && g.seg.f != nil {
			g.seg.f.Close()
		}
		return nil, err
	}
	return g.man, nil
}

func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("gen: %s is not empty", dir)
	}
	return nil
}

const (
	numProducers   = 3
	hour           = int64(time.Hour / time.Millisecond)
	textPoolMinLen = 64 << 10
)

// state is everything about the partition that a generated batch changes.
// It is cloned before a batch that may be dropped (SegmentBytes mode).
type state struct {
	nextOffset int64 // log end offset
	wall       int64 // broker clock: append times, marker times, base of producer times; never decreases
	skew       int64 // "jumping": current offset of producer clocks from wall
	ticks      int64 // batches (and markers) generated so far
	producers  []producer
}

func (s *state) clone() state {
	c := *s
	c.producers = slices.Clone(s.producers)
	return c
}

// pending is one encoded batch waiting to be appended.
type pending struct {
	bytes      []byte // g.batch; valid until the next batch is generated
	man        BatchManifest
	abort      *indexfmt.AbortedTxn
	lastOffset int64
}

type generator struct {
	o   Options
	c   codec
	dir string
	rng *rand.Rand
	z   *compressor
	st  state

	pool      []byte // printable text values are cut from
	p         pending
	offsets   []int64
	recs      []genRecord
	given     int // Options.Records used so far
	remaining int // batches still to write, this one included (-1: unknown)
	hdrs      []RecordHeader
	arena     []byte
	raw       []byte
	batch     []byte
	scratch   []byte

	seg   *segmentWriter
	man   *Manifest
	epoch int32 // current partition leader epoch
	// emptyHeaders is set once the first record got Options.EmptyHeaders.
	emptyHeaders bool
}

func newGenerator(dir string, o Options) (*generator, error) {
	c := codecByName[o.Compression]
	z, err := newCompressor(c)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	g := &generator{
		o:   o,
		c:   c,
		dir: dir,
		rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x6b7365672d67656e)), // "kseg-gen"
		z:   z,
		man: &Manifest{Dir: dir, Options: o},
	}
	g.st = state{nextOffset: o.StartOffset, wall: o.StartTimestamp}
	g.epoch = o.LeaderEpoch
	if o.Transactions {
		for i := range numProducers {
			g.st.producers = append(g.st.producers, producer{
				id:               1000 + int64(i)*7 + g.rng.Int64N(7),
				epoch:            int16(g.rng.IntN(5)),
				coordinatorEpoch: -1,
				txnFirstOffset:   -1,
			})
		}
	}
	g.pool = textPool(g.rng, max(textPoolMinLen, 2*o.ValueSize+64))
	return g, nil
}

var sourceHeaderValue = []byte("kseg-gen")

var words = []string{
	"partition", "segment", "offset", "index", "batch", "record", "broker", "leader",
	"replica", "epoch", "commit", "abort", "producer", "consumer", "timestamp", "position",
	"kafka", "log", "compaction", "retention", "recovery", "checkpoint", "snapshot", "topic",
	"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit",
}

// textPool returns n bytes of printable text (words and spaces).
func textPool(rng *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+16)
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		if rng.IntN(12) == 0 {
			b = append(b, '.')
		}
		b = append(b, ' ')
	}
	return b[:n]
}

func (g *generator) run() error {
	o := g.o
	perSegment := o.Batches
	total := o.Segments * perSegment
	produced := 0
	if err := g.openSegment(g.st.nextOffset); err != nil {
		return err
	}
	if o.SegmentBytes > 0 {
		if err := g.runBySize(); err != nil {
			return err
		}
	} else {
		for s := 0; s < o.Segments; s++ {
			if s > 0 {
				if err := g.roll(); err != nil {
					return err
				}
			}
			for b := 0; b < perSegment; b++ {
				p, err := g.next(total-produced, b == 0)
				if err != nil {
					return err
				}
				if err := g.appendBatch(p); err != nil {
					return err
				}
				produced++
			}
		}
	}
	for i := 0; i < o.OpenTransactions; i++ {
		// A transactional batch after the producer's last marker opens a
		// transaction no marker closes.
		p, err := g.dataBatch(i, false)
		if err != nil {
			return err
		}
		if err := g.appendBatch(p); err != nil {
			return err
		}
	}
	if o.EmptyActiveSegment {
		if err := g.roll(); err != nil {
			return err
		}
	}
	return g.finish()
}

// runBySize fills Segments segments of about SegmentBytes each.
func (g *generator) runBySize() error {
	o := g.o
	segs := 1
	for {
		saved := g.st.clone()
		p, err := g.next(-1, false)
		if err != nil {
			return err
		}
		idx := g.seg.idx
		if idx.size > 0 && (idx.size+int64(len(p.bytes)) > o.SegmentBytes || idx.full()) {
			if segs == o.Segments {
				g.st = saved // the batch is not written
				break
			}
			// The new segment's base is the log end offset before this
			// batch (LocalLog.roll: max(expectedNextOffset, logEndOffset)),
			// and the roll's snapshot holds the state before it too.
			after := g.st
			g.st = saved
			if err := g.roll(); err != nil {
				return err
			}
			g.st = after
			segs++
		}
		if err := g.appendBatch(p); err != nil {
			return err
		}
	}
	// Close the transactions still open, so every transaction ends in the log.
	for i := range g.st.producers {
		if g.st.producers[i].txnFirstOffset >= 0 {
			p, err := g.marker(i, false)
			if err != nil {
				return err
			}
			if err := g.appendBatch(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// next generates the next batch. remaining is the number of batches still
// to write including this one (-1: unknown); it keeps transactions closable.
func (g *generator) next(remaining int, segmentStart bool) (*pending, error) {
	g.remaining = remaining
	if g.o.Transactions {
		open := 0
		for i := range g.st.producers {
			if g.st.producers[i].txnFirstOffset >= 0 {
				open++
			}
		}
		mustClose := remaining >= 0 && remaining <= open
		if open > 0 && (mustClose || g.rng.IntN(10) < 3) {
			return g.marker(g.pickOpen(open), segmentStart)
		}
		canOpen := remaining < 0 || remaining > open+1
		// Candidates: the non-transactional producer (-1), producers with an
		// open transaction, and, if it can still be closed, the others.
		var buf [numProducers + 1]int
		cands := append(buf[:0], -1)
		for i := range g.st.producers {
			if g.st.producers[i].txnFirstOffset >= 0 || canOpen {
				cands = append(cands, i)
			}
		}
		return g.dataBatch(cands[g.rng.IntN(len(cands))], segmentStart)
	}
	return g.dataBatch(-1, segmentStart)
}

func (g *generator) pickOpen(open int) int {
	k := g.rng.IntN(open)
	for i := range g.st.producers {
		if g.st.producers[i].txnFirstOffset >= 0 {
			if k == 0 {
				return i
			}
			k--
		}
	}
	panic("unreachable")
}

// advanceOffset returns the offset of the next batch's first offset:
// the log end offset, or above it when compaction removed offsets.
func (g *generator) advanceOffset(segmentStart bool) int64 {
	off := g.st.nextOffset
	if g.o.CompactionGaps {
		switch {
		case segmentStart:
			off += 1 + g.rng.Int64N(3) // first batch above the segment base
		case g.rng.IntN(5) == 0:
			off += 1 + g.rng.Int64N(5)
		}
	}
	return off
}

// Traffic shapes (Options.Traffic): how far the broker clock moves
// between batches.
const (
	second       = int64(time.Second / time.Millisecond)
	steadyStep   = 10 * second // "steady" and "stop": a batch every 10 s
	burstQuiet   = 60 * second // "burst": a batch a minute outside the burst...
	burstStep    = 500         // ...and two a second inside it
	stopSilence  = hour / 2    // "stop": the silence after two thirds of the batches
	defaultStepN = 20          // "": 1..20 ms between batches
)

// tick advances the broker clock for a new batch, by the traffic shape.
// The shapes place batches by their index among the partition's
// Segments*Batches batches (markers count as batches).
func (g *generator) tick() {
	i, n := g.st.ticks, int64(g.o.Segments*g.o.Batches)
	g.st.ticks++
	switch g.o.Traffic {
	case "steady":
		g.st.wall += steadyStep
	case "burst":
		if i >= n/3 && i < 2*n/3 {
			g.st.wall += burstStep
		} else {
			g.st.wall += burstQuiet
		}
	case "stop":
		g.st.wall += steadyStep
		if i == 2*n/3 {
			g.st.wall += stopSilence
		}
	default:
		g.st.wall += 1 + g.rng.Int64N(defaultStepN)
	}
	if g.o.Timestamps == "jumping" && g.rng.IntN(20) == 0 {
		jump := hour + g.rng.Int64N(23*hour)
		if g.rng.IntN(2) == 0 {
			jump = -jump
		}
		g.st.skew += jump
	}
}

// createTimestamps fills the producer timestamps of g.recs.
func (g *generator) createTimestamps() {
	if g.o.Magic == 0 {
		for i := range g.recs {
			g.recs[i].timestamp = -1
		}
		return
	}
	t := g.st.wall
	for i := range g.recs {
		if i > 0 {
			t += g.rng.Int64N(3)
		}
		var ts int64
		switch g.o.Timestamps {
		case "increasing":
			ts = t
		case "jumping":
			ts = max(0, t+g.st.skew)
		case "equal":
			ts = g.o.StartTimestamp
		case "random":
			ts = max(0, g.st.wall+g.rng.Int64N(2*hour)-hour)
		}
		g.recs[i].timestamp = ts
	}
	g.st.wall = max(g.st.wall, t)
}

// fillRecords draws n records: offsets, keys, values, headers.
func (g *generator) fillRecords(offsets []int64) {
	g.recs = g.recs[:0]
	g.hdrs = g.hdrs[:0]
	g.arena = g.arena[:0]
	// Reserve the arenas so that slices into them stay put.
	need := len(offsets) * (g.o.ValueSize + 32)
	if g.o.ValueFormat != "" {
		need = len(offsets) * 128 // a demo value and its key and headers
	}
	if cap(g.arena) < need {
		g.arena = make([]byte, 0, need)
	}
	if cap(g.hdrs) < 2*len(offsets) {
		g.hdrs = make([]RecordHeader, 0, 2*len(offsets))
	}
	if len(g.o.Records) > 0 {
		for _, off := range offsets {
			kv := g.o.Records[g.given]
			g.given++
			g.recs = append(g.recs, genRecord{offset: off, key: kv.Key, value: kv.Value})
		}
		return
	}
	for _, off := range offsets {
		r := genRecord{offset: off}
		if g.o.ConsumerOffsets {
			r.key, r.value = g.offsetCommit(off)
			g.recs = append(g.recs, r)
			continue
		}
		if g.rng.IntN(5) != 0 {
			s := len(g.arena)
			g.arena = append(g.arena, "key-"...)
			k := g.rng.IntN(1000)
			g.arena = append(g.arena, byte('0'+k/100), byte('0'+k/10%10), byte('0'+k%10))
			r.key = g.arena[s:len(g.arena):len(g.arena)]
		}
		s := len(g.arena)
		if g.o.ValueFormat != "" {
			o := demoOrder{id: off, customer: g.rng.IntN(1000), cents: 100 + g.rng.Int64N(100000), status: g.rng.IntN(3), note: g.rng.IntN(4) == 0}
			g.arena = appendDemoValue(g.arena, g.o.ValueFormat, o)
		} else {
			g.arena = strconv.AppendInt(g.arena, off, 10)
			g.arena = append(g.arena, ' ')
			if len(g.arena)-s >= g.o.ValueSize {
				g.arena = g.arena[:s+g.o.ValueSize]
			} else {
				n := g.o.ValueSize - (len(g.arena) - s)
				p := g.rng.IntN(len(g.pool) - n + 1)
				g.arena = append(g.arena, g.pool[p:p+n]...)
			}
		}
		r.value = g.arena[s:len(g.arena):len(g.arena)]
		if g.o.Magic == 2 && g.rng.IntN(3) == 0 {
			h := len(g.hdrs)
			s := len(g.arena)
			for range 8 {
				g.arena = append(g.arena, "0123456789abcdef"[g.rng.IntN(16)])
			}
			g.hdrs = append(g.hdrs, RecordHeader{Key: "trace-id", Value: g.arena[s:len(g.arena):len(g.arena)]})
			if g.rng.IntN(2) == 0 {
				var v []byte
				if g.rng.IntN(2) == 0 {
					v = sourceHeaderValue
				}
				g.hdrs = append(g.hdrs, RecordHeader{Key: "source", Value: v})
			}
			r.headers = g.hdrs[h:len(g.hdrs):len(g.hdrs)]
		}
		if g.o.EmptyHeaders > 0 && !g.emptyHeaders {
			g.emptyHeaders = true
			r.headers = append(append([]RecordHeader(nil), r.headers...), make([]RecordHeader, g.o.EmptyHeaders)...)
		}
		g.recs = append(g.recs, r)
	}
}

// offsetCommit draws the key and value of an offset commit record at
// offset off (Options.ConsumerOffsets).
func (g *generator) offsetCommit(off int64) (key, value []byte) {
	key = OffsetCommitKey("group-"+strconv.Itoa(g.rng.IntN(3)), "orders", int32(g.rng.IntN(3)))
	if g.rng.IntN(10) == 0 {
		return key, nil
	}
	version := int16(1 + off%4)
	return key, OffsetCommitValue(version, off, g.epoch, "", g.st.wall, g.st.wall+7*24*hour)
}

// recordOffsets lays out n record offsets from base. With compaction gaps a
// v2 batch may start above its base offset and skip offsets; lastDelta is
// the lastOffsetDelta to store (>= the last record's delta).
func (g *generator) recordOffsets(base int64, n int) (offsets []int64, lastDelta int32) {
	gaps := g.o.CompactionGaps && g.rng.IntN(10) < 3
	offsets = g.offsets[:0]
	off := base
	if gaps && g.o.Magic == 2 {
		off += g.rng.Int64N(3)
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			off++
			if gaps && g.rng.IntN(10) < 3 {
				off += 1 + g.rng.Int64N(3)
			}
		}
		offsets = append(offsets, off)
	}
	last := off
	if gaps && g.o.Magic == 2 && g.rng.IntN(2) == 0 {
		last += g.rng.Int64N(3)
	}
	g.offsets = offsets
	return offsets, int32(last - base)
}

// logAppendTime decides whether this batch is LogAppendTime.
func (g *generator) logAppendTime() bool {
	return g.o.LogAppendTime > 0 && g.rng.Float64() < g.o.LogAppendTime
}

// dataBatch generates a data batch from producer pi (-1: no producer id).
func (g *generator) dataBatch(pi int, segmentStart bool) (*pending, error) {
	o := g.o
	g.tick()
	base := g.advanceOffset(segmentStart)
	n := 1 + g.rng.IntN(o.RecordsPerBatch)
	if len(o.Records) > 0 {
		// The records left, spread evenly over the batches left.
		n = (len(o.Records) - g.given + g.remaining - 1) / g.remaining
	}
	if o.Magic < 2 && g.c.id == codecNone {
		n = 1 // an uncompressed legacy message is its own batch
	}
	offsets, lastDelta := g.recordOffsets(base, n)
	g.fillRecords(offsets)
	g.createTimestamps()
	lat := o.Magic > 0 && g.logAppendTime()
	appendTime := g.st.wall

	p := &g.p
	*p = pending{}
	m := &p.man
	var err error
	m.Magic = o.Magic
	m.Compression = g.c.name
	m.RawSnappy = g.c.rawSnappy
	m.LogAppendTime = lat
	m.ControlType = -1
	m.CoordinatorEpoch = -1
	m.RecordCount = int32(n)
	if o.Magic == 2 {
		err = g.encodeV2(p, pi, base, lastDelta, lat, appendTime)
	} else {
		err = g.encodeLegacy(p, lat, appendTime)
	}
	if err != nil {
		return nil, err
	}
	p.lastOffset = m.LastOffset
	g.st.nextOffset = m.LastOffset + 1
	return p, nil
}

func (g *generator) encodeV2(p *pending, pi int, base int64, lastDelta int32, lat bool, appendTime int64) error {
	m := &p.man
	baseTs := g.recs[0].timestamp // baseTimestamp = first record's timestamp
	maxTs := baseTs
	g.raw = g.raw[:0]
	for i := range g.recs {
		r := &g.recs[i]
		maxTs = max(maxTs, r.timestamp)
		g.raw = appendV2Record(g.raw, r.timestamp-baseTs, int32(r.offset-base), r.key, r.value, r.headers)
	}
	if lat {
		// LogAppendTime: maxTimestamp is the append time; the record
		// deltas stay as the producer wrote them (LogValidator).
		maxTs = appendTime
	}
	h := v2Header{
		baseOffset:           base,
		partitionLeaderEpoch: g.epoch,
		attributes:           int16(g.c.id),
		lastOffsetDelta:      lastDelta,
		baseTimestamp:        baseTs,
		maxTimestamp:         maxTs,
		producerID:           -1,
		producerEpoch:        -1,
		baseSequence:         -1,
		recordsCount:         int32(len(g.recs)),
	}
	if lat {
		h.attributes |= attrLogAppendTime
	}
	if pi >= 0 {
		pr := &g.st.producers[pi]
		h.attributes |= attrTransactional
		h.producerID, h.producerEpoch, h.baseSequence = pr.id, pr.epoch, pr.nextSequence
		// Producer state after this batch (ProducerAppendInfo.appendDataBatch).
		pr.lastSequence = nextSequence(pr.nextSequence, lastDelta)
		pr.nextSequence = nextSequence(pr.nextSequence, lastDelta+1)
		pr.hasBatch = true
		pr.lastDataOffset = base + int64(lastDelta)
		pr.lastOffsetDelta = lastDelta
		pr.lastTimestamp = maxTs
		if pr.txnFirstOffset < 0 {
			pr.txnFirstOffset = base
		}
	}
	payload := g.raw
	if g.c.id != codecNone {
		var err error
		if payload, err = g.z.compress(g.raw, 2); err != nil {
			return fmt.Errorf("gen: batch at offset %d: %w", base, err)
		}
	}
	var crc uint32
	g.batch, crc = appendV2Batch(g.batch[:0], &h, payload)
	p.bytes = g.batch
	m.Size = int64(len(g.batch))
	m.BaseOffset, m.LastOffset = base, base+int64(lastDelta)
	m.MaxTimestamp, m.BaseTimestamp = maxTs, baseTs
	m.Transactional = pi >= 0
	m.Attributes, m.CRC, m.LastOffsetDelta = h.attributes, crc, lastDelta
	m.PartitionLeaderEpoch = h.partitionLeaderEpoch
	m.ProducerID, m.ProducerEpoch, m.BaseSequence = h.producerID, h.producerEpoch, h.baseSequence
	if !g.o.OmitRecords {
		m.Records = make([]RecordManifest, len(g.recs))
		for i := range g.recs {
			r := &g.recs[i]
			ts := r.timestamp
			if lat {
				ts = maxTs // every record reports the append time
			}
			m.Records[i] = recordManifest(r, ts, r.timestamp)
		}
	}
	return nil
}

func recordManifest(r *genRecord, ts, createTs int64) RecordManifest {
	rm := RecordManifest{Offset: r.offset, Timestamp: ts, CreateTimestamp: createTs,
		Key: bytes.Clone(r.key), Value: bytes.Clone(r.value)}
	if len(r.headers) > 0 {
		rm.Headers = make([]RecordHeader, len(r.headers))
		for i, h := range r.headers {
			rm.Headers[i] = RecordHeader{Key: h.Key, Value: bytes.Clone(h.Value)}
		}
	}
	return rm
}

// encodeLegacy writes a v0/v1 message: one uncompressed message, or a
// compressed wrapper whose value is the compressed inner message set
// (AbstractLegacyRecordBatch, MemoryRecordsBuilder for magic < 2).
func (g *generator) encodeLegacy(p *pending, lat bool, appendTime int64) error {
	o := g.o
	m := &p.man
	first, last := g.recs[0].offset, g.recs[len(g.recs)-1].offset
	var attrs int8
	if lat {
		attrs |= attrLogAppendTime
	}
	var crc uint32
	if g.c.id == codecNone {
		r := &g.recs[0]
		ts := r.timestamp
		if lat {
			// LogValidator overwrites the timestamp of an uncompressed
			// legacy message with the append time and sets the type bit.
			ts = appendTime
		}
		g.batch, crc = appendLegacyMessage(g.batch[:0], r.offset, o.Magic, attrs, ts, r.key, r.value)
		m.MaxTimestamp = ts
		if !o.OmitRecords {
			m.Records = []RecordManifest{recordManifest(r, ts, ts)}
		}
	} else {
		// Inner messages: uncompressed, CreateTime; offsets absolute for
		// v0, relative to the first inner offset for v1
		// (MemoryRecordsBuilder.toInnerOffset).
		g.raw = g.raw[:0]
		maxTs := int64(-1)
		for i := range g.recs {
			r := &g.recs[i]
			inner := r.offset
			if o.Magic == 1 {
				inner = r.offset - first
				maxTs = max(maxTs, r.timestamp)
			}
			g.raw, _ = appendLegacyMessage(g.raw, inner, o.Magic, 0, r.timestamp, r.key, r.value)
		}
		if lat {
			maxTs = appendTime
		}
		value, err := g.z.compress(g.raw, o.Magic)
		if err != nil {
			return fmt.Errorf("gen: wrapper at offset %d: %w", last, err)
		}
		// The wrapper's offset is its last inner offset; its timestamp the
		// max inner timestamp, or the append time for LogAppendTime.
		attrs |= g.c.id
		g.batch, crc = appendLegacyMessage(g.batch[:0], last, o.Magic, attrs, maxTs, nil, value)
		m.MaxTimestamp = maxTs
		if !o.OmitRecords {
			m.Records = make([]RecordManifest, len(g.recs))
			for i := range g.recs {
				r := &g.recs[i]
				ts := r.timestamp
				if lat {
					ts = maxTs
				}
				m.Records[i] = recordManifest(r, ts, r.timestamp)
			}
		}
	}
	p.bytes = g.batch
	m.Size = int64(len(g.batch))
	m.BaseOffset, m.LastOffset = first, last
	m.BaseTimestamp = m.MaxTimestamp
	m.Attributes, m.CRC = int16(attrs), crc
	m.PartitionLeaderEpoch, m.ProducerID, m.ProducerEpoch, m.BaseSequence = -1, -1, -1, -1
	return nil
}

// marker generates the COMMIT or ABORT marker closing producer pi's open
// transaction (one in three is an abort).
func (g *generator) marker(pi int, segmentStart bool) (*pending, error) {
	g.tick()
	pr := &g.st.producers[pi]
	offset := g.advanceOffset(segmentStart)
	typ := controlCommit
	if g.rng.IntN(3) == 0 {
		typ = controlAbort
	}
	lat := g.logAppendTime()
	ts := g.st.wall // the coordinator's clock
	maxTs := ts
	if pr.coordinatorEpoch < 0 {
		pr.coordinatorEpoch = int32(g.rng.IntN(4))
	}
	var crc uint32
	g.batch, crc = appendControlBatch(g.batch[:0], offset, g.epoch, pr.id, pr.epoch, typ, pr.coordinatorEpoch, ts, maxTs, lat, g.scratch)
	p := &g.p
	*p = pending{bytes: g.batch, lastOffset: offset}
	m := &p.man
	*m = BatchManifest{
		Size: int64(len(g.batch)), Magic: 2,
		BaseOffset: offset, LastOffset: offset, MaxTimestamp: maxTs, BaseTimestamp: ts,
		LogAppendTime: lat, Transactional: true, Control: true, Compression: "none",
		Attributes: int16(attrTransactional | attrControl), CRC: crc, RecordCount: 1,
		PartitionLeaderEpoch: g.epoch, ProducerID: pr.id, ProducerEpoch: pr.epoch, BaseSequence: -1,
		ControlType: typ, CoordinatorEpoch: pr.coordinatorEpoch,
	}
	if lat {
		m.Attributes |= attrLogAppendTime
	}
	if !g.o.OmitRecords {
		m.Records = []RecordManifest{{Offset: offset, Timestamp: maxTs, CreateTimestamp: ts,
			Key: controlKey(typ), Value: markerValue(pr.coordinatorEpoch)}}
	}
	if typ == controlAbort {
		// LogSegment.updateTxnIndex for an aborted CompletedTxn, with
		// ProducerStateManager.lastStableOffset.
		p.abort = &indexfmt.AbortedTxn{
			Version:          0,
			ProducerID:       pr.id,
			FirstOffset:      pr.txnFirstOffset,
			LastOffset:       offset,
			LastStableOffset: lastStableOffset(g.st.producers, pr.id, offset),
		}
	}
	// ProducerAppendInfo.appendEndTxnMarker.
	pr.txnFirstOffset = -1
	pr.lastTimestamp = maxTs
	g.st.nextOffset = offset + 1
	return p, nil
}

// segmentWriter streams one segment's .log and keeps its indexes.
type segmentWriter struct {
	f   *os.File
	w   *bufio.Writer
	idx *segmentIndexer
	man SegmentManifest
	txn []byte
}

func (g *generator) openSegment(base int64) error {
	if g.o.Magic == 2 && g.o.LeaderEpoch >= 0 {
		// The leader-epoch cache (LeaderEpochFileCache.assign): the first
		// epoch starts at the log start offset (a leader assigns its epoch
		// at the log end offset when it takes over,
		// UnifiedLog.maybeAssignEpochStartOffset, and the cache is clamped
		// to the log start offset); with LeaderEpochBumps each new segment
		// starts the next epoch at its base offset.
		if len(g.man.LeaderEpochs) == 0 {
			g.man.LeaderEpochs = []EpochEntry{{Epoch: g.epoch, StartOffset: base}}
		} else if g.o.LeaderEpochBumps {
			g.epoch++
			g.man.LeaderEpochs = append(g.man.LeaderEpochs, EpochEntry{Epoch: g.epoch, StartOffset: base})
		}
	}
	path := filepath.Join(g.dir, SegmentName(base)+".log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	g.seg = &segmentWriter{
		f:   f,
		w:   bufio.NewWriterSize(f, 256<<10),
		idx: newSegmentIndexer(base, g.o.IndexIntervalBytes),
		man: SegmentManifest{BaseOffset: base},
	}
	return nil
}

func (g *generator) appendBatch(p *pending) error {
	s := g.seg
	pos := s.idx.size
	if p.man.Magic == 2 && p.man.PartitionLeaderEpoch != g.epoch {
		// The leader stamps its epoch at append; the field is outside the
		// CRC (DefaultRecordBatch.setPartitionLeaderEpoch).
		binary.BigEndian.PutUint32(p.bytes[12:], uint32(g.epoch))
		p.man.PartitionLeaderEpoch = g.epoch
	}
	if err := s.idx.appendBatch(p.lastOffset, p.man.MaxTimestamp, int64(len(p.bytes))); err != nil {
		return fmt.Errorf("gen: segment %s: batch at position %d: %w", SegmentName(s.man.BaseOffset), pos, err)
	}
	if _, err := s.w.Write(p.bytes); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if p.abort != nil {
		s.txn = indexfmt.AppendTxnEntry(s.txn, *p.abort)
		s.man.AbortedTxns = append(s.man.AbortedTxns, *p.abort)
	}
	p.man.Position = pos
	s.man.Batches = append(s.man.Batches, p.man)
	return nil
}

// roll closes the active segment as LocalLog.roll does (final time-index
// entry, trimmed indexes; LogSegment.onBecomeInactiveSegment), takes a
// producer snapshot named with the new base offset (UnifiedLog.roll), and
// opens the next segment at the log end offset.
func (g *generator) roll() error {
	if err := g.closeSegment(false); err != nil {
		return err
	}
	if err := g.writeSnapshot(g.st.nextOffset); err != nil {
		return err
	}
	return g.openSegment(g.st.nextOffset)
}

// closeSegment writes the segment's files. The active segment of a running
// broker (active && PreallocatedIndexBytes > 0) gets no final time-index
// entry and keeps its preallocated index files.
func (g *generator) closeSegment(active bool) error {
	s := g.seg
	name := SegmentName(s.man.BaseOffset)
	running := active && g.o.PreallocatedIndexBytes > 0
	if !running {
		if err := s.idx.closeSegment(); err != nil {
			return fmt.Errorf("gen: segment %s: %w", name, err)
		}
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	idx := s.idx
	s.man.LogSize = idx.size
	s.man.Active = active
	s.man.OffsetIndex, s.man.TimeIndex = idx.offsetEntries, idx.timeEntries
	s.man.IndexEntries, s.man.TimeIndexEntries = len(idx.offsetEntries), len(idx.timeEntries)
	s.man.TxnEntries = len(s.man.AbortedTxns)
	s.man.MaxTimestamp, s.man.OffsetOfMaxTimestamp = idx.maxTimestampSoFar, idx.offsetOfMaxTimestamp
	s.man.NextOffset = s.man.BaseOffset
	if n := len(s.man.Batches); n > 0 {
		s.man.NextOffset = s.man.Batches[n-1].LastOffset + 1
	}
	indexSize, timeSize := int64(len(idx.offsetIndex)), int64(len(idx.timeIndex))
	if running {
		// AbstractIndex.resize(maxIndexSize): rounded down to whole entries.
		indexSize = g.o.PreallocatedIndexBytes / indexfmt.OffsetEntrySize * indexfmt.OffsetEntrySize
		timeSize = g.o.PreallocatedIndexBytes / indexfmt.TimeEntrySize * indexfmt.TimeEntrySize
		if indexSize < int64(len(idx.offsetIndex)) || timeSize < int64(len(idx.timeIndex)) {
			return fmt.Errorf("gen: segment %s: PreallocatedIndexBytes %d cannot hold %d offset and %d time index entries",
				name, g.o.PreallocatedIndexBytes, len(idx.offsetEntries), len(idx.timeEntries))
		}
	}
	s.man.IndexFileSize, s.man.TimeIndexFileSize = indexSize, timeSize
	files := []struct {
		suffix string
		data   []byte
		size   int64
	}{
		{".index", idx.offsetIndex, indexSize},
		{".timeindex", idx.timeIndex, timeSize},
	}
	if len(s.txn) > 0 {
		// The .txnindex file exists only once an entry was written.
		files = append(files, struct {
			suffix string
			data   []byte
			size   int64
		}{".txnindex", s.txn, int64(len(s.txn))})
		s.man.TxnIndexWritten = true
	}
	s.man.LastModified = g.st.wall
	mtime := time.UnixMilli(g.st.wall)
	for _, f := range files {
		path := filepath.Join(g.dir, name+f.suffix)
		if err := writeSized(path, f.data, f.size); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	logPath := filepath.Join(g.dir, name+".log")
	if err := os.Chtimes(logPath, mtime, mtime); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	g.man.Segments = append(g.man.Segments, s.man)
	g.seg = nil
	return nil
}

// writeSized writes data and extends the file with zeros (a sparse hole)
// to size bytes.
func writeSized(path string, data []byte, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && size > int64(len(data)) {
		err = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSnapshot writes the producer snapshot at offset (named by the
// exclusive end offset it covers) unless it already exists.
func (g *generator) writeSnapshot(offset int64) error {
	if n := len(g.man.Snapshots); n > 0 && g.man.Snapshots[n-1] == offset {
		return nil
	}
	path := filepath.Join(g.dir, SegmentName(offset)+".snapshot")
	if err := writeSized(path, sidefile.AppendProducerSnapshot(nil, snapshotOf(g.st.producers)), 0); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	g.man.Snapshots = append(g.man.Snapshots, offset)
	return nil
}

// finish closes the active segment and writes the partition's small files.
func (g *generator) finish() error {
	if err := g.closeSegment(true); err != nil {
		return err
	}
	g.man.LogEndOffset = g.st.nextOffset
	if g.o.PreallocatedIndexBytes == 0 {
		// Clean shutdown: a snapshot at the log end offset.
		if err := g.writeSnapshot(g.st.nextOffset); err != nil {
			return err
		}
	}
	if g.o.Magic == 2 {
		// leader-epoch-checkpoint: version 0, count, "<epoch> <startOffset>"
		// lines (LeaderEpochCheckpointFile).
		var b []byte
		b = fmt.Appendf(b, "0\n%d\n", len(g.man.LeaderEpochs))
		for _, e := range g.man.LeaderEpochs {
			b = fmt.Appendf(b, "%d %d\n", e.Epoch, e.StartOffset)
		}
		if err := os.WriteFile(filepath.Join(g.dir, "leader-epoch-checkpoint"), b, 0o644); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	if g.o.DataDirCheckpoints {
		if err := g.writeDataDirCheckpoints(); err != nil {
			return err
		}
	}
	g.man.TopicID = topicID(g.o.Seed, g.o.Topic)
	// partition.metadata: exactly "version: 0\ntopic_id: <id>", no newline
	// at the end (PartitionMetadata.encode).
	pm := "version: 0\ntopic_id: " + g.man.TopicID
	if err := os.WriteFile(filepath.Join(g.dir, "partition.metadata"), []byte(pm), 0o644); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	return nil
}

// topicID derives a topic id (a non-zero 16-byte UUID, printed as URL-safe
// base64 without padding like Uuid.toString) from the seed and topic.
func topicID(seed int64, topic string) string {
	var h uint64 = 14695981039346656037 // FNV-1a of the topic name
	for i := 0; i < len(topic); i++ {
		h ^= uint64(topic[i])
		h *= 1099511628211
	}
	r := rand.New(rand.NewPCG(uint64(seed), h))
	var b [16]byte
	for {
		for i := 0; i < 16; i += 8 {
			v := r.Uint64()
			for j := 0; j < 8; j++ {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		if b != [16]byte{} {
			break
		}
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// writeDataDirCheckpoints adds the partition to its data directory's
// offset checkpoints: the log end offset as high watermark and recovery
// point (a clean shutdown), the first segment's base as log start offset.
func (g *generator) writeDataDirCheckpoints() error {
	name := filepath.Base(filepath.Clean(g.dir))
	i := strings.LastIndexByte(name, '-')
	part, err := strconv.ParseInt(name[i+1:], 10, 32)
	if i <= 0 || err != nil {
		return fmt.Errorf("gen: %s is not a <topic>-<partition> directory", g.dir)
	}
	topic, dataDir := name[:i], filepath.Dir(filepath.Clean(g.dir))
	start := g.o.StartOffset
	for file, offset := range map[string]int64{
		sidefile.ReplicationCheckpointFile:    g.st.nextOffset,
		sidefile.RecoveryPointCheckpointFile:  g.st.nextOffset,
		sidefile.LogStartOffsetCheckpointFile: start,
	} {
		path := filepath.Join(dataDir, file)
		var entries []sidefile.OffsetCheckpointEntry
		if cp := sidefile.ReadOffsetCheckpoint(path); cp.OK() {
			for _, e := range cp.Value.SortedPartitions() {
				if e.Topic != topic || e.Partition != int32(part) {
					entries = append(entries, e)
				}
			}
		} else if cp.Present() {
			return fmt.Errorf("gen: %s: %w", path, cp.Err)
		}
		entries = append(entries, sidefile.OffsetCheckpointEntry{Topic: topic, Partition: int32(part), Offset: offset})
		if err := os.WriteFile(path, sidefile.AppendOffsetCheckpoint(nil, entries), 0o644); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
	}
	return nil
}

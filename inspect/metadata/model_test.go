package metadata_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/metadata"
)

// A second, small implementation of what the image tests check, written
// from the record schemas (metadata/src/main/resources/common/metadata)
// and the delta rules, independent of kseg's schema interpreter and of
// the package's replay: hand, a byte decoder for the record types the
// assertions need, and model, the state they build.

type hand struct {
	b   []byte
	pos int
	bad bool
}

func (h *hand) take(n int) []byte {
	if h.bad || n < 0 || h.pos+n > len(h.b) {
		h.bad = true
		return make([]byte, max(n, 0))
	}
	p := h.b[h.pos : h.pos+n]
	h.pos += n
	return p
}
func (h *hand) u8() byte   { return h.take(1)[0] }
func (h *hand) i16() int16 { return int16(binary.BigEndian.Uint16(h.take(2))) }
func (h *hand) i32() int32 { return int32(binary.BigEndian.Uint32(h.take(4))) }
func (h *hand) i64() int64 { return int64(binary.BigEndian.Uint64(h.take(8))) }
func (h *hand) uv() uint64 {
	v, n := binary.Uvarint(h.b[min(h.pos, len(h.b)):])
	if n <= 0 {
		h.bad = true
		return 0
	}
	h.pos += n
	return v
}
func (h *hand) uuid() string { return base64.RawURLEncoding.EncodeToString(h.take(16)) }

// str reads a compact string; ok false when null.
func (h *hand) str() (string, bool) {
	n := int(h.uv())
	if n == 0 {
		return "", false
	}
	return string(h.take(n - 1)), true
}

// ints reads a compact int32 array; nil when null.
func (h *hand) ints() []int32 {
	n := int(h.uv())
	if n == 0 {
		return nil
	}
	out := make([]int32, n-1)
	for i := range out {
		out[i] = h.i32()
	}
	return out
}

// tags reads a tagged-field section, handing each field's bytes to fn.
func (h *hand) tags(fn func(tag uint64, f *hand)) {
	n := h.uv()
	for i := uint64(0); i < n && !h.bad; i++ {
		tag, size := h.uv(), h.uv()
		fn(tag, &hand{b: h.take(int(size))})
	}
}

func (h *hand) skipTags() { h.tags(func(uint64, *hand) {}) }

// mrec is a metadata record as the hand decoder reads it.
type mrec struct {
	apiKey, version uint64
	h               *hand
}

func handRecord(value []byte) mrec {
	h := &hand{b: value}
	frame := h.uv()
	r := mrec{apiKey: h.uv(), version: h.uv(), h: h}
	if frame != 1 {
		h.bad = true
	}
	return r
}

type mpart struct {
	replicas, isr       []int32
	leader              int32
	leaderEpoch, pEpoch int32
}

type mtopic struct {
	name  string
	parts map[int32]*mpart
}

type mbroker struct {
	epoch       int64
	fenced, ics bool
}

// model is the image the hand-decoded records build.
type model struct {
	byID     map[string]*mtopic
	byName   map[string]string // name -> id
	configs  map[string]map[string]string
	features map[string]int16
	brokers  map[int32]*mbroker
	refused  int // records the rules refuse (unknown topic, partition, broker)

	inTxn   bool
	pending []mrec
}

func newModel() *model {
	return &model{byID: map[string]*mtopic{}, byName: map[string]string{}, configs: map[string]map[string]string{},
		features: map[string]int16{}, brokers: map[int32]*mbroker{}}
}

// logRecord takes a record of the log, minding metadata transactions.
func (m *model) logRecord(r mrec) {
	switch r.apiKey {
	case 23: // BeginTransactionRecord
		m.inTxn, m.pending = true, nil
	case 24: // EndTransactionRecord
		for _, p := range m.pending {
			m.apply(p)
		}
		m.inTxn, m.pending = false, nil
	case 25: // AbortTransactionRecord
		m.inTxn, m.pending = false, nil
	default:
		if m.inTxn {
			m.pending = append(m.pending, r)
			return
		}
		m.apply(r)
	}
}

func (m *model) apply(r mrec) {
	h := r.h
	switch r.apiKey {
	case 2: // TopicRecord: name, topicId
		name, _ := h.str()
		id := h.uuid()
		m.byID[id] = &mtopic{name: name, parts: map[int32]*mpart{}}
		m.byName[name] = id
	case 3: // PartitionRecord
		pid, id := h.i32(), h.uuid()
		p := &mpart{replicas: h.ints(), isr: h.ints()}
		h.ints() // removing
		h.ints() // adding
		p.leader = h.i32()
		p.leaderEpoch, p.pEpoch = h.i32(), h.i32()
		t := m.byID[id]
		if t == nil {
			m.refused++
			return
		}
		t.parts[pid] = p
	case 5: // PartitionChangeRecord: the fields it carries are tagged
		pid, id := h.i32(), h.uuid()
		t := m.byID[id]
		if t == nil || t.parts[pid] == nil {
			m.refused++
			return
		}
		p := *t.parts[pid]
		leaderChanged := false
		h.tags(func(tag uint64, f *hand) {
			switch tag {
			case 0:
				if v := f.ints(); v != nil {
					p.isr = v
				}
			case 1:
				if l := f.i32(); l != -2 {
					p.leader, leaderChanged = l, true
				}
			case 2:
				if v := f.ints(); v != nil {
					p.replicas = v
				}
			}
		})
		if leaderChanged {
			p.leaderEpoch++
		}
		p.pEpoch++
		t.parts[pid] = &p
	case 9: // RemoveTopicRecord
		id := h.uuid()
		t := m.byID[id]
		if t == nil {
			m.refused++
			return
		}
		delete(m.byID, id)
		delete(m.byName, t.name)
		delete(m.configs, "topic/"+t.name)
	case 4: // ConfigRecord
		typ := h.u8()
		res, _ := h.str()
		name, _ := h.str()
		value, set := h.str()
		key := map[byte]string{2: "topic", 4: "broker"}[typ] + "/" + res
		if !set {
			delete(m.configs[key], name)
			if len(m.configs[key]) == 0 {
				delete(m.configs, key)
			}
			return
		}
		if m.configs[key] == nil {
			m.configs[key] = map[string]string{}
		}
		m.configs[key][name] = value
	case 12: // FeatureLevelRecord
		name, _ := h.str()
		level := h.i16()
		if level == 0 && name != "metadata.version" {
			delete(m.features, name)
		} else {
			m.features[name] = level
		}
	case 0: // RegisterBrokerRecord
		id := h.i32()
		if r.version >= 2 {
			h.u8() // isMigratingZkBroker
		}
		h.uuid()
		b := &mbroker{epoch: h.i64()}
		for n := int(h.uv()) - 1; n > 0; n-- { // endpoints
			h.str()
			h.str()
			h.take(4)
			h.skipTags()
		}
		for n := int(h.uv()) - 1; n > 0; n-- { // features
			h.str()
			h.take(4)
			h.skipTags()
		}
		h.str() // rack
		b.fenced = h.u8() != 0
		if r.version >= 1 {
			b.ics = h.u8() != 0
		}
		m.brokers[id] = b
	case 1: // UnregisterBrokerRecord
		delete(m.brokers, h.i32())
	case 7, 8: // Fence/UnfenceBrokerRecord
		id, epoch := h.i32(), h.i64()
		b := m.brokers[id]
		if b == nil || b.epoch != epoch {
			m.refused++
			return
		}
		b.fenced = r.apiKey == 7
	case 17: // BrokerRegistrationChangeRecord
		id, epoch := h.i32(), h.i64()
		b := m.brokers[id]
		if b == nil || b.epoch != epoch {
			m.refused++
			return
		}
		h.tags(func(tag uint64, f *hand) {
			switch tag {
			case 0:
				switch int8(f.u8()) {
				case 1:
					b.fenced = true
				case -1:
					b.fenced = false
				}
			case 1:
				if f.u8() == 1 {
					b.ics = true
				}
			}
		})
	}
}

// compare reports how the image differs from the model.
func (m *model) compare(im *metadata.Image) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	names := slices.Sorted(maps.Keys(m.byName))
	if got := im.TopicNames(); !slices.Equal(got, names) {
		add("topics %v, want %v", got, names)
	}
	for _, name := range names {
		id := m.byName[name]
		mt := m.byID[id]
		t, ok := im.Topic(name)
		if !ok {
			continue
		}
		if t.ID != id {
			add("topic %s: id %s, want %s", name, t.ID, id)
		}
		if len(t.Partitions) != len(mt.parts) {
			add("topic %s: %d partitions, want %d", name, len(t.Partitions), len(mt.parts))
		}
		for pid, mp := range mt.parts {
			p := t.Partitions[pid]
			if p == nil {
				add("%s-%d missing", name, pid)
				continue
			}
			if !slices.Equal(p.Replicas, mp.replicas) || !slices.Equal(p.ISR, mp.isr) || p.Leader != mp.leader ||
				p.LeaderEpoch != mp.leaderEpoch || p.PartitionEpoch != mp.pEpoch {
				add("%s-%d: replicas %v isr %v leader %d epochs %d/%d; want %v %v %d %d/%d", name, pid,
					p.Replicas, p.ISR, p.Leader, p.LeaderEpoch, p.PartitionEpoch, mp.replicas, mp.isr, mp.leader, mp.leaderEpoch, mp.pEpoch)
			}
		}
	}
	got := map[string]map[string]string{}
	for _, r := range im.Resources() {
		got[r.Type.String()+"/"+r.Name] = im.Config(r)
	}
	if fmt.Sprint(sortedConfigs(got)) != fmt.Sprint(sortedConfigs(m.configs)) {
		add("configs %v, want %v", sortedConfigs(got), sortedConfigs(m.configs))
	}
	if !maps.Equal(im.Features, m.features) {
		add("features %v, want %v", im.Features, m.features)
	}
	if len(im.Brokers) != len(m.brokers) {
		add("%d brokers, want %d", len(im.Brokers), len(m.brokers))
	}
	for id, mb := range m.brokers {
		b := im.Brokers[id]
		if b == nil || b.Epoch != mb.epoch || b.Fenced != mb.fenced || b.InControlledShutdown != mb.ics {
			add("broker %d: %+v, want %+v", id, b, *mb)
		}
	}
	return diffs
}

func sortedConfigs(c map[string]map[string]string) []string {
	var out []string
	for k, v := range c {
		for n, x := range v {
			out = append(out, k+":"+n+"="+x)
		}
	}
	sort.Strings(out)
	return out
}

func failDiffs(t *testing.T, what string, diffs []string) {
	t.Helper()
	if len(diffs) > 0 {
		if len(diffs) > 10 {
			diffs = append(diffs[:10], fmt.Sprintf("... %d more", len(diffs)-10))
		}
		t.Errorf("%s:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

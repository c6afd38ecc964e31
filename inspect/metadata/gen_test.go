package metadata_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/metadata"
)

// eventImage is the image the generator's events build, folded in the
// test from the generator's own account of what it wrote (not from the
// bytes), with metadata transactions applied at their end.
type eventImage struct {
	topics   map[string]*mtopic // by id
	byName   map[string]string
	configs  map[string]map[string]string
	features map[string]int16
	brokers  map[int32]*mbroker
	open     int64 // first offset of an open transaction, -1
	pending  []kafkagen.MetadataEvent
	commits  int
	aborts   int
}

func foldEvents(events []kafkagen.MetadataEvent, target int64) *eventImage {
	x := &eventImage{topics: map[string]*mtopic{}, byName: map[string]string{}, configs: map[string]map[string]string{},
		features: map[string]int16{}, brokers: map[int32]*mbroker{}, open: -1}
	for _, e := range events {
		if e.Offset > target {
			break
		}
		switch e.Type {
		case kafkagen.BeginTransactionRecord:
			x.open, x.pending = e.Offset, nil
		case kafkagen.EndTransactionRecord:
			for _, p := range x.pending {
				x.apply(p)
			}
			x.open, x.pending = -1, nil
			x.commits++
		case kafkagen.AbortTransactionRecord:
			x.open, x.pending = -1, nil
			x.aborts++
		default:
			if x.open >= 0 {
				x.pending = append(x.pending, e)
			} else {
				x.apply(e)
			}
		}
	}
	return x
}

func (x *eventImage) apply(e kafkagen.MetadataEvent) {
	switch e.Type {
	case kafkagen.TopicRecord:
		x.topics[e.TopicID] = &mtopic{name: e.Topic, parts: map[int32]*mpart{}}
		x.byName[e.Topic] = e.TopicID
	case kafkagen.PartitionRecord:
		x.topics[e.TopicID].parts[e.Partition] = &mpart{replicas: e.Replicas, isr: e.ISR, leader: e.Leader, leaderEpoch: e.LeaderEpoch, pEpoch: e.PartitionEpoch}
	case kafkagen.PartitionChangeRecord:
		p := *x.topics[e.TopicID].parts[e.Partition]
		if e.ISR != nil {
			p.isr = e.ISR
		}
		if e.Leader != kafkagen.NoLeaderChange {
			p.leader = e.Leader
			p.leaderEpoch++
		}
		p.pEpoch++
		x.topics[e.TopicID].parts[e.Partition] = &p
	case kafkagen.RemoveTopicRecord:
		name := x.topics[e.TopicID].name
		delete(x.topics, e.TopicID)
		delete(x.byName, name)
		delete(x.configs, "topic/"+name)
	case kafkagen.ConfigRecord:
		key := map[int8]string{2: "topic", 4: "broker"}[e.ResourceType] + "/" + e.ResourceName
		if e.ConfigValue == nil {
			delete(x.configs[key], e.ConfigName)
			if len(x.configs[key]) == 0 {
				delete(x.configs, key)
			}
			return
		}
		if x.configs[key] == nil {
			x.configs[key] = map[string]string{}
		}
		x.configs[key][e.ConfigName] = *e.ConfigValue
	case kafkagen.FeatureLevelRecord:
		x.features[e.Feature] = e.Level
	case kafkagen.RegisterBrokerRecord:
		x.brokers[e.Broker] = &mbroker{epoch: e.BrokerEpoch, fenced: e.Fenced == 1}
	case kafkagen.BrokerRegistrationChangeRecord:
		if e.Fenced != 0 {
			x.brokers[e.Broker].fenced = e.Fenced == 1
		}
	}
}

// asModel hands the folded image to model.compare.
func (x *eventImage) asModel() *model {
	return &model{byID: x.topics, byName: x.byName, configs: x.configs, features: x.features, brokers: x.brokers}
}

// TestImageGenerated: metadata logs from kafkagen.GenerateMetadata (topics,
// partition changes, config changes, fencing, a removed topic, a committed
// and an aborted metadata transaction, leader changes, a snapshot), read
// at many offsets and times: the image equals the generator's events
// folded in the test, from the snapshot or without it, with the log
// before the snapshot kept or deleted.
func TestImageGenerated(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    kafkagen.MetadataOptions
	}{
		{"small segments", kafkagen.MetadataOptions{Seed: 1, SegmentBytes: 8 << 10}},
		{"log before the snapshot deleted", kafkagen.MetadataOptions{Seed: 2, SegmentBytes: 4 << 10, DeleteBeforeSnapshot: true, Changes: 300}},
		{"no snapshot, many brokers", kafkagen.MetadataOptions{Seed: 3, Brokers: 7, Topics: 9, PartitionsPerTopic: 5, SnapshotAt: -1}},
		{"early snapshot", kafkagen.MetadataOptions{Seed: 4, SnapshotAt: 30, SegmentBytes: 16 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
			m, err := kafkagen.GenerateMetadata(dir, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			events := m.Events
			end := m.Log.LogEndOffset - 1
			snapEnd := int64(-1)
			if m.Snapshot != nil {
				snapEnd = m.Snapshot.EndOffset
			}
			// Targets: every 17th event, both sides of the snapshot, the
			// bounds of each transaction, the end.
			targets := []int64{0, 1, end}
			for i := 0; i < len(events); i += 17 {
				targets = append(targets, events[i].Offset)
			}
			for _, e := range events {
				switch e.Type {
				case kafkagen.BeginTransactionRecord, kafkagen.EndTransactionRecord, kafkagen.AbortTransactionRecord, kafkagen.RemoveTopicRecord:
					targets = append(targets, e.Offset-1, e.Offset, e.Offset+1)
				}
			}
			if snapEnd >= 0 {
				targets = append(targets, snapEnd-2, snapEnd-1, snapEnd)
			}
			sort.Slice(targets, func(i, j int) bool { return targets[i] < targets[j] })
			targets = slices.Compact(targets)
			checked := 0
			for _, target := range targets {
				if target < 0 || target > end {
					continue
				}
				im, err := metadata.Load(dir, metadata.Options{Offset: &target})
				if err != nil {
					t.Fatalf("offset %d: %v", target, err)
				}
				covered := snapEnd >= 0 && snapEnd <= target+1
				if gotSnap := im.Snapshot != nil; gotSnap != covered {
					t.Errorf("offset %d: from a snapshot %v, want %v (snapshot end %d)", target, gotSnap, covered, snapEnd)
				}
				if !covered && m.LogStartOffset > 0 {
					// The log before the snapshot is gone: kseg says so.
					if im.Incomplete == "" {
						t.Errorf("offset %d: the log starts at %d and no snapshot covers it, but the image is not marked incomplete", target, m.LogStartOffset)
					}
					continue
				}
				want := foldEvents(events, target)
				failDiffs(t, fmt.Sprintf("offset %d", target), want.asModel().compare(im))
				if len(im.Unapplied) > 0 || im.Incomplete != "" || im.Damage != nil {
					t.Errorf("offset %d: unapplied %v, incomplete %q, damage %v", target, im.Unapplied, im.Incomplete, im.Damage)
				}
				if im.OpenTransaction != want.open {
					t.Errorf("offset %d: open transaction from %d, want %d", target, im.OpenTransaction, want.open)
				}
				if !covered && (im.CommittedTransactions != want.commits || im.AbortedTransactions != want.aborts) {
					t.Errorf("offset %d: %d committed and %d aborted transactions, want %d and %d", target, im.CommittedTransactions, im.AbortedTransactions, want.commits, want.aborts)
				}
				checked++
			}
			if checked < 10 {
				t.Errorf("only %d targets checked", checked)
			}
			// At the end: the committed transaction's topic is there, the
			// aborted one's and the removed topic are not.
			im, err := metadata.Load(dir, metadata.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := im.Topic("txn-committed"); !ok {
				t.Error("the committed transaction's topic is missing")
			}
			for _, gone := range []string{"txn-aborted", "doomed"} {
				if _, ok := im.Topic(gone); ok {
					t.Errorf("topic %s is in the image", gone)
				}
			}
			if im.TopicConfig("doomed") != nil {
				t.Error("the removed topic's configs are in the image")
			}
			// --at: the last event at or before a time, found here from
			// the events' timestamps.
			for i := 0; i < len(events); i += len(events)/7 + 1 {
				ts := events[i].Timestamp
				last := int64(-1)
				for _, e := range events {
					if e.Timestamp <= ts {
						last = max(last, e.Offset)
					}
				}
				if snapEnd >= 0 && m.LogStartOffset > 0 && snapEnd > last+1 {
					continue
				}
				im, err := metadata.Load(dir, metadata.Options{Time: &ts})
				if err != nil {
					t.Fatal(err)
				}
				failDiffs(t, "--at "+strconv.FormatInt(ts, 10), foldEvents(events, last).asModel().compare(im))
			}
		})
	}
}

// TestImageConfigAccessors: what the analyses read: a topic's own configs,
// and the brokers' dynamic configs with the per-broker ones over the
// cluster-wide defaults.
func TestImageConfigAccessors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	m, err := kafkagen.GenerateMetadata(dir, kafkagen.MetadataOptions{Seed: 9, Changes: 50})
	if err != nil {
		t.Fatal(err)
	}
	im, err := metadata.Load(dir, metadata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := foldEvents(m.Events, m.Log.LogEndOffset)
	if got, want := im.TopicConfig("orders"), x.configs["topic/orders"]; !maps.Equal(got, want) {
		t.Errorf("TopicConfig(orders) %v, want %v", got, want)
	}
	for id := int32(-1); id <= 3; id++ {
		want := maps.Clone(x.configs["broker/"])
		if id >= 0 {
			if want == nil && x.configs["broker/"+strconv.Itoa(int(id))] != nil {
				want = map[string]string{}
			}
			maps.Copy(want, x.configs["broker/"+strconv.Itoa(int(id))])
		}
		if got := im.BrokerConfig(id); !maps.Equal(got, want) {
			t.Errorf("BrokerConfig(%d) %v, want %v", id, got, want)
		}
	}
	if got := im.BrokerConfig(1)["log.retention.hours"]; got != "72" {
		t.Errorf("broker 1 inherits log.retention.hours %q, want 72 (the cluster default)", got)
	}
}

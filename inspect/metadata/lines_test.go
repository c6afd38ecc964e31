package metadata_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/metadata"
)

// TestLinesFollowTheImage checks Image.Lines on the real KRaft fixtures
// against the image it is drawn from: each topic's line then its
// partitions' in partition order, one line per broker and controller,
// every config and feature, the summary last with the image's counts;
// and with a topic, only that topic's lines and the summary.
func TestLinesFollowTheImage(t *testing.T) {
	root := fixtures.Root(t)
	for _, dir := range []string{"kafka40-kraft-snappy-retention", "cp-kraft-multiseg-compacted"} {
		t.Run(dir, func(t *testing.T) {
			im, err := metadata.Load(filepath.Join(root, dir), metadata.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lines := im.Lines("")
			kinds := map[string]int{}
			var topics []string
			var parts []int32
			for _, l := range lines {
				kinds[kindOf(t, l)]++
				switch l := l.(type) {
				case *metadata.TopicLine:
					topics = append(topics, l.Name)
					parts = parts[:0]
					tp, _ := im.Topic(l.Name)
					if l.TopicID != tp.ID || l.Partitions != len(tp.Partitions) {
						t.Errorf("topic %s: id %s, %d partitions; the image has %s, %d", l.Name, l.TopicID, l.Partitions, tp.ID, len(tp.Partitions))
					}
					if want := len(tp.Partitions[tp.PartitionIDs()[0]].Replicas); l.ReplicationFactor != want {
						t.Errorf("topic %s: replication factor %d, the first partition has %d replicas", l.Name, l.ReplicationFactor, want)
					}
				case *metadata.PartitionLine:
					if l.Topic != topics[len(topics)-1] {
						t.Errorf("partition %s-%d after topic %s", l.Topic, l.Partition, topics[len(topics)-1])
					}
					parts = append(parts, l.Partition)
					if !slices.IsSorted(parts) {
						t.Errorf("topic %s: partitions out of order %v", l.Topic, parts)
					}
					p := im.Topics[l.Topic].Partitions[l.Partition]
					if l.Leader != p.Leader || l.LeaderEpoch != p.LeaderEpoch || !slices.Equal(l.ISR, p.ISR) || !slices.Equal(l.Replicas, p.Replicas) {
						t.Errorf("partition %s-%d: %+v, the image has %+v", l.Topic, l.Partition, l, p)
					}
				}
			}
			if !slices.Equal(topics, im.TopicNames()) {
				t.Errorf("topics %v, the image has %v", topics, im.TopicNames())
			}
			configs := 0
			for _, r := range im.Resources() {
				configs += len(im.Config(r))
			}
			for kind, want := range map[string]int{"partition": im.PartitionCount(), "broker": len(im.Brokers),
				"controller": len(im.Controllers), "config": configs, "feature": len(im.Features),
				"stray": len(im.Strays), "unapplied": len(im.Unapplied), "summary": 1} {
				if kinds[kind] != want {
					t.Errorf("%d %s lines, the image has %d", kinds[kind], kind, want)
				}
			}
			sum, ok := lines[len(lines)-1].(*metadata.SummaryLine)
			if !ok {
				t.Fatalf("the last line is %T, not the summary", lines[len(lines)-1])
			}
			if sum.Topics != len(im.Topics) || sum.LogEndOffset != im.LogEndOffset || sum.TargetOffset != im.Target || sum.Records != im.Records {
				t.Errorf("summary %+v does not match the image", sum)
			}

			one := im.TopicNames()[len(im.TopicNames())-1]
			for _, l := range im.Lines(one) {
				var topic string
				switch l := l.(type) {
				case *metadata.TopicLine:
					topic = l.Name
				case *metadata.PartitionLine:
					topic = l.Topic
				case *metadata.ConfigLine:
					if l.ResourceType != "topic" {
						t.Errorf("--topic %s lists a %s config", one, l.ResourceType)
					}
					topic = l.ResourceName
				case *metadata.StrayLine:
					topic = l.Topic
				case *metadata.SummaryLine:
					topic = one
				default:
					t.Errorf("--topic %s lists a %s line", one, kindOf(t, l))
				}
				if topic != one {
					t.Errorf("--topic %s lists a line of %s", one, topic)
				}
			}
		})
	}
}

// kindOf is a line's "kind" as it marshals.
func kindOf(t *testing.T, l any) string {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var k struct{ Kind string }
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return k.Kind
}

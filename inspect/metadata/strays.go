package metadata

import (
	"path/filepath"
	"slices"
	"strconv"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
)

// findStrays lists the partition directories of t (other than the
// metadata log p) that the image does not assign to this node, as
// LogManager.isStrayKraftReplica decides at a broker's start: no topic id
// in partition.metadata, a topic id and partition the image does not hold,
// or (when meta.properties names the node) a replica list without it.
// Nothing is listed when the image is incomplete: a topic it lacks may
// well exist.
func (im *Image) findStrays(t *inspect.Target, p *inspect.Partition) {
	if im.Incomplete != "" || im.Damage != nil {
		return
	}
	node := int32(-1)
	if t.DataDir != "" {
		meta := sidefile.ReadMetaProperties(filepath.Join(t.DataDir, sidefile.MetaPropertiesFile))
		if meta.OK() {
			for _, k := range []string{"node.id", "broker.id"} {
				if v, err := strconv.ParseInt(meta.Value.Values[k], 10, 32); err == nil {
					node = int32(v)
					break
				}
			}
		}
	}
	for _, q := range t.Partitions {
		if q == p || q.Topic == "" {
			continue
		}
		s := Stray{Dir: q.Dir, Topic: q.Topic, Partition: q.Partition}
		pm := sidefile.ReadPartitionMetadata(filepath.Join(q.Dir, sidefile.PartitionMetadataFile))
		if pm.OK() {
			s.TopicID = pm.Value.TopicID
		}
		switch topic := im.TopicsByID[s.TopicID]; {
		case s.TopicID == "":
			s.Reason = "no topic id (partition.metadata absent or unreadable): the broker treats the log as stray"
		case topic == nil:
			s.Reason = "topic id " + s.TopicID + " is not in the image"
		case topic.Partitions[q.Partition] == nil:
			s.Reason = "topic " + topic.Name + " (" + s.TopicID + ") has no partition " + strconv.Itoa(int(q.Partition)) + " in the image"
		case node >= 0 && !slices.Contains(topic.Partitions[q.Partition].Replicas, node):
			s.Reason = "the replicas " + intsText(topic.Partitions[q.Partition].Replicas) + " do not include this node, " + strconv.Itoa(int(node)) + " (meta.properties)"
		default:
			continue
		}
		im.Strays = append(im.Strays, s)
	}
}

func intsText(v []int32) string {
	b := []byte{'['}
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, ']'))
}

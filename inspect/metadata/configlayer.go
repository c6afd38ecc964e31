package metadata

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

// ConfigLayer is the metadata image's layer of the topic configuration
// (topicconfig.Inputs.Image) for the analyses of targets: the image of the
// first __cluster_metadata-0 among them, as of time at (nil: the log end),
// seen by the broker whose node.id the data directory's meta.properties
// names (the broker-level configs in effect on it: the cluster default
// overridden by its own, DynamicBrokerConfig; -1 when unknown, the cluster
// default alone). It returns nil and no error when no target holds a
// metadata log.
func ConfigLayer(targets []*inspect.Target, at *int64) (*topicconfig.Image, error) {
	for _, t := range targets {
		p := Find(t)
		if p == nil {
			continue
		}
		im, err := LoadTarget(t, Options{Time: at})
		if err != nil {
			return nil, fmt.Errorf("%s: the metadata image for topic configs: %w", p.Dir, err)
		}
		return topicconfig.FromImage(im, nodeID(filepath.Dir(p.Dir))), nil
	}
	return nil, nil
}

// nodeID is the node.id (or broker.id) of a data directory's
// meta.properties, -1 when it has none that reads.
func nodeID(dataDir string) int32 {
	mp := sidefile.ReadMetaProperties(filepath.Join(dataDir, "meta.properties"))
	if !mp.OK() || mp.Value.NodeID == nil {
		return -1
	}
	return *mp.Value.NodeID
}

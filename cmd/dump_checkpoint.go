package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/sidefile"
)

type dumpCheckpointOptions struct {
	paths []string
}

func newDumpCheckpointCommand(ios *IOStreams) *cobra.Command {
	var opts dumpCheckpointOptions
	c := &cobra.Command{
		Use:   "dump-checkpoint PATH...",
		Short: "List the entries of checkpoint and properties files",
		Long: `Read the small text files a broker keeps beside the segments, with the
broker's own strict readers, and list their entries. PATH is one of those
files, a partition directory (its leader-epoch-checkpoint,
partition.metadata and, in __cluster_metadata-0, quorum-state) or a data directory (its recovery-point-offset-checkpoint,
log-start-offset-checkpoint, replication-offset-checkpoint,
cleaner-offset-checkpoint, meta.properties and .kafka_cleanshutdown, then
every partition's files).

Lines, by kind (every line also has kind and file):
  offset              checkpoint (recovery_point, log_start, high_watermark,
                      cleaner) topic partition offset, in file order
  leader_epoch        epoch start_offset in_cache (false: the broker's epoch
                      cache drops the entry when it loads the file)
  partition_metadata  version topic_id
  property            key value (meta.properties, in file order)
  clean_shutdown      broker_epoch (absent in the empty marker of Kafka 3.6
                      and older)
  quorum_state        (__cluster_metadata-0's quorum-state, the KRaft
                      client's election state) data_version leader_id
                      leader_epoch voted_id, and by data_version: 0
                      cluster_id applied_offset current_voters (voter ids;
                      absent when null), 1 voted_directory_id
The table and CSV views show kind, file, key and value.

A file its broker reader would refuse is listed as far as it parses, then
reported (exit 2, naming the byte position); kseg verify says what the
broker does about it. Empty checkpoint files have no entries.`,
		Example: `  kseg dump-checkpoint /var/lib/kafka/data/recovery-point-offset-checkpoint
  kseg dump-checkpoint data/orders-0
  kseg dump-checkpoint -o json /var/lib/kafka/data | jq -c 'select(.kind=="offset" and .topic=="orders")'`,
		Args: cobra.MinimumNArgs(1),
		RunE: pathsRunE(&opts.paths, func() error { return runDumpCheckpoint(ios, opts) }),
	}
	return c
}

// checkpointLineJSON is one line of dump-checkpoint; the fields of the
// other kinds are left out.
type checkpointLineJSON struct {
	Kind        string  `json:"kind"`
	File        string  `json:"file"`
	Checkpoint  string  `json:"checkpoint,omitempty"`
	Topic       *string `json:"topic,omitempty"`
	Partition   *int32  `json:"partition,omitempty"`
	Offset      *int64  `json:"offset,omitempty"`
	Epoch       *int32  `json:"epoch,omitempty"`
	StartOffset *int64  `json:"start_offset,omitempty"`
	InCache     *bool   `json:"in_cache,omitempty"`
	Version     *int32  `json:"version,omitempty"`
	TopicID     *string `json:"topic_id,omitempty"`
	Key         *string `json:"key,omitempty"`
	Value       *string `json:"value,omitempty"`
	BrokerEpoch *int64  `json:"broker_epoch,omitempty"`
	// quorum_state lines (QuorumStateData, at the file's data_version).
	DataVersion      *int16   `json:"data_version,omitempty"`
	ClusterID        *string  `json:"cluster_id,omitempty"`
	LeaderID         *int32   `json:"leader_id,omitempty"`
	LeaderEpoch      *int32   `json:"leader_epoch,omitempty"`
	VotedID          *int32   `json:"voted_id,omitempty"`
	VotedDirectoryID *string  `json:"voted_directory_id,omitempty"`
	AppliedOffset    *int64   `json:"applied_offset,omitempty"`
	CurrentVoters    *[]int32 `json:"current_voters,omitempty"`
}

// keyValue is the line as the table shows it.
func (l checkpointLineJSON) keyValue() (string, string) {
	i64 := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	switch l.Kind {
	case "offset":
		return fmt.Sprintf("%s %s-%d", l.Checkpoint, *l.Topic, *l.Partition), i64(l.Offset)
	case "leader_epoch":
		v := i64(l.StartOffset)
		if l.InCache != nil && !*l.InCache {
			v += " (dropped by the broker's cache)"
		}
		return "epoch " + strconv.Itoa(int(*l.Epoch)), v
	case "partition_metadata":
		return "topic_id", fmt.Sprintf("%s (version %d)", *l.TopicID, *l.Version)
	case "property":
		return *l.Key, *l.Value
	case "quorum_state":
		v := fmt.Sprintf("%d (epoch %d, voted for %d)", *l.LeaderID, *l.LeaderEpoch, *l.VotedID)
		if l.CurrentVoters != nil {
			v += fmt.Sprintf(", voters %v", *l.CurrentVoters)
		}
		return "leader", v
	case "clean_shutdown":
		if l.BrokerEpoch == nil {
			return "clean_shutdown", "present"
		}
		return "broker_epoch", i64(l.BrokerEpoch)
	}
	return "", ""
}

var checkpointColumns = []column[checkpointLineJSON]{
	textColumn("kind", func(l checkpointLineJSON) string { return l.Kind }),
	textColumn("file", func(l checkpointLineJSON) string { return l.File }),
	textColumn("key", func(l checkpointLineJSON) string { k, _ := l.keyValue(); return k }),
	textColumn("value", func(l checkpointLineJSON) string { _, v := l.keyValue(); return v }),
	// -o wide adds each JSON field of the lines listed (CSV keeps its
	// columns); key and value above are the JSON fields of property lines.
	omitIfEmpty(wideTableOnly(textColumn("checkpoint", func(l checkpointLineJSON) string { return l.Checkpoint }))),
	omitIfEmpty(wideTableOnly(textPtrColumn("topic", func(l checkpointLineJSON) *string { return l.Topic }))),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "partition", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.Partition) }})),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "offset", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.Offset) }})),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "epoch", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.Epoch) }})),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "start_offset", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.StartOffset) }})),
	omitIfEmpty(wideTableOnly(textColumn("in_cache", func(l checkpointLineJSON) string {
		if l.InCache == nil {
			return ""
		}
		return strconv.FormatBool(*l.InCache)
	}))),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "version", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.Version) }})),
	omitIfEmpty(wideTableOnly(textPtrColumn("topic_id", func(l checkpointLineJSON) *string { return l.TopicID }))),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "broker_epoch", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.BrokerEpoch) }})),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "data_version", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.DataVersion) }})),
	omitIfEmpty(wideTableOnly(textPtrColumn("cluster_id", func(l checkpointLineJSON) *string { return l.ClusterID }))),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "leader_id", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.LeaderID) }})),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "leader_epoch", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.LeaderEpoch) }})),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "voted_id", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.VotedID) }})),
	omitIfEmpty(wideTableOnly(textPtrColumn("voted_directory_id", func(l checkpointLineJSON) *string { return l.VotedDirectoryID }))),
	omitIfEmpty(wideTableOnly(column[checkpointLineJSON]{name: "applied_offset", right: true, cell: func(l checkpointLineJSON) string { return optDecimal(l.AppliedOffset) }})),
	omitIfEmpty(wideTableOnly(textColumn("current_voters", func(l checkpointLineJSON) string {
		if l.CurrentVoters == nil {
			return ""
		}
		return fmt.Sprint(*l.CurrentVoters)
	}))),
}

// checkpointKinds maps a file name to how it is read.
var checkpointKinds = map[string]string{
	sidefile.RecoveryPointCheckpointFile:  "recovery_point",
	sidefile.LogStartOffsetCheckpointFile: "log_start",
	sidefile.ReplicationCheckpointFile:    "high_watermark",
	sidefile.CleanerCheckpointFile:        "cleaner",
	sidefile.LeaderEpochCheckpointFile:    "leader_epoch",
	sidefile.PartitionMetadataFile:        "partition_metadata",
	sidefile.MetaPropertiesFile:           "meta_properties",
	sidefile.CleanShutdownFile:            "clean_shutdown",
	sidefile.QuorumStateFile:              "quorum_state",
}

var dataDirCheckpoints = []string{sidefile.RecoveryPointCheckpointFile, sidefile.LogStartOffsetCheckpointFile,
	sidefile.ReplicationCheckpointFile, sidefile.CleanerCheckpointFile, sidefile.MetaPropertiesFile, sidefile.CleanShutdownFile}

var partitionCheckpoints = []string{sidefile.LeaderEpochCheckpointFile, sidefile.PartitionMetadataFile, sidefile.QuorumStateFile}

// collectCheckpoints lists the existing files a PATH names.
func collectCheckpoints(path string) ([]string, error) {
	st, err := statPath(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if _, ok := checkpointKinds[filepath.Base(path)]; !ok {
			return nil, fmt.Errorf("%s: %w: expected a checkpoint file (%s, ...), a partition directory or a data directory",
				path, fileio.ErrNotKafka, sidefile.RecoveryPointCheckpointFile)
		}
		return []string{path}, nil
	}
	var out []string
	add := func(dir string, names []string) {
		for _, n := range names {
			if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && !fi.IsDir() {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	add(path, dataDirCheckpoints)
	add(path, partitionCheckpoints)
	if t, err := inspect.Resolve(path); err == nil && t.Kind == "data_dir" {
		for _, p := range t.Partitions {
			add(p.Dir, partitionCheckpoints)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no checkpoint, epoch, partition metadata or properties files", path)
	}
	return out, nil
}

func runDumpCheckpoint(ios *IOStreams, opts dumpCheckpointOptions) error {
	files, err := collectEach(opts.paths, collectCheckpoints)
	if err != nil {
		return err
	}
	l := newLister(ios, checkpointColumns)
	var firstErr error
	for _, path := range files {
		err := checkpointLines(path, l.Add)
		if err != nil {
			l.Footer("%s", err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	return firstErr
}

// checkpointLines reads one file, passes each of its lines to out as it
// goes (a leader-epoch-checkpoint of millions of entries is not listed
// first), and returns its problem.
func checkpointLines(path string, out func(checkpointLineJSON)) error {
	kind := checkpointKinds[filepath.Base(path)]
	base := checkpointLineJSON{File: path}
	switch kind {
	case "leader_epoch":
		f := sidefile.ReadLeaderEpochCheckpoint(path)
		if f.Value != nil {
			f.Value.Kept(func(_ int, e sidefile.EpochEntry, kept bool) bool {
				l := base
				l.Kind, l.Epoch, l.StartOffset, l.InCache = "leader_epoch", &e.Epoch, &e.StartOffset, &kept
				out(l)
				return true
			})
		}
		return f.Err
	case "partition_metadata":
		f := sidefile.ReadPartitionMetadata(path)
		if f.Err == nil {
			l := base
			l.Kind, l.Version, l.TopicID = "partition_metadata", ptr(f.Value.Version), ptr(f.Value.TopicID)
			out(l)
		}
		return f.Err
	case "meta_properties":
		f := sidefile.ReadMetaProperties(path)
		if f.Value != nil {
			for _, k := range f.Value.Keys {
				l := base
				l.Kind, l.Key, l.Value = "property", ptr(k), ptr(f.Value.Values[k])
				out(l)
			}
		}
		return f.Err
	case "quorum_state":
		f := sidefile.ReadQuorumState(path)
		if q := f.Value; q != nil {
			out(quorumStateLine(base, q))
		}
		return f.Err
	case "clean_shutdown":
		f := sidefile.ReadCleanShutdown(path)
		if f.Value != nil {
			l := base
			l.Kind, l.BrokerEpoch = "clean_shutdown", f.Value.BrokerEpoch
			out(l)
		}
		return f.Err
	}
	f := sidefile.ReadOffsetCheckpoint(path)
	if f.Value != nil {
		for _, e := range f.Value.Entries {
			l := base
			l.Kind, l.Checkpoint, l.Topic, l.Partition, l.Offset = "offset", kind, ptr(e.Topic), ptr(e.Partition), ptr(e.Offset)
			out(l)
		}
	}
	return f.Err
}

// quorumStateLine is a quorum-state file's line (base names the file).
func quorumStateLine(base checkpointLineJSON, q *sidefile.QuorumState) checkpointLineJSON {
	l := base
	l.Kind, l.DataVersion, l.ClusterID, l.VotedDirectoryID, l.AppliedOffset = "quorum_state", &q.DataVersion, q.ClusterID, q.VotedDirectoryID, q.AppliedOffset
	l.LeaderID, l.LeaderEpoch, l.VotedID = &q.LeaderID, &q.LeaderEpoch, &q.VotedID
	if q.DataVersion == 0 {
		voters := q.CurrentVoters
		if voters == nil && !q.CurrentVotersNull {
			voters = []int32{}
		}
		if !q.CurrentVotersNull {
			l.CurrentVoters = &voters
		}
	}
	return l
}

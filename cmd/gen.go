package cmd

import (
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

type genOptions struct {
	dir            string
	magic          int
	schemaRegistry bool // --schema-registry
	opts           kafkagen.Options
	metadata       bool // --metadata: a KRaft metadata partition
	meta           kafkagen.MetadataOptions
	flags          *pflag.FlagSet
}

// AddFlags adds gen's flags to f: kafkagen's options, --magic and
// --schema-registry.
func (o *genOptions) AddFlags(f *pflag.FlagSet) {
	o.flags = f
	g := &o.opts
	f.Int64Var(&g.Seed, "seed", 1, "random seed: the same seed and flags give the same bytes")
	f.StringVar(&g.Topic, "topic", kafkagen.DefaultTopic, "topic name (for partition.metadata's topic id)")
	f.IntVar(&o.magic, "magic", 2, "message format: 0, 1 or 2")
	f.StringVar(&g.Compression, "compression", "none", "none, gzip, snappy (xerial framing), snappy-raw (librdkafka), lz4 or zstd")
	f.IntVar(&g.Segments, "segments", 1, "number of segments (not counting --empty-active-segment)")
	f.IntVar(&g.Batches, "batches", kafkagen.DefaultBatches, "batches per segment")
	f.Int64Var(&g.SegmentBytes, "segment-bytes", 0, "roll segments by size instead of --batches (like segment.bytes)")
	f.IntVar(&g.RecordsPerBatch, "records-per-batch", kafkagen.DefaultRecordsPerBatch, "maximum records per batch (each batch holds 1..N)")
	f.IntVar(&g.ValueSize, "value-size", kafkagen.DefaultValueSize, "bytes per record value")
	f.StringVar(&g.Timestamps, "timestamps", "increasing", "record timestamps: increasing, jumping, equal or random")
	f.StringVar(&g.Traffic, "traffic", "", "traffic over time: steady (a batch every 10 s), burst (two a second in the middle third), stop (half an hour of silence after two thirds); default a batch every 1..20 ms")
	f.Float64Var(&g.LogAppendTime, "log-append-time", 0, "fraction (0..1) of batches written as LogAppendTime")
	f.BoolVar(&g.CompactionGaps, "compaction-gaps", false, "missing offsets between and inside batches, as after compaction")
	f.BoolVar(&g.Transactions, "transactions", false, "transactional batches of several producers with COMMIT and ABORT markers")
	f.IntVar(&g.OpenTransactions, "open-transactions", 0, "with --transactions, leave this many producers (0-3) with a transaction open at the end")
	f.BoolVar(&g.DataDirCheckpoints, "data-dir-checkpoints", false, "record the partition in its data directory's replication-offset, log-start-offset and recovery-point checkpoints")
	f.IntVar(&g.IndexIntervalBytes, "index-interval-bytes", kafkagen.DefaultIndexIntervalBytes, "the broker's index.interval.bytes")
	f.Int64Var(&g.PreallocatedIndexBytes, "preallocated-index-bytes", 0, "zero-extend the active segment's indexes to this size, as a broker that did not shut down cleanly leaves them")
	f.BoolVar(&g.EmptyActiveSegment, "empty-active-segment", false, "roll once more at the end: an empty active segment")
	f.Int64Var(&g.StartOffset, "start-offset", 0, "base offset of the first segment")
	f.Int64Var(&g.StartTimestamp, "start-timestamp", kafkagen.DefaultStartTimestamp, "first timestamp, ms since the epoch")
	f.Int32Var(&g.LeaderEpoch, "leader-epoch", 0, "partition leader epoch of every v2 batch")
	f.BoolVar(&g.ConsumerOffsets, "consumer-offsets", false, "records are __consumer_offsets offset commits (groups group-0..2, topic orders, partitions 0-2; one in ten a tombstone; with --transactions, transactional ones)")
	f.StringVar(&g.ValueFormat, "value-format", "", "values in the schema registry's wire format: avro, protobuf or json (default: text)")
	f.BoolVar(&o.schemaRegistry, "schema-registry", false, "write a schema registry's _schemas records registering the --value-format schemas")
	m := &o.meta
	f.BoolVar(&o.metadata, "metadata", false, "write a KRaft metadata partition (name DIR __cluster_metadata-0): a controller's log of topics, partition changes, configs, fencing, a removed topic, a committed and an aborted metadata transaction, and a snapshot")
	f.IntVar(&m.Brokers, "brokers", 3, "--metadata: brokers (ids 1..N; node 1 is the controller)")
	f.IntVar(&m.Topics, "topics", 4, "--metadata: topics created at the start")
	f.IntVar(&m.PartitionsPerTopic, "partitions-per-topic", 3, "--metadata: partitions of each of those topics")
	f.IntVar(&m.Changes, "changes", 200, "--metadata: batches of changes after the start")
	f.Int64Var(&m.Bytes, "log-bytes", 0, "--metadata: write changes until the log holds this many bytes (replaces --changes)")
	f.Int64Var(&m.SnapshotAt, "snapshot-at", 0, "--metadata: take the snapshot at the first batch boundary outside a transaction at or after this offset (0: half way; -1: none)")
	f.BoolVar(&m.DeleteBeforeSnapshot, "delete-before-snapshot", false, "--metadata: delete the segments the snapshot covers, as the metadata log's cleaning does")
}

// Validate checks the flags' values and fills in what they imply.
func (o *genOptions) Validate() error {
	switch o.magic {
	case 0:
		o.opts.Magic = kafkagen.MagicV0
	case 1, 2:
		o.opts.Magic = int8(o.magic)
	default:
		return usageErrorf("--magic must be 0, 1 or 2, not %d", o.magic)
	}
	if o.flags.Changed("index-interval-bytes") && o.opts.IndexIntervalBytes == 0 {
		o.opts.IndexIntervalBytes = kafkagen.IndexEveryBatch
	} else if o.opts.IndexIntervalBytes < 0 {
		return usageErrorf("--index-interval-bytes must be >= 0")
	}
	if o.metadata {
		o.meta.Seed, o.meta.StartTimestamp = o.opts.Seed, o.opts.StartTimestamp
		o.meta.SegmentBytes = o.opts.SegmentBytes // 0: the generator's default
		o.meta.OmitEvents = true
		if o.schemaRegistry || o.opts.ValueFormat != "" || o.opts.ConsumerOffsets || o.opts.Transactions {
			return usageErrorf("--metadata writes a metadata log: not with --schema-registry, --value-format, --consumer-offsets or --transactions")
		}
		return nil
	}
	if o.schemaRegistry {
		if o.opts.ValueFormat != "" {
			return usageErrorf("--schema-registry writes the registry's records: --value-format is for the topics that use it")
		}
		o.opts.Records = kafkagen.DemoSchemaRecords()
		if !o.flags.Changed("batches") {
			o.opts.Batches = 0 // as many as the records need
		}
		if !o.flags.Changed("topic") {
			o.opts.Topic = "_schemas"
		}
	}
	return nil
}

func newGenCommand(ios *IOStreams) *cobra.Command {
	var opts genOptions
	c := &cobra.Command{
		Use:   "gen DIR",
		Short: "Write a synthetic partition directory, byte-compatible with a broker's",
		Long: `Write a synthetic partition directory at DIR (created; it must not exist or
be empty), deterministically from --seed: the same flags always give the same
bytes. Batches are encoded as a Kafka broker stores them (magic 0, 1 or 2;
none, gzip, snappy, snappy-raw, lz4 or zstd), and the .index, .timeindex and
.txnindex are written by the broker's append path, one entry per batch as
Kafka 4.1+ does (index.interval.bytes with its strict '>' rule, the final
time-index entry at roll and close). Name DIR like a partition
(<topic>-<partition>) so other commands recognise it.

--value-format avro, protobuf or json writes values in the schema
registry's wire format (an order: id = the offset, customer, amount,
status, sometimes a note) with schema ids 1, 2 and 3; --schema-registry
writes instead the records of a registry's _schemas topic registering
those three schemas (name DIR _schemas-0 beside the partition).

--metadata writes a KRaft metadata partition instead (name DIR
__cluster_metadata-0, in a data directory for kseg metadata): the log a
controller writes for a cluster of --brokers brokers (bootstrap features
in a metadata transaction; broker and controller registrations; --topics
topics of --partitions-per-topic partitions with their configs; then
--changes batches of partition changes (ISR shrinks and expansions, leader
moves), config changes, fencing, re-registrations and NoOps, with leader
changes of the quorum), a topic removed, a topic created in a committed
metadata transaction and one in an aborted transaction, and a snapshot
<end offset>-<epoch>.checkpoint of the image at --snapshot-at; with
--log-bytes the changes go on until the log holds that many bytes (a big
log); --segment-bytes rolls segments (default 1 MiB);
--delete-before-snapshot deletes the segments the snapshot covers.

One line per segment: segment base_offset next_offset batches records
log_bytes index_entries timeindex_entries txnindex_entries active.`,
		Example: `  kseg gen /tmp/demo-0
  kseg gen --segments 3 --batches 200 --compression lz4 /tmp/orders-0
  kseg gen --transactions --compaction-gaps --timestamps random /tmp/txn-0
  kseg gen --preallocated-index-bytes 10485760 /tmp/crashed-0   # an unclean shutdown
  kseg gen --schema-registry /tmp/data/_schemas-0 && kseg gen --value-format avro /tmp/data/orders-0
  kseg gen --metadata --changes 1000 /tmp/kraft/__cluster_metadata-0 && kseg metadata /tmp/kraft`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.dir = args[0]
			if err := opts.Validate(); err != nil {
				return err
			}
			return runGen(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

type genSegmentJSON struct {
	Segment          string `json:"segment"`
	BaseOffset       int64  `json:"base_offset"`
	NextOffset       int64  `json:"next_offset"`
	Batches          int    `json:"batches"`
	Records          int64  `json:"records"`
	LogBytes         int64  `json:"log_bytes"`
	IndexEntries     int    `json:"index_entries"`
	TimeIndexEntries int    `json:"timeindex_entries"`
	TxnIndexEntries  int    `json:"txnindex_entries"`
	Active           bool   `json:"active"`
}

var genColumns = []column[genSegmentJSON]{
	textColumn("segment", func(s genSegmentJSON) string { return s.Segment }),
	intColumn("base_offset", func(s genSegmentJSON) int64 { return s.BaseOffset }),
	intColumn("next_offset", func(s genSegmentJSON) int64 { return s.NextOffset }),
	intColumn("batches", func(s genSegmentJSON) int { return s.Batches }),
	intColumn("records", func(s genSegmentJSON) int64 { return s.Records }),
	intColumn("log_bytes", func(s genSegmentJSON) int64 { return s.LogBytes }),
	intColumn("index_entries", func(s genSegmentJSON) int { return s.IndexEntries }),
	intColumn("timeindex_entries", func(s genSegmentJSON) int { return s.TimeIndexEntries }),
	intColumn("txnindex_entries", func(s genSegmentJSON) int { return s.TxnIndexEntries }),
	boolColumn("active", func(s genSegmentJSON) bool { return s.Active }),
}

func runGen(ios *IOStreams, opts genOptions) error {
	var m *kafkagen.Manifest
	var snapshot *kafkagen.MetadataSnapshotManifest
	if opts.metadata {
		mm, err := kafkagen.GenerateMetadata(opts.dir, opts.meta)
		if err != nil {
			return err
		}
		m, snapshot = mm.Log, mm.Snapshot
	} else {
		var err error
		if m, err = kafkagen.Generate(opts.dir, opts.opts); err != nil {
			return err
		}
	}
	l := newLister(ios, genColumns)
	for _, s := range m.Segments {
		var records int64
		for _, b := range s.Batches {
			records += int64(b.RecordCount)
		}
		l.Add(genSegmentJSON{inspect.SegmentName(s.BaseOffset) + inspect.LogSuffix, s.BaseOffset, s.NextOffset, len(s.Batches), records,
			s.LogSize, s.IndexEntries, s.TimeIndexEntries, s.TxnEntries, s.Active})
	}
	l.Footer("wrote %s: log end offset %d", filepath.Clean(opts.dir), m.LogEndOffset)
	if snapshot != nil {
		l.Footer("snapshot %s (end offset %d, epoch %d, %s)", filepath.Base(snapshot.Path), snapshot.EndOffset, snapshot.Epoch, count(len(snapshot.Records), "record"))
	}
	return l.Close()
}

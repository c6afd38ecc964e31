package kafkagen

import (
	"fmt"
	"math"

	"github.com/kseg/kseg/indexfmt"
)

// Sentinels for the two options whose zero value is a meaningful Kafka
// setting. Leaving the field at 0 selects the default (magic 2, interval
// 4096); these constants ask for the literal zero.
const (
	// MagicV0 selects message format v0 (magic 0) in Options.Magic.
	MagicV0 int8 = -1
	// IndexEveryBatch selects index.interval.bytes = 0 in
	// Options.IndexIntervalBytes: every batch except the first of a segment
	// gets an index entry (indexfmt's).
	IndexEveryBatch = indexfmt.IndexEveryBatch
)

// Defaults applied to zero-valued fields.
const (
	DefaultTopic              = "demo"
	DefaultBatches            = 100
	DefaultRecordsPerBatch    = 10
	DefaultValueSize          = 64
	DefaultIndexIntervalBytes = indexfmt.DefaultIndexIntervalBytes
	DefaultStartTimestamp     = 1700000000000 // 2023-11-14T22:13:20Z
	// MaxIndexBytes is segment.index.bytes' default (10485760,
	// ServerLogConfigs.LOG_INDEX_SIZE_MAX_BYTES_DEFAULT): the capacity the
	// broker gives a new offset or time index.
	MaxIndexBytes = 10485760
)

// Options say what partition to write. The zero value of every field is a
// sensible choice (see each field); Seed makes the output reproducible:
// the same Options give the same bytes.
type Options struct {
	Seed      int64
	Topic     string // default "demo"; only used for partition.metadata's topic id
	Partition int    // default 0; informational (the caller names the directory)

	// Magic is the message format: 2 (default; also when left 0), 1, or
	// MagicV0 for magic 0.
	Magic int8
	// Compression is none (default), gzip, snappy (xerial framing, as the
	// Java client writes it), snappy-raw (one raw snappy block, as
	// librdkafka writes it), lz4 (Kafka's LZ4 frame) or zstd (magic 2 only).
	Compression string

	Segments int // number of segments (default 1), not counting EmptyActiveSegment
	// Batches is the number of batches per segment (default 100). With magic
	// 0/1 and no compression every message is its own batch.
	Batches int
	// SegmentBytes, when > 0, replaces Batches: a segment is rolled when the
	// next batch would make it larger than SegmentBytes (broker:
	// LogSegment.shouldRoll, size > segment.bytes - incomingBytes), and
	// generation ends when the last of Segments segments is full. Meant for
	// big benchmark partitions (see BenchOptions).
	SegmentBytes int64
	// RecordsPerBatch is the maximum number of records per batch (default
	// 10); each batch holds 1..RecordsPerBatch records, drawn from the seed.
	RecordsPerBatch int
	// ValueSize is the size of every value in bytes (default 64). Values
	// are printable text starting with the record's offset; about one key
	// in five is null; with magic 2 about one record in three has headers.
	ValueSize int
	// Timestamps is the producer timestamp pattern: increasing (default),
	// jumping (occasional large jumps backwards and forwards), equal (every
	// record at StartTimestamp) or random (out of order within and across
	// batches). Magic 0 has no timestamps.
	Timestamps string
	// Traffic is the shape of the traffic over time, for timelines: ""
	// (default: a batch every 1..20 ms), steady (a batch every 10 s),
	// burst (a batch a minute, but two a second in the middle third of the
	// batches) or stop (steady, with half an hour of silence after two
	// thirds of the batches). Batches are placed by their index among
	// Segments*Batches.
	Traffic string
	// LogAppendTime is the fraction (0..1) of batches written as
	// LogAppendTime (magic 1 and 2); their append times never decrease.
	LogAppendTime float64
	// CompactionGaps makes the partition look compacted: missing offsets
	// between batches, inside batches (v2: offset deltas that skip numbers,
	// lastOffsetDelta > recordCount-1; legacy wrappers: missing inner
	// offsets), and each segment's first batch above the segment's base
	// offset.
	CompactionGaps bool
	// EmptyHeaders gives the log's first record this many more headers,
	// each with an empty key and a null value (2 bytes on disk each):
	// a record whose decoded structure dwarfs its bytes (magic 2 only).
	EmptyHeaders int
	// Transactions interleaves transactional batches of several producers
	// with COMMIT and ABORT control batches (magic 2 only); transactions may
	// span segments; every transaction is closed by the end of the log.
	// Aborts are recorded in .txnindex files as the broker does.
	Transactions bool
	// OpenTransactions leaves this many producers (at most 3) with a
	// transaction open at the end of the log: after the transactions
	// above, each appends one more transactional batch and no marker, as
	// a producer that died mid-transaction (Transactions only).
	OpenTransactions int
	// DataDirCheckpoints records the partition in its data directory's
	// replication-offset-checkpoint (high watermark: the log end offset),
	// log-start-offset-checkpoint and recovery-point-offset-checkpoint,
	// adding to what they list; the directory must be named
	// <topic>-<partition>.
	DataDirCheckpoints bool
	// IndexIntervalBytes is index.interval.bytes (default 4096; use
	// IndexEveryBatch for 0).
	IndexIntervalBytes int
	// PreallocatedIndexBytes, when > 0, leaves the active (last) segment as
	// a running broker does after an unclean shutdown: its .index and
	// .timeindex are zero-extended (sparse) to this size, rounded down to a
	// multiple of 8 and 12, without the final time-index entry written at
	// close, and no producer snapshot is taken at the log end.
	PreallocatedIndexBytes int64
	// EmptyActiveSegment rolls once more at the end, leaving an empty
	// active segment (0-byte .log; 0-byte indexes, or preallocated ones).
	EmptyActiveSegment bool
	StartOffset        int64 // base offset of the first segment (default 0)
	StartTimestamp     int64 // default DefaultStartTimestamp (ms)
	// LeaderEpoch is the partition leader epoch of the v2 batches (default
	// 0; -1 writes batches without an epoch and an empty checkpoint).
	LeaderEpoch int32
	// LeaderEpochBumps starts a new leader epoch with every segment after
	// the first (as restarts of a one-broker cluster do): segment i's
	// batches carry LeaderEpoch+i and leader-epoch-checkpoint lists each
	// epoch from its segment's base offset.
	LeaderEpochBumps bool

	// ConsumerOffsets makes the records offset commits as a group
	// coordinator writes them to __consumer_offsets: keys OffsetCommitKey
	// (version 1) of groups group-0..group-2 for topic "orders",
	// partitions 0-2; values OffsetCommitValue of versions 1-4 in turn
	// (the committed offset is the record's own offset, metadata "", the
	// record's timestamp as commit time), one in ten a tombstone. With
	// Transactions the transactional batches hold transactional offset
	// commits. ValueSize and headers are not used.
	ConsumerOffsets bool

	// OmitRecords leaves BatchManifest.Records empty (big partitions).
	OmitRecords bool

	// Records, when set, are the keys and values of the partition's
	// records, in offset order (a nil Key or Value is null; no headers),
	// instead of generated ones: for topics whose records have a meaning,
	// such as a schema registry's _schemas. They are spread evenly over
	// the batches (Batches per segment defaults to as many as
	// RecordsPerBatch needs; every batch gets at least one record). Magic
	// 2 only, not with SegmentBytes or Transactions.
	Records []KeyValue `json:"-"`
	// ValueFormat, when set, writes values in the schema registry's wire
	// format instead of text (ValueSize is then unused): an order (id = the
	// record's offset, a customer, an amount, a status, sometimes a note)
	// in avro, protobuf or json, with the schemas DemoSchemas registers
	// (DemoSchemaRecords are their _schemas records).
	ValueFormat string
}

// KeyValue is one record given in Options.Records.
type KeyValue struct {
	Key, Value []byte
}

// BenchOptions returns options for a benchmark partition whose segments are
// about segmentBytes each (e.g. 1 GiB): uncompressed v2, 1 KiB values, up to
// 16 records per batch, no per-record manifest. The .log is streamed to
// disk, so memory stays small whatever the size.
func BenchOptions(seed int64, segments int, segmentBytes int64) Options {
	return Options{
		Seed:            seed,
		Segments:        segments,
		SegmentBytes:    segmentBytes,
		RecordsPerBatch: 16,
		ValueSize:       1024,
		OmitRecords:     true,
	}
}

// resolved returns the options with defaults applied, and checks them.
func (o Options) resolved() (Options, error) {
	if o.Topic == "" {
		o.Topic = DefaultTopic
	}
	switch o.Magic {
	case 0:
		o.Magic = 2
	case MagicV0:
		o.Magic = 0
	case 1, 2:
	default:
		return o, fmt.Errorf("gen: magic %d: want 2, 1 or MagicV0", o.Magic)
	}
	if o.Compression == "" {
		o.Compression = "none"
	}
	c, ok := codecByName[o.Compression]
	if !ok {
		return o, fmt.Errorf("gen: unknown compression %q (none|gzip|snappy|snappy-raw|lz4|zstd)", o.Compression)
	}
	if c.id == codecZstd && o.Magic < 2 {
		return o, fmt.Errorf("gen: zstd needs magic 2 (a v0/v1 wrapper with zstd is rejected on read)")
	}
	if o.Segments == 0 {
		o.Segments = 1
	}
	if o.RecordsPerBatch == 0 {
		o.RecordsPerBatch = DefaultRecordsPerBatch
	}
	if o.Batches == 0 && len(o.Records) > 0 && o.RecordsPerBatch > 0 && o.Segments > 0 {
		perSegment := (len(o.Records) + o.Segments - 1) / o.Segments
		o.Batches = (perSegment + o.RecordsPerBatch - 1) / o.RecordsPerBatch
	}
	if o.Batches == 0 {
		o.Batches = DefaultBatches
	}
	if o.ValueSize == 0 {
		o.ValueSize = DefaultValueSize
	}
	if o.Timestamps == "" {
		o.Timestamps = "increasing"
	}
	interval, intervalErr := indexfmt.IndexInterval(int64(o.IndexIntervalBytes))
	o.IndexIntervalBytes = int(interval)
	if o.StartTimestamp == 0 {
		o.StartTimestamp = DefaultStartTimestamp
	}
	switch {
	case o.Segments < 0, o.Batches < 0, o.RecordsPerBatch < 0, o.ValueSize < 0:
		return o, fmt.Errorf("gen: Segments, Batches, RecordsPerBatch and ValueSize must not be negative")
	case intervalErr != nil:
		return o, fmt.Errorf("gen: %w", intervalErr)
	case o.SegmentBytes < 0 || o.SegmentBytes > math.MaxInt32:
		return o, fmt.Errorf("gen: SegmentBytes %d: want 0..%d (a .log must stay below 2 GiB)", o.SegmentBytes, math.MaxInt32)
	case o.RecordsPerBatch > 100000:
		return o, fmt.Errorf("gen: RecordsPerBatch %d is over 100000", o.RecordsPerBatch)
	case o.ValueSize > 1<<20:
		return o, fmt.Errorf("gen: ValueSize %d is over 1 MiB", o.ValueSize)
	case !(o.LogAppendTime >= 0 && o.LogAppendTime <= 1):
		return o, fmt.Errorf("gen: LogAppendTime %v: want a fraction in [0, 1]", o.LogAppendTime)
	case o.LogAppendTime > 0 && o.Magic == 0:
		return o, fmt.Errorf("gen: LogAppendTime needs magic 1 or 2 (magic 0 has no timestamps)")
	case len(o.Records) > 0 && (o.Magic < 2 || o.SegmentBytes > 0 || o.Transactions):
		return o, fmt.Errorf("gen: Records need magic 2, no SegmentBytes and no Transactions")
	case len(o.Records) > 0 && len(o.Records) < o.Segments*o.Batches:
		return o, fmt.Errorf("gen: %d Records cannot fill %d batches", len(o.Records), o.Segments*o.Batches)
	case o.EmptyHeaders < 0 || o.EmptyHeaders > 1<<26:
		return o, fmt.Errorf("gen: EmptyHeaders %d: want 0..%d", o.EmptyHeaders, 1<<26)
	case o.EmptyHeaders > 0 && o.Magic < 2:
		return o, fmt.Errorf("gen: headers need magic 2")
	case o.OpenTransactions < 0 || o.OpenTransactions > 3 || o.OpenTransactions > 0 && !o.Transactions:
		return o, fmt.Errorf("gen: OpenTransactions %d: want 0..3, with Transactions", o.OpenTransactions)
	case o.Transactions && o.Magic < 2:
		return o, fmt.Errorf("gen: transactions need magic 2")
	case o.StartOffset < 0:
		return o, fmt.Errorf("gen: StartOffset %d is negative", o.StartOffset)
	case o.StartTimestamp < 0:
		return o, fmt.Errorf("gen: StartTimestamp %d is negative", o.StartTimestamp)
	case o.PreallocatedIndexBytes < 0 || o.PreallocatedIndexBytes > math.MaxInt32:
		return o, fmt.Errorf("gen: PreallocatedIndexBytes %d out of range", o.PreallocatedIndexBytes)
	}
	switch o.ValueFormat {
	case "", ValueAvro, ValueProtobuf, ValueJSON:
	default:
		return o, fmt.Errorf("gen: unknown value format %q (avro|protobuf|json)", o.ValueFormat)
	}
	switch o.Timestamps {
	case "increasing", "jumping", "equal", "random":
	default:
		return o, fmt.Errorf("gen: unknown timestamp pattern %q (increasing|jumping|equal|random)", o.Timestamps)
	}
	switch o.Traffic {
	case "", "steady", "burst", "stop":
	default:
		return o, fmt.Errorf("gen: unknown traffic shape %q (steady|burst|stop)", o.Traffic)
	}
	return o, nil
}

package kafkagen

import (
	"fmt"
	"path/filepath"

	"github.com/kseg/kseg/indexfmt"
)

// Manifest describes exactly what Generate wrote: the ground truth that
// decoders, lookups, verification and rebuilds are tested against.
type Manifest struct {
	Dir     string
	Options Options // as resolved (defaults applied, sentinels replaced by their values)
	TopicID string  // as written to partition.metadata (URL-safe base64, 22 characters)
	// Segments in base-offset order; the last one is the active segment.
	Segments []SegmentManifest
	// LogEndOffset is the offset the next appended batch would get.
	LogEndOffset int64
	// LeaderEpochs is the content of leader-epoch-checkpoint (magic 2 only).
	LeaderEpochs []EpochEntry
	// Snapshots lists the producer snapshot files written, by their offset.
	Snapshots []int64
}

// EpochEntry is one line of leader-epoch-checkpoint.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// SegmentManifest describes one segment and its index files.
type SegmentManifest struct {
	BaseOffset int64
	LogSize    int64
	Batches    []BatchManifest

	// Entry counts of the written indexes (real entries, not padding).
	IndexEntries, TimeIndexEntries, TxnEntries int

	Active bool // the last segment
	// IndexFileSize and TimeIndexFileSize are the file lengths: entries
	// times entry size, or the preallocated size for the active segment.
	IndexFileSize, TimeIndexFileSize int64
	// TxnIndexWritten reports whether a .txnindex file exists (the broker
	// creates it with its first entry).
	TxnIndexWritten bool

	OffsetIndex []OffsetEntry
	TimeIndex   []TimeEntry
	AbortedTxns []indexfmt.AbortedTxn

	// MaxTimestamp and OffsetOfMaxTimestamp are the segment's
	// maxTimestampAndOffsetSoFar after its last batch (-1 and the base
	// offset when no batch has a timestamp >= 0).
	MaxTimestamp, OffsetOfMaxTimestamp int64
	// NextOffset is the last offset of the last batch + 1, or the base
	// offset of an empty segment (LogSegment.readNextOffset).
	NextOffset int64
	// LastModified is the modification time (ms) given to the segment's
	// files: the broker clock at the segment's last write. A broker uses
	// the .log's mtime as the segment's largest timestamp when it has no
	// timestamps (LogSegment.largestTimestamp), e.g. magic 0 data.
	LastModified int64
}

// OffsetEntry is one offset-index entry, with the absolute offset.
type OffsetEntry struct {
	Offset   int64
	Position int32
}

// TimeEntry is one time-index entry, with the absolute offset.
type TimeEntry struct {
	Timestamp int64
	Offset    int64
}

// BatchManifest describes one log entry: a v2 record batch, or a v0/v1
// message (a compressed wrapper, or one uncompressed message).
type BatchManifest struct {
	Position, Size int64 // Size includes the 12-byte offset+length prefix
	Magic          int8
	// BaseOffset and LastOffset: v2 header values (BaseOffset may be below
	// the first record after compaction, LastOffset = base +
	// lastOffsetDelta); legacy wrapper: first and last inner offsets;
	// uncompressed legacy message: its offset twice.
	BaseOffset, LastOffset int64
	// MaxTimestamp is what the broker indexes: v2 header maxTimestamp (the
	// append time for LogAppendTime), v1 wrapper or message timestamp, -1
	// for v0.
	MaxTimestamp  int64
	BaseTimestamp int64 // v2 header baseTimestamp; legacy: same as MaxTimestamp

	LogAppendTime, Transactional, Control bool
	// Compression is the codec in the attributes: none, gzip, snappy, lz4
	// or zstd. RawSnappy reports a snappy payload written as one raw block
	// (librdkafka) instead of xerial framing.
	Compression string
	RawSnappy   bool

	Attributes           int16  // v2: the i16 field; legacy: the i8 attributes
	CRC                  uint32 // v2: CRC-32C over [21, end); legacy: CRC-32 over [16, end)
	LastOffsetDelta      int32  // v2 only (legacy: 0)
	RecordCount          int32  // v2: header recordsCount; legacy: inner messages (1 when uncompressed)
	PartitionLeaderEpoch int32  // -1 for legacy
	ProducerID           int64  // -1 when none
	ProducerEpoch        int16  // -1 when none
	BaseSequence         int32  // -1 when none
	// ControlType is the control record type of a control batch (0 ABORT,
	// 1 COMMIT), -1 otherwise; CoordinatorEpoch is the marker's.
	ControlType      int16
	CoordinatorEpoch int32

	// Records in offset order (empty with Options.OmitRecords).
	Records []RecordManifest
}

// RecordManifest is one record as a consumer sees it.
type RecordManifest struct {
	Offset int64
	// Timestamp is the effective timestamp: the batch max timestamp for
	// LogAppendTime (v2, v1 wrapper or message), -1 for v0, otherwise the
	// record's own (producer) timestamp.
	Timestamp int64
	// CreateTimestamp is the timestamp stored with the record (v2:
	// baseTimestamp + delta; v1: the message field; v0: -1).
	CreateTimestamp int64
	Key, Value      []byte // nil means null
	Headers         []RecordHeader
}

// RecordHeader is one v2 record header; a nil Value is null.
type RecordHeader struct {
	Key   string
	Value []byte
}

// SegmentName is the 20-digit file name prefix of a segment (or snapshot)
// at offset (LogFileUtils.filenamePrefixFromOffset).
func SegmentName(offset int64) string { return fmt.Sprintf("%020d", offset) }

// LogPath, IndexPath, TimeIndexPath and TxnIndexPath name the segment's files
// inside the manifest's directory.
func (m *Manifest) LogPath(s *SegmentManifest) string {
	return filepath.Join(m.Dir, SegmentName(s.BaseOffset)+".log")
}

func (m *Manifest) IndexPath(s *SegmentManifest) string {
	return filepath.Join(m.Dir, SegmentName(s.BaseOffset)+".index")
}

func (m *Manifest) TimeIndexPath(s *SegmentManifest) string {
	return filepath.Join(m.Dir, SegmentName(s.BaseOffset)+".timeindex")
}

func (m *Manifest) TxnIndexPath(s *SegmentManifest) string {
	return filepath.Join(m.Dir, SegmentName(s.BaseOffset)+".txnindex")
}

// Batches returns every batch of every segment in log order.
func (m *Manifest) Batches() []BatchManifest {
	var out []BatchManifest
	for i := range m.Segments {
		out = append(out, m.Segments[i].Batches...)
	}
	return out
}

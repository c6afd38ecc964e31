package report

import "github.com/kseg/kseg/verify"

// The report's lines (kseg report -o json prints them, the page is drawn
// from them). Field names are those of the commands' JSON lines where
// they mean the same (docs/cli-contract.md, "kseg report").

// HeaderLine is the first line: what the report covers.
type HeaderLine struct {
	Kind      string   `json:"kind"` // "report"
	Paths     []string `json:"paths"`
	Generated int64    `json:"generated"` // ms
	Now       int64    `json:"now"`       // the analyses' "now" (ms)
	Version   string   `json:"kseg_version"`
	// Totals of the partitions row and of verify's findings.
	Partitions int   `json:"partitions"`
	Segments   int   `json:"segments"`
	LogBytes   int64 `json:"log_bytes"`
	Errors     int   `json:"errors"`
	Warnings   int   `json:"warnings"`
	Infos      int   `json:"infos"`
}

// SectionLine heads a section: the command that reproduces it, and
// whether it has data (Note says why not, or what it assumed).
type SectionLine struct {
	Kind    string `json:"kind"` // "section"
	ID      string `json:"id"`
	Title   string `json:"title"`
	Present bool   `json:"present"`
	Command string `json:"command"`
	Rows    int    `json:"rows"`
	Note    string `json:"note,omitempty"`
}

// PartitionLine is a partition's row: ls's fields and status, and how
// many findings verify made in it by severity.
type PartitionLine struct {
	Kind           string  `json:"kind"` // "partition"
	Dir            string  `json:"dir"`
	Name           string  `json:"name"`
	Topic          *string `json:"topic"`
	Partition      *int32  `json:"partition"`
	Segments       int     `json:"segments"`
	BaseOffset     int64   `json:"base_offset"`
	LastOffset     *int64  `json:"last_offset"`
	NextOffset     int64   `json:"next_offset"`
	FirstTimestamp *int64  `json:"first_timestamp"`
	LastTimestamp  *int64  `json:"last_timestamp"`
	LogBytes       int64   `json:"log_bytes"`
	Status         string  `json:"status"`
	Errors         int     `json:"errors"`
	Warnings       int     `json:"warnings"`
	Infos          int     `json:"infos"`
	TrafficError   string  `json:"traffic_error,omitempty"`
}

// FindingLine is verify's finding line, with the partition directory it
// belongs to (null for a data directory's own files).
type FindingLine struct {
	verify.FindingLine
	PartitionDir *string `json:"partition_dir"`
}

// VerifySummaryLine is verify's summary line, of kind "verify_summary".
type VerifySummaryLine = verify.SummaryLine

// TrafficLine is one chart: a topic's (its partitions summed) or a
// partition's offsets and log bytes per bucket, the buckets of every
// chart being the same: Buckets of BucketMs from Start.
type TrafficLine struct {
	Kind     string  `json:"kind"`  // "traffic"
	Scope    string  `json:"scope"` // "topic" or "partition"
	Name     string  `json:"name"`  // the topic, or the partition directory's name
	Dir      string  `json:"dir,omitempty"`
	Start    int64   `json:"start"`
	BucketMs int64   `json:"bucket_ms"`
	Records  []int64 `json:"records"`
	Bytes    []int64 `json:"bytes"`
}

// GroupOffsetLine is a committed offset and its lag (groups' line).
type GroupOffsetLine struct {
	Kind            string `json:"kind"` // "group_offset"
	Group           string `json:"group"`
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	CommitTimestamp int64  `json:"commit_timestamp"`
	LogEndOffset    *int64 `json:"log_end_offset"`
	Lag             *int64 `json:"lag"`
}

// OpenTransactionLine is an open transaction (txns' line, its main
// fields).
type OpenTransactionLine struct {
	Kind            string  `json:"kind"` // "open_transaction"
	PartitionDir    string  `json:"partition_dir"`
	ProducerID      int64   `json:"producer_id"`
	ProducerEpoch   int16   `json:"producer_epoch"`
	FirstOffset     int64   `json:"first_offset"`
	LastOffset      int64   `json:"last_offset"`
	LastTimestamp   int64   `json:"last_timestamp"`
	AgeMs           int64   `json:"age_ms"`
	TransactionalID *string `json:"transactional_id"`
	Verdict         string  `json:"verdict"`
	Why             string  `json:"why"`
}

// LSOLine is a partition whose last stable offset is held below its high
// watermark by a transaction, or that holds open transactions (txns'
// partition line).
type LSOLine struct {
	Kind             string `json:"kind"` // "lso"
	PartitionDir     string `json:"partition_dir"`
	LogEndOffset     int64  `json:"log_end_offset"`
	HighWatermark    int64  `json:"high_watermark"`
	LastStableOffset int64  `json:"last_stable_offset"`
	LSOLag           int64  `json:"lso_lag"`
	OpenTransactions int    `json:"open_transactions"`
}

// RetentionLine is a partition's retention verdict (retention's
// partition line).
type RetentionLine struct {
	Kind         string        `json:"kind"` // "retention"
	PartitionDir string        `json:"partition_dir"`
	Segments     int           `json:"segments"`
	Deletable    int           `json:"deletable"`
	BytesFreed   int64         `json:"bytes_freed"`
	BlockedBy    *BlockedLine  `json:"blocked_by"`
	Config       RetentionConf `json:"config"`
	Error        string        `json:"error,omitempty"`
}

// BlockedLine names the segment that holds back older data.
type BlockedLine struct {
	Segment         string `json:"segment"`
	Reason          string `json:"reason"`
	SegmentsWaiting int    `json:"segments_waiting"`
	BytesWaiting    int64  `json:"bytes_waiting"`
}

// RetentionConf is the effective retention settings.
type RetentionConf struct {
	CleanupPolicy  string `json:"cleanup.policy"`
	RetentionMs    int64  `json:"retention.ms"`
	RetentionBytes int64  `json:"retention.bytes"`
}

// CompactionLine is the cleaner's view of a compacted partition
// (cleaner's line, its main fields).
type CompactionLine struct {
	Kind               string   `json:"kind"` // "compaction"
	PartitionDir       string   `json:"partition_dir"`
	FirstDirtyOffset   int64    `json:"first_dirty_offset"`
	FirstUncleanable   int64    `json:"first_uncleanable_offset"`
	UncleanableBecause string   `json:"uncleanable_because"`
	CleanBytes         int64    `json:"clean_bytes"`
	CleanableBytes     int64    `json:"cleanable_bytes"`
	CleanableRatio     *float64 `json:"cleanable_ratio"`
	MinCleanableRatio  float64  `json:"min_cleanable_ratio"`
	WouldClean         bool     `json:"would_clean"`
	WhyNot             *string  `json:"why_not"`
	Error              string   `json:"error,omitempty"`
}

// MetadataPartitionLine is a partition of the metadata image: its
// leader, replicas and ISR (metadata's partition line, its main fields).
type MetadataPartitionLine struct {
	Kind        string  `json:"kind"` // "metadata_partition"
	Topic       string  `json:"topic"`
	Partition   int32   `json:"partition"`
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	Replicas    []int32 `json:"replicas"`
	ISR         []int32 `json:"isr"`
}

// MetadataBrokerLine is a broker of the metadata image.
type MetadataBrokerLine struct {
	Kind   string  `json:"kind"` // "metadata_broker"
	ID     int32   `json:"id"`
	Fenced bool    `json:"fenced"`
	Rack   *string `json:"rack"`
}

package verify

// Severities of a finding (the contract's "severity" field).
//
// The rule: error = data a broker would lose or refuse; warning = a broker
// will behave differently than it would with healthy data (the message
// says how), so an operator should act; info = everything else, e.g. a
// valid index that differs from what recovery would write. Info findings
// never fail --strict; the command shows them only when asked.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Check ids, the contract's stable "check" values, each next to its
// severity. A finding uses the most specific id that fits; ids are never
// renamed.
const (
	// LogCRC (error): a batch's stored CRC does not match its bytes
	// (DefaultRecordBatch.ensureValid, LegacyRecord.ensureValid).
	LogCRC = "log.crc"
	// LogCorruptHeader (error): an impossible batch length, magic, offset
	// delta or record count; or a length that runs past the end of the file
	// although a valid batch follows.
	LogCorruptHeader = "log.corrupt-header"
	// LogTruncated (error): the segment ends inside a batch, or in a
	// zero-filled tail; broker recovery truncates it there.
	LogTruncated = "log.truncated"
	// LogOffsetOrder (error): a batch's offsets do not follow the previous
	// batch's.
	LogOffsetOrder = "log.offset-order"
	// LogOffsetRange (error): offsets below the segment's base offset, not
	// representable relative to it, or reaching the next segment's base.
	LogOffsetRange = "log.offset-range"
	// LogRecords (error): a batch's records do not decode, or disagree
	// with its header (count, offset deltas).
	LogRecords = "log.records"
	// LogSize (error): a .log over 2147483647 bytes, which no broker opens
	// (inspect.MaxSegmentBytes); the bytes past that are not read.
	LogSize = "log.size"

	// IndexSize, TimeIndexSize (error): file size not a multiple of the
	// entry size.
	IndexSize     = "index.size"
	TimeIndexSize = "timeindex.size"
	// IndexOrder, TimeIndexOrder (error): entries not increasing as the
	// broker requires (OffsetIndex.append, TimeIndex.maybeAppend), or
	// below the segment's base offset.
	IndexOrder     = "index.order"
	TimeIndexOrder = "timeindex.order"
	// IndexPosition (error): an entry points past the log, or not at a
	// batch boundary.
	IndexPosition = "index.position"
	// IndexMismatch, TimeIndexMismatch (error): an entry disagrees with the
	// log in a way that makes a broker's lookup answer wrongly.
	IndexMismatch     = "index.mismatch"
	TimeIndexMismatch = "timeindex.mismatch"
	// IndexPadding, TimeIndexPadding (warning, or info): zero-filled
	// preallocated tail. A warning when the broker's next start would
	// search it (the segment is below the recovery point, KAFKA-10207, or
	// the data directory says it was shut down cleanly); info when that
	// start recovers the segment and rebuilds the index (a running
	// broker's active segment, or an unclean shutdown's).
	IndexPadding     = "index.padding"
	TimeIndexPadding = "timeindex.padding"
	// IndexMissing, TimeIndexMissing (warning): index file absent.
	IndexMissing     = "index.missing"
	TimeIndexMissing = "timeindex.missing"
	// IndexStale, TimeIndexStale (info): valid, but different from what
	// broker recovery would rebuild; the broker uses it as it is.
	IndexStale     = "index.stale"
	TimeIndexStale = "timeindex.stale"
	// TimeIndexClosingEntry (warning, or info): the time index lacks the
	// closing entry (the segment's largest timestamp) a broker adds at roll
	// and at clean close, so a broker loading it reads an older largest
	// timestamp from the last entry (LogSegment.maxTimestampSoFar): time
	// retention deletes the segment early, and timestamp lookups may skip
	// it. A warning on a rolled segment the next start does not recover;
	// info on the active segment (the normal state of a running broker's)
	// and on segments recovery rebuilds.
	TimeIndexClosingEntry = "timeindex.closing-entry"

	// TxnIndexSize (error): .txnindex size not a multiple of 34, or more
	// entries than its log could justify (record.MaxTxnIndexEntries).
	TxnIndexSize = "txnindex.size"
	// TxnIndexVersion (error): an entry whose version byte is not 0 (the
	// broker's load fails with KafkaException).
	TxnIndexVersion = "txnindex.version"
	// TxnIndexOrder (error): last offsets not strictly increasing.
	TxnIndexOrder = "txnindex.order"
	// TxnIndexRange (error): an entry's last offset is below the segment's
	// base offset or beyond its last batch, or its first offset is above
	// its last offset.
	TxnIndexRange = "txnindex.range"

	// SegmentOverlap (error): a segment's first offset is not above the
	// previous segment's last offset.
	SegmentOverlap = "segment.overlap"
	// SegmentLeftover (warning): a .deleted, .cleaned or .swap file, or an
	// index file without its .log, which the broker resolves at load.
	SegmentLeftover = "segment.leftover"
)

// severityOf maps each check id to its fixed severity.
var severityOf = map[string]string{
	LogCRC: SeverityError, LogCorruptHeader: SeverityError, LogTruncated: SeverityError,
	LogOffsetOrder: SeverityError, LogOffsetRange: SeverityError, LogRecords: SeverityError,
	LogSize:   SeverityError,
	IndexSize: SeverityError, TimeIndexSize: SeverityError,
	IndexOrder: SeverityError, TimeIndexOrder: SeverityError,
	IndexPosition: SeverityError, IndexMismatch: SeverityError, TimeIndexMismatch: SeverityError,
	IndexPadding: SeverityWarning, TimeIndexPadding: SeverityWarning,
	IndexMissing: SeverityWarning, TimeIndexMissing: SeverityWarning,
	IndexStale: SeverityInfo, TimeIndexStale: SeverityInfo, TimeIndexClosingEntry: SeverityWarning,
	TxnIndexSize: SeverityError, TxnIndexVersion: SeverityError, TxnIndexOrder: SeverityError,
	TxnIndexRange:  SeverityError,
	SegmentOverlap: SeverityError, SegmentLeftover: SeverityWarning,
}

// Severity returns the severity of a check id ("" for an unknown id): the
// most severe its findings take (padding and closing-entry findings are
// info in the cases their comments name).
func Severity(check string) string { return severityOf[check] }

// mayBeInfo are the checks whose findings are info in some cases (see
// each check's comment) and take Severity(check) in the others.
var mayBeInfo = map[string]bool{IndexPadding: true, TimeIndexPadding: true, TimeIndexClosingEntry: true}

// ValidSeverity reports whether a finding of check may have severity.
func ValidSeverity(check, severity string) bool {
	return severity != "" && (severity == Severity(check) || severity == SeverityInfo && mayBeInfo[check])
}

// Checks lists every check id, in the order of the contract's table
// followed by the ids this package added.
func Checks() []string {
	return []string{
		LogCRC, LogCorruptHeader, LogTruncated, LogOffsetOrder, LogOffsetRange, LogRecords,
		IndexSize, TimeIndexSize, IndexOrder, TimeIndexOrder, IndexPosition,
		IndexMismatch, TimeIndexMismatch, IndexPadding, TimeIndexPadding,
		IndexMissing, TimeIndexMissing, IndexStale, TimeIndexStale, TimeIndexClosingEntry,
		TxnIndexSize, TxnIndexVersion, TxnIndexOrder, TxnIndexRange,
		SegmentOverlap, SegmentLeftover, LogSize,
	}
}

// Finding is one problem found. Position is a byte position inside File;
// Offset is the Kafka offset involved; either is nil when it does not
// apply. SegmentBaseOffset is nil for files that belong to no segment.
//
// Finding is data; the contract's JSON line (with "kind":"finding") is
// written by the command line.
type Finding struct {
	Severity          string
	Check             string
	File              string
	SegmentBaseOffset *int64
	Position          *int64
	Offset            *int64
	Message           string
}

// FindingLine is the contract's finding line ("kind":"finding"): verify's
// JSON line, and the report's before its partition directory.
type FindingLine struct {
	Kind              string `json:"kind"` // "finding"
	Severity          string `json:"severity"`
	Check             string `json:"check"`
	File              string `json:"file"`
	SegmentBaseOffset *int64 `json:"segment_base_offset"`
	Position          *int64 `json:"position"`
	Offset            *int64 `json:"offset"`
	Message           string `json:"message"`
}

// Line is the finding as the contract's finding line.
func (f Finding) Line() FindingLine {
	return FindingLine{Kind: "finding", Severity: f.Severity, Check: f.Check, File: f.File,
		SegmentBaseOffset: f.SegmentBaseOffset, Position: f.Position, Offset: f.Offset, Message: f.Message}
}

// IsError reports whether the finding has error severity.
func (f *Finding) IsError() bool { return f.Severity == SeverityError }

// IsInfo reports whether the finding has info severity.
func (f *Finding) IsInfo() bool { return f.Severity == SeverityInfo }

// Summary counts what Run looked at and found. Errors, Warnings and Infos
// count the findings emitted, by severity.
type Summary struct {
	Partitions int
	Segments   int
	Batches    int64 // valid batches (length, magic and CRC agree)
	Bytes      int64 // total size of the .log files
	Errors     int
	Warnings   int
	Infos      int

	rescanned int64 // segmentResult.rescanned, summed (tests bound it)
}

// Add sums another run's summary into s (verify over several PATHs).
func (s *Summary) Add(o Summary) {
	s.Partitions += o.Partitions
	s.Segments += o.Segments
	s.Batches += o.Batches
	s.Bytes += o.Bytes
	s.Errors += o.Errors
	s.Warnings += o.Warnings
	s.Infos += o.Infos
	s.rescanned += o.rescanned
}

// SummaryLine is the contract's summary line: verify's ("kind":"summary")
// and the report's ("kind":"verify_summary").
type SummaryLine struct {
	Kind       string `json:"kind"`
	Partitions int    `json:"partitions"`
	Segments   int    `json:"segments"`
	Batches    int64  `json:"batches"`
	Bytes      int64  `json:"bytes"`
	Errors     int    `json:"errors"`
	Warnings   int    `json:"warnings"`
	Infos      int    `json:"infos"`
}

// Line is the summary as the contract's line of the given kind.
func (s Summary) Line(kind string) SummaryLine {
	return SummaryLine{Kind: kind, Partitions: s.Partitions, Segments: s.Segments, Batches: s.Batches, Bytes: s.Bytes,
		Errors: s.Errors, Warnings: s.Warnings, Infos: s.Infos}
}

func ptr(v int64) *int64 { return &v }

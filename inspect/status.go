package inspect

import (
	"errors"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
)

// Status words: what kseg ls says of a segment and a partition (and the
// postmortem page of kseg report), in the order a status lists them. The
// warnings are states a broker copes with or rebuilds; the rest are
// errors. A status is "ok" or the words that apply, comma-separated.
const (
	StatusOK            = "ok"
	StatusMissingLog    = "missing-log"    // an index file named without its .log
	StatusMissingIndex  = "missing-index"  // a .index or .timeindex is absent
	StatusPaddedIndex   = "padded-index"   // an index ends in zero-filled preallocated slots
	StatusBadIndex      = "bad-index"      // a partial entry, or a last entry leading nowhere
	StatusTornTail      = "torn-tail"      // the .log ends inside a batch
	StatusCorruptLog    = "corrupt-log"    // an impossible batch header before the end
	StatusLeftoverFiles = "leftover-files" // (partitions) .deleted, .cleaned, .swap or orphaned files
)

var statusOrder = []string{StatusMissingLog, StatusMissingIndex, StatusPaddedIndex, StatusBadIndex, StatusTornTail, StatusCorruptLog, StatusLeftoverFiles}

// StatusWarning reports whether a status word is a warning (the broker
// copes, or rebuilds) rather than an error.
func StatusWarning(word string) bool {
	return word == StatusMissingIndex || word == StatusPaddedIndex || word == StatusLeftoverFiles
}

// StatusSet is a set of status words.
type StatusSet map[string]bool

// String joins the words in their order, or says ok.
func (s StatusSet) String() string {
	var words []string
	for _, w := range statusOrder {
		if s[w] {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return StatusOK
	}
	return strings.Join(words, ",")
}

// Status is the set of status words a segment earns from its summary.
func (s *SegmentSummary) Status() StatusSet {
	set := StatusSet{}
	if s.Files.Log == "" {
		set[StatusMissingLog] = true
	} else if s.Files.Snapshot == nil && (!s.Index.Present || !s.TimeIndex.Present) { // a snapshot has no indexes
		set[StatusMissingIndex] = true
	}
	if s.Index.Padded() || s.TimeIndex.Padded() {
		set[StatusPaddedIndex] = true
	}
	if s.Index.Trailing > 0 || s.TimeIndex.Trailing > 0 || s.TxnIndex.Trailing > 0 || s.IndexAstray {
		set[StatusBadIndex] = true
	}
	switch {
	case s.Damage == nil:
	case errors.Is(s.Damage, fileio.ErrTorn):
		set[StatusTornTail] = true
	default:
		set[StatusCorruptLog] = true
	}
	return set
}

// PartitionStatus is a partition's status: its segments' words, and
// leftover-files when discovery skipped files the broker resolves at load
// (a KRaft snapshot scheduled for deletion is the raft layer's business,
// not a leftover of the log, as verify sees it).
func PartitionStatus(p *Partition, sums []SegmentSummary) StatusSet {
	set := StatusSet{}
	for _, sk := range p.Skipped {
		if !strings.HasSuffix(sk.Path, ".checkpoint.deleted") {
			set[StatusLeftoverFiles] = true
		}
	}
	for i := range sums {
		for w := range sums[i].Status() {
			set[w] = true
		}
	}
	return set
}

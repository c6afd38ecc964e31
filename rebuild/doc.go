// Package rebuild emulates Kafka broker recovery offline: from a segment's
// .log it computes the .index, .timeindex and .txnindex bytes that
// LogSegment.recover leaves, byte for byte, and it replaces index files (and,
// when asked, cuts a corrupt log tail) safely.
//
// It works in two steps, as the broker's code does:
//
//   - Plan (recovery.PlanPartition, in inspect/recovery) is pure: it reads
//     the logs of a partition and returns, per segment, the rebuilt index
//     bytes, the end of the valid prefix and why recovery stopped early.
//     Nothing is written. It lives below both rebuild and verify (whose
//     "stale" checks compare the files on disk with a plan), and its tests
//     live with it.
//   - Apply (Apply, Run) writes a plan: to another directory (--out), or in
//     place through a temporary file, fsync and rename, keeping the old file
//     as <name>.bak. It returns what it did as []Result; it never prints.
//
// Which broker version: the recovery loop is the one of Kafka 2.0 and later
// (offset-index entries are (last offset of the batch, batch position), the
// time index records the running maximum timestamp with the last offset of
// the first batch reaching it, kafka-on-disk.md section 9.1). A segment
// written by a 4.1+ broker from one LogSegment object (no restart, no
// truncation) has exactly these indexes; files written by older append paths
// legitimately differ (sections 5.8, 6.7, 9.5).
package rebuild

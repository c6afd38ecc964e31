// Package recovery emulates Kafka broker recovery offline and read-only:
// from the logs of a partition it computes, per segment, what
// LogSegment.recover leaves (kafka-on-disk.md section 9): the end of the
// valid prefix and why recovery stopped there, and the .index, .timeindex
// and .txnindex bytes it writes, byte for byte. Nothing is written.
//
// It sits below both of its users: verify compares the files on disk with
// a plan (the *.stale and txnindex checks), rebuild writes one. A plan is
// a SegmentRecovery per segment (PlanPartition); which segments a broker's
// next start recovers is verify's StartupRecovery. The index
// points come from indexfmt.RecoveryIndexer, the rule verify's single-pass
// stale check feeds as well; the transaction index from a replay of the
// producer state (producerstate.State).
package recovery

// Package inspect reads Kafka partition data on disk, offline, with the
// broker's algorithms: it is the face every command and the verify and
// rebuild packages stand on. It finds partitions and segments, reads logs,
// answers the broker's lookups and summarises what it finds; it never
// writes.
//
// The map, arrows pointing down (layers_test.go enforces them):
//
//	verify, rebuild            checks and repairs, over inspect/recovery
//	inspect/recovery           broker recovery (LogSegment.recover), read-only
//	inspect/find, groups, replica, txns, retention, cleaner, metadata,
//	  producerstate, topicconfig, schemaregistry, internaltopics
//	                           the analyses, each over this package
//	inspect/listing, dumplog, dumpindex, dumpcheckpoint, dumpsnapshot
//	                           what ls and the dump commands list, each over this package
//	inspect                    this package:
//	    discover.go            Resolve: data dir → Partition → SegmentFiles; SortPartitions
//	    discover_below.go      DataDirsBelow: the data directories below a path; StatPath
//	    segment.go             OpenSegment: a segment's .log and indexes; Segment.NextOffset
//	    logiter.go             LogIterator, the one log reader; Damage
//	    walk.go                Partition.Walk, WalkSalvage: batches in offset order
//	    lookup.go, lookup_time.go, misleading.go, trace.go, trace_words.go
//	                           the broker's offset and time lookups, their trace
//	    summary.go, status.go  Partition.Summarize (ls) and the status words
//	    brokerstate.go         recovery point, log start and end offsets, high watermark
//	    timeline.go            a partition's traffic over time (its offset cursor)
//	    sidefiles.go, epochs.go, kraftsnapshot.go
//	                           the side files of a partition, as a broker reads them
//	    inorder.go, progress.go
//	                           InOrder (jobs in parallel, results in order), Meter
//	inspect/internal/scan      the scan engine under LogIterator: stop rules,
//	                           read window, read-ahead, resynchronisation
//	inspect/record             the batch codec (common.record)
//	inspect/sidefile           checkpoints, snapshots, partition.metadata, ...
//	inspect/fileio             opening files, the mapped-file fault guard,
//	                           atomic writes, CorruptError and the damage kinds
//	indexfmt                   the three index formats and the broker's search
//
// docs/design.md tells, for each broker rule, the one place it is written.
package inspect

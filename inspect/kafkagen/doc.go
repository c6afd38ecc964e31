// Package kafkagen writes synthetic Kafka partition directories that are byte
// compatible with what a broker writes, deterministically from a seed. It
// is the ground truth of kseg's tests: Generate returns a Manifest that
// lists every batch, record and index entry it wrote.
//
// It is an independent implementation of the broker's write side, built
// from the byte layouts alone:
//
//   - record batches v2 (DefaultRecordBatch, CRC-32C over [21, end)),
//     v0/v1 messages and compressed wrapper messages (LegacyRecord, CRC-32),
//     end-transaction markers (78-byte control batches);
//   - gzip, snappy (xerial framing as the Java client writes it, or one raw
//     block as librdkafka does), Kafka's LZ4 frame (64 KiB blocks, no
//     content checksum, and for magic 0 the broken header checksum that
//     pre-0.10 brokers wrote), zstd;
//   - offset and time indexes by the broker's append path as of Kafka 4.1
//     (one decision per batch, KAFKA-806), which is also exactly what
//     recovery rebuilds; the final time-index entry at roll and close;
//     trimmed files for closed segments, preallocated zero tails for the
//     active segment of a broker that is still running;
//   - .txnindex entries for aborted transactions in the segment active when
//     the ABORT marker is appended, with the broker's last stable offset;
//   - leader-epoch-checkpoint, partition.metadata and producer snapshots
//     (.snapshot, version 1) at every roll and at a clean shutdown.
//
// Big partitions stream to disk through a buffered writer; BenchOptions
// returns options for segments of a given size (e.g. 1 GiB).
package kafkagen

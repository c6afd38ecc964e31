// Package record is the batch codec, named after the broker's
// org.apache.kafka.common.record: batch headers of magic 0, 1 and 2
// (ParseBatch), their CRCs, the headers no broker writes (HeaderProblem),
// records and their decompression (RecordDecoder), control records, varints,
// and a batch's first offset and record count (BatchCount). It decodes
// bytes; reading them from a log is inspect's.
package record

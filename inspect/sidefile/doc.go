// Package sidefile reads and writes the files of a data directory and of a
// partition directory that are not segments: the offset checkpoints
// (recovery point, log start, replication, cleaner), the leader epoch
// checkpoint, partition.metadata, meta.properties, the clean shutdown
// marker and producer snapshots, each as the broker parses it. Which of
// them a broker's next start trusts is inspect's (brokerstate.go).
package sidefile

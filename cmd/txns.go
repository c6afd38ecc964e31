package cmd

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/topicconfig"
	"github.com/kseg/kseg/inspect/txns"
)

// txnsLong is kseg txns' help.
const txnsLong = `Show, for every partition under each PATH, the open transactions and the last
stable offset (LSO) as the partition leader's ProducerStateManager holds them
after loading the partition (LogLoader.load, UnifiedLog.rebuildProducerState):
the snapshots that are strays (at no segment's base offset, unless the
largest and at or above the last segment's), above the log end offset or at
or below the log start offset are ignored; the latest remaining snapshot is
loaded (a corrupt one falls back to the next older; producers without an
open transaction idle for producer.id.expiration.ms are dropped); then the
batches after it are replayed: a transactional batch opens a transaction at
its first offset for its producer id, a COMMIT or ABORT marker of that
producer closes it. After a clean shutdown with no snapshot left the broker
rebuilds no producer state (producer_state_from "none").

The high watermark (HW) is the replication-offset-checkpoint entry clamped to
[log start, log end] (UnifiedLog.updateHighWatermark; no entry: the log start
offset). The LSO is the first unstable offset (the smallest first offset of an
open transaction, or of one whose marker is at or above the HW, raised to the
log start offset) when it is below the HW, else the HW.

Verdicts, by precedence: hanging (kafka-transactions find-hanging: open
longer than transaction.max.timeout.ms since its producer's last batch, and
the transaction coordinator knows no transaction of that producer id that
lists this partition; decided only when __transaction_state partitions are
under the PATHs, replayed as the coordinator loads them: last value of a
transactional id wins, a tombstone removes it), late
(ProducerStateManager.hasLateTransaction: the last batch older than
transaction.max.timeout.ms plus 5 minutes), ongoing. Ages are measured from
--at (default: now).

Configuration, the later winning: Kafka's defaults, --server-properties FILE
(transaction.max.timeout.ms, producer.id.expiration.ms,
transaction.state.log.num.partitions), the metadata image, --config
KEY=VALUE. Each line's config_source says where each value came from.

Fields (-o json): kind ("open_transaction") partition_dir producer_id
producer_epoch first_offset last_offset first_timestamp (null: the
transaction began before the snapshot) last_timestamp age_ms batches
(null likewise) coordinator (null, or transactional_id state producer_epoch
partitions last_update) verdict why config_source; kind ("partition")
partition_dir log_end_offset high_watermark high_watermark_source
last_stable_offset lso_lag (log end - LSO) open_transactions
producer_state_from config_source.

Exit 0 when no transaction is late or hanging, 1 when one is, 2 when a PATH
or a partition could not be read.`

func newTxnsCommand(ios *IOStreams) *cobra.Command {
	return newAnalysisCommand(ios, &cobra.Command{
		Use:   "txns PATH...",
		Short: "Open transactions and the last stable offset of every partition, as its leader loads them",
		Long:  txnsLong,
		Example: `  kseg txns /var/lib/kafka/data
  kseg txns --server-properties /etc/kafka/server.properties -o json data | jq -c 'select(.kind=="open_transaction")'
  kseg txns --at 2024-05-01T10:00:00Z --config transaction.max.timeout.ms=60000 data/orders-3`,
	}, runTxns)
}

// txnCoordinatorJSON is the coordinator object of an open_transaction.
type txnCoordinatorJSON struct {
	TransactionalID string              `json:"transactional_id"`
	State           string              `json:"state"`
	ProducerID      int64               `json:"producer_id"`
	ProducerEpoch   int16               `json:"producer_epoch"`
	Partitions      []txnTopicPartsJSON `json:"partitions"`
	LastUpdate      int64               `json:"last_update"`
	Source          string              `json:"source"`
}

type txnTopicPartsJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// openTxnJSON is the contract's open_transaction line.
type openTxnJSON struct {
	Kind           string              `json:"kind"`
	PartitionDir   string              `json:"partition_dir"`
	ProducerID     int64               `json:"producer_id"`
	ProducerEpoch  int16               `json:"producer_epoch"`
	FirstOffset    int64               `json:"first_offset"`
	LastOffset     int64               `json:"last_offset"`
	FirstTimestamp *int64              `json:"first_timestamp"`
	LastTimestamp  int64               `json:"last_timestamp"`
	AgeMs          int64               `json:"age_ms"`
	Batches        *int                `json:"batches"`
	Coordinator    *txnCoordinatorJSON `json:"coordinator"`
	Verdict        string              `json:"verdict"`
	Why            string              `json:"why"`
	ConfigSource   map[string]string   `json:"config_source"`
}

// txnPartitionJSON is the contract's partition line of txns.
type txnPartitionJSON struct {
	Kind                string            `json:"kind"`
	PartitionDir        string            `json:"partition_dir"`
	LogEndOffset        int64             `json:"log_end_offset"`
	HighWatermark       int64             `json:"high_watermark"`
	HighWatermarkSource string            `json:"high_watermark_source"`
	LastStableOffset    int64             `json:"last_stable_offset"`
	LSOLag              int64             `json:"lso_lag"`
	OpenTransactions    int               `json:"open_transactions"`
	ProducerStateFrom   string            `json:"producer_state_from"`
	ConfigSource        map[string]string `json:"config_source"`
}

// txnsLine is one row: an open transaction or a partition.
type txnsLine struct {
	open *openTxnJSON
	part *txnPartitionJSON
}

func (l txnsLine) MarshalJSON() ([]byte, error) { return marshalEither(l.open, l.part) }

func (l txnsLine) dir() string {
	if l.open != nil {
		return l.open.PartitionDir
	}
	return l.part.PartitionDir
}

var (
	openCell    = partCell(func(l txnsLine) *openTxnJSON { return l.open })
	txnPartCell = partCell(func(l txnsLine) *txnPartitionJSON { return l.part })
)

var txnsColumns = []column[txnsLine]{
	textColumn("kind", func(l txnsLine) string {
		return map[bool]string{true: "open_transaction", false: "partition"}[l.open != nil]
	}),
	withFit(textColumn("partition_dir", txnsLine.dir), fitElide),
	{name: "producer_id", right: true, cell: openCell(func(o *openTxnJSON) string { return fmt.Sprint(o.ProducerID) })},
	wideOnly(column[txnsLine]{name: "producer_epoch", right: true, cell: openCell(func(o *openTxnJSON) string { return fmt.Sprint(o.ProducerEpoch) })}),
	{name: "first_offset", right: true, cell: openCell(func(o *openTxnJSON) string { return fmt.Sprint(o.FirstOffset) })},
	wideOnly(column[txnsLine]{name: "last_offset", right: true, cell: openCell(func(o *openTxnJSON) string { return fmt.Sprint(o.LastOffset) })}),
	wideOnly(column[txnsLine]{name: "first_timestamp", right: true, cell: openCell(func(o *openTxnJSON) string { return intText(o.FirstTimestamp) })}),
	wideOnly(column[txnsLine]{name: "last_timestamp", right: true, cell: openCell(func(o *openTxnJSON) string { return fmt.Sprint(o.LastTimestamp) })}),
	{name: "age_ms", right: true, cell: openCell(func(o *openTxnJSON) string { return fmt.Sprint(o.AgeMs) })},
	wideOnly(column[txnsLine]{name: "batches", right: true, cell: openCell(func(o *openTxnJSON) string {
		if o.Batches == nil {
			return ""
		}
		return fmt.Sprint(*o.Batches)
	})}),
	withFit(textColumn("coordinator", openCell(func(o *openTxnJSON) string {
		if o.Coordinator == nil {
			return ""
		}
		return fmt.Sprintf("%s (%s)", o.Coordinator.TransactionalID, o.Coordinator.State)
	})), fitElide),
	textColumn("verdict", openCell(func(o *openTxnJSON) string { return o.Verdict })),
	{name: "log_end_offset", right: true, cell: txnPartCell(func(p *txnPartitionJSON) string { return fmt.Sprint(p.LogEndOffset) })},
	{name: "high_watermark", right: true, cell: txnPartCell(func(p *txnPartitionJSON) string { return fmt.Sprint(p.HighWatermark) })},
	wideOnly(textColumn("high_watermark_source", txnPartCell(func(p *txnPartitionJSON) string { return p.HighWatermarkSource }))),
	{name: "last_stable_offset", right: true, cell: txnPartCell(func(p *txnPartitionJSON) string { return fmt.Sprint(p.LastStableOffset) })},
	{name: "lso_lag", right: true, cell: txnPartCell(func(p *txnPartitionJSON) string { return fmt.Sprint(p.LSOLag) })},
	{name: "open_transactions", right: true, cell: txnPartCell(func(p *txnPartitionJSON) string { return fmt.Sprint(p.OpenTransactions) })},
	wideOnly(textColumn("producer_state_from", txnPartCell(func(p *txnPartitionJSON) string { return p.ProducerStateFrom }))),
	wideOnly(textColumn("why", openCell(func(o *openTxnJSON) string { return o.Why }))),
	wideOnly(textColumn("config_source", func(l txnsLine) string {
		m := l.part.configSource()
		if l.open != nil {
			m = l.open.ConfigSource
		}
		return configSourceText(m, txns.ConfigKeys)
	})),
}

func (p *txnPartitionJSON) configSource() map[string]string {
	if p == nil {
		return nil
	}
	return p.ConfigSource
}

func txnsLines(rep *txns.Report) []txnsLine {
	var out []txnsLine
	for _, pt := range rep.Partitions {
		if pt.Err != nil {
			continue
		}
		src := pt.Config.SourcesOf(txns.ConfigKeys...)
		for _, o := range pt.Open {
			j := &openTxnJSON{Kind: "open_transaction", PartitionDir: o.Partition.Name(), ProducerID: o.ProducerID, ProducerEpoch: o.ProducerEpoch,
				FirstOffset: o.FirstOffset, LastOffset: o.LastOffset, FirstTimestamp: o.FirstTimestamp, LastTimestamp: o.LastTimestamp,
				AgeMs: o.AgeMs, Batches: o.Batches, Verdict: o.Verdict, Why: o.Why, ConfigSource: src}
			if c := o.Coordinator; c != nil {
				j.Coordinator = &txnCoordinatorJSON{TransactionalID: c.TransactionalID, State: c.State, ProducerID: c.ProducerID,
					ProducerEpoch: c.ProducerEpoch, LastUpdate: c.LastUpdate, Source: c.Source, Partitions: []txnTopicPartsJSON{}}
				topics := make([]string, 0, len(c.Partitions))
				for t := range c.Partitions {
					topics = append(topics, t)
				}
				sort.Strings(topics)
				for _, t := range topics {
					j.Coordinator.Partitions = append(j.Coordinator.Partitions, txnTopicPartsJSON{t, c.Partitions[t]})
				}
			}
			out = append(out, txnsLine{open: j})
		}
		out = append(out, txnsLine{part: &txnPartitionJSON{Kind: "partition", PartitionDir: pt.Partition.Name(), LogEndOffset: pt.LogEndOffset,
			HighWatermark: pt.HighWatermark, HighWatermarkSource: pt.HighWatermarkSource, LastStableOffset: pt.LastStableOffset,
			LSOLag: pt.LSOLag, OpenTransactions: len(pt.Open), ProducerStateFrom: pt.ProducerStateFrom, ConfigSource: src}})
	}
	return out
}

func runTxns(ios *IOStreams, opts analysisOptions, paths []string) error {
	rep, err := runAnalysis(ios, opts, paths, "txns", func(targets []*inspect.Target, configs *topicconfig.Resolver, now int64, progress func(done, total int64)) (*txns.Report, error) {
		return txns.Analyze(targets, txns.Options{Now: now, Configs: configs, Progress: progress})
	})
	if err != nil {
		return err
	}
	failed := warnPartitions(ios, rep)
	l := newLister(ios, txnsColumns)
	for _, line := range txnsLines(rep) {
		l.Add(line)
	}
	l.Footer("%s, %d late and %d hanging transactions", count(len(rep.Partitions)-failed, "partition"), rep.Late, rep.Hanging)
	if err := l.Close(); err != nil {
		return err
	}
	switch {
	case failed > 0:
		return withHint(fmt.Errorf("%s could not be loaded", count(failed, "partition")), "kseg verify names the damage")
	case rep.Late+rep.Hanging > 0:
		return errNegative(fmt.Sprintf("%d late and %d hanging transactions", rep.Late, rep.Hanging))
	}
	return nil
}

// warnPartitions prints the report's notes, each partition's skipped
// snapshots and load errors, and counts the partitions that failed.
func warnPartitions(ios *IOStreams, rep *txns.Report) int {
	for _, n := range rep.Notes {
		ios.Warnf("%s", n)
	}
	failed := 0
	var hw []string
	for _, pt := range rep.Partitions {
		if pt.Err != nil {
			ios.Warnf("%v", pt.Err)
			failed++
			continue
		}
		hw = append(hw, pt.HighWatermarkSource)
		for _, s := range pt.Loaded.Skipped {
			if !s.Abnormal {
				continue
			}
			ios.Warnf("%s: snapshot not used: %s", s.Path, s.Reason)
		}
	}
	warnHighWatermarks(ios, hw)
	return failed
}

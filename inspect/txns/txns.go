// Package txns answers "why are read_committed consumers stuck?" offline:
// each partition's open transactions and last stable offset as its
// leader's ProducerStateManager holds them after loading the partition
// (producerstate.Load), with the late verdict of
// ProducerStateManager.hasLateTransaction and, when the data directory
// holds __transaction_state partitions, the transaction coordinator's view
// of each producer and the hanging verdict of kafka-transactions
// find-hanging.
package txns

import (
	"fmt"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/producerstate"
	"github.com/kseg/kseg/inspect/sidefile"
	"github.com/kseg/kseg/inspect/topicconfig"
)

// Verdicts, by precedence: hanging, late, ongoing.
const (
	VerdictOngoing = "ongoing"
	VerdictLate    = "late"
	VerdictHanging = "hanging"
)

// ConfigKeys are the configuration keys txns reads.
var ConfigKeys = []string{topicconfig.TransactionMaxTimeoutMs, topicconfig.ProducerIDExpirationMs}

// Options say how to analyse.
type Options struct {
	// Now is "now" in ms: ages and expirations are measured against it.
	Now int64
	// Configs resolves each topic's configuration (nil: Kafka's defaults).
	Configs *topicconfig.Resolver
	// Progress, when set, is called on the caller's goroutine after each
	// partition with the partitions done and their total.
	Progress func(done, total int64)
}

// OpenTransaction is one open transaction of a partition.
type OpenTransaction struct {
	Partition     *inspect.Partition
	ProducerID    int64
	ProducerEpoch int16
	FirstOffset   int64
	// LastOffset is the last offset of the transaction's last batch known
	// (the producer's last data batch).
	LastOffset int64
	// FirstTimestamp and Batches are what the replay saw of the
	// transaction; nil when it began before the snapshot that carries it.
	FirstTimestamp *int64
	Batches        *int
	// LastTimestamp is the producer's last timestamp (its last batch), and
	// AgeMs now minus it.
	LastTimestamp int64
	AgeMs         int64
	// Coordinator is the coordinator's state for the producer id (nil when
	// no __transaction_state partition was read, or it knows none).
	Coordinator *CoordinatorTxn
	Verdict     string
	// Why says what decided the verdict, and what it assumed.
	Why string
}

// PartitionTxns is one partition's line.
type PartitionTxns struct {
	Partition           *inspect.Partition
	Loaded              *producerstate.Loaded
	LogEndOffset        int64
	HighWatermark       int64
	HighWatermarkSource string
	LastStableOffset    int64
	LSOLag              int64 // log end offset - last stable offset
	Open                []OpenTransaction
	ProducerStateFrom   string
	Config              *topicconfig.Config
	// Err is set when the partition could not be loaded (the rest of the
	// line is then empty).
	Err error
}

// Report is the answer for all partitions.
type Report struct {
	Partitions []PartitionTxns
	// Coordinator is the coordinator's view (nil: no __transaction_state
	// partition under the paths).
	Coordinator *Coordinator
	// Notes say what the verdicts assumed.
	Notes         []string
	Late, Hanging int
}

// Analyze loads every partition of the targets and decides each open
// transaction's verdict.
func Analyze(targets []*inspect.Target, opts Options) (*Report, error) {
	opts.Configs = topicconfig.OrDefaults(opts.Configs)
	parts, dds := inspect.LogManagerPartitions(targets)
	rep := &Report{Partitions: make([]PartitionTxns, len(parts))}
	err := inspect.EachPartition(len(parts), func(i int) error {
		var err error
		rep.Partitions[i], err = loadPartition(parts[i], dds[parts[i].DataDir], opts.Now, opts.Configs)
		return err
	}, opts.Progress)
	if err != nil {
		return nil, err
	}

	// The coordinator's view, from the __transaction_state partitions.
	var coordParts []*inspect.Partition
	for _, pt := range rep.Partitions {
		if pt.Partition.Topic == TransactionStateTopic && pt.Err == nil {
			coordParts = append(coordParts, pt.Partition)
		}
	}
	starts := map[*inspect.Partition]int64{}
	for _, pt := range rep.Partitions {
		if pt.Loaded != nil {
			starts[pt.Partition] = pt.Loaded.LogStartOffset
		}
	}
	if len(coordParts) > 0 {
		c, err := LoadCoordinator(coordParts, func(p *inspect.Partition) int64 { return starts[p] })
		if err != nil {
			return nil, err
		}
		rep.Coordinator = c
		rep.Notes = append(rep.Notes, c.Stopped...)
	}
	rep.decide(opts)
	return rep, nil
}

// loadPartition loads one partition; a partition that does not load is
// reported in its Err, a bad configuration is the error.
func loadPartition(p *inspect.Partition, dd *sidefile.DataDirFiles, now int64, configs *topicconfig.Resolver) (PartitionTxns, error) {
	pt := PartitionTxns{Partition: p}
	cfg, err := configs.Topic(p.Topic)
	if err != nil {
		return pt, err
	}
	pt.Config = cfg
	l, err := producerstate.Load(p, producerstate.LoadOptions{Now: now, ProducerIDExpirationMs: cfg.ProducerIDExpirationMs, DataDir: dd})
	if err != nil {
		pt.Err = fmt.Errorf("%s: %w", p.Dir, err)
		return pt, nil
	}
	pt.Loaded = l
	pt.LogEndOffset, pt.HighWatermark, pt.HighWatermarkSource = l.LogEndOffset, l.HighWatermark, l.HighWatermarkSource
	pt.LastStableOffset = l.LastStableOffset
	pt.LSOLag = l.LogEndOffset - l.LastStableOffset
	pt.ProducerStateFrom = l.From()
	for _, t := range l.State.Ongoing() {
		pt.Open = append(pt.Open, openTransaction(p, l, t, now))
	}
	return pt, nil
}

func openTransaction(p *inspect.Partition, l *producerstate.Loaded, t producerstate.Txn, now int64) OpenTransaction {
	o := OpenTransaction{Partition: p, ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.FirstOffset, LastTimestamp: -1}
	if e := l.State.Producer(t.ProducerID); e != nil {
		o.ProducerEpoch, o.LastTimestamp = e.Epoch, e.LastTimestamp
		o.LastOffset = max(t.FirstOffset, e.LastDataOffset)
		if e.TxnBatches > 0 && e.CurrentTxnFirstOffset == t.FirstOffset {
			ts, n := e.TxnFirstTimestamp, e.TxnBatches
			o.FirstTimestamp, o.Batches = &ts, &n
			o.LastOffset = max(o.LastOffset, e.TxnLastOffset)
		}
	}
	o.AgeMs = now - o.LastTimestamp
	return o
}

// decide gives each open transaction its verdict: hanging as
// kafka-transactions find-hanging decides it (open longer than
// transaction.max.timeout.ms since the producer's last batch, and the
// coordinator knows no transaction of that producer id that lists the
// partition), else late as ProducerStateManager.hasLateTransaction
// decides it (longer than the timeout plus LateTransactionBufferMs), else
// ongoing.
func (rep *Report) decide(opts Options) {
	open := 0
	for _, pt := range rep.Partitions {
		open += len(pt.Open)
	}
	partial := false
	if c := rep.Coordinator; c != nil && open > 0 {
		want := int32(0)
		for _, pt := range rep.Partitions {
			if pt.Config != nil {
				want = pt.Config.TransactionLogPartitions
				break
			}
		}
		if int32(len(c.Partitions)) < want {
			partial = true
			rep.Notes = append(rep.Notes, fmt.Sprintf("hanging verdicts assume that the %d %s partitions not under the paths (of %d, transaction.state.log.num.partitions) know none of the producers: %d were read",
				int(want)-len(c.Partitions), TransactionStateTopic, want, len(c.Partitions)))
		}
	} else if c == nil && open > 0 {
		rep.Notes = append(rep.Notes, "no "+TransactionStateTopic+" partition under the paths: the coordinator's view is unknown, so no transaction is called hanging (late and ongoing only)")
	}
	for i := range rep.Partitions {
		pt := &rep.Partitions[i]
		if pt.Config == nil {
			continue
		}
		timeout := pt.Config.TransactionMaxTimeoutMs
		for j := range pt.Open {
			o := &pt.Open[j]
			o.Verdict = VerdictOngoing
			o.Why = fmt.Sprintf("last batch %d ms ago, within %s", o.AgeMs, pt.Config.Describe(topicconfig.TransactionMaxTimeoutMs))
			if producerstate.IsLate(o.LastTimestamp, opts.Now, timeout) {
				o.Verdict = VerdictLate
				o.Why = fmt.Sprintf("last batch %d ms ago, over %s plus %d ms (ProducerStateManager.hasLateTransaction)", o.AgeMs, pt.Config.Describe(topicconfig.TransactionMaxTimeoutMs), producerstate.LateTransactionBufferMs)
			}
			if rep.Coordinator == nil {
				continue
			}
			var listing *CoordinatorTxn
			for _, ct := range rep.Coordinator.ByProducer(o.ProducerID) {
				if o.Coordinator == nil {
					o.Coordinator = ct
				}
				if ct.Lists(pt.Partition.Topic, pt.Partition.Partition) {
					listing = ct
					o.Coordinator = ct
				}
			}
			if o.AgeMs > timeout && listing == nil {
				o.Verdict = VerdictHanging
				switch {
				case o.Coordinator == nil:
					o.Why = fmt.Sprintf("open %d ms since its last batch, over %s, and the coordinator knows no transactional id with producer id %d", o.AgeMs, pt.Config.Describe(topicconfig.TransactionMaxTimeoutMs), o.ProducerID)
				default:
					o.Why = fmt.Sprintf("open %d ms since its last batch, over %s, and the coordinator's transaction %q (%s) does not list this partition", o.AgeMs, pt.Config.Describe(topicconfig.TransactionMaxTimeoutMs), o.Coordinator.TransactionalID, o.Coordinator.State)
				}
				if partial {
					o.Why += " (assuming the " + TransactionStateTopic + " partitions not read do not know it either)"
				}
			}
		}
	}
	for _, pt := range rep.Partitions {
		for _, o := range pt.Open {
			switch o.Verdict {
			case VerdictLate:
				rep.Late++
			case VerdictHanging:
				rep.Hanging++
			}
		}
	}
}

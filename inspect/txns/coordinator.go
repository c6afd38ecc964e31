package txns

import (
	"errors"
	"fmt"
	"sort"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
)

// TransactionStateTopic is the transaction coordinator's log.
const TransactionStateTopic = "__transaction_state"

// CoordinatorTxn is a transactional id's state as the transaction
// coordinator holds it after loading its partition (TransactionMetadata
// from TransactionLog.readTxnRecordValue).
type CoordinatorTxn struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	State           string // TransactionState's name: Empty, Ongoing, PrepareCommit, ...
	TimeoutMs       int32
	// Partitions are the transaction's partitions; readTxnRecordValue
	// ignores them in the Empty state, and the coordinator writes none
	// once a transaction completes.
	Partitions map[string][]int32
	LastUpdate int64
	StartTime  int64
	// Source is the __transaction_state partition and Offset the record.
	Source string
	Offset int64
}

// Lists reports whether the state lists topic-partition.
func (c *CoordinatorTxn) Lists(topic string, partition int32) bool {
	for _, p := range c.Partitions[topic] {
		if p == partition {
			return true
		}
	}
	return false
}

// Coordinator is the transaction coordinator's view: every transactional
// id of the __transaction_state partitions read.
type Coordinator struct {
	byID       map[string]*CoordinatorTxn
	Partitions []string // the partitions read
	// Stopped lists partitions whose load stopped early, and why: the
	// coordinator stops loading a partition at a record it cannot read
	// (loadTransactionMetadata catches the exception and keeps what it
	// loaded before it).
	Stopped []string
	// UnknownKeys counts records with a key version the coordinator
	// ignores (UnknownKey).
	UnknownKeys int
}

// ByProducer returns the transactional ids whose producer id is pid
// (ListTransactions filtered by producer id), by transactional id.
func (c *Coordinator) ByProducer(pid int64) []*CoordinatorTxn {
	var out []*CoordinatorTxn
	for _, t := range c.byID {
		if t.ProducerID == pid {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TransactionalID < out[j].TransactionalID })
	return out
}

// Len is the number of transactional ids known.
func (c *Coordinator) Len() int { return len(c.byID) }

// LoadCoordinator replays __transaction_state partitions as
// TransactionStateManager.loadTransactionMetadata does: records in offset
// order from the log start offset, the last value of a transactional id
// wins, a tombstone removes it, a key of an unknown version is skipped,
// and a value of an unknown version (IllegalStateException) or one that
// does not decode ends that partition's load, keeping what came before.
func LoadCoordinator(parts []*inspect.Partition, logStart func(*inspect.Partition) int64) (*Coordinator, error) {
	c := &Coordinator{byID: map[string]*CoordinatorTxn{}}
	for _, p := range parts {
		c.Partitions = append(c.Partitions, p.Name())
		if err := c.load(p, logStart(p)); err != nil {
			return c, err
		}
	}
	return c, nil
}

// errStop ends a partition's load.
type errStop struct{ why string }

func (e *errStop) Error() string { return e.why }

func (c *Coordinator) load(p *inspect.Partition, from int64) error {
	var dec record.RecordDecoder
	source := p.Name()
	err := p.Walk(inspect.LogRange{FromOffset: &from}, func(w inspect.WalkBatch) error {
		b := w.Batch
		if b.IsControl() {
			return nil
		}
		return dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
			if r.Offset < from {
				return nil
			}
			return c.apply(source, r)
		})
	})
	if stop, ok := err.(*errStop); ok {
		c.Stopped = append(c.Stopped, fmt.Sprintf("%s: %s", source, stop.why))
		return nil
	}
	var ce *fileio.CorruptError
	if errors.As(err, &ce) {
		// The load's catch-all takes a damaged batch as it takes a bad record.
		c.Stopped = append(c.Stopped, fmt.Sprintf("%s: %v; the coordinator stops loading this partition there and keeps the %d transactional ids loaded before it", source, err, len(c.byID)))
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p.Dir, err)
	}
	return nil
}

func (c *Coordinator) apply(source string, r *record.Record) error {
	if r.Key == nil {
		// require(record.hasKey): an exception, caught by the load.
		return &errStop{fmt.Sprintf("record at offset %d has no key (the coordinator stops loading this partition there)", r.Offset)}
	}
	d := internaltopics.Decode(internaltopics.TransactionState, r.Key, r.Value)
	if d.KeyVersion != nil && *d.KeyVersion != 0 {
		c.UnknownKeys++ // readTxnRecordKey: UnknownKey, skipped
		return nil
	}
	if d.Error != "" || d.Note != "" {
		why := d.Error
		if why == "" {
			why = d.Note
		}
		if d.ValueVersion != nil && (*d.ValueVersion < 0 || *d.ValueVersion > 1) {
			why = fmt.Sprintf("value of unknown version %d (TransactionLog.readTxnRecordValue: IllegalStateException)", *d.ValueVersion)
		}
		return &errStop{fmt.Sprintf("record at offset %d: %s; the coordinator stops loading this partition there and keeps the %d transactional ids loaded before it", r.Offset, why, len(c.byID))}
	}
	id, _ := d.Key.Get("transactionalId")
	tid, _ := id.(string)
	if d.Tombstone {
		delete(c.byID, tid)
		return nil
	}
	t := &CoordinatorTxn{TransactionalID: tid, Source: source, Offset: r.Offset, Partitions: map[string][]int32{}}
	num := func(name string) int64 {
		v, _ := d.Value.Get(name)
		n, _ := v.(int64)
		return n
	}
	t.ProducerID = num("producerId")
	t.ProducerEpoch = int16(num("producerEpoch"))
	t.TimeoutMs = int32(num("transactionTimeoutMs"))
	t.State = internaltopics.TransactionStateName(int8(num("transactionStatus")))
	t.LastUpdate = num("transactionLastUpdateTimestampMs")
	t.StartTime = num("transactionStartTimestampMs")
	if t.State != "Empty" {
		v, _ := d.Value.Get("transactionPartitions")
		items, _ := v.([]any)
		for _, it := range items {
			f, ok := it.(internaltopics.Fields)
			if !ok {
				continue
			}
			tv, _ := f.Get("topic")
			topic, _ := tv.(string)
			pv, _ := f.Get("partitionIds")
			ids, _ := pv.([]any)
			for _, id := range ids {
				if n, ok := id.(int64); ok {
					t.Partitions[topic] = append(t.Partitions[topic], int32(n))
				}
			}
		}
	}
	c.byID[tid] = t
	return nil
}

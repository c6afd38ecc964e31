package cmd

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect/internaltopics"
)

// Internal topics holding coordinator state, and the brokers' default
// partition count for both (offsets.topic.num.partitions,
// transaction.state.log.num.partitions).
const (
	groupMetadataTopic     = "__consumer_offsets"
	transactionStateTopic  = "__transaction_state"
	defaultStatePartitions = 50
)

// Values of the "kind" field.
const (
	coordinatorGroup         = "group"
	coordinatorTransactional = "transactional_id"
)

type coordinatorOptions struct {
	kind       string // coordinatorGroup or coordinatorTransactional
	id         string
	partitions int

	group, txnID string // --group, --transactional-id as given
	flags        *pflag.FlagSet
}

// coordinatorResult is the contract's coordinator line.
type coordinatorResult struct {
	Kind       string `json:"kind"`
	ID         string `json:"id"`
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Partition  int    `json:"partition"`
}

var coordinatorFields = []column[coordinatorResult]{
	textColumn("kind", func(r coordinatorResult) string { return r.Kind }),
	textColumn("id", func(r coordinatorResult) string { return r.ID }),
	textColumn("topic", func(r coordinatorResult) string { return r.Topic }),
	intColumn("partitions", func(r coordinatorResult) int { return r.Partitions }),
	intColumn("partition", func(r coordinatorResult) int { return r.Partition }),
}

// coordinator's flags.
const (
	groupFlag     = "group"
	txnFlag       = "transactional-id"
	partitionFlag = "partitions"
)

// AddFlags adds coordinator's flags to f.
func (o *coordinatorOptions) AddFlags(f *pflag.FlagSet) {
	o.flags = f
	f.StringVar(&o.group, groupFlag, "", "consumer group id")
	f.StringVar(&o.txnID, txnFlag, "", "producer transactional.id")
	f.IntVar(&o.partitions, partitionFlag, defaultStatePartitions, "partition count of the state topic")
}

// Validate takes the one id given, and checks it and --partitions.
func (o *coordinatorOptions) Validate() error {
	f := o.flags
	switch {
	case f.Changed(groupFlag) && f.Changed(txnFlag):
		return usageErrorf("give either --group or --transactional-id, not both")
	case f.Changed(groupFlag):
		o.kind, o.id = coordinatorGroup, o.group
	case f.Changed(txnFlag):
		o.kind, o.id = coordinatorTransactional, o.txnID
	default:
		return usageErrorf("give --group ID or --transactional-id ID")
	}
	if o.partitions < 1 || o.partitions > math.MaxInt32 {
		return usageErrorf("--partitions must be between 1 and %d, not %d", math.MaxInt32, o.partitions)
	}
	if !utf8.ValidString(o.id) {
		// Brokers decode ids as UTF-8; an invalid byte would be
		// hashed as U+FFFD, which this command cannot reproduce
		// faithfully from raw bytes.
		return usageErrorf("the id %s is not valid UTF-8", strconv.Quote(o.id))
	}
	return nil
}

func newCoordinatorCommand(ios *IOStreams) *cobra.Command {
	var opts coordinatorOptions
	c := &cobra.Command{
		Use:   "coordinator (--group ID | --transactional-id ID) [--partitions N]",
		Short: "Find the partition holding a group's or transactional id's state",
		Long: `Which partition of __consumer_offsets (for a consumer group) or of
__transaction_state (for a transactional id) holds its state, computed as the
broker does: abs(Java String.hashCode(id)) % partitions, with Kafka's abs
(Integer.MIN_VALUE gives 0). The leader of that partition is the group's or
transaction's coordinator, and its directory (__consumer_offsets-<partition>)
is where the state is on disk.

--partitions is the topic's partition count: offsets.topic.num.partitions or
transaction.state.log.num.partitions when the topic was created (default 50).

Output fields: kind (group or transactional_id), id, topic, partitions,
partition.

An id that is empty or starts with "-" must be given as --group=ID.

Exit codes: 0 answered; 2 no id or both kinds given, --partitions < 1.`,
		Example: `  kseg coordinator --group my-consumer-group
  kseg coordinator --transactional-id orders-tx --partitions 12
  kseg coordinator --group=-odd-name -o json | jq .partition`,
		DisableFlagsInUseLine: true,
		RunE: func(*cobra.Command, []string) error {
			if err := opts.Validate(); err != nil {
				return err
			}
			return runCoordinator(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

func runCoordinator(ios *IOStreams, opts coordinatorOptions) error {
	r := coordinatorResult{
		Kind:       opts.kind,
		ID:         opts.id,
		Topic:      groupMetadataTopic,
		Partitions: opts.partitions,
		Partition:  int(internaltopics.CoordinatorPartition(opts.id, int32(opts.partitions))),
	}
	if opts.kind == coordinatorTransactional {
		r.Topic = transactionStateTopic
	}
	return printObject(ios, r, coordinatorFields,
		"state in "+r.Topic+"-"+strconv.Itoa(r.Partition)+"; its leader is the coordinator")
}

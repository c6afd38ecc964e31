package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect/replica"
)

type diffOptions struct {
	left, right string
	records     bool
	max         int
	maxLines    int64 // --max as given
	force       bool
	salvage     bool
	encodingOptions
}

// AddFlags adds diff's flags to f.
func (o *diffOptions) AddFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.records, "records", false, "also list every record that differs (only_left, only_right, conflict)")
	f.Int64Var(&o.maxLines, "max", 0, "with --records: at most this many record lines (0: no limit)")
	f.BoolVar(&o.force, "force", false, "compare even when the directories name different partitions")
	f.BoolVar(&o.salvage, "salvage", false, "go on past damage: skip each damaged byte range (a batch that fails its CRC included) and compare the records after it")
	o.encodingOptions.AddFlags(f)
}

// Validate checks the flags' values.
func (o *diffOptions) Validate() error {
	if err := o.encodingOptions.Validate(); err != nil {
		return err
	}
	if o.maxLines < 0 {
		return usageErrorf("--max must be >= 0, not %d", o.maxLines)
	}
	o.max = int(o.maxLines)
	return nil
}

// diffLong is kseg diff's help.
const diffLong = `Compare two replicas of one partition (the same <topic>-<partition> directory
from two brokers, or two copies taken at different times) record by record,
by offset: batch boundaries, compression, segment rolls and leader epochs
may differ; two records at the same offset are the same when their
timestamp, key, value and headers are equal. Records are compared from
max(log start offsets) up to the smaller log end offset; past it, the
longer side's records are on that side only.

The answer is one line: kind ("divergence") left_log_end_offset
right_log_end_offset compared_from compared_to (exclusive)
first_difference_offset (the first offset in the compared range where the
records differ, or null) truncation_offset (where LEFT, as a follower of
RIGHT, truncates by the leader-epoch protocol: KIP-101, KIP-279,
OffsetsForLeaderEpoch repeated while RIGHT answers with an older epoch; null
when neither side has epochs) left_records_past_truncation (the records of
LEFT a follower would discard), then left_epochs and right_epochs (where the
epochs came from: checkpoint, batches or none), left_epoch_mismatches and
right_epoch_mismatches (runs of batches whose leader epoch the side's
leader-epoch-checkpoint contradicts; a warning names the first, and the
truncation follows the checkpoint as a broker does), truncation_rounds (each
round: requested_epoch leader_epoch leader_end_offset truncate_to final; at
most the first 10 and the last 10 rounds) truncation_rounds_omitted (how
many rounds between them are not listed), only_left only_right conflicts
removed_by_compaction (counts).

Epochs come from each side's leader-epoch-checkpoint, or, where it is
missing or does not load, from the partition leader epochs of the batches
(as the broker rebuilds the cache). A record present on one side and missing
on the other at an offset the other side's log covers (at or above the
compared start, below its log end offset) was removed by that side's log
cleaner: it is listed with removed_by_compaction true and is not a
difference.

With --records, each difference first: kind (only_left, only_right,
conflict) and the record fields of dump-log (the left record's, or the
right's for only_right), "right" (the right record) for a conflict, and
removed_by_compaction for only_left/only_right. --max N caps those lines.

A batch that fails its CRC is damage, never a conflict: its bytes are not
what was written, and broker recovery would truncate that replica there.
Damage ends the reading of its segment: the records before it are
compared, a warning names the file and byte position, and the exit code is
2. With --salvage each damaged range is skipped instead, as dump-log
--salvage skips it (a warning names the file and its bytes), the records
after it are compared, and the exit code is that of the comparison; the
records of the skipped ranges are missing from that replica.

Exit 0 when the replicas agree over the compared range and have the same
log end offset, 1 when they differ, 2 when the comparison could not be done
(e.g. the directories name different partitions, unless --force; damage in
a log without --salvage).`

func newDiffCommand(ios *IOStreams) *cobra.Command {
	var opts diffOptions
	c := &cobra.Command{
		Use:   "diff LEFT RIGHT",
		Short: "Compare two replicas of a partition: records on one side only, conflicts, and where LEFT would truncate",
		Long:  diffLong,
		Example: `  kseg diff /mnt/broker1/data/orders-3 /mnt/broker2/data/orders-3
  kseg diff -o json --records old-leader/orders-3 new-leader/orders-3 | jq -c 'select(.kind=="only_left" and (.removed_by_compaction|not))'`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.left, opts.right = args[0], args[1]
			if err := opts.Validate(); err != nil {
				return err
			}
			return runDiff(ios, opts)
		},
	}
	opts.AddFlags(c.Flags())
	return c
}

// diffRecordJSON is a difference line: the kind, the record fields of
// dump-log (the embedded line's kind is shadowed), the right record of a
// conflict.
type diffRecordJSON struct {
	Kind string `json:"kind"`
	recordLineJSON
	Right               *recordLineJSON `json:"right,omitempty"`
	RemovedByCompaction *bool           `json:"removed_by_compaction,omitempty"`
}

type roundJSON struct {
	RequestedEpoch  int32  `json:"requested_epoch"`
	LeaderEpoch     int32  `json:"leader_epoch"`
	LeaderEndOffset int64  `json:"leader_end_offset"`
	TruncateTo      *int64 `json:"truncate_to"` // null: to a high watermark not known
	Final           bool   `json:"final"`
}

func roundLine(r replica.Round) roundJSON {
	out := roundJSON{RequestedEpoch: r.RequestedEpoch, LeaderEpoch: r.LeaderEpoch, LeaderEndOffset: r.LeaderEndOffset, Final: r.Final}
	if !r.NoHighWatermark {
		out.TruncateTo = ptr(r.TruncateTo)
	}
	return out
}

// divergenceJSON is the contract's divergence line, then the additive
// fields.
type divergenceJSON struct {
	Kind                      string      `json:"kind"`
	LeftLogEndOffset          int64       `json:"left_log_end_offset"`
	RightLogEndOffset         int64       `json:"right_log_end_offset"`
	ComparedFrom              int64       `json:"compared_from"`
	ComparedTo                int64       `json:"compared_to"`
	FirstDifferenceOffset     *int64      `json:"first_difference_offset"`
	TruncationOffset          *int64      `json:"truncation_offset"`
	LeftRecordsPastTruncation *int64      `json:"left_records_past_truncation"` // null when truncation_offset is
	LeftEpochs                string      `json:"left_epochs"`
	RightEpochs               string      `json:"right_epochs"`
	LeftEpochMismatches       int         `json:"left_epoch_mismatches"`
	RightEpochMismatches      int         `json:"right_epoch_mismatches"`
	TruncationRounds          []roundJSON `json:"truncation_rounds"`
	TruncationRoundsOmitted   int         `json:"truncation_rounds_omitted"`
	OnlyLeft                  int64       `json:"only_left"`
	OnlyRight                 int64       `json:"only_right"`
	Conflicts                 int64       `json:"conflicts"`
	RemovedByCompaction       int64       `json:"removed_by_compaction"`
}

// diffRecordColumns: the default table shows each difference as kind,
// offset and the record(s) as "key = value" (a conflict's right record
// after "|"); -o wide and CSV show every field.
var diffRecordColumns = []column[*diffRecordJSON]{
	tableOnly(textColumn("kind", func(d *diffRecordJSON) string {
		if d.RemovedByCompaction != nil && *d.RemovedByCompaction {
			return d.Kind + " (compacted)"
		}
		return d.Kind
	})),
	tableOnly(intColumn("offset", func(d *diffRecordJSON) int64 { return d.Offset })),
	tableOnly(column[*diffRecordJSON]{name: "timestamp", display: func(d *diffRecordJSON, ios *IOStreams) string { return ios.timeText(d.Timestamp) }}),
	tableOnly(withFit(textColumn("record", func(d *diffRecordJSON) string {
		s := optText(d.Key) + " = " + optText(d.Value)
		if d.Right != nil {
			s += " | " + optText(d.Right.Key) + " = " + optText(d.Right.Value)
		}
		return s
	}), fitBelow)),
	wideOnly(textColumn("kind", func(d *diffRecordJSON) string { return d.Kind })),
	wideOnly(intColumn("offset", func(d *diffRecordJSON) int64 { return d.Offset })),
	wideOnly(timestampColumn("timestamp", func(d *diffRecordJSON) int64 { return d.Timestamp })),
	wideOnly(textColumn("key", func(d *diffRecordJSON) string { return optText(d.Key) })),
	wideOnly(textColumn("value", func(d *diffRecordJSON) string { return optText(d.Value) })),
	wideOnly(textColumn("headers", func(d *diffRecordJSON) string { return headersText(d.Headers) })),
	wideOnly(textColumn("right.timestamp", func(d *diffRecordJSON) string {
		if d.Right == nil {
			return ""
		}
		return strconv.FormatInt(d.Right.Timestamp, 10)
	})),
	wideOnly(textColumn("right.key", func(d *diffRecordJSON) string {
		return rightField(d, func(r *recordLineJSON) string { return optText(r.Key) })
	})),
	wideOnly(textColumn("right.value", func(d *diffRecordJSON) string {
		return rightField(d, func(r *recordLineJSON) string { return optText(r.Value) })
	})),
	wideOnly(textColumn("right.headers", func(d *diffRecordJSON) string {
		return rightField(d, func(r *recordLineJSON) string { return headersText(r.Headers) })
	})),
	wideOnly(textColumn("removed_by_compaction", func(d *diffRecordJSON) string {
		if d.RemovedByCompaction == nil {
			return ""
		}
		return strconv.FormatBool(*d.RemovedByCompaction)
	})),
	omitIfEmpty(wideTableOnly(textColumn("key_encoding", func(d *diffRecordJSON) string { return d.KeyEncoding }))),
	omitIfEmpty(wideTableOnly(textColumn("value_encoding", func(d *diffRecordJSON) string { return d.ValueEncoding }))),
	omitIfEmpty(wideTableOnly(textColumn("right.key_encoding", func(d *diffRecordJSON) string {
		return rightField(d, func(r *recordLineJSON) string { return r.KeyEncoding })
	}))),
	omitIfEmpty(wideTableOnly(textColumn("right.value_encoding", func(d *diffRecordJSON) string {
		return rightField(d, func(r *recordLineJSON) string { return r.ValueEncoding })
	}))),
}

// rightField is f of a conflict's right record ("" for other lines).
func rightField(d *diffRecordJSON, f func(*recordLineJSON) string) string {
	if d.Right == nil {
		return ""
	}
	return f(d.Right)
}

func nullableInt(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

var divergenceColumns = []column[*divergenceJSON]{
	intColumn("left_log_end_offset", func(d *divergenceJSON) int64 { return d.LeftLogEndOffset }),
	intColumn("right_log_end_offset", func(d *divergenceJSON) int64 { return d.RightLogEndOffset }),
	intColumn("compared_from", func(d *divergenceJSON) int64 { return d.ComparedFrom }),
	intColumn("compared_to", func(d *divergenceJSON) int64 { return d.ComparedTo }),
	textColumn("first_difference_offset", func(d *divergenceJSON) string { return nullableInt(d.FirstDifferenceOffset) }),
	textColumn("truncation_offset", func(d *divergenceJSON) string { return nullableInt(d.TruncationOffset) }),
	nullableIntColumn("left_records_past_truncation", func(d *divergenceJSON) *int64 { return d.LeftRecordsPastTruncation }),
	textColumn("left_epochs", func(d *divergenceJSON) string { return d.LeftEpochs }),
	textColumn("right_epochs", func(d *divergenceJSON) string { return d.RightEpochs }),
	intColumn("left_epoch_mismatches", func(d *divergenceJSON) int { return d.LeftEpochMismatches }),
	intColumn("right_epoch_mismatches", func(d *divergenceJSON) int { return d.RightEpochMismatches }),
	textColumn("truncation_rounds", func(d *divergenceJSON) string {
		var parts []string
		for i, r := range d.TruncationRounds {
			if i == maxPrintedRounds/2 && d.TruncationRoundsOmitted > 0 {
				parts = append(parts, fmt.Sprintf("(%d rounds omitted)", d.TruncationRoundsOmitted))
			}
			to := "the high watermark, not known"
			if r.TruncateTo != nil {
				to = strconv.FormatInt(*r.TruncateTo, 10)
			}
			parts = append(parts, fmt.Sprintf("epoch %d -> (%d, %d): truncate to %s", r.RequestedEpoch, r.LeaderEpoch, r.LeaderEndOffset, to))
		}
		return strings.Join(parts, "; ")
	}),
	intColumn("truncation_rounds_omitted", func(d *divergenceJSON) int { return d.TruncationRoundsOmitted }),
	intColumn("only_left", func(d *divergenceJSON) int64 { return d.OnlyLeft }),
	intColumn("only_right", func(d *divergenceJSON) int64 { return d.OnlyRight }),
	intColumn("conflicts", func(d *divergenceJSON) int64 { return d.Conflicts }),
	intColumn("removed_by_compaction", func(d *divergenceJSON) int64 { return d.RemovedByCompaction }),
}

func runDiff(ios *IOStreams, opts diffOptions) error {
	left, right, err := openReplicas(ios, opts)
	if err != nil {
		return err
	}
	var l *lister[*diffRecordJSON]
	if opts.records {
		l = newLister(ios, diffRecordColumns)
	}
	lines := 0
	d, err := replica.Compare(left, right, replica.Options{Salvage: opts.salvage}, func(x replica.Difference) error {
		if l == nil || opts.max > 0 && lines >= opts.max {
			return nil
		}
		lines++
		l.Add(diffRecordLine(x, opts.encoding))
		return nil
	})
	if l != nil {
		if opts.max > 0 && lines >= opts.max {
			l.Footer("record lines capped at %d (--max)", opts.max)
		}
		if cerr := l.Close(); cerr != nil {
			return cerr
		}
	}
	if err != nil {
		return err
	}
	if err := printDivergence(ios, opts.records, divergenceLine(d, left, right)); err != nil {
		return err
	}
	return diffOutcome(ios, d)
}

// printDivergence prints the divergence line after the record lines, if
// any: CSV holds one table, so with --records its rows are the records'.
func printDivergence(ios *IOStreams, records bool, line *divergenceJSON) error {
	if records && ios.Format() == FormatCSV {
		return nil
	}
	return printObject(ios, line, divergenceColumns)
}

// openReplicas opens the two replicas of opts (refusing two different
// partitions without --force) and says their warnings.
func openReplicas(ios *IOStreams, opts diffOptions) (left, right *replica.Replica, err error) {
	lp, err := resolvePartition(opts.left)
	if err != nil {
		return nil, nil, err
	}
	rp, err := resolvePartition(opts.right)
	if err != nil {
		return nil, nil, err
	}
	if !opts.force && (lp.Topic != rp.Topic || lp.Partition != rp.Partition || lp.Topic == "" && lp.Name() != rp.Name()) {
		return nil, nil, withHint(fmt.Errorf("%s and %s are different partitions (%s, %s)", opts.left, opts.right, lp.Name(), rp.Name()),
			"give two copies of the same <topic>-<partition> directory, or --force to compare them anyway")
	}
	if left, err = replica.Open(lp); err != nil {
		return nil, nil, err
	}
	if right, err = replica.Open(rp); err != nil {
		return nil, nil, err
	}
	for _, w := range append(left.Warnings, right.Warnings...) {
		ios.Warnf("%s", w)
	}
	return left, right, nil
}

// diffRecordLine is a difference's record line.
func diffRecordLine(x replica.Difference, encoding string) *diffRecordJSON {
	line := &diffRecordJSON{Kind: x.Kind}
	if x.Left != nil {
		line.recordLineJSON = recordLine(&x.Left.Record, &x.Left.Batch, encoding, true)
	}
	if x.Right != nil {
		rl := recordLine(&x.Right.Record, &x.Right.Batch, encoding, true)
		if x.Left == nil {
			line.recordLineJSON = rl
		} else {
			line.Right = &rl
		}
	}
	if x.Kind != replica.Conflict {
		line.RemovedByCompaction = ptr(x.RemovedByCompaction)
	}
	return line
}

// divergenceLine is the contract's divergence line of d.
func divergenceLine(d *replica.Divergence, left, right *replica.Replica) *divergenceJSON {
	out := &divergenceJSON{Kind: "divergence", LeftLogEndOffset: d.LeftLogEndOffset, RightLogEndOffset: d.RightLogEndOffset,
		ComparedFrom: d.ComparedFrom, ComparedTo: d.ComparedTo, FirstDifferenceOffset: d.FirstDifference,
		TruncationOffset: d.Truncation, LeftRecordsPastTruncation: pastTruncation(d),
		LeftEpochs: left.EpochSource, RightEpochs: right.EpochSource, LeftEpochMismatches: left.EpochMismatches, RightEpochMismatches: right.EpochMismatches,
		TruncationRounds: []roundJSON{},
		OnlyLeft:         d.OnlyLeft, OnlyRight: d.OnlyRight, Conflicts: d.Conflicts, RemovedByCompaction: d.RemovedByCompaction}
	rounds := d.Rounds
	if len(rounds) > maxPrintedRounds {
		// The first and the last rounds: a follower goes through one per
		// epoch it has and the leader lacks (300,000 of them made a table
		// cell of 16 MB).
		out.TruncationRoundsOmitted = len(rounds) - maxPrintedRounds
		rounds = append(rounds[:maxPrintedRounds/2:maxPrintedRounds/2], rounds[len(rounds)-maxPrintedRounds/2:]...)
	}
	for _, r := range rounds {
		out.TruncationRounds = append(out.TruncationRounds, roundLine(r))
	}
	return out
}

// diffOutcome says what was skipped or not compared, and is the exit:
// 2 when damage left the comparison incomplete, 1 when the replicas differ.
func diffOutcome(ios *IOStreams, d *replica.Divergence) error {
	for _, s := range d.Skipped {
		warnSkipped(ios, s)
	}
	if n := d.SkippedRanges - int64(len(d.Skipped)); n > 0 {
		ios.Warnf("%d more damaged ranges skipped (%d bytes skipped in all)", n, d.SkippedBytes)
	}
	if len(d.Damage) > 0 {
		for _, e := range d.Damage {
			ios.Warnf("%v; the records after it in that segment were not compared", e)
		}
		return withHint(errors.New("a replica is damaged: the comparison is incomplete"), "kseg verify names the damage; --salvage compares the records after it")
	}
	if !d.Agree() {
		return errNegative("the replicas differ")
	}
	return nil
}

// maxPrintedRounds is how many truncation rounds diff prints at most: the
// first half and the last half, truncation_rounds_omitted counting those
// between.
const maxPrintedRounds = 20

// pastTruncation is how many of LEFT's records a follower discards, null
// when the protocol gives no truncation offset.
func pastTruncation(d *replica.Divergence) *int64 {
	if d.Truncation == nil {
		return nil
	}
	return ptr(d.LeftRecordsPastTruncation)
}

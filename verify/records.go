package verify

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/inspect"
)

// maxDeepEntry bounds the batches whose records are decoded (a broker's
// message.max.bytes defaults to about 1 MiB; larger batches are still
// checked by header and CRC).
const maxDeepEntry = 64 << 20

// errStopRecords ends a record walk early without an error.
var errStopRecords = errors.New("stop")

// checkRecords decodes the records of a batch whose CRC matched: every
// record when Options.Records is set, else only the first record of a
// control batch (what broker recovery reads: a malformed one makes it
// truncate the segment after that batch, InvalidRecordException). It
// returns the first offset of the batch when the records gave it (-1
// otherwise), which is how a legacy compressed wrapper's first offset is
// learnt.
func (c *segChecker) checkRecords(b *inspect.Batch) (int64, error) {
	control := b.IsControl()
	if !c.opts.Records && !control {
		return -1, nil
	}
	// Below MaxEntryBytes (by default), so the iterator hands the entry
	// out whole.
	limit := min(int64(maxDeepEntry), inspect.MaxEntryBytes)
	if b.Size > limit {
		// Not silence: a batch left unjudged must not read as healthy.
		c.logFinding(LogRecords, b.Position, ptr(b.LastOffset), "batch %s: records not checked: the batch is %d bytes, over the %d bytes kseg decodes (a broker refuses batches over message.max.bytes, 1 MiB by default)",
			offsetsText(b), b.Size, limit)
		return -1, nil
	}
	entry, err := c.it.Entry()
	if err != nil {
		return -1, err
	}

	var (
		count   = inspect.RecordsCount() // the first offset, for a legacy wrapper
		prev    int64
		problem string
	)
	err = c.bufs.dec.Records(c.logName, entry, b, func(r *inspect.Record) error {
		n := count.RecordCount
		count.Record(r)
		if n == 0 {
			if control {
				if p := controlProblem(r); p != "" {
					problem = p
					return errStopRecords
				}
				if !c.opts.Records {
					return errStopRecords
				}
			}
		} else if r.Offset <= prev {
			problem = fmt.Sprintf("record %d has offset %d, not above the previous record's %d", n, r.Offset, prev)
			return errStopRecords
		}
		if b.Magic >= 2 && (r.Offset < b.BaseOffset || r.Offset > b.LastOffset) {
			problem = fmt.Sprintf("record %d has offset %d, outside the batch's offsets %d..%d", n, r.Offset, b.BaseOffset, b.LastOffset)
			return errStopRecords
		}
		prev = r.Offset
		return nil
	})
	switch {
	case errors.Is(err, inspect.ErrTooLarge):
		// Reported, not skipped: the payload claims (or inflates to)
		// more than kseg's cap, so its records were not judged.
		c.logFinding(LogRecords, b.Position, ptr(b.LastOffset), "batch %s: records not checked: %s", offsetsText(b), detail(err))
		return -1, nil
	case err != nil && !errors.Is(err, errStopRecords):
		if !errors.Is(err, inspect.ErrCorruptRecords) && !errors.Is(err, inspect.ErrCorruptHeader) && !errors.Is(err, inspect.ErrTorn) {
			return -1, err
		}
		problem = detail(err)
	case problem == "" && c.opts.Records && b.Magic < 2 && b.Compression() != inspect.CompressionNone && count.RecordCount > 0 && prev != b.LastOffset:
		problem = fmt.Sprintf("the last inner message has offset %d, but the wrapper's offset (its last offset) is %d", prev, b.LastOffset)
	}
	if problem != "" {
		what := "records"
		if control && !c.opts.Records {
			what = "control record"
		}
		c.logFinding(LogRecords, b.Position, ptr(b.LastOffset), "batch %s: %s do not decode: %s", offsetsText(b), what, problem)
		return -1, nil
	}
	return count.FirstOffset, nil
}

// controlProblem checks a control record as the broker reads it
// (ControlRecordType.parse, EndTransactionMarker.deserialize).
func controlProblem(r *inspect.Record) string {
	if r.Key == nil {
		return "the control record has a null key"
	}
	_, typ, err := inspect.ParseControlKey(r.Key)
	if err != nil {
		return detail(err)
	}
	if typ == inspect.ControlAbort || typ == inspect.ControlCommit {
		if r.Value == nil {
			return "the transaction marker has a null value"
		}
		if _, _, err := inspect.ParseEndTxnMarker(r.Value); err != nil {
			return detail(err)
		}
	}
	return ""
}

package producerstate

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
)

// Marker is the first record of a control batch as ProducerAppendInfo.
// append reads it: its control type and, for a COMMIT or ABORT marker,
// the coordinator epoch; Timestamp is the record's (the batch's max
// timestamp under LogAppendTime).
type Marker struct {
	Type             record.ControlType
	CoordinatorEpoch int32
	Timestamp        int64
}

// IsEnd reports whether the marker ends a transaction (COMMIT or ABORT).
func (m Marker) IsEnd() bool { return m.Type == record.ControlAbort || m.Type == record.ControlCommit }

// The records a broker fails on with a NullPointerException. Their errors
// also wrap fileio.ErrCorruptRecords.
var (
	ErrNullControlKey  = errors.New("control record with a null key (broker: NullPointerException)")
	ErrNullMarkerValue = errors.New("end transaction marker with a null value (broker: NullPointerException)")
)

var errFirstRecord = errors.New("first record read")

// ReadMarker reads control batch b's first record from entry (the whole
// batch) the way ProducerAppendInfo.append does: batch.iterator() decodes
// only the first record of an uncompressed batch and every record of a
// compressed one; a batch without records (its transaction was cleaned
// away) gives ok false. Errors: the decoder's (malformed records wrap
// fileio.ErrCorruptRecords), a key or marker value that does not parse
// (a *fileio.CorruptError of kind ErrCorruptRecords at the batch), and a
// null key or marker value (ErrNullControlKey, ErrNullMarkerValue). A
// record of another control type is returned with ok: the caller
// decides (EndTransactionMarker.deserialize refuses it).
func ReadMarker(dec *record.RecordDecoder, name string, entry []byte, b *record.Batch) (m Marker, ok bool, err error) {
	var keyErr, valErr error
	var nullKey, nullValue bool
	first := true
	derr := dec.Records(name, entry, b, func(rec *record.Record) error {
		if !first {
			return nil
		}
		first, ok = false, true
		nullKey, nullValue = rec.Key == nil, rec.Value == nil
		m.Timestamp = rec.Timestamp
		if !nullKey {
			_, m.Type, keyErr = record.ParseControlKey(rec.Key)
		}
		if !nullKey && keyErr == nil && m.IsEnd() && !nullValue {
			_, m.CoordinatorEpoch, valErr = record.ParseEndTxnMarker(rec.Value)
		}
		if b.Compression() == record.CompressionNone {
			return errFirstRecord
		}
		return nil // compressed: the broker decodes every record first
	})
	if derr != nil && !errors.Is(derr, errFirstRecord) {
		return m, false, derr
	}
	if !ok {
		return m, false, nil
	}
	corrupt := func(err error) error {
		return &fileio.CorruptError{File: name, Position: b.Position, Offset: b.BaseOffset, Err: err}
	}
	switch {
	case nullKey:
		return m, false, corrupt(fmt.Errorf("%w: %w", fileio.ErrCorruptRecords, ErrNullControlKey))
	case keyErr != nil:
		return m, false, corrupt(keyErr)
	case !m.IsEnd():
		return m, true, nil
	case nullValue:
		return m, false, corrupt(fmt.Errorf("%w: %w", fileio.ErrCorruptRecords, ErrNullMarkerValue))
	case valErr != nil:
		return m, false, corrupt(valErr)
	}
	return m, true, nil
}

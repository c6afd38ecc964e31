package record

import (
	"encoding/binary"
	"fmt"

	"github.com/kseg/kseg/inspect/fileio"
)

// ControlType is the type id in a control record's key (broker: ControlRecordType).
// Ids the broker does not know keep their value here and print as "unknown"
// (the broker maps them to ControlRecordType.UNKNOWN).
type ControlType int16

// Control record types (ControlRecordType). 0 and 1 are transaction markers; 2-6
// appear in the KRaft metadata log and its snapshots.
const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
)

// controlNames are the control record types' names, by id.
var controlNames = []string{"abort", "commit", "leader_change", "snapshot_header", "snapshot_footer", "kraft_version", "kraft_voters"}

func (t ControlType) String() string { return nameOf(controlNames, int(t)) }

// Known reports whether the broker has a name for the type id.
func (t ControlType) Known() bool { return t >= ControlAbort && t <= ControlKRaftVoters }

const (
	controlKeySize   = 4 // ControlRecordType.CURRENT_CONTROL_RECORD_KEY_SIZE: version i16, type i16
	endTxnMarkerSize = 6 // EndTransactionMarker.CURRENT_END_TXN_MARKER_VALUE_SIZE: version i16, coordinator epoch i32
)

// ParseControlKey decodes the key of a record in a control batch
// (broker: ControlRecordType.parseTypeId): i16 version, i16 type. A key shorter than
// 4 bytes or a negative version is invalid; any other version is read as version 0,
// and bytes after the first 4 are ignored, as the broker does.
func ParseControlKey(key []byte) (version int16, typ ControlType, err error) {
	if version, err = controlVersion(key, controlKeySize, "control record key", "control record key"); err != nil {
		return version, 0, err
	}
	return version, ControlType(binary.BigEndian.Uint16(key[2:])), nil
}

// ParseEndTxnMarker decodes the value of an ABORT or COMMIT control record
// (broker: EndTransactionMarker.deserializeValue): i16 version, i32 coordinator
// epoch. A value shorter than 6 bytes or a negative version is invalid; higher
// versions are read as version 0 and trailing bytes are ignored.
func ParseEndTxnMarker(value []byte) (version int16, coordinatorEpoch int32, err error) {
	if version, err = controlVersion(value, endTxnMarkerSize, "end transaction marker value", "end transaction marker"); err != nil {
		return version, 0, err
	}
	return version, int32(binary.BigEndian.Uint32(value[2:])), nil
}

// controlVersion reads the i16 version that starts a control record's key
// or an end transaction marker's value (what, of at least size bytes):
// a shorter one or a negative version is invalid.
func controlVersion(b []byte, size int, what, versionOf string) (int16, error) {
	if len(b) < size {
		return 0, fmt.Errorf("%w: %s has %d bytes, it needs at least %d", fileio.ErrCorruptRecords, what, len(b), size)
	}
	version := int16(binary.BigEndian.Uint16(b[0:]))
	if version < 0 {
		return version, fmt.Errorf("%w: invalid %s version %d", fileio.ErrCorruptRecords, versionOf, version)
	}
	return version, nil
}

// MinMarkerBatchSize is the fewest bytes a transaction marker batch takes
// in a log: the v2 batch header (V2HeaderSize) and one control record of
// at least 11 bytes (length, attributes, timestamp and offset deltas and
// key length, one byte each as varints; the 4-byte ControlRecordType key;
// value length; header count). A real marker also carries the 6-byte
// EndTransactionMarker value, so this undercounts: the bound it gives is
// never below the truth.
const MinMarkerBatchSize = V2HeaderSize + 11

// MaxTxnIndexEntries is the most entries a segment's .txnindex can hold
// when its log is logSize bytes: the broker appends one entry per ABORT
// marker, to the index of the segment holding the marker
// (LogSegment.updateTxnIndex), and each marker is a batch of its own of at
// least MinMarkerBatchSize bytes. A larger file cannot have been written
// by a broker; readers check only this many entries instead of reading
// the rest.
func MaxTxnIndexEntries(logSize int64) int64 { return max(logSize, 0) / MinMarkerBatchSize }

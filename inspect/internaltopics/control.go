package internaltopics

import (
	"encoding/binary"
	"fmt"

	"github.com/kseg/kseg/inspect/record"
)

// Control records (the records of control batches, in any topic). The key
// is ControlRecordType's: i16 version, i16 type (record.ParseControlKey).
// The value depends on the type:
//
//	0 ABORT, 1 COMMIT   EndTransactionMarker: i16 version, i32 coordinator
//	                    epoch (record.ParseEndTxnMarker)
//	2 LEADER_CHANGE     LeaderChangeMessage      the KRaft control messages,
//	3 SNAPSHOT_HEADER   SnapshotHeaderRecord     flexible message schemas
//	4 SNAPSHOT_FOOTER   SnapshotFooterRecord     (clients/src/main/resources/
//	5 KRAFT_VERSION     KRaftVersionRecord       common/message/*.json) whose
//	6 KRAFT_VOTERS      VotersRecord             first field is their Version
//
// ControlRecordUtils reads the KRaft messages at their current version (0
// for every one at the 4.0 development snapshot); DumpLogSegments prints
// them with their JsonConverter, whose field names Control.Fields keeps.

var voter = []field{
	f("voterId", kInt32, from(0)),
	f("voterDirectoryId", kUUID, from(1)),
}

// controlSchemas are the values of the KRaft control record types.
var controlSchemas = map[record.ControlType]*schema{
	record.ControlLeaderChange: {name: "LeaderChangeMessage", valid: only(0, 1), flexible: from(0), fields: []field{
		f("version", kInt16, from(0)),
		f("leaderId", kInt32, from(0)),
		structs("voters", from(0), voter...),
		structs("grantingVoters", from(0), voter...),
	}},
	record.ControlSnapshotHeader: {name: "SnapshotHeaderRecord", valid: only(0, 0), flexible: from(0), fields: []field{
		f("version", kInt16, from(0)),
		f("lastContainedLogTimestamp", kInt64, from(0)),
	}},
	record.ControlSnapshotFooter: {name: "SnapshotFooterRecord", valid: only(0, 0), flexible: from(0), fields: []field{
		f("version", kInt16, from(0)),
	}},
	record.ControlKRaftVersion: {name: "KRaftVersionRecord", valid: only(0, 0), flexible: from(0), fields: []field{
		f("version", kInt16, from(0)),
		f("kRaftVersion", kInt16, from(0)),
	}},
	record.ControlKRaftVoters: {name: "VotersRecord", valid: only(0, 0), flexible: from(0), fields: []field{
		f("version", kInt16, from(0)),
		structs("voters", from(0),
			f("voterId", kInt32, from(0)),
			f("voterDirectoryId", kUUID, from(0)),
			structs("endpoints", from(0),
				f("name", kString, from(0)),
				f("host", kString, from(0)),
				f("port", kUint16, from(0)),
			),
			structField("kRaftVersionFeature", from(0),
				f("minSupportedVersion", kInt16, from(0)),
				f("maxSupportedVersion", kInt16, from(0)),
			),
		),
	}},
}

// Control is one control record, decoded.
type Control struct {
	// Type is the type's name (record.ControlType: abort, commit,
	// leader_change, snapshot_header, snapshot_footer, kraft_version,
	// kraft_voters), or "unknown" for an id the broker does not know
	// (ControlRecordType.UNKNOWN) or a key that does not parse.
	Type string
	// TypeID is the type id of the key (-1 when the key does not parse).
	TypeID int16
	// CoordinatorEpoch is the end transaction marker's (abort, commit).
	CoordinatorEpoch *int32
	// Fields are the KRaft control message's fields (types 2-6), in
	// schema order with Kafka's names; nil for the other types or when
	// the value does not decode.
	Fields Fields
	// Error says why the key or value does not decode.
	Error string
}

// DecodeControl decodes a record of a control batch. It never fails: a
// key or value that does not parse is named in Control.Error, a type the
// broker does not know is "unknown" (its bytes are the record's key and
// value, which the caller shows as they are).
func DecodeControl(key, value []byte) Control {
	c := Control{Type: "unknown", TypeID: -1}
	_, typ, err := record.ParseControlKey(key)
	if err != nil {
		c.Error = err.Error()
		return c
	}
	c.TypeID = int16(typ)
	if !typ.Known() {
		return c
	}
	c.Type = typ.String()
	if typ == record.ControlAbort || typ == record.ControlCommit {
		_, epoch, err := record.ParseEndTxnMarker(value)
		if err != nil {
			c.Error = err.Error()
			return c
		}
		c.CoordinatorEpoch = &epoch
		return c
	}
	s := controlSchemas[typ]
	if value == nil {
		c.Error = "null value: a " + s.name + " always has one"
		return c
	}
	c.Fields, err = s.decode(value, controlVersion(s, value))
	if err != nil {
		c.Error = err.Error()
	}
	return c
}

// controlVersion is the version a KRaft control message is read at: the
// Version field it starts with when the schema knows it, else the
// current version ControlRecordUtils reads (0).
func controlVersion(s *schema, value []byte) int16 {
	if len(value) >= 2 {
		if v := int16(binary.BigEndian.Uint16(value)); s.valid.has(v) {
			return v
		}
	}
	return 0
}

// String names the type for people, an unknown one with its id: "unknown (7)".
func (c Control) String() string {
	if c.Type == "unknown" && c.TypeID >= 0 {
		return fmt.Sprintf("unknown (%d)", c.TypeID)
	}
	return c.Type
}

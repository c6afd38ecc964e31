package record

import (
	"errors"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
)

func TestParseControlKey(t *testing.T) {
	for _, c := range []struct {
		key     []byte
		version int16
		typ     ControlType
		name    string
		err     bool
	}{
		{[]byte{0, 0, 0, 0}, 0, ControlAbort, "abort", false},
		{[]byte{0, 0, 0, 1}, 0, ControlCommit, "commit", false},
		{[]byte{0, 0, 0, 2}, 0, ControlLeaderChange, "leader_change", false},
		{[]byte{0, 0, 0, 3}, 0, ControlSnapshotHeader, "snapshot_header", false},
		{[]byte{0, 0, 0, 4}, 0, ControlSnapshotFooter, "snapshot_footer", false},
		{[]byte{0, 0, 0, 5}, 0, ControlKRaftVersion, "kraft_version", false},
		{[]byte{0, 0, 0, 6}, 0, ControlKRaftVoters, "kraft_voters", false},
		{[]byte{0, 0, 0, 7}, 0, 7, "unknown", false},
		{[]byte{0, 0, 0xff, 0xff}, 0, -1, "unknown", false},
		{[]byte{0, 3, 0, 1, 9, 9}, 3, ControlCommit, "commit", false}, // other versions read as 0; trailing bytes ignored
		{[]byte{0x80, 0, 0, 1}, 0, 0, "", true},                       // negative version
		{[]byte{0, 0, 0}, 0, 0, "", true},
		{nil, 0, 0, "", true},
	} {
		v, typ, err := ParseControlKey(c.key)
		if c.err {
			if err == nil || !errors.Is(err, fileio.ErrCorruptRecords) {
				t.Errorf("ParseControlKey(% x): err %v, want an ErrCorruptRecords", c.key, err)
			}
			continue
		}
		if err != nil || v != c.version || typ != c.typ || typ.String() != c.name || typ.Known() != (c.name != "unknown") {
			t.Errorf("ParseControlKey(% x) = %d, %v (%d), %v; want %d, %s", c.key, v, typ, int16(typ), err, c.version, c.name)
		}
	}
}

func TestParseEndTxnMarker(t *testing.T) {
	for _, c := range []struct {
		value   []byte
		version int16
		epoch   int32
		err     bool
	}{
		{[]byte{0, 0, 0, 0, 0, 5}, 0, 5, false},
		{[]byte{0, 1, 0x7f, 0xff, 0xff, 0xff, 1, 2}, 1, 0x7fffffff, false},
		{[]byte{0, 0, 0xff, 0xff, 0xff, 0xff}, 0, -1, false},
		{[]byte{0xff, 0xff, 0, 0, 0, 0}, 0, 0, true},
		{[]byte{0, 0, 0, 0, 0}, 0, 0, true},
		{nil, 0, 0, true},
	} {
		v, e, err := ParseEndTxnMarker(c.value)
		if c.err {
			if err == nil || !errors.Is(err, fileio.ErrCorruptRecords) {
				t.Errorf("ParseEndTxnMarker(% x): err %v, want an ErrCorruptRecords", c.value, err)
			}
			continue
		}
		if err != nil || v != c.version || e != c.epoch {
			t.Errorf("ParseEndTxnMarker(% x) = %d, %d, %v; want %d, %d", c.value, v, e, err, c.version, c.epoch)
		}
	}
}

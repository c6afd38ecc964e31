package cmd

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
)

// dump-log --salvage: past damage, resynchronise on the next valid batch
// and go on listing (dumplog.Dump with Salvage), so that an operator can
// recover the records a broker's recovery would throw away.

// damageLineJSON is the contract's dump-log damage line: the bytes
// [position, end) of segment hold no batch that could be read.
type damageLineJSON struct {
	Kind     string `json:"kind"` // "damage"
	Segment  string `json:"segment"`
	Position int64  `json:"position"`
	End      int64  `json:"end"`
	Bytes    int64  `json:"bytes"`
	Error    string `json:"error"`
}

// damage reports one damaged range of a salvaging dump-log: on stderr
// always, and in -o json as a damage line among the batch lines.
func (r *dumpLogRenderer) damage(d inspect.Damage) error {
	detail := warnSkipped(r.ios, d)
	if r.ios.Format() != FormatJSON {
		return nil
	}
	return newJSONEncoder(r.ios).Encode(damageLineJSON{
		Kind: "damage", Segment: d.Segment.Name(), Position: d.Position, End: d.End, Bytes: d.End - d.Position, Error: detail,
	})
}

// warnSkipped says on stderr that the damaged range d was skipped, and
// returns what is wrong there (without the file and position, which the
// warning gives apart).
func warnSkipped(ios *IOStreams, d inspect.Damage) string {
	detail := fileio.CorruptDetail(d.Err)
	ios.Warnf("%s: bytes %d..%d (%s) skipped: %s", d.Segment.Log, d.Position, d.End-1, count(d.End-d.Position, "byte"), detail)
	return detail
}

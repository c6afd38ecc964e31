package cmd

import (
	"fmt"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
)

// dump-log --salvage: past damage, resynchronise on the next valid batch
// and go on listing (inspect.Partition.WalkSalvage), so that an operator
// can recover the records a broker's recovery would throw away.

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

// salvageReport reports the damaged ranges of a salvaging dump-log: on
// stderr always, and in -o json as damage lines among the batch lines.
type salvageReport struct {
	ios    *IOStreams
	ranges int
	bytes  int64
}

// add reports one damaged range.
func (s *salvageReport) add(d inspect.Damage) error {
	s.ranges++
	s.bytes += d.End - d.Position
	detail := warnSkipped(s.ios, d)
	if s.ios.Format() != FormatJSON {
		return nil
	}
	return newJSONEncoder(s.ios).Encode(damageLineJSON{
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

// recordsDamaged turns a batch whose records do not decode into a damaged
// range when salvaging; otherwise the error stands.
func (s *salvageReport) recordsDamaged(w inspect.WalkBatch, err error) error {
	if s == nil || !fileio.IsCorrupt(err) {
		return err
	}
	return s.add(inspect.Damage{Segment: w.Segment, Position: w.Batch.Position, End: w.Batch.End(), Err: err})
}

// result is the outcome of a salvaging dump: a negative answer (exit 1)
// when anything was skipped.
func (s *salvageReport) result() error {
	if s == nil || s.ranges == 0 {
		return nil
	}
	return errNegative("damaged bytes skipped")
}

// footer is the table's line about the damage skipped.
func (s *salvageReport) footer() string {
	return fmt.Sprintf("%s (%s) skipped", count(s.ranges, "damaged range"), count(s.bytes, "byte"))
}

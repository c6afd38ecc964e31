package inspect

import (
	"errors"
	"io"
	"math"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internal/scan"
	"github.com/kseg/kseg/inspect/record"
)

// Damage is a stretch of a .log that a salvaging LogIterator (and so
// WalkSalvage) skipped: the bytes [Position, End) hold no batch it could
// read. End is where the next valid batch starts, or the file size.
type Damage struct {
	Segment       *SegmentFiles
	Position, End int64
	// Err says what is wrong at Position: a *CorruptError (ErrTorn,
	// ErrCorruptHeader, ErrCRC, ErrTooLarge) naming the file and position.
	Err error
	// Cause says more than Kind where a checker words the cases apart
	// (verify): fewer than 18 bytes left, or an entry running past the end
	// of the file.
	Cause DamageCause
	// Size and Magic, with CauseRunsPast, are what the header at Position
	// claims: the entry's size (LogOverhead + its length field) and magic.
	Size  int64
	Magic int8
}

// DamageKind says what a read found wrong at a Damage's position.
type DamageKind int

// The kinds of damage, from the error a Damage carries.
const (
	DamageOther    DamageKind = iota // none of the below (a fault on a mapped file)
	DamageTorn                       // the log ends inside an entry or its header (ErrTorn): the broker stops there silently
	DamageHeader                     // no batch can start here (ErrCorruptHeader): a length below 14, an impossible header, a length running past the end while a valid batch follows
	DamageCRC                        // a stored CRC that does not match (ErrCRC)
	DamageTooLarge                   // an entry larger than MaxEntryBytes (ErrTooLarge)
	DamageRecords                    // records that do not decode (ErrCorruptRecords)
)

var damageKindNames = [...]string{"other", "torn", "corrupt-header", "crc", "too-large", "records"}

func (k DamageKind) String() string {
	if k < 0 || int(k) >= len(damageKindNames) {
		return "other"
	}
	return damageKindNames[k]
}

// DamageCause refines a Damage's Kind for the damage a scan stops at
// (ErrTorn, and ErrCorruptHeader where it was an entry running past the end
// of the file while a valid batch follows).
type DamageCause int

// The causes.
const (
	CauseOther     DamageCause = iota // nothing more than Kind says
	CauseShortTail                    // fewer than 18 bytes left after the last entry: FileLogInputStream.nextBatch stops silently
	CauseRunsPast                     // an entry whose length runs past the end of the file (Damage.Size, Magic): a torn write when End is the end of the file, else a damaged length field
)

// Kind classifies d by its error.
func (d *Damage) Kind() DamageKind {
	switch {
	case errors.Is(d.Err, fileio.ErrTorn):
		return DamageTorn
	case errors.Is(d.Err, fileio.ErrCorruptHeader):
		return DamageHeader
	case errors.Is(d.Err, fileio.ErrCRC):
		return DamageCRC
	case errors.Is(d.Err, fileio.ErrTooLarge):
		return DamageTooLarge
	case errors.Is(d.Err, fileio.ErrCorruptRecords):
		return DamageRecords
	}
	return DamageOther
}

// LogIterator reads one .log in file order and yields, one event per Next,
// either a batch or a damaged range. It reads whole entries through one
// window, or with IterOptions.Headers only each batch's header, with the
// broker's stop rules (FileLogInputStream.nextBatch). Without salvage it ends at the first
// damage, which Err returns, as a broker's iterator does. With salvage it
// goes on: where entries stop being readable it yields a Damage and
// resumes at the next valid batch (scan.Resyncer); a batch whose CRC does not
// match is judged by Judge.
//
//	it := NewLogIterator(IterOptions{Salvage: true})
//	it.Reset(f, sf, 0)
//	for it.Next() {
//		if d := it.Damage(); d != nil { ...; continue }
//		b := it.Batch()
//		crcOK, err := it.Judge() // salvage: may turn the batch into damage
//		...
//		entry, err := it.Entry() // salvage: a batch too large is damage
//	}
//	err := it.Err()
//
// Partition.Walk and WalkSalvage (dump-log), the summaries (ls) and broker
// recovery's plan (rebuild, verify's stale checks) and verify's log check
// (stricter: see Reject) read through it; the lookups, Segment.NextOffset,
// the timeline and verify's index and side-file checks read headers only
// (Segment.Batches). It is not safe for concurrent use.
type LogIterator struct {
	salvage  bool
	window   int
	ahead    bool
	aheadMin int64
	s        scan.Scanner
	rs       *scan.Resyncer // salvage only
	sf       *SegmentFiles
	name     string

	size      int64 // the file's whole size; only MaxSegmentBytes of it are read
	limitDone bool  // the bytes past MaxSegmentBytes were reported

	dmg    Damage
	hasDmg bool
	resume int64 // where the next Next starts; -1: go on after the current entry
	done   bool
	err    error
	hard   bool // err came from resynchronising or judging, not from the scan
}

// IterOptions say how a LogIterator reads.
type IterOptions struct {
	// Salvage goes on past damage (Damage events) instead of stopping at
	// the first.
	Salvage bool
	// Window is the read size (DefaultWindow when <= 0).
	Window int
	// Buffer, when not nil, is the window itself (its capacity the read
	// size): callers that read many small files reuse one buffer.
	Buffer []byte
	// Headers reads each batch's header only, with one pread of
	// HeaderReadSize bytes at its position (fewer at the end of the file),
	// as the broker's FileRecords.searchForOffsetWithSize and
	// searchForTimestamp do: the bytes between two headers of batches
	// larger than 1 KiB are never read; after a smaller batch the next
	// 4 KiB are read at once, for the headers inside them (scan.Scanner).
	// Entry, CheckCRC and Judge still work, through a window allocated on
	// their first use.
	Headers bool
	// ReadAhead reads a log of at least ReadAheadMinBytes on a second
	// goroutine, which also computes checksums (readAhead): a whole-entry
	// scan that checks every CRC (verify, rebuild's plan) then uses two
	// cores. What the iteration yields is the same. Such an iterator must
	// be closed (Close) when the caller stops before its end.
	ReadAhead bool
	// ReadAheadMin, when > 0, replaces ReadAheadMinBytes (tests use the
	// read-ahead on small logs this way).
	ReadAheadMin int64
}

// NewLogIterator returns an iterator; Reset points it at a file.
func NewLogIterator(opts IterOptions) *LogIterator {
	it := &LogIterator{salvage: opts.Salvage, window: opts.Window, resume: -1, ahead: opts.ReadAhead && !opts.Headers, aheadMin: opts.ReadAheadMin}
	if it.aheadMin <= 0 {
		it.aheadMin = ReadAheadMinBytes
	}
	it.s.SetHeaders(opts.Headers)
	if opts.Buffer != nil {
		it.s.SetBuffer(opts.Buffer)
	}
	return it
}

// SetReadAhead turns IterOptions.ReadAhead on or off from the next Reset
// on: a caller running several scans at once leaves the cores to them,
// and lends one to a scan only when another would sit idle.
func (it *LogIterator) SetReadAhead(on bool) {
	it.ahead = on && !it.s.Headers()
}

// Reset points it at the .log f of segment sf (named f.Name in errors; sf
// names the segment in Damage events, and may be nil without salvage),
// from byte position from, keeping its buffers. Resetting to another
// position of the same file also ends any damage being skipped.
func (it *LogIterator) Reset(f *fileio.File, sf *SegmentFiles, from int64) {
	it.reset(f, f.Name, f.Size(), sf, from)
}

// ResetReader points it at the .log read through r (size bytes, named name
// in errors), from byte position from, keeping its buffers.
func (it *LogIterator) ResetReader(r io.ReaderAt, name string, size, from int64) {
	it.reset(r, name, size, nil, from)
}

// reset reads at most MaxSegmentBytes of the size bytes of r; what lies
// past them is reported when the iteration gets there (SegmentTooLarge).
func (it *LogIterator) reset(r io.ReaderAt, name string, fileSize int64, sf *SegmentFiles, from int64) {
	it.size = fileSize
	size := min(fileSize, MaxSegmentBytes)
	if !it.s.Headers() {
		it.windowed()
		it.s.UseReadAhead(it.ahead, size-from, it.aheadMin)
	}
	it.s.Open(r, name, size, from)
	if it.salvage {
		if it.rs == nil {
			it.rs = scan.NewResyncer(r, name, size)
		} else {
			it.rs.Reset(r, name, size)
		}
	}
	it.sf, it.name = sf, name
	it.hasDmg, it.resume, it.done, it.err, it.hard, it.limitDone = false, -1, false, nil, false, false
}

// Next moves to the next batch or damaged range; false at the end of the
// file, or at the end of the valid entries without salvage (see Err).
func (it *LogIterator) Next() bool {
	it.hasDmg = false
	if it.done {
		return it.pastLimit()
	}
	if it.resume >= 0 {
		it.s.Reset(it.resume)
		it.resume = -1
	}
	if it.s.Next() {
		return true
	}
	return it.ended()
}

// ended is Next at the end of the scan: the end of the file (or of the
// first MaxSegmentBytes), or damage, which salvage turns into an event.
func (it *LogIterator) ended() bool {
	it.Close() // what follows reads the file itself
	err := it.s.Err()
	it.done = true
	if err == nil {
		if !it.salvage {
			it.err = SegmentTooLarge(it.name, it.size)
			return false
		}
		return it.pastLimit()
	}
	if !it.salvage || !fileio.IsCorrupt(err) {
		it.err = err
		return false
	}
	// An entry running past the end of the file is a torn write only when
	// no valid batch follows; otherwise its length field is damaged.
	pos := it.s.Position()
	var claimed record.Batch
	cause := CauseOther
	if errors.Is(err, fileio.ErrTorn) {
		var ferr error
		if cause, claimed, ferr = it.tornCause(pos); ferr != nil {
			it.err, it.hard = ferr, true
			return false
		}
	}
	next, ok, rerr := it.rs.Next(pos + 1)
	if rerr != nil {
		it.err, it.hard = rerr, true
		return false
	}
	var ce *fileio.CorruptError
	if ok && errors.Is(err, fileio.ErrTorn) && errors.As(err, &ce) {
		detail := strings.TrimPrefix(ce.Err.Error(), fileio.ErrTorn.Error()+": ")
		err = fileio.Corruptf(it.name, pos, fileio.ErrCorruptHeader, "%s, yet a valid batch follows at position %d: the length field is damaged", detail, next)
	}
	it.setDamage(pos, next, err)
	it.dmg.Cause, it.dmg.Size, it.dmg.Magic = cause, claimed.Size, claimed.Magic
	if ok {
		it.done, it.resume = false, next
	}
	return true
}

// windowed allocates the read window, once (IterOptions.Window bytes).
func (it *LogIterator) windowed() {
	it.s.EnsureWindow(it.window)
}

// Close stops the read-ahead goroutine, if there is one. The iterator may
// be Reset and used again.
func (it *LogIterator) Close() {
	it.s.StopReadAhead()
}

// tornCause says why the scan stopped with ErrTorn at pos: too few bytes
// for a header, or an entry running past the end of the file, whose header
// (ParseBatch decodes its size and magic even then) it returns.
func (it *LogIterator) tornCause(pos int64) (DamageCause, record.Batch, error) {
	if it.s.End()-pos < record.HeaderSizeUpToMagic+1 {
		return CauseShortTail, record.Batch{}, nil
	}
	hdr, err := it.s.HeaderAt(pos)
	if err != nil {
		return CauseOther, record.Batch{}, err
	}
	b, _ := record.ParseBatch(hdr, pos, it.name)
	return CauseRunsPast, b, nil
}

// ZeroFilled reports whether the bytes from the current damage's position
// to the end of the file are all zero: a preallocated .log, or blocks never
// written before an unclean shutdown.
func (it *LogIterator) ZeroFilled() (bool, error) {
	it.windowed()
	return it.s.ZeroFrom(it.dmg.Position)
}

// Reject turns the current batch into damage (ErrCorruptHeader, why), from
// its position to the next valid batch (or the end of the file), for a
// caller stricter than the broker's iterator (verify refuses the headers
// HeaderProblem rejects). Damage is then set, and Next resumes at its End.
// Salvage only.
func (it *LogIterator) Reject(why string) error {
	it.Close() // the Resyncer reads the file
	pos := it.s.Batch().Position
	next, ok, rerr := it.rs.Next(pos + 1)
	if rerr != nil {
		it.hard = true
		return rerr
	}
	it.setDamage(pos, next, fileio.Corruptf(it.name, pos, fileio.ErrCorruptHeader, "%s", why))
	if ok {
		it.resume = next
	} else {
		it.done = true
	}
	return nil
}

// pastLimit yields, once, when salvaging, the bytes past MaxSegmentBytes
// as one damaged range.
func (it *LogIterator) pastLimit() bool {
	if !it.salvage || it.limitDone || it.err != nil || it.size <= MaxSegmentBytes {
		return false
	}
	it.limitDone = true
	it.setDamage(MaxSegmentBytes, it.size, SegmentTooLarge(it.name, it.size))
	return true
}

func (it *LogIterator) setDamage(pos, end int64, err error) {
	it.dmg = Damage{Segment: it.sf, Position: pos, End: end, Err: err}
	it.hasDmg = true
}

// Damage is the current damaged range, or nil when the current event is a
// batch. Its bytes [Position, End) hold no batch the iterator could read;
// End is where the next valid batch starts, or the file size.
func (it *LogIterator) Damage() *Damage {
	if !it.hasDmg {
		return nil
	}
	return &it.dmg
}

// Batch is the current batch (valid until the next call to Next).
func (it *LogIterator) Batch() *record.Batch { return it.s.Batch() }

// CheckCRC computes the current batch's checksum (streaming entries larger
// than the window) and reports whether it matches the stored CRC; it does
// not judge (see Judge).
func (it *LogIterator) CheckCRC() (computed uint32, ok bool, err error) {
	it.windowed()
	return it.s.CheckCRC()
}

// Judge checks the current batch's CRC (streaming large entries). With
// salvage, a batch whose CRC does not match and whose length is not
// credible while a valid batch follows (Resyncer.SkipBadCRC) becomes
// damage, [its position, that batch): Damage is then set, and Next resumes
// there. Otherwise the batch stands, crcOK saying whether its CRC matches.
func (it *LogIterator) Judge() (crcOK bool, err error) {
	computed, ok, err := it.CheckCRC()
	if err != nil || ok || !it.salvage {
		if err != nil {
			it.hard = true
		}
		return ok, err
	}
	return false, it.JudgeMismatch(computed)
}

// JudgeMismatch is Judge's salvage decision for the current batch, whose
// checksum the caller computed (CheckCRC) and found not matching: it
// becomes damage, or stands, as Judge says.
func (it *LogIterator) JudgeMismatch(computed uint32) error {
	it.Close() // the Resyncer reads the file
	b := it.s.Batch()
	next, err := it.rs.SkipBadCRC(b)
	if err != nil || next < 0 {
		if err != nil {
			it.hard = true
		}
		return err
	}
	it.setDamage(b.Position, next, fileio.Corruptf(it.name, b.Position, fileio.ErrCRC, "stored crc %d does not match the computed %d, and no batch starts where its length field says it ends (position %d)", b.CRC, computed, b.End()))
	it.resume = next
	return nil
}

// Entry returns the whole current entry, a view valid until the next call
// to Next. An entry larger than MaxEntryBytes is refused with ErrTooLarge;
// with salvage it becomes damage instead ([its position, its end): its
// length was judged credible), entry and err both nil, and Next goes on
// after it.
func (it *LogIterator) Entry() ([]byte, error) {
	it.windowed()
	e, err := it.s.Entry()
	if err != nil && it.salvage && fileio.IsCorrupt(err) {
		b := it.s.Batch()
		it.setDamage(b.Position, b.End(), err)
		it.resume = b.End()
		return nil, nil
	}
	return e, err
}

// Position is where the next entry would start: after the iteration ended
// without salvage, the end of the valid prefix (the broker's recovery cut
// point when Err is not nil).
func (it *LogIterator) Position() int64 { return it.s.Position() }

// Err is nil when the iteration ended at the end of the file (with
// salvage: also past damage), else why it stopped: without salvage the
// damage (a *CorruptError), or a read error.
func (it *LogIterator) Err() error { return it.err }

// The read sizes and bounds of the scan engine (inspect/internal/scan).
const (
	DefaultWindow     = scan.DefaultWindow     // a whole-entry iterator's read size
	MaxEntryBytes     = scan.MaxEntryBytes     // the largest entry Entry hands out whole
	ReadAheadMinBytes = scan.ReadAheadMinBytes // the smallest log IterOptions.ReadAhead reads on a second goroutine
	ResyncWindow      = scan.ResyncWindow      // each of a salvaging iterator's two resynchronisation buffers
)

// MaxSegmentBytes is the most bytes of a .log anything reads: no broker
// writes or opens a larger segment (segment.bytes is an int, and
// FileRecords keeps sizes and positions as ints), so what lies past it (a
// sparse file, say) is reported, not scanned.
const MaxSegmentBytes = math.MaxInt32

// SegmentTooLarge is the error for a log of size bytes past
// MaxSegmentBytes, nil when it is not.
func SegmentTooLarge(file string, size int64) error {
	if size <= MaxSegmentBytes {
		return nil
	}
	return fileio.Corruptf(file, MaxSegmentBytes, fileio.ErrSegmentTooLarge, "the log is %d bytes; no broker opens a segment over %d bytes (segment.bytes is an int, FileRecords positions are 32-bit): the %d bytes past it are not read",
		size, int64(MaxSegmentBytes), size-MaxSegmentBytes)
}

package fileio

import (
	"errors"
	"fmt"
	"io"
)

// Kinds of damage. A CorruptError wraps exactly one of them, so callers
// (verify's check ids, rebuild's cut point) can switch with errors.Is.
var (
	// ErrTorn: the file ends inside an entry (a partial trailing batch or
	// header). The broker's iterator stops silently there (FileLogInputStream).
	ErrTorn = errors.New("file ends inside a batch")
	// ErrCorruptHeader: an impossible length, magic or offset delta.
	ErrCorruptHeader = errors.New("corrupt batch header")
	// ErrCRC: the stored CRC does not match the bytes.
	ErrCRC = errors.New("crc mismatch")
	// ErrCorruptRecords: the records inside a batch do not decode.
	ErrCorruptRecords = errors.New("corrupt records")
	// ErrTooLarge: a decompressed payload would exceed the configured cap.
	ErrTooLarge = errors.New("decompressed size over the limit")
	// ErrFault: the file shrank under its memory mapping (SIGBUS turned into
	// an error by the fault guard).
	ErrFault = errors.New("file changed under its mapping")
	// ErrSegmentTooLarge: a .log longer than MaxSegmentBytes; the bytes
	// past it are not read.
	ErrSegmentTooLarge = errors.New("log segment larger than a broker can open")
	// ErrNotRegular: the path names a FIFO, device, socket or directory
	// where a regular file belongs; it is refused without being read.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotKafka: the path is not a Kafka file or directory.
	ErrNotKafka = errors.New("not a Kafka file")
)

// CorruptError says which bytes of which file were wrong. Position is a byte
// position inside File (-1 when not known); Offset is the Kafka offset
// involved (-1 when not known). Err is one of the kinds above, possibly
// wrapped with detail.
type CorruptError struct {
	File     string
	Position int64
	Offset   int64
	Err      error
}

func (e *CorruptError) Error() string {
	switch {
	case e.Position >= 0 && e.Offset >= 0:
		return fmt.Sprintf("%s: byte position %d (offset %d): %v", e.File, e.Position, e.Offset, e.Err)
	case e.Position >= 0:
		return fmt.Sprintf("%s: byte position %d: %v", e.File, e.Position, e.Err)
	default:
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Corruptf builds a CorruptError of the given kind with a formatted detail.
func Corruptf(file string, pos int64, kind error, format string, args ...any) *CorruptError {
	return &CorruptError{File: file, Position: pos, Offset: -1, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

// ReadError is the error of a read at pos of the named file that came back
// short: a *CorruptError the reader raised as it is, else one wrapping err
// (io.ErrUnexpectedEOF for a plain end of file).
func ReadError(name string, pos int64, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &CorruptError{File: name, Position: pos, Offset: -1, Err: err}
}

// IsCorrupt reports whether err is (or wraps) a *CorruptError: bad data,
// as opposed to an I/O failure.
func IsCorrupt(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce)
}

// CorruptDetail is what is wrong, without the file and position a
// message gives apart: a *CorruptError's Err, else err's whole text.
func CorruptDetail(err error) string {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce.Err.Error()
	}
	return err.Error()
}

package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/kseg/kseg/inspect/fileio"
)

// Message format v0/v1 (section 3; broker: LegacyRecord, AbstractLegacyRecordBatch).
// A message, counted from its CRC (byte 12 of a log entry):
//
//	0 u32 crc   4 i8 magic   5 i8 attributes   [v1: 6 i64 timestamp]
//	then i32 keyLength, key, i32 valueLength, value (negative length = null)
//
// The layout is v0 when the magic is 0 and v1 otherwise (LegacyRecord.keySizeOffset),
// which is how the broker reads the odd magic values its file iterator sends here.

const (
	legacyMinMessage = 14 // LegacyRecord.RECORD_OVERHEAD_V0: smallest inner message size accepted
	legacyV1Header   = 14 // LegacyRecord.HEADER_SIZE_V1: crc, magic, attributes, timestamp
)

// legacyMessage is a decoded v0/v1 message; key and value are views.
type legacyMessage struct {
	crc        uint32
	magic      int8
	attributes int8
	timestamp  int64 // the message's own field; -1 for magic 0
	key, value []byte
}

// parseLegacyMessage decodes msg (starting at the CRC field) like LegacyRecord's
// accessors; every length is bounds-checked. Bytes after the value are allowed (the
// broker never looks at them; they are covered by the CRC).
func parseLegacyMessage(msg []byte, m *legacyMessage) error {
	if len(msg) < 6 {
		return fmt.Errorf("message of %d bytes is shorter than its header", len(msg))
	}
	m.crc = binary.BigEndian.Uint32(msg)
	m.magic = int8(msg[4])
	m.attributes = int8(msg[5])
	m.timestamp = -1
	p := 6
	if m.magic != 0 {
		if len(msg) < legacyV1Header {
			return fmt.Errorf("magic %d message of %d bytes is shorter than its header", m.magic, len(msg))
		}
		m.timestamp = int64(binary.BigEndian.Uint64(msg[6:]))
		p = legacyV1Header
	}
	var err error
	if m.key, p, err = legacyBytes(msg, p, "key"); err != nil {
		return err
	}
	m.value, _, err = legacyBytes(msg, p, "value")
	return err
}

// legacyBytes reads an i32 length at p and that many bytes (Utils.sizeDelimited).
func legacyBytes(msg []byte, p int, what string) (v []byte, next int, err error) {
	if len(msg)-p < 4 {
		return nil, p, fmt.Errorf("message of %d bytes ends inside the %s length at byte %d", len(msg), what, p)
	}
	l := int32(binary.BigEndian.Uint32(msg[p:]))
	p += 4
	if l < 0 {
		return nil, p, nil
	}
	if int(l) > len(msg)-p {
		return nil, p, fmt.Errorf("%s length %d overruns the message (%d bytes left)", what, l, len(msg)-p)
	}
	return msg[p : p+int(l) : p+int(l)], p + int(l), nil
}

// legacyCRCValid is LegacyRecord.isValid: size >= 14 and the stored CRC equals the
// CRC-32 (IEEE) of the message from the magic byte on.
func legacyCRCValid(msg []byte) bool {
	return len(msg) >= legacyMinMessage && binary.BigEndian.Uint32(msg) == crc32.ChecksumIEEE(msg[4:])
}

// nextInner reads the inner log entry at pos of a decompressed message set
// (AbstractLegacyRecordBatch.DataLogInputStream.nextBatch): fewer than 12 bytes left,
// or a message cut short, ends the set quietly (ok false); a size below 14 is an
// error.
func nextInner(set []byte, pos int) (offset int64, msg []byte, next int, ok bool, err error) {
	if len(set)-pos < LogOverhead {
		return 0, nil, pos, false, nil
	}
	offset = int64(binary.BigEndian.Uint64(set[pos:]))
	size := int32(binary.BigEndian.Uint32(set[pos+8:]))
	if size < legacyMinMessage {
		return 0, nil, pos, false, fmt.Errorf("inner message at byte %d of the decompressed set: size %d is less than the minimum record overhead (%d)", pos, size, legacyMinMessage)
	}
	if int(size) > len(set)-pos-LogOverhead {
		return 0, nil, pos, false, nil
	}
	next = pos + LogOverhead + int(size)
	return offset, set[pos+LogOverhead : next], next, true, nil
}

// legacyWrapper is an opened compressed wrapper message.
type legacyWrapper struct {
	outer   legacyMessage
	set     []byte // the decompressed inner message set
	absBase int64  // v1: absolute = absBase + inner offset; v0: -1, inner offsets are absolute
}

func (w *legacyWrapper) absolute(inner int64) int64 {
	if w.outer.magic == 1 {
		return w.absBase + inner
	}
	return inner
}

// openWrapper decompresses a wrapper's value and walks its inner entries once, the
// way AbstractLegacyRecordBatch.DeepRecordsIterator's constructor does: the wrapper
// must be magic 0 or 1, not zstd, with a non-null value; the inner set must not be
// empty; for v1 the wrapper offset (the last inner message's absolute offset) gives
// the base of the relative inner offsets, except that a wrapper offset of 0 (old
// librdkafka) means the inner offsets are absolute, and a wrapper offset below the
// last inner offset is invalid.
func (d *RecordDecoder) openWrapper(file string, entry []byte, b *Batch, w *legacyWrapper) error {
	codec := Compression(w.outer.attributes & AttrCompressionMask)
	if codec > CompressionZstd {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "unknown compression type id %d", int8(codec))
	}
	if w.outer.magic != 0 && w.outer.magic != 1 {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "invalid wrapper magic %d found in legacy deep record iterator", w.outer.magic)
	}
	if codec == CompressionZstd {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "invalid wrapper compression type zstd found in a magic %d message", w.outer.magic)
	}
	if w.outer.value == nil {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "found invalid compressed record set with null value (magic = %d)", w.outer.magic)
	}
	set, err := d.inflate(file, b, codec, w.outer.value, w.outer.magic)
	if err != nil {
		return err
	}
	w.set = set
	n, last := 0, int64(0)
	for pos := 0; ; n++ {
		off, _, next, ok, err := nextInner(set, pos)
		if err != nil {
			return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "%v", err)
		}
		if !ok {
			break
		}
		last, pos = off, next
	}
	if n == 0 {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "found invalid compressed record set with no inner records")
	}
	w.absBase = -1
	if w.outer.magic == 1 {
		wrapperOffset := int64(binary.BigEndian.Uint64(entry))
		switch {
		case wrapperOffset == 0:
			w.absBase = 0
		case wrapperOffset < last:
			return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "found invalid wrapper offset in compressed v1 message set, wrapper offset %d is less than the last inner message offset %d and it is not zero", wrapperOffset, last)
		default:
			w.absBase = wrapperOffset - last
		}
	}
	return nil
}

// checkInnerUncompressed is DeepRecordsIterator.makeNext's "Inner messages must not be
// compressed" (the codec id itself must also be known).
func checkInnerUncompressed(msg []byte) error {
	switch c := Compression(int8(msg[5]) & AttrCompressionMask); {
	case c > CompressionZstd:
		return fmt.Errorf("inner message has unknown compression type id %d", int8(c))
	case c != CompressionNone:
		return fmt.Errorf("inner messages must not be compressed (found %s)", c)
	}
	return nil
}

// legacyRecords delivers the records of a magic 0/1 entry: an uncompressed message is
// its own single record; a compressed wrapper yields its inner messages with absolute
// offsets. Timestamps (LegacyRecord.timestamp): magic 0 has none (-1); an inner v1
// message of a LogAppendTime v1 wrapper reports the wrapper's timestamp; any other
// message reports its own timestamp field.
func (d *RecordDecoder) legacyRecords(file string, entry []byte, b *Batch, fn func(*Record) error) error {
	if len(entry) < LogOverhead {
		return fileio.Corruptf(file, b.Position, fileio.ErrTorn, "entry of %d bytes is shorter than the log overhead", len(entry))
	}
	var w legacyWrapper
	if err := parseLegacyMessage(entry[LogOverhead:], &w.outer); err != nil {
		return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "%v", err)
	}
	if Compression(w.outer.attributes&AttrCompressionMask) == CompressionNone {
		d.setLegacyRecord(int64(binary.BigEndian.Uint64(entry)), entry[LogOverhead:], &w.outer, w.outer.timestamp)
		return fn(&d.rec)
	}
	if err := d.openWrapper(file, entry, b, &w); err != nil {
		return err
	}
	logAppendTime := w.outer.magic == 1 && w.outer.attributes&AttrLogAppendTime != 0
	var m legacyMessage
	for pos := 0; ; {
		off, msg, next, ok, _ := nextInner(w.set, pos) // errors were reported by openWrapper
		if !ok {
			return nil
		}
		if err := checkInnerUncompressed(msg); err != nil {
			return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "inner message at byte %d of the decompressed set: %v", pos, err)
		}
		if err := parseLegacyMessage(msg, &m); err != nil {
			return fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "inner message at byte %d of the decompressed set: %v", pos, err)
		}
		ts := m.timestamp
		if m.magic == 1 && logAppendTime {
			ts = w.outer.timestamp
		}
		d.setLegacyRecord(w.absolute(off), msg, &m, ts)
		if err := fn(&d.rec); err != nil {
			return err
		}
		pos = next
	}
}

// setLegacyRecord fills d.rec from a message.
func (d *RecordDecoder) setLegacyRecord(offset int64, msg []byte, m *legacyMessage, timestamp int64) {
	r := &d.rec
	r.Offset = offset
	r.Timestamp = timestamp
	r.Key, r.Value = m.key, m.value
	r.HeaderCount, r.headers = 0, nil
	r.Sequence = -1
	r.Attributes = m.attributes
	r.Magic = m.magic
	r.CRC = m.crc
	r.CRCValid = legacyCRCValid(msg)
}

// legacyFirstOffset is LegacyFileChannelRecordBatch.baseOffset.
func (d *RecordDecoder) legacyFirstOffset(file string, entry []byte, b *Batch) (int64, error) {
	if len(entry) < HeaderSizeUpToMagic+1 {
		return -1, fileio.Corruptf(file, b.Position, fileio.ErrTorn, "entry of %d bytes is shorter than a message header", len(entry))
	}
	if Compression(int8(entry[17])&AttrCompressionMask) == CompressionNone {
		return int64(binary.BigEndian.Uint64(entry)), nil
	}
	var w legacyWrapper
	if err := parseLegacyMessage(entry[LogOverhead:], &w.outer); err != nil {
		return -1, fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "%v", err)
	}
	if err := d.openWrapper(file, entry, b, &w); err != nil {
		return -1, err
	}
	off, msg, _, _, _ := nextInner(w.set, 0) // openWrapper found at least one
	if err := checkInnerUncompressed(msg); err != nil {
		return -1, fileio.Corruptf(file, b.Position, fileio.ErrCorruptRecords, "first inner message: %v", err)
	}
	return w.absolute(off), nil
}

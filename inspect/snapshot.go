package inspect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Producer state snapshot, <offset>.snapshot (broker:
// ProducerStateManager.writeSnapshot/readSnapshot, ProducerSnapshot.json
// version 1; the layout is the same since 0.11):
//
//	0   i16  version (1; any other value is CorruptSnapshotException)
//	2   u32  crc: CRC-32C of bytes [6, file length)
//	6   i32  number of producer entries
//	10  46 bytes per entry:
//	      0  i64 producerId        8 i16 epoch          10 i32 lastSequence
//	     14  i64 lastOffset       22 i32 offsetDelta    26 i64 timestamp
//	     34  i32 coordinatorEpoch 38 i64 currentTxnFirstOffset
//
// The name's offset is the exclusive end offset the snapshot covers (not a
// segment base, though usually equal to one or to the log end offset). The
// CRC runs to the end of the file, so bytes after the last entry make it
// fail unless they were checksummed too. Entries are in hash-map order.
const (
	// ProducerSnapshotVersion is the only version a broker reads
	// (ProducerSnapshot.LOWEST/HIGHEST_SUPPORTED_VERSION).
	ProducerSnapshotVersion = 1
	// ProducerSnapshotHeaderSize is the version, CRC and entry count
	// (ProducerStateManager.PRODUCER_ENTRIES_OFFSET is 6: the CRC covers
	// the count too).
	ProducerSnapshotHeaderSize = 10
	// ProducerSnapshotEntrySize is one producer entry.
	ProducerSnapshotEntrySize = 46

	snapshotCRCStart = 6
)

// ErrCorruptSnapshot is the kind of the *CorruptError a snapshot that the
// broker would refuse yields (CorruptSnapshotException): an unknown
// version, a truncated or negative entry array, or a CRC mismatch. The
// broker deletes such a snapshot at load and falls back to an older one,
// rebuilding producer state from the log.
var ErrCorruptSnapshot = errors.New("corrupt producer snapshot")

// ErrSnapshotCRC is wrapped, beside ErrCorruptSnapshot, by the error of a
// snapshot whose structure is sound but whose CRC does not match.
var ErrSnapshotCRC = errors.New("snapshot is corrupt (CRC is no longer valid)")

// ProducerEntry is one producer in a snapshot, as stored.
type ProducerEntry struct {
	ProducerID    int64
	ProducerEpoch int16
	// LastSequence, LastOffset and OffsetDelta describe the producer's last
	// data batch (BatchMetadata); LastOffset < 0 means there is none, and
	// then LastSequence is -1 and OffsetDelta 0 as written.
	LastSequence int32
	LastOffset   int64
	OffsetDelta  int32
	// Timestamp is the max timestamp of the producer's last batch or
	// marker (ProducerStateEntry.lastTimestamp).
	Timestamp        int64
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open
	// transaction, -1 (any negative value) when none is open.
	CurrentTxnFirstOffset int64
}

// HasBatchMetadata reports whether the entry describes a last data batch
// (ProducerStateManager.readSnapshot: lastOffset >= 0).
func (e *ProducerEntry) HasBatchMetadata() bool { return e.LastOffset >= 0 }

// HasOpenTransaction reports whether the producer has an ongoing
// transaction (currentTxnFirstOffset >= 0).
func (e *ProducerEntry) HasOpenTransaction() bool { return e.CurrentTxnFirstOffset >= 0 }

// FirstSequence is the first sequence of the last batch (BatchMetadata.
// firstSeq: DefaultRecordBatch.decrementSequence, wrapping below 0 to
// Integer.MAX_VALUE). Meaningful only with HasBatchMetadata.
func (e *ProducerEntry) FirstSequence() int32 {
	seq, dec := e.LastSequence, e.OffsetDelta
	if seq < dec {
		return int32(int64(math.MaxInt32) - (int64(dec) - int64(seq)) + 1)
	}
	return seq - dec
}

// FirstOffset is the first offset of the last batch (BatchMetadata.
// firstOffset: lastOffset - offsetDelta). Meaningful only with
// HasBatchMetadata.
func (e *ProducerEntry) FirstOffset() int64 { return e.LastOffset - int64(e.OffsetDelta) }

// ProducerSnapshot is a decoded .snapshot file.
type ProducerSnapshot struct {
	Version     int16
	StoredCRC   uint32 // the header's CRC field
	ComputedCRC uint32 // CRC-32C of bytes [6, end); 0 when the file is shorter than 6 bytes
	// Count is the header's entry count as stored (may be negative or
	// larger than the file holds when the file is corrupt).
	Count   int32
	Entries []ProducerEntry
	// TrailingBytes counts the bytes after the last entry. The broker does
	// not look at them except through the CRC.
	TrailingBytes int64
}

// CRCValid reports whether the stored CRC matches the bytes.
func (s *ProducerSnapshot) CRCValid() bool { return s.StoredCRC == s.ComputedCRC }

// OpenTransactions lists the producers with an ongoing transaction, by
// the transaction's first offset.
func (s *ProducerSnapshot) OpenTransactions() []ProducerEntry {
	var out []ProducerEntry
	for _, e := range s.Entries {
		if e.HasOpenTransaction() {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CurrentTxnFirstOffset < out[j].CurrentTxnFirstOffset })
	return out
}

// ParseProducerSnapshot decodes a snapshot file's bytes, checking what
// ProducerStateManager.readSnapshot checks, in its order: the version, the
// entry array (a negative count or entries past the end of the file are a
// schema validation failure), then the CRC. It returns whatever it could
// decode together with the first problem found, a *CorruptError of kind
// ErrCorruptSnapshot naming file and the byte position; a snapshot with a
// nil error is one a broker loads. Entries are decoded up to the end of the
// file even when the count is wrong, and their number is bounded by the
// file size, never by the count.
func ParseProducerSnapshot(file string, b []byte) (*ProducerSnapshot, error) {
	s := &ProducerSnapshot{}
	bad := func(pos int64, format string, args ...any) error {
		return corruptf(file, pos, ErrCorruptSnapshot, format, args...)
	}
	if len(b) < 2 {
		return s, bad(0, "%d bytes: too short for the version field (snapshot failed schema validation)", len(b))
	}
	s.Version = int16(binary.BigEndian.Uint16(b))
	if len(b) >= snapshotCRCStart {
		s.StoredCRC = binary.BigEndian.Uint32(b[2:])
		s.ComputedCRC = crc32.Checksum(b[snapshotCRCStart:], castagnoli)
	}
	if s.Version != ProducerSnapshotVersion {
		return s, bad(0, "snapshot contained an unknown file version %d", s.Version)
	}
	if len(b) < ProducerSnapshotHeaderSize {
		return s, bad(int64(len(b)), "%d bytes: too short for the %d-byte header (snapshot failed schema validation)", len(b), ProducerSnapshotHeaderSize)
	}
	s.Count = int32(binary.BigEndian.Uint32(b[6:]))
	room := (len(b) - ProducerSnapshotHeaderSize) / ProducerSnapshotEntrySize
	n := room
	if s.Count >= 0 && int64(s.Count) < int64(room) {
		n = int(s.Count)
	}
	s.Entries = make([]ProducerEntry, n)
	for i := range s.Entries {
		s.Entries[i] = decodeProducerEntry(b[ProducerSnapshotHeaderSize+i*ProducerSnapshotEntrySize:])
	}
	end := int64(ProducerSnapshotHeaderSize + n*ProducerSnapshotEntrySize)
	s.TrailingBytes = int64(len(b)) - end
	switch {
	case s.Count < 0:
		return s, bad(6, "negative producer entry count %d (snapshot failed schema validation)", s.Count)
	case int64(s.Count) > int64(room):
		return s, bad(end, "%d producer entries declared, the file holds %d (%d bytes after the header; snapshot failed schema validation)", s.Count, room, len(b)-ProducerSnapshotHeaderSize)
	case !s.CRCValid():
		return s, bad(2, "%w: stored crc %d, computed crc %d", ErrSnapshotCRC, s.StoredCRC, s.ComputedCRC)
	}
	return s, nil
}

func decodeProducerEntry(b []byte) ProducerEntry {
	be := binary.BigEndian
	return ProducerEntry{
		ProducerID:            int64(be.Uint64(b[0:])),
		ProducerEpoch:         int16(be.Uint16(b[8:])),
		LastSequence:          int32(be.Uint32(b[10:])),
		LastOffset:            int64(be.Uint64(b[14:])),
		OffsetDelta:           int32(be.Uint32(b[22:])),
		Timestamp:             int64(be.Uint64(b[26:])),
		CoordinatorEpoch:      int32(be.Uint32(b[34:])),
		CurrentTxnFirstOffset: int64(be.Uint64(b[38:])),
	}
}

// AppendProducerSnapshot encodes a version 1 snapshot of entries, with its
// CRC, as ProducerStateManager.writeSnapshot writes it (in the order
// given).
func AppendProducerSnapshot(dst []byte, entries []ProducerEntry) []byte {
	start := len(dst)
	be := binary.BigEndian
	dst = be.AppendUint16(dst, ProducerSnapshotVersion)
	dst = append(dst, 0, 0, 0, 0)
	dst = be.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = be.AppendUint64(dst, uint64(e.ProducerID))
		dst = be.AppendUint16(dst, uint16(e.ProducerEpoch))
		dst = be.AppendUint32(dst, uint32(e.LastSequence))
		dst = be.AppendUint64(dst, uint64(e.LastOffset))
		dst = be.AppendUint32(dst, uint32(e.OffsetDelta))
		dst = be.AppendUint64(dst, uint64(e.Timestamp))
		dst = be.AppendUint32(dst, uint32(e.CoordinatorEpoch))
		dst = be.AppendUint64(dst, uint64(e.CurrentTxnFirstOffset))
	}
	be.PutUint32(dst[start+2:], crc32.Checksum(dst[start+snapshotCRCStart:], castagnoli))
	return dst
}

// MaxSnapshotBytes bounds the size of a snapshot file ReadProducerSnapshot
// reads whole (about 2.3 million producers); larger files are refused
// rather than read into memory.
var MaxSnapshotBytes int64 = 100 << 20

// ReadProducerSnapshot reads and decodes a snapshot file (see
// ParseProducerSnapshot). I/O problems and over-large files are returned as
// plain errors with a nil snapshot.
func ReadProducerSnapshot(path string) (*ProducerSnapshot, error) {
	b, err := readSmallFile(path, MaxSnapshotBytes)
	if err != nil {
		return nil, err
	}
	return ParseProducerSnapshot(path, b)
}

// SnapshotFile is one producer snapshot file of a partition directory.
type SnapshotFile struct {
	// Offset is the name's offset: the exclusive end offset the snapshot
	// covers.
	Offset int64
	Path   string
}

// ListSnapshots lists the producer snapshot files of a partition
// directory by offset, as the broker finds them
// (ProducerStateManager.listSnapshotFiles: regular files whose name ends
// with ".snapshot"; the offset is the digits before the first '.').
// Names that do not start with an offset are skipped.
func ListSnapshots(dir string) ([]SnapshotFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []SnapshotFile
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if off, ok := snapshotOffset(e.Name()); ok {
			out = append(out, SnapshotFile{Offset: off, Path: filepath.Join(dir, e.Name())})
		}
	}
	sortSnapshots(out)
	return out, nil
}

// snapshotOffset is the offset a producer state snapshot's file name
// carries; false when name is not one.
func snapshotOffset(name string) (int64, bool) {
	if !strings.HasSuffix(name, SnapshotSuffix) {
		return 0, false
	}
	off, err := ParseBaseOffset(name)
	return off, err == nil
}

func sortSnapshots(s []SnapshotFile) {
	sort.Slice(s, func(i, j int) bool { return s[i].Offset < s[j].Offset })
}

// readSmallFile reads a whole side file (snapshot, checkpoint) of at most
// limit bytes.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, size, err := openDescriptor(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this kind of file can sensibly hold", path, size, limit)
	}
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if int64(n) < size {
		if err == nil {
			err = errors.New("short read")
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

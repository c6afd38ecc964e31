package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// baseShape is the partition every damage case starts from: two segments
// of 100 uncompressed v2 batches, indexes every 4096 bytes.
var baseShape = kafkagen.Options{Seed: 11, Segments: 2, Batches: 100}

// damageCase damages a freshly generated partition and says which
// findings must follow, and nothing else.
type damageCase struct {
	name  string
	shape *kafkagen.Options // nil: baseShape
	// damage mangles the files and returns the expected findings and how
	// many valid batches the summary must count (-1: all of them).
	damage func(t *testing.T, m *kafkagen.Manifest) (wants []want, batches int)
}

func segFiles(m *kafkagen.Manifest, i int) (s *kafkagen.SegmentManifest, log, idx, tidx string) {
	s = &m.Segments[i]
	return s, m.LogPath(s), m.IndexPath(s), m.TimeIndexPath(s)
}

// middle picks a batch of segment 0 near the middle that no index entry
// names or points at, so that damaging it touches the .log alone.
func middle(t *testing.T, m *kafkagen.Manifest) kafkagen.BatchManifest {
	t.Helper()
	s := &m.Segments[0]
	for k := len(s.Batches) / 2; k < len(s.Batches)-1; k++ {
		if !indexed(s, s.Batches[k]) {
			return s.Batches[k]
		}
	}
	t.Fatal("no unindexed batch")
	return kafkagen.BatchManifest{}
}

func totalBatches(m *kafkagen.Manifest) int {
	n := 0
	for _, s := range m.Segments {
		n += len(s.Batches)
	}
	return n
}

func base(name string) string { return filepath.Base(name) }

// partitionShape is the partition tc damages.
func (tc damageCase) partitionShape() kafkagen.Options {
	if tc.shape != nil {
		return *tc.shape
	}
	return baseShape
}

// damaged writes tc's partition, damages it and returns its directory.
func (tc damageCase) damaged(t *testing.T) string {
	t.Helper()
	m := generate(t, tc.partitionShape())
	tc.damage(t, m)
	return m.Dir
}

var damageCases = []damageCase{
	{name: "flipped byte in a record", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		flipByte(t, log, b.Position+b.Size-3)
		return []want{{LogCRC, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "flipped byte in an indexed batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 0)
		k := batchAt(t, s, int64(s.OffsetIndex[1].Position))
		b := s.Batches[k]
		flipByte(t, log, b.Position+inspect61+2)
		return []want{{LogCRC, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "flipped CRC", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		flipByte(t, log, b.Position+17)
		return []want{{LogCRC, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "flipped CRC of the last batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 1)
		b := s.Batches[len(s.Batches)-1]
		flipByte(t, log, b.Position+18)
		return []want{{LogCRC, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "torn last batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 1)
		b := s.Batches[len(s.Batches)-1]
		truncateFile(t, log, b.Position+b.Size/2)
		return []want{{LogTruncated, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "torn last batch header", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 0)
		b := s.Batches[len(s.Batches)-1]
		truncateFile(t, log, b.Position+10)
		return []want{{LogTruncated, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "zero-filled log tail", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 1)
		size := fileSize(t, log)
		appendBytes(t, log, make([]byte, 5000))
		return []want{{LogTruncated, base(log), size}}, -1
	}},
	{name: "garbage log tail", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 1)
		size := fileSize(t, log)
		appendBytes(t, log, []byte("this is not a record batch, just text left behind by something else"))
		return []want{{LogCorruptHeader, base(log), size}}, -1
	}},
	{name: "huge length field mid-file", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		putU32(t, log, b.Position+8, 0x7ffffff0)
		return []want{{LogCorruptHeader, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "huge length field in an indexed batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 0)
		k := batchAt(t, s, int64(s.OffsetIndex[2].Position))
		b := s.Batches[k]
		putU32(t, log, b.Position+8, 0x10000000)
		return []want{{LogCorruptHeader, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "length field too small mid-file", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		putU32(t, log, b.Position+8, 3)
		return []want{{LogCorruptHeader, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "length field shortened mid-file", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		putU32(t, log, b.Position+8, uint32(b.Size-12-20))
		return []want{{LogCRC, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "impossible magic", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		edit(t, log, func(d []byte) []byte { d[b.Position+16] = 7; return d })
		return []want{{LogCorruptHeader, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "impossible record count", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		putU32(t, log, b.Position+57, uint32(b.LastOffsetDelta+5))
		fixCRC(t, log, s.Batches[batchAt(t, s, b.Position)])
		return []want{{LogCorruptHeader, base(log), b.Position}}, totalBatches(m) - 1
	}},
	{name: "index entry past the end", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, idx, _ := segFiles(m, 0)
		putU32(t, idx, 2*8+4, uint32(s.LogSize+100))
		return []want{{IndexPosition, base(idx), 16}}, -1
	}},
	{name: "index entry not at a batch boundary", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, idx, _ := segFiles(m, 0)
		putU32(t, idx, 2*8+4, uint32(s.OffsetIndex[2].Position+5))
		return []want{{IndexPosition, base(idx), 16}}, -1
	}},
	{name: "index entry past its batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, idx, _ := segFiles(m, 1)
		k := batchAt(t, s, int64(s.OffsetIndex[2].Position))
		putU32(t, idx, 2*8+4, uint32(s.Batches[k+1].Position))
		return []want{{IndexMismatch, base(idx), 16}}, -1
	}},
	{name: "index positions going back", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, idx, _ := segFiles(m, 0)
		putU32(t, idx, 1*8+4, uint32(s.OffsetIndex[2].Position))
		putU32(t, idx, 2*8+4, uint32(s.OffsetIndex[1].Position))
		return []want{{IndexMismatch, base(idx), 8}}, -1
	}},
	{name: "index entry at the end of the log", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, idx, _ := segFiles(m, 0)
		putU32(t, idx, 1*8+4, uint32(s.LogSize))
		return []want{{IndexMismatch, base(idx), 8}}, -1
	}},
	{name: "index entry inside a batch behind the merge", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, idx, _ := segFiles(m, 0)
		putU32(t, idx, 1*8+4, uint32(s.LogSize))
		putU32(t, idx, 2*8+4, uint32(s.OffsetIndex[1].Position+3))
		return []want{{IndexMismatch, base(idx), 8}, {IndexPosition, base(idx), 16}}, -1
	}},
	{name: "index entry with a negative relative offset", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, _ := segFiles(m, 1)
		putU32(t, idx, 0, 0xfffffff0)
		return []want{{IndexOrder, base(idx), 0}}, -1
	}},
	{name: "unsorted index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, _ := segFiles(m, 0)
		swapSlots(t, idx, indexfmt.OffsetEntrySize, 1, 2)
		return []want{{IndexOrder, base(idx), 16}}, -1
	}},
	{name: "unsorted time index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, _, tidx := segFiles(m, 0)
		swapSlots(t, tidx, indexfmt.TimeEntrySize, 1, 2)
		return []want{{TimeIndexOrder, base(tidx), 24}}, -1
	}},
	{name: "time index timestamp changed", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, _, tidx := segFiles(m, 0)
		e := s.TimeIndex[2]
		if s.TimeIndex[3].Timestamp-e.Timestamp < 2 {
			t.Fatal("no room for the changed timestamp")
		}
		putU64(t, tidx, 2*12, uint64(e.Timestamp+1))
		return []want{{TimeIndexMismatch, base(tidx), 24}}, -1
	}},
	{name: "time index offset in another batch", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, _, _, tidx := segFiles(m, 0)
		e := s.TimeIndex[2]
		k := 0
		for i, b := range s.Batches {
			if b.LastOffset == e.Offset {
				k = i
			}
		}
		putU32(t, tidx, 2*12+8, uint32(s.Batches[k-1].LastOffset-s.BaseOffset))
		return []want{{TimeIndexMismatch, base(tidx), 24}}, -1
	}},
	{name: "stray bytes after the indexes", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, tidx := segFiles(m, 0)
		n, tn := fileSize(t, idx), fileSize(t, tidx)
		appendBytes(t, idx, []byte{1, 2, 3})
		appendBytes(t, tidx, []byte{1, 2, 3, 4, 5})
		return []want{{IndexSize, base(idx), n}, {TimeIndexSize, base(tidx), tn}}, -1
	}},
	{name: "zero-padded indexes", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, tidx := segFiles(m, 1)
		n, tn := fileSize(t, idx), fileSize(t, tidx)
		appendBytes(t, idx, make([]byte, 80))
		appendBytes(t, tidx, make([]byte, 120))
		return []want{{IndexPadding, base(idx), n}, {TimeIndexPadding, base(tidx), tn}}, -1
	}},
	{name: "preallocated indexes never written", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, tidx := segFiles(m, 1)
		writeFile(t, idx, make([]byte, 4096))
		writeFile(t, tidx, make([]byte, 4092))
		return []want{{IndexPadding, base(idx), 0}, {TimeIndexPadding, base(tidx), 0}}, -1
	}},
	{name: "zero slot inside the index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, _ := segFiles(m, 0)
		putU64(t, idx, 8, 0)
		return []want{{IndexOrder, base(idx), 8}}, -1
	}},
	{name: "missing index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, idx, _ := segFiles(m, 0)
		os.Remove(idx)
		return []want{{IndexMissing, base(idx), -1}}, -1
	}},
	{name: "missing time index", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, _, _, tidx := segFiles(m, 1)
		os.Remove(tidx)
		return []want{{TimeIndexMissing, base(tidx), -1}}, -1
	}},
	{name: "offset below the base offset", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 1)
		putU64(t, log, 0, uint64(s.BaseOffset-50))
		return []want{{LogOffsetRange, base(log), 0}}, -1
	}},
	{name: "offset not representable", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 1)
		b := s.Batches[len(s.Batches)-1]
		putU64(t, log, b.Position, uint64(b.BaseOffset+1<<32))
		return []want{{LogOffsetRange, base(log), b.Position}}, -1
	}},
	{name: "base offset running ahead", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		putU64(t, log, b.Position, uint64(b.BaseOffset+1000))
		return []want{{LogOffsetOrder, base(log), b.Position}}, -1
	}},
	{name: "base offset going back", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		s, log, _, _ := segFiles(m, 0)
		b := middle(t, m)
		k := batchAt(t, s, b.Position)
		putU64(t, log, b.Position, uint64(s.Batches[k-1].BaseOffset))
		return []want{{LogOffsetOrder, base(log), b.Position}}, -1
	}},
	{name: "segment reaching the next base offset", shape: &kafkagen.Options{Seed: 5, Segments: 2, Batches: 100, CompactionGaps: true, Timestamps: "equal"},
		damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
			s, log, _, _ := segFiles(m, 0)
			next := &m.Segments[1]
			if next.Batches[0].BaseOffset <= next.BaseOffset {
				t.Fatal("the next segment's first batch is at its base offset")
			}
			b := s.Batches[len(s.Batches)-1]
			putU64(t, log, b.Position, uint64(next.BaseOffset-int64(b.LastOffsetDelta)))
			return []want{{LogOffsetRange, base(log), b.Position}}, -1
		}},
	{name: "leftover swap file", damage: func(t *testing.T, m *kafkagen.Manifest) ([]want, int) {
		_, log, _, _ := segFiles(m, 1)
		writeFile(t, log+".swap", readFile(t, log))
		writeFile(t, filepath.Join(m.Dir, "00000000000000000000.index.deleted"), nil)
		return []want{{SegmentLeftover, "00000000000000000000.index.deleted", -1}, {SegmentLeftover, base(log) + ".swap", -1}}, -1
	}},
}

// inspect61 is the size of a v2 batch header: records start after it.
const inspect61 = 61

func TestDamageMatrix(t *testing.T) {
	for _, tc := range damageCases {
		t.Run(tc.name, func(t *testing.T) {
			m := generate(t, tc.partitionShape())
			wants, batches := tc.damage(t, m)
			for _, deep := range []bool{false, true} {
				got, sum := verifyPath(t, m.Dir, Options{Records: deep})
				expect(t, got, wants...)
				if batches < 0 {
					batches = totalBatches(m)
				}
				if sum.Batches != int64(batches) {
					t.Errorf("summary counts %d batches, want %d", sum.Batches, batches)
				}
				errs, warns, infos := 0, 0, 0
				for _, f := range got {
					switch {
					case f.IsError():
						errs++
					case f.IsInfo():
						infos++
					default:
						warns++
					}
				}
				if sum.Errors != errs || sum.Warnings != warns || sum.Infos != infos || sum.Partitions != 1 || sum.Segments != len(m.Segments) {
					t.Errorf("summary %+v does not match %d errors, %d warnings, 1 partition, %d segments", sum, errs, warns, len(m.Segments))
				}
			}
		})
	}
}

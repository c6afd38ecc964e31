package verify

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// Two segments whose offsets overlap: the second one's files come from a
// partition generated to start 40 offsets before the first one ends.
func TestOverlappingSegments(t *testing.T) {
	a := generate(t, kafkagen.Options{Seed: 3, Batches: 100})
	start := a.Segments[0].NextOffset - 40
	b := generateAt(t, filepath.Join(t.TempDir(), "other-0"), kafkagen.Options{Seed: 4, Batches: 50, StartOffset: start})
	sb := &b.Segments[0]
	for _, p := range []string{b.LogPath(sb), b.IndexPath(sb), b.TimeIndexPath(sb)} {
		writeFile(t, filepath.Join(a.Dir, filepath.Base(p)), readFile(t, p))
	}
	got, _ := verifyPath(t, a.Dir, Options{})
	expect(t, got, want{SegmentOverlap, filepath.Base(b.LogPath(sb)), 0})
	if o := got[0].Offset; o == nil || *o != start {
		t.Errorf("offset %v, want %d", o, start)
	}
	if sbo := got[0].SegmentBaseOffset; sbo == nil || *sbo != start {
		t.Errorf("segment_base_offset %v, want %d", sbo, start)
	}
}

// Two damaged batches in one segment are two findings, and the batches
// between and after them still count.
func TestTwoDamagedBatches(t *testing.T) {
	m := generate(t, baseShape)
	s, log, _, _ := segFiles(m, 0)
	var picked []kafkagen.BatchManifest
	for k := 10; k < len(s.Batches)-1 && len(picked) < 2; k++ {
		if !indexed(s, s.Batches[k]) && (len(picked) == 0 || s.Batches[k].Position > picked[0].Position+3000) {
			picked = append(picked, s.Batches[k])
		}
	}
	if len(picked) < 2 {
		t.Fatal("no two unindexed batches")
	}
	putU32(t, log, picked[0].Position+8, 0x7fff0000) // huge length
	flipByte(t, log, picked[1].Position+17)          // CRC
	got, sum := verifyPath(t, m.Dir, Options{})
	expect(t, got, want{LogCorruptHeader, base(log), picked[0].Position}, want{LogCRC, base(log), picked[1].Position})
	if sum.Batches != int64(totalBatches(m)-2) {
		t.Errorf("summary counts %d batches, want %d", sum.Batches, totalBatches(m)-2)
	}
}

// Consecutive damaged batches: a CRC-damaged batch followed by one cut by
// the end of the file.
func TestCRCThenTorn(t *testing.T) {
	m := generate(t, baseShape)
	s, log, _, _ := segFiles(m, 1)
	n := len(s.Batches)
	prev, last := s.Batches[n-2], s.Batches[n-1]
	flipByte(t, log, prev.Position+prev.Size-1)
	truncateFile(t, log, last.Position+last.Size-1)
	got, _ := verifyPath(t, m.Dir, Options{})
	expect(t, got, want{LogCRC, base(log), prev.Position}, want{LogTruncated, base(log), last.Position})
}

// A record count one below the truth, with the CRC recomputed: the header
// is consistent, the records are not. Only decoding the records finds it.
func TestRecordCountDeep(t *testing.T) {
	for _, codec := range []string{"none", "gzip", "lz4"} {
		t.Run(codec, func(t *testing.T) {
			m := generate(t, kafkagen.Options{Seed: 9, Batches: 40, Compression: codec, RecordsPerBatch: 8})
			s, log, _, _ := segFiles(m, 0)
			var b kafkagen.BatchManifest
			for _, c := range s.Batches[1:] {
				if c.RecordCount > 1 && !indexed(s, c) {
					b = c
					break
				}
			}
			if b.RecordCount < 2 {
				t.Fatal("no batch with several records")
			}
			putU32(t, log, b.Position+57, uint32(b.RecordCount-1))
			fixCRC(t, log, b)
			got, _ := verifyPath(t, m.Dir, Options{})
			expect(t, got)
			got, sum := verifyPath(t, m.Dir, Options{Records: true})
			expect(t, got, want{LogRecords, base(log), b.Position})
			if sum.Batches != int64(totalBatches(m)) {
				t.Errorf("batches %d, want %d (the batch's CRC is valid)", sum.Batches, totalBatches(m))
			}
		})
	}
}

// transactional returns a generated partition with aborted transactions
// and a segment holding at least two of them.
func transactional(t *testing.T) (*kafkagen.Manifest, *kafkagen.SegmentManifest) {
	t.Helper()
	m := generate(t, kafkagen.Options{Seed: 21, Segments: 2, Batches: 300, Transactions: true})
	for i := range m.Segments {
		if len(m.Segments[i].AbortedTxns) >= 2 {
			return m, &m.Segments[i]
		}
	}
	t.Fatal("no segment with two aborted transactions")
	return nil, nil
}

func TestTxnIndex(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want
	}{
		{"clean", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want { return nil }},
		{"version byte", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want {
			edit(t, path, func(b []byte) []byte { b[34] = 1; return b })
			return []want{{TxnIndexVersion, base(path), 34}}
		}},
		{"low version byte is read as 0", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want {
			edit(t, path, func(b []byte) []byte { b[35] = 1; return b })
			return nil
		}},
		{"unsorted", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want {
			swapSlots(t, path, indexfmt.TxnEntrySize, 0, 1)
			return []want{{TxnIndexOrder, base(path), 34}}
		}},
		{"stray bytes", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want {
			n := fileSize(t, path)
			appendBytes(t, path, []byte{0, 0, 0, 0, 0, 0, 7})
			return []want{{TxnIndexSize, base(path), n}}
		}},
		{"last offset below the base", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want {
			putU64(t, path, 18, uint64(s.BaseOffset-1))
			if s.BaseOffset == 0 {
				putU64(t, path, 10, 0xffffffffffffff00) // first offset too, so only the range is wrong
			}
			return []want{{TxnIndexRange, base(path), 0}}
		}},
		{"last offset beyond the segment", func(t *testing.T, m *kafkagen.Manifest, s *kafkagen.SegmentManifest, path string) []want {
			n := len(s.AbortedTxns)
			putU64(t, path, int64(n-1)*34+18, uint64(s.NextOffset+5))
			return []want{{TxnIndexRange, base(path), int64(n-1) * 34}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, s := transactional(t)
			path := m.TxnIndexPath(s)
			wants := tc.damage(t, m, s, path)
			got, _ := verifyPath(t, m.Dir, Options{})
			expect(t, got, wants...)
		})
	}
}

// A control record whose key version is negative: broker recovery stops
// there (InvalidRecordException), so verify reports it without Records.
func TestCorruptControlRecord(t *testing.T) {
	m, s := transactional(t)
	log := m.LogPath(s)
	var b kafkagen.BatchManifest
	for _, c := range s.Batches {
		if c.Control {
			b = c
			break
		}
	}
	if !b.Control {
		t.Fatal("no control batch")
	}
	// Record: length, attributes, timestamp delta, offset delta, key
	// length (one byte each), then the key: version i16, type i16.
	edit(t, log, func(d []byte) []byte {
		binary.BigEndian.PutUint16(d[b.Position+61+5:], 0xffff)
		return d
	})
	fixCRC(t, log, b)
	got, _ := verifyPath(t, m.Dir, Options{})
	expect(t, got, want{LogRecords, base(log), b.Position})
}

// An index written with another index.interval.bytes is valid but not what
// recovery with the default writes: warnings only, naming the interval.
func TestStaleInterval(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 2, Segments: 2, Batches: 100, IndexIntervalBytes: 1000})
	got, _ := verifyPath(t, m.Dir, Options{IndexIntervalBytes: 1000})
	expect(t, got)
	got, _ = verifyPath(t, m.Dir, Options{})
	var wants []want
	for i := range m.Segments {
		_, _, idx, tidx := segFiles(m, i)
		wants = append(wants, want{IndexStale, base(idx), 0}, want{TimeIndexStale, base(tidx), 0})
	}
	expect(t, got, wants...)
	for _, f := range got {
		if !strings.Contains(f.Message, "index.interval.bytes 4096") {
			t.Errorf("%s: message does not name the interval: %s", f.Check, f.Message)
		}
	}
}

// Entries as a 2.0-4.0 broker appending several batches at once writes
// them (offset of the append's last batch, position of its first), and
// time-index offsets naming a record inside a batch as leaders up to 3.7
// write them: both are harmless to lookups, so only *.stale, whose message
// says which meaning the file follows.
func TestOlderWritersAreStaleNotErrors(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 8, Batches: 200, RecordsPerBatch: 6})
	s, _, idx, tidx := segFiles(m, 0)
	e := s.OffsetIndex[3]
	k := batchAt(t, s, int64(e.Position))
	if s.Batches[k+1].LastOffset >= s.OffsetIndex[4].Offset {
		t.Fatal("entries too close together")
	}
	putU32(t, idx, 3*8, uint32(s.Batches[k+1].LastOffset-s.BaseOffset))

	slot := -1
	for i, te := range s.TimeIndex {
		for _, b := range s.Batches {
			if b.LastOffset == te.Offset && b.BaseOffset < b.LastOffset && i > 0 {
				slot = i
			}
		}
		if slot >= 0 {
			break
		}
	}
	if slot < 0 {
		t.Fatal("no time index entry on a batch of several offsets")
	}
	putU32(t, tidx, int64(slot)*12+8, uint32(s.TimeIndex[slot].Offset-1-s.BaseOffset))

	got, _ := verifyPath(t, m.Dir, Options{})
	expect(t, got, want{IndexStale, base(idx), 3 * 8}, want{TimeIndexStale, base(tidx), int64(slot) * 12})
	if !strings.Contains(got[0].Message, "multi-batch append") {
		t.Errorf("index.stale message does not name per-append entries: %s", got[0].Message)
	}
	if !strings.Contains(got[1].Message, "record inside the batch") {
		t.Errorf("timeindex.stale message does not name record offsets: %s", got[1].Message)
	}
}

// A time index without the final entry a broker writes at roll and close
// (an unclean shutdown's active segment, without the zero tail).
func TestMissingFinalTimeIndexEntry(t *testing.T) {
	m := generate(t, baseShape)
	s, _, _, tidx := segFiles(m, 1)
	last := s.TimeIndex[len(s.TimeIndex)-1]
	if last.Timestamp != s.MaxTimestamp {
		t.Fatal("the last entry is not the segment's max timestamp")
	}
	truncateFile(t, tidx, int64(len(s.TimeIndex)-1)*12)
	got, _ := verifyPath(t, m.Dir, Options{})
	expect(t, got, want{TimeIndexClosingEntry, base(tidx), int64(len(s.TimeIndex)-1) * 12})
	if !strings.Contains(got[0].Message, "closing entry") {
		t.Errorf("message does not say the closing entry is missing: %s", got[0].Message)
	}
	if got[0].Severity != SeverityInfo {
		t.Errorf("severity %s on the active segment, want info", got[0].Severity)
	}
}

// Findings past the limit per file and check are counted in one closing
// finding.
func TestFindingLimit(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 1, Batches: 300, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	s, _, idx, _ := segFiles(m, 0)
	edit(t, idx, func(b []byte) []byte {
		for i := range s.OffsetIndex {
			binary.BigEndian.PutUint32(b[i*8+4:], uint32(s.OffsetIndex[i].Position+1))
		}
		return b
	})
	got, sum := verifyPath(t, m.Dir, Options{MaxFindingsPerCheck: 5, IndexIntervalBytes: IndexEveryBatch})
	if len(got) != 6 || sum.Errors != 6 {
		t.Fatalf("%d findings, %d errors; want 6:%s", len(got), sum.Errors, describe(got))
	}
	for i, f := range got {
		if f.Check != IndexPosition {
			t.Errorf("finding %d: %s", i, f.Check)
		}
	}
	if !strings.Contains(got[5].Message, "more index.position findings") {
		t.Errorf("closing finding: %s", got[5].Message)
	}
	got, _ = verifyPath(t, m.Dir, Options{MaxFindingsPerCheck: -1, IndexIntervalBytes: IndexEveryBatch})
	if len(got) != len(s.OffsetIndex) {
		t.Errorf("unlimited: %d findings, want %d", len(got), len(s.OffsetIndex))
	}
}

// An index file whose .log is gone.
func TestOrphanedIndex(t *testing.T) {
	m := generate(t, baseShape)
	_, log, idx, tidx := segFiles(m, 1)
	os.Remove(log)
	got, _ := verifyPath(t, m.Dir, Options{})
	expect(t, got, want{SegmentLeftover, base(idx), -1}, want{SegmentLeftover, base(tidx), -1})
	// Named on its own, its structure is still checked.
	appendBytes(t, idx, []byte{9})
	got, _ = verifyPath(t, idx, Options{})
	expect(t, got, want{SegmentLeftover, base(idx), -1}, want{IndexSize, base(idx), fileSize(t, idx) - 1})
}

// TestLastOffsetAtMaxWithoutNextSegment: a batch whose last offset is
// 2^63-1 reaches the tracker's limit when no segment follows (the limit is
// then math.MaxInt64), but there is no next segment to overlap or to look
// offsets up in: no finding names one.
func TestLastOffsetAtMaxWithoutNextSegment(t *testing.T) {
	o := Options{}.resolved()
	base := int64(math.MaxInt64 - 10)
	c := &segChecker{opts: &o, job: &segmentJob{}, base: base, sink: newSink(o.MaxFindingsPerCheck), logName: "09223372036854775797.log",
		lastOff: math.MinInt64, maxTs: -1, maxTsOff: base, emu: newRecoveryEmu(base, DefaultIndexIntervalBytes), track: offsetTracker{base: base, limit: math.MaxInt64}}
	b := record.Batch{Magic: 2, Position: 0, Size: 100, BaseOffset: math.MaxInt64 - 1, LastOffset: math.MaxInt64, MaxTimestamp: 1}
	c.batch(&b, true, -1)
	c.track.finish(c)
	if len(c.sink.findings()) != 0 || len(c.sink.next) != 0 {
		t.Fatalf("findings %+v, about the next segment %+v; want none", c.sink.findings(), c.sink.next)
	}
}

// A negative index.interval.bytes other than IndexEveryBatch is refused, as
// the broker's LogConfig refuses it (atLeast(0)) and as recovery's plan
// and the generator refuse it (indexfmt.IndexInterval), instead of being
// taken as the default.
func TestNegativeIndexIntervalRefused(t *testing.T) {
	m := generate(t, kafkagen.Options{Seed: 5, Batches: 10})
	target, err := inspect.Resolve(m.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(target, Options{IndexIntervalBytes: -2}, func(Finding) {}); err == nil {
		t.Fatal("verify with IndexIntervalBytes -2: no error")
	}
	if _, err := Run(target, Options{IndexIntervalBytes: IndexEveryBatch}, func(Finding) {}); err != nil {
		t.Fatalf("verify with IndexEveryBatch: %v", err)
	}
}

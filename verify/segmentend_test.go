package verify

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// endsOf opens segment sf and returns the side checks' end (lastBatchOf)
// and the broker's readNextOffset answer (inspect's Segment.NextOffset,
// with its error).
func endsOf(t *testing.T, sf inspect.SegmentFiles) (side segmentEnd, broker int64, brokerErr error) {
	t.Helper()
	seg, err := inspect.OpenSegment(sf, inspect.SegmentOptions{Unmapped: true})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	broker, brokerErr = seg.NextOffset()
	return lastBatchOf(seg.Log, seg.LogName, seg.LogSize, seg.BaseOffset, seg.Index), broker, brokerErr
}

func resolvePartition(t *testing.T, dir string) *inspect.Partition {
	t.Helper()
	tg, err := inspect.Resolve(dir)
	if err != nil || len(tg.Partitions) != 1 {
		t.Fatalf("inspect.Resolve(%s): %d partitions, %v", dir, len(tg.Partitions), err)
	}
	return tg.Partitions[0]
}

// TestSegmentEndPolicies: the side checks' segment end (lastBatchOf) and
// the broker's readNextOffset (Segment.NextOffset) are one scan
// (inspect.ReadNextOffset) and agree on every healthy segment, generated
// and real; they part, as documented, only where the side checks want
// the log's own end: an index entry leading to no batch (the broker
// answers the base offset) and a damaged header past the last index
// entry (the broker fails; the side checks take the end before it).
func TestSegmentEndPolicies(t *testing.T) {
	m := generate(t, kafkagen.Options{Segments: 3, Batches: 40})
	p := resolvePartition(t, m.Dir)
	for i, sf := range p.Segments {
		s := &m.Segments[i]
		last := s.Batches[len(s.Batches)-1]
		side, broker, err := endsOf(t, sf)
		if err != nil || side.err != nil || broker != last.LastOffset+1 || side.Next != broker ||
			!side.HasBatch || side.Epoch != last.PartitionLeaderEpoch {
			t.Fatalf("%s: broker %d (%v), side checks %+v; want %d, epoch %d", sf.Log, broker, err, side, last.LastOffset+1, last.PartitionLeaderEpoch)
		}
	}
	for _, dir := range fixtures.Dirs(t) {
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, rp := range tg.Partitions {
			for _, sf := range rp.Segments {
				side, broker, err := endsOf(t, sf)
				if err != nil || side.err != nil || side.Next != broker {
					t.Errorf("%s: broker %d (%v), side checks %+v", sf.Log, broker, err, side)
				}
			}
		}
	}

	// The last index entry points at the end of the log: no batch follows it.
	s := &m.Segments[0]
	sf := p.Segments[0]
	idx, err := os.ReadFile(sf.Index)
	if err != nil || s.IndexEntries == 0 {
		t.Fatalf("%s: %d entries, %v", sf.Index, s.IndexEntries, err)
	}
	at := (s.IndexEntries - 1) * 8
	binary.BigEndian.PutUint32(idx[at+4:], uint32(s.LogSize))
	writeFile(t, sf.Index, idx)
	want := s.Batches[len(s.Batches)-1].LastOffset + 1
	side, broker, err := endsOf(t, sf)
	if err != nil || broker != s.BaseOffset || side.err != nil || side.Next != want {
		t.Errorf("index entry past the batches: broker %d (%v), want the base offset %d; side checks %+v, want %d", broker, err, s.BaseOffset, side, want)
	}

	// A damaged header after the last index entry of segment 1.
	s, sf = &m.Segments[1], p.Segments[1]
	bad := s.Batches[len(s.Batches)-1]
	log, err := os.ReadFile(sf.Log)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(log[bad.Position+8:], 5) // a length field below 14: CorruptRecordException
	writeFile(t, sf.Log, log)
	want = s.Batches[len(s.Batches)-2].LastOffset + 1
	side, broker, err = endsOf(t, sf)
	var ce *fileio.CorruptError
	if !errors.As(err, &ce) || side.err != nil || side.Next != want {
		t.Errorf("damaged last header: broker %d (%v), want a CorruptError; side checks %+v, want %d", broker, err, side, want)
	}
}

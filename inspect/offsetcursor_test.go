package inspect

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestOffsetCursorAnswersAsLookupOffset is the offset cursor's
// differential test: for targets that only grow (repeats included), each
// of its answers is LookupOffset's, on a healthy segment and on indexes a
// fetch follows somewhere else (missing, truncated, every position 0,
// positions reversed, shuffled, or inside batches) and on a log with a
// corrupt header and a torn tail; and on the damaged indexes it reads far
// fewer batch headers than one scan per target.
func TestOffsetCursorAnswersAsLookupOffset(t *testing.T) {
	type damage struct {
		name  string
		index func(b []byte, n int, r *rand.Rand) []byte // nil: remove the .index
		log   func(b []byte, m *kafkagen.SegmentManifest) []byte
	}
	pos := func(b []byte, i int) uint32 { return binary.BigEndian.Uint32(b[i*8+4:]) }
	setPos := func(b []byte, i int, p uint32) { binary.BigEndian.PutUint32(b[i*8+4:], p) }
	keep := func(b []byte, n int, r *rand.Rand) []byte { return b }
	cases := []damage{
		{name: "healthy", index: keep},
		{name: "no index"},
		{name: "truncated", index: func(b []byte, n int, r *rand.Rand) []byte { return b[:8*3] }},
		{name: "positions 0", index: func(b []byte, n int, r *rand.Rand) []byte {
			for i := range n {
				setPos(b, i, 0)
			}
			return b
		}},
		{name: "reversed", index: func(b []byte, n int, r *rand.Rand) []byte {
			ps := make([]uint32, n)
			for i := range n {
				ps[i] = pos(b, i)
			}
			slices.Reverse(ps)
			for i := range n {
				setPos(b, i, ps[i])
			}
			return b
		}},
		{name: "shuffled", index: func(b []byte, n int, r *rand.Rand) []byte {
			r.Shuffle(n, func(i, j int) {
				pi, pj := pos(b, i), pos(b, j)
				setPos(b, i, pj)
				setPos(b, j, pi)
			})
			return b
		}},
		{name: "inside batches", index: func(b []byte, n int, r *rand.Rand) []byte {
			for i := 0; i < n; i += 3 {
				setPos(b, i, pos(b, i)+uint32(1+r.IntN(40)))
			}
			return b
		}},
		{name: "corrupt header, torn tail", index: keep, log: func(b []byte, m *kafkagen.SegmentManifest) []byte {
			mid := m.Batches[len(m.Batches)*2/3].Position
			binary.BigEndian.PutUint32(b[mid+8:], 3) // a length field below the minimum
			return b[:len(b)-9]
		}},
	}
	for _, tc := range cases {
		for _, after := range []int{chainAfterBatches, 8} {
			cursorMatches(t, tc.name, tc.index, tc.log, after)
		}
	}
}

// cursorMatches generates a segment, damages it, and compares the cursor
// (building its chain after a scan of after batches) with LookupOffset.
func cursorMatches(t *testing.T, name string, index func(b []byte, n int, r *rand.Rand) []byte, damageLog func(b []byte, m *kafkagen.SegmentManifest) []byte, after int) {
	defer func(was int) { chainAfterBatches = was }(chainAfterBatches)
	chainAfterBatches = after
	tc := struct {
		name  string
		index func(b []byte, n int, r *rand.Rand) []byte
		log   func(b []byte, m *kafkagen.SegmentManifest) []byte
	}{name, index, damageLog}
	{
		dir := filepath.Join(t.TempDir(), "demo-0")
		m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 7, Batches: 3000, RecordsPerBatch: 2, ValueSize: 20, IndexIntervalBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		sm := &m.Segments[0]
		r := rand.New(rand.NewPCG(9, 10))
		idxPath, logPath := filepath.Join(dir, SegmentName(sm.BaseOffset)+IndexSuffix), m.LogPath(sm)
		if tc.index == nil {
			os.Remove(idxPath)
		} else if b, err := os.ReadFile(idxPath); err != nil {
			t.Fatal(err)
		} else if err := os.WriteFile(idxPath, tc.index(b, sm.IndexEntries, r), 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.log != nil {
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(logPath, tc.log(b, sm), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tg, err := Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		seg, err := OpenSegment(tg.Partitions[0].Segments[0], SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var reads countReads
		seg.Log = &countingLog{seg.Log, &reads}
		c := newOffsetCursor(seg)
		last := sm.Batches[len(sm.Batches)-1].LastOffset
		lookups := 0
		// The cursor answers every target; -short compares every eighth
		// answer with LookupOffset (which scans on a damaged index: most
		// of the test's time).
		compare := 1
		if testing.Short() {
			compare = 8
		}
		for target := sm.BaseOffset - 1; target <= last+2; target += int64(r.IntN(7)) {
			lookups++
			got, found, gerr := c.lookup(target)
			if lookups%compare != 0 {
				continue
			}
			want, _, wfound, werr := seg.LookupOffset(target) // through its own readers, not counted
			if found != wfound || (gerr == nil) != (werr == nil) || (found && got != want) {
				t.Fatalf("%s (chain after %d batches): target %d: cursor %v %+v (%v); LookupOffset %v %+v (%v)", tc.name, after, target, found, got.Position, gerr, wfound, want.Position, werr)
			}
		}
		// Each lookup reads a group of headers or two, not a scan of the
		// log (a scan per lookup from the shuffled positions: 3.8 reads).
		if int(reads) > 5*lookups/2 {
			t.Errorf("%s (chain after %d batches): %d reads for %d lookups", tc.name, after, reads, lookups)
		}
		seg.Close()
	}
}

type countReads int

// countingLog counts the reads of a log.
type countingLog struct {
	r interface {
		ReadAt([]byte, int64) (int, error)
	}
	n *countReads
}

func (c *countingLog) ReadAt(p []byte, off int64) (int, error) {
	*c.n++
	return c.r.ReadAt(p, off)
}

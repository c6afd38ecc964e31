package inspect_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestReadAheadMatchesSequential damages logs of many chunks at random
// (bytes flipped, lengths changed, tails cut, garbage inserted, several at
// once) and requires a LogIterator with a read-ahead to yield exactly
// what one without yields: the same batches, damaged ranges and checksum
// verdicts in the same order, and the same error, salvaging and not; on
// the clean logs the read-ahead must have handed out the checksums.
func TestReadAheadMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 19))
	const window = 64 << 10
	shapes := []kafkagen.Options{
		{Batches: 1500, RecordsPerBatch: 2, ValueSize: 150},                     // ~0.3 KiB batches, ~7 chunks
		{Batches: 300, RecordsPerBatch: 1, ValueSize: 1024, Compression: "lz4"}, // ~1 KiB
		{Batches: 40, RecordsPerBatch: 16, ValueSize: 1024},                     // ~16 KiB: a few entries a chunk
		{Batches: 6, RecordsPerBatch: 100, ValueSize: 1024},                     // ~100 KiB: larger than a chunk
		{Batches: 800, Magic: 1},
		{Batches: 800, Magic: kafkagen.MagicV0, Compression: "gzip"},
		{Batches: 600, Transactions: true},
	}
	cases := 42 // every shape with 0 to 3 damages, some twice
	if testing.Short() {
		cases = 21
	}
	for n := range cases {
		o := shapes[n%len(shapes)]
		o.Seed = int64(500 + n)
		m, _ := rsSegment(t, o)
		path := m.LogPath(&m.Segments[0])
		bs := m.Segments[0].Batches
		var what []string
		for range n % 4 { // clean first, then up to three damages
			b := bs[rng.IntN(len(bs))]
			rsEdit(t, path, func(d []byte) []byte {
				if b.Position+b.Size > int64(len(d)) {
					return d
				}
				switch rng.IntN(5) {
				case 0:
					what = append(what, fmt.Sprintf("flip at %d", b.Position))
					d[b.Position+b.Size-1-rng.Int64N(5)] ^= 0x40
				case 1:
					what = append(what, fmt.Sprintf("grow a length at %d", b.Position))
					binary.BigEndian.PutUint32(d[b.Position+8:], uint32(b.Size-12+1+rng.Int64N(40)))
				case 2:
					what = append(what, fmt.Sprintf("length below 14 at %d", b.Position))
					binary.BigEndian.PutUint32(d[b.Position+8:], uint32(rng.IntN(14)))
				case 3:
					what = append(what, fmt.Sprintf("cut at %d", b.Position))
					d = d[:b.Position+1+rng.Int64N(b.Size-1)]
				case 4:
					what = append(what, fmt.Sprintf("garbage at %d", b.Position))
					g := make([]byte, 1+rng.IntN(300))
					for i := range g {
						g[i] = byte(rng.IntN(256))
					}
					d = slices.Concat(d[:b.Position], g, d[b.Position:])
				}
				return d
			})
		}
		name := fmt.Sprintf("case %d (%+v, %v)", n, o, what)
		for _, salvage := range []bool{true, false} {
			want, _, werr := iterateWith(t, path, inspect.IterOptions{Salvage: salvage, Window: window})
			got, sums, gerr := iterateWith(t, path, inspect.IterOptions{Salvage: salvage, Window: window, ReadAhead: true, ReadAheadMin: 1})
			if !slices.Equal(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("%s, salvage %v: with the read-ahead\n%+v, %v\nwithout\n%+v, %v", name, salvage, got, gerr, want, werr)
			}
			if len(what) == 0 && sums != int64(len(want)) {
				t.Errorf("%s: the read-ahead handed out %d checksums of %d batches", name, sums, len(want))
			}
		}
	}
}

// TestSetReadAhead switches one iterator's read-ahead off and on between
// scans of the same log: every scan yields the same events, and only the
// scans with it on take checksums from it.
func TestSetReadAhead(t *testing.T) {
	m, _ := rsSegment(t, kafkagen.Options{Batches: 1500, RecordsPerBatch: 2, ValueSize: 150, Seed: 9})
	path := m.LogPath(&m.Segments[0])
	f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	it := inspect.NewLogIterator(inspect.IterOptions{Salvage: true, Window: 64 << 10, ReadAhead: true, ReadAheadMin: 1})
	defer it.Close()
	var first []iterEvent
	for i, on := range []bool{true, false, true, false} {
		it.SetReadAhead(on)
		it.Reset(f, &inspect.SegmentFiles{Log: path}, 0)
		before := inspect.ReadAheadSums(it)
		events, err := iterEvents(t, it)
		if err != nil {
			t.Fatalf("scan %d: %v", i, err)
		}
		if i == 0 {
			first = events
		} else if !slices.Equal(events, first) {
			t.Fatalf("scan %d (read-ahead %v) yields other events than the first", i, on)
		}
		if took := inspect.ReadAheadSums(it) - before; (took > 0) != on {
			t.Fatalf("scan %d, read-ahead %v: %d checksums from it", i, on, took)
		}
	}
}

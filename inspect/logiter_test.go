package inspect_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

type iterEvent struct {
	pos, end int64
	damage   inspect.DamageKind // -1: a batch
	crcOK    bool
}

// iterate runs a LogIterator over the .log at path as a salvaging reader
// does (Judge, then Entry) and returns its events and error.
func iterate(t *testing.T, path string, salvage bool) ([]iterEvent, error) {
	t.Helper()
	f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sf := &inspect.SegmentFiles{Log: path}
	it := inspect.NewLogIterator(inspect.IterOptions{Salvage: salvage})
	it.Reset(f, sf, 0)
	var out []iterEvent
	for it.Next() {
		if d := it.Damage(); d != nil {
			out = append(out, iterEvent{d.Position, d.End, d.Kind(), false})
			continue
		}
		b := it.Batch()
		ok, err := it.Judge()
		if err != nil {
			t.Fatal(err)
		}
		if d := it.Damage(); d != nil {
			out = append(out, iterEvent{d.Position, d.End, d.Kind(), false})
			continue
		}
		e, err := it.Entry()
		if err != nil {
			return out, err
		}
		if d := it.Damage(); d != nil {
			out = append(out, iterEvent{d.Position, d.End, d.Kind(), false})
			continue
		}
		if int64(len(e)) != b.Size {
			t.Fatalf("entry of %d bytes for a batch of %d", len(e), b.Size)
		}
		out = append(out, iterEvent{b.Position, b.End(), -1, ok})
	}
	return out, it.Err()
}

// TestLogIteratorTilesDamagedLogs damages generated logs at random (bytes
// flipped, lengths changed, tails cut, garbage inserted) and checks what a
// salvaging iterator yields against the file: the batches and damaged
// ranges tile it from 0 to its end without gap or overlap, every batch
// yielded with a matching CRC really has one, and without salvage the
// iterator yields the same events up to its first damage and returns that
// damage as its error.
func TestLogIteratorTilesDamagedLogs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	kinds := map[inspect.DamageKind]int{}
	for n := 0; n < 60; n++ {
		o := kafkagen.Options{Seed: int64(100 + n), Batches: 12}
		switch n % 4 {
		case 1:
			o.Compression = "gzip"
		case 2:
			o.Magic = 1
		case 3:
			o.Magic = kafkagen.MagicV0
		}
		m, _ := rsSegment(t, o)
		path := m.LogPath(&m.Segments[0])
		bs := m.Segments[0].Batches
		b := bs[rng.IntN(len(bs))]
		what := ""
		rsEdit(t, path, func(d []byte) []byte {
			switch rng.IntN(5) {
			case 0:
				what = "flip a content byte"
				d[b.Position+b.Size-1-rng.Int64N(5)] ^= 0x40
			case 1:
				what = "grow a length"
				binary.BigEndian.PutUint32(d[b.Position+8:], uint32(b.Size-12+1+rng.Int64N(40)))
			case 2:
				what = "a length below 14"
				binary.BigEndian.PutUint32(d[b.Position+8:], uint32(rng.IntN(14)))
			case 3:
				what = "cut the tail"
				d = d[:b.Position+1+rng.Int64N(b.Size-1)]
			case 4:
				what = "insert garbage"
				g := make([]byte, 1+rng.IntN(300))
				for i := range g {
					g[i] = byte(rng.IntN(256))
				}
				d = slices.Concat(d[:b.Position], g, d[b.Position:])
			}
			return d
		})
		name := fmt.Sprintf("case %d (%s at %d)", n, what, b.Position)
		events, err := iterate(t, path, true)
		if err != nil {
			t.Fatalf("%s: salvage: %v", name, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		at := int64(0)
		for _, e := range events {
			if e.pos != at || e.end <= e.pos {
				t.Fatalf("%s: event %+v at %d: the events do not tile the file: %+v", name, e, at, events)
			}
			if e.damage >= 0 {
				kinds[e.damage]++
			} else if e.crcOK != (record.ComputeCRC(int8(data[e.pos+16]), data[e.pos:e.end]) == binary.BigEndian.Uint32(crcField(data[e.pos:e.end]))) {
				t.Errorf("%s: batch at %d said crc ok %v", name, e.pos, e.crcOK)
			}
			at = e.end
		}
		if at != int64(len(data)) {
			t.Fatalf("%s: events end at %d, the file at %d", name, at, len(data))
		}
		strict, serr := iterate(t, path, false)
		first := slices.IndexFunc(events, func(e iterEvent) bool { return e.damage >= 0 })
		if first < 0 {
			if serr != nil || !slices.Equal(strict, events) {
				t.Errorf("%s: no damage salvaging, yet strictly %+v, %v", name, strict, serr)
			}
			continue
		}
		if len(strict) < first || !slices.Equal(strict[:first], events[:first]) {
			t.Errorf("%s: strict events %+v differ before the first damage from %+v", name, strict, events)
			continue
		}
		var ce *fileio.CorruptError
		if d := events[first]; d.damage != inspect.DamageCRC {
			// The broker's iterator stops there.
			if len(strict) != first || !errors.As(serr, &ce) || ce.Position != d.pos {
				t.Errorf("%s: damage %+v salvaging; strictly %d events then %v", name, d, len(strict)-first, serr)
			}
		} else if s := strict[first]; s.pos != d.pos || s.damage >= 0 || s.crcOK {
			// A bad CRC does not stop the broker's iterator: the batch is
			// handed out as it is.
			t.Errorf("%s: damage %+v salvaging; strictly %+v", name, d, s)
		}
	}
	for _, k := range []inspect.DamageKind{inspect.DamageTorn, inspect.DamageHeader, inspect.DamageCRC} {
		if kinds[k] == 0 {
			t.Errorf("no damage of kind %v met: %v", k, kinds)
		}
	}
}

// crcField is the stored CRC of an entry: offset 17 for v2, 12 for v0/v1.
func crcField(e []byte) []byte {
	if e[16] >= 2 {
		return e[17:21]
	}
	return e[12:16]
}

func TestDamageKind(t *testing.T) {
	for err, want := range map[error]inspect.DamageKind{
		&fileio.CorruptError{Err: fmt.Errorf("%w: x", fileio.ErrTorn)}:           inspect.DamageTorn,
		&fileio.CorruptError{Err: fmt.Errorf("%w: x", fileio.ErrCorruptHeader)}:  inspect.DamageHeader,
		&fileio.CorruptError{Err: fmt.Errorf("%w: x", fileio.ErrCRC)}:            inspect.DamageCRC,
		&fileio.CorruptError{Err: fmt.Errorf("%w: x", fileio.ErrTooLarge)}:       inspect.DamageTooLarge,
		&fileio.CorruptError{Err: fmt.Errorf("%w: x", fileio.ErrCorruptRecords)}: inspect.DamageRecords,
		errors.New("other"): inspect.DamageOther,
	} {
		d := inspect.Damage{Err: err}
		if got := d.Kind(); got != want {
			t.Errorf("%v: kind %v, want %v", err, got, want)
		}
	}
}

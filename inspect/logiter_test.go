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
	events, _, err := iterateWith(t, path, inspect.IterOptions{Salvage: salvage})
	return events, err
}

// iterateWith is iterate with the iterator's options, and the number of
// checksums the read-ahead handed out (ReadAheadSums).
func iterateWith(t *testing.T, path string, o inspect.IterOptions) ([]iterEvent, int64, error) {
	t.Helper()
	f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sf := &inspect.SegmentFiles{Log: path}
	it := inspect.NewLogIterator(o)
	defer it.Close()
	it.Reset(f, sf, 0)
	events, err := iterEvents(t, it)
	return events, inspect.ReadAheadSums(it), err
}

func iterEvents(t *testing.T, it *inspect.LogIterator) ([]iterEvent, error) {
	t.Helper()
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

// TestDamageCause checks what a salvaging iterator says about damage
// beyond its Kind (Cause, the claimed Size and Magic, ZeroFilled), and
// that Reject turns a batch into damage up to the next batch.
func TestDamageCause(t *testing.T) {
	type got struct {
		pos, end int64
		kind     inspect.DamageKind
		cause    inspect.DamageCause
		size     int64
		magic    int8
		zero     bool
	}
	lastDamage := func(t *testing.T, path string) got {
		t.Helper()
		f, err := fileio.Open(path, fileio.Options{CacheNeutral: true})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		it := inspect.NewLogIterator(inspect.IterOptions{Salvage: true})
		it.Reset(f, nil, 0)
		var g got
		n := 0
		for it.Next() {
			if d := it.Damage(); d != nil {
				zero, err := it.ZeroFilled()
				if err != nil {
					t.Fatal(err)
				}
				g, n = got{d.Position, d.End, d.Kind(), d.Cause, d.Size, d.Magic, zero}, n+1
			}
		}
		if it.Err() != nil || n != 1 {
			t.Fatalf("%d damaged ranges, error %v; want 1, nil", n, it.Err())
		}
		return g
	}
	overhead := int64(record.LogOverhead)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, log string, bs []kafkagen.BatchManifest, size int64) got
	}{
		{"short tail", func(t *testing.T, log string, _ []kafkagen.BatchManifest, size int64) got {
			appendTo(t, log, []byte("0123456789"))
			return got{size, size + 10, inspect.DamageTorn, inspect.CauseShortTail, 0, 0, false}
		}},
		{"short zero tail", func(t *testing.T, log string, _ []kafkagen.BatchManifest, size int64) got {
			appendTo(t, log, make([]byte, 17))
			return got{size, size + 17, inspect.DamageTorn, inspect.CauseShortTail, 0, 0, true}
		}},
		{"zero tail", func(t *testing.T, log string, _ []kafkagen.BatchManifest, size int64) got {
			appendTo(t, log, make([]byte, 600<<10))
			return got{size, size + 600<<10, inspect.DamageHeader, inspect.CauseOther, 0, 0, true}
		}},
		{"torn batch", func(t *testing.T, log string, bs []kafkagen.BatchManifest, _ int64) got {
			b := bs[len(bs)-1]
			if err := os.Truncate(log, b.Position+b.Size-1); err != nil {
				t.Fatal(err)
			}
			return got{b.Position, b.Position + b.Size - 1, inspect.DamageTorn, inspect.CauseRunsPast, b.Size, 2, false}
		}},
		{"length running past the end, a batch after it", func(t *testing.T, log string, bs []kafkagen.BatchManifest, _ int64) got {
			b := bs[3]
			putAt(t, log, b.Position+8, 0x7ffffff0)
			return got{b.Position, bs[4].Position, inspect.DamageHeader, inspect.CauseRunsPast, 0x7ffffff0 + overhead, 2, false}
		}},
		{"length below the minimum", func(t *testing.T, log string, bs []kafkagen.BatchManifest, size int64) got {
			b := bs[len(bs)-1]
			putAt(t, log, b.Position+8, 5)
			return got{b.Position, size, inspect.DamageHeader, inspect.CauseOther, 0, 0, false}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := kafkagen.Generate(t.TempDir()+"/t-0", kafkagen.Options{Seed: 3, Batches: 8})
			if err != nil {
				t.Fatal(err)
			}
			s := &m.Segments[0]
			log := m.LogPath(s)
			want := tc.damage(t, log, s.Batches, s.LogSize)
			if g := lastDamage(t, log); g != want {
				t.Errorf("damage %+v, want %+v", g, want)
			}
		})
	}

	t.Run("reject", func(t *testing.T) {
		m, err := kafkagen.Generate(t.TempDir()+"/t-0", kafkagen.Options{Seed: 3, Batches: 8})
		if err != nil {
			t.Fatal(err)
		}
		s := &m.Segments[0]
		f, err := fileio.Open(m.LogPath(s), fileio.Options{CacheNeutral: true})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		it := inspect.NewLogIterator(inspect.IterOptions{Salvage: true})
		it.Reset(f, nil, 0)
		var events [][2]int64
		for it.Next() {
			if d := it.Damage(); d != nil {
				events = append(events, [2]int64{-d.Position, -d.End})
				continue
			}
			b := it.Batch()
			if b.Position == s.Batches[2].Position || b.Position == s.Batches[7].Position {
				if err := it.Reject("refused"); err != nil {
					t.Fatal(err)
				}
				d := it.Damage()
				if d == nil || d.Kind() != inspect.DamageHeader {
					t.Fatalf("reject: damage %+v", d)
				}
				events = append(events, [2]int64{-d.Position, -d.End})
				continue
			}
			events = append(events, [2]int64{b.Position, b.End()})
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		var want [][2]int64
		for i, b := range s.Batches {
			ev := [2]int64{b.Position, b.Position + b.Size}
			if i == 2 || i == 7 { // the last one: no batch follows, the damage runs to the end
				ev = [2]int64{-ev[0], -ev[1]}
			}
			want = append(want, ev)
		}
		if !slices.Equal(events, want) {
			t.Errorf("events %v, want %v", events, want)
		}
	})
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func putAt(t *testing.T, path string, pos int64, v uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(b[pos:], v)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// preads records every ReadAt on a log.
type preads struct {
	r    []byte
	seen [][2]int64 // position, length
}

func (p *preads) ReadAt(b []byte, off int64) (int, error) {
	p.seen = append(p.seen, [2]int64{off, int64(len(b))})
	if off >= int64(len(p.r)) {
		return 0, fmt.Errorf("read at %d past %d bytes", off, len(p.r))
	}
	n := copy(b, p.r[off:])
	if n < len(b) {
		return n, fmt.Errorf("short read at %d", off)
	}
	return n, nil
}

// TestLogIteratorHeadersReadsWhatTheBrokerReads: a headers-only iterator
// reads each batch's header with one pread of HeaderReadSize bytes at its
// position (FileLogInputStream.nextBatch), and at a torn tail the bytes
// left, except after a batch of at most SmallEntryBytes, when it reads the
// next HeaderGroupBytes (fewer at the end of the file) and takes the
// headers inside them from that read; it yields the batches the windowed
// iterator yields and stops at the same position for the same reason.
func TestLogIteratorHeadersReadsWhatTheBrokerReads(t *testing.T) {
	dir := t.TempDir()
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 12, Segments: 1, Batches: 30})
	if err != nil {
		t.Fatal(err)
	}
	seg := &m.Segments[0]
	log, err := os.ReadFile(m.LogPath(seg))
	if err != nil {
		t.Fatal(err)
	}
	const tail = 40 // a torn header: 18 <= tail < HeaderReadSize
	log = append(log, log[:tail]...)
	size := int64(len(log))

	for _, from := range []int64{0, seg.Batches[7].Position} {
		r := &preads{r: log}
		it := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
		it.ResetReader(r, "x.log", size, from)
		var got []int64
		for it.Next() {
			got = append(got, it.Batch().Position)
		}
		var want [][2]int64
		var wantPos []int64
		groupAt, groupEnd, prevSize := int64(0), int64(0), int64(0)
		read := func(pos, n int64) {
			switch {
			case pos >= groupAt && pos+n <= groupEnd:
			case prevSize > 0 && prevSize <= inspect.SmallEntryBytes:
				g := min(inspect.HeaderGroupBytes, size-pos)
				want = append(want, [2]int64{pos, g})
				groupAt, groupEnd = pos, pos+g
			default:
				want = append(want, [2]int64{pos, n})
			}
		}
		for _, b := range seg.Batches {
			if b.Position >= from {
				read(b.Position, record.HeaderReadSize)
				prevSize = b.Size
				wantPos = append(wantPos, b.Position)
			}
		}
		read(size-tail, tail)
		if len(want) >= len(wantPos) {
			t.Fatalf("from %d: the model reads %d times for %d batches: no batch small enough to test the groups", from, len(want), len(wantPos))
		}
		if !slices.Equal(r.seen, want) {
			t.Errorf("from %d: reads %v\nwant %v", from, r.seen, want)
		}
		if !slices.Equal(got, wantPos) {
			t.Errorf("from %d: batches at %v, want %v", from, got, wantPos)
		}
		if !errors.Is(it.Err(), fileio.ErrTorn) || it.Position() != size-tail {
			t.Errorf("from %d: stopped at %d with %v, want ErrTorn at %d", from, it.Position(), it.Err(), size-tail)
		}

		w := inspect.NewLogIterator(inspect.IterOptions{Window: 4096})
		w.ResetReader(&preads{r: log}, "x.log", size, from)
		var viaWindow []int64
		for w.Next() {
			viaWindow = append(viaWindow, w.Batch().Position)
		}
		if !slices.Equal(viaWindow, got) || w.Position() != it.Position() || fmt.Sprint(w.Err()) != fmt.Sprint(it.Err()) {
			t.Errorf("from %d: windowed %v stop %d %v; headers-only %v stop %d %v", from, viaWindow, w.Position(), w.Err(), got, it.Position(), it.Err())
		}
	}
}

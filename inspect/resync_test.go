package inspect_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internal/scan"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// rsSegment generates a one-segment partition and returns its manifest and
// the bytes of its .log.
func rsSegment(t testing.TB, o kafkagen.Options) (*kafkagen.Manifest, []byte) {
	t.Helper()
	m, err := kafkagen.Generate(filepath.Join(t.TempDir(), "rs-0"), o)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(m.LogPath(&m.Segments[0]))
	if err != nil {
		t.Fatal(err)
	}
	return m, log
}

// TestResyncEveryPosition is a brute-force differential on clean logs of
// every magic: from every position, the next valid batch is the first
// batch starting at or after it (nothing inside a batch passes for one).
func TestResyncEveryPosition(t *testing.T) {
	for name, o := range map[string]kafkagen.Options{
		"v2":         {Seed: 40, Batches: 12},
		"v2-gzip":    {Seed: 41, Batches: 8, Compression: "gzip"},
		"v2-txn":     {Seed: 42, Batches: 15, Transactions: true},
		"v1":         {Seed: 43, Batches: 12, Magic: 1},
		"v1-snappy":  {Seed: 44, Batches: 6, Magic: 1, Compression: "snappy"},
		"v0":         {Seed: 45, Batches: 12, Magic: kafkagen.MagicV0},
		"v0-lz4-gap": {Seed: 46, Batches: 6, Magic: kafkagen.MagicV0, Compression: "lz4", CompactionGaps: true},
	} {
		t.Run(name, func(t *testing.T) {
			m, log := rsSegment(t, o)
			size := int64(len(log))
			rs := scan.NewResyncer(bytes.NewReader(log), "x.log", size)
			starts := []int64{}
			for _, b := range m.Segments[0].Batches {
				starts = append(starts, b.Position)
			}
			k := 0
			for from := int64(-2); from <= size+2; from++ {
				for k < len(starts) && starts[k] < from {
					k++
				}
				want, wantOK := size, false
				if k < len(starts) {
					want, wantOK = starts[k], true
				}
				pos, ok, err := rs.Next(from)
				if err != nil || pos != want || ok != wantOK {
					t.Fatalf("from %d: %d %v %v, want %d %v", from, pos, ok, err, want, wantOK)
				}
			}
		})
	}
}

func TestResyncPastDamage(t *testing.T) {
	m, log := rsSegment(t, kafkagen.Options{Seed: 40, Batches: 20})
	s := &m.Segments[0]
	size := int64(len(log))
	// Garbage in front: the first batch after it.
	garbage := bytes.Repeat([]byte("\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x30\xff\xff\xff\xff\x02garbage"), 50)
	data := append(slices.Clone(garbage), log...)
	if pos, ok, err := scan.Resync(bytes.NewReader(data), int64(len(data)), 0); pos != int64(len(garbage)) || !ok || err != nil {
		t.Errorf("after garbage: %d %v %v, want %d", pos, ok, err, len(garbage))
	}
	// A batch with a bad CRC is skipped.
	bad := slices.Clone(log)
	bad[s.Batches[3].Position+17] ^= 1
	if pos, ok, _ := scan.Resync(bytes.NewReader(bad), size, s.Batches[2].Position+1); pos != s.Batches[4].Position || !ok {
		t.Errorf("past a bad CRC: %d %v, want %d", pos, ok, s.Batches[4].Position)
	}
	// A batch whose header is impossible though its CRC matches (the v2
	// CRC does not cover the magic) is skipped.
	bad = slices.Clone(log)
	bad[s.Batches[5].Position+16] = 3
	if pos, ok, _ := scan.Resync(bytes.NewReader(bad), size, s.Batches[5].Position); pos != s.Batches[6].Position || !ok {
		t.Errorf("past magic 3: %d %v, want %d", pos, ok, s.Batches[6].Position)
	}
	// Nothing valid.
	if pos, ok, err := scan.Resync(bytes.NewReader(garbage), int64(len(garbage)), 0); pos != int64(len(garbage)) || ok || err != nil {
		t.Errorf("garbage only: %d %v %v", pos, ok, err)
	}
	// A read error is an error, not "nothing found".
	if _, _, err := scan.Resync(failingReader{}, 1000, 0); err == nil {
		t.Error("read error not reported")
	}
}

type failingReader struct{}

func (failingReader) ReadAt(p []byte, off int64) (int, error) { return 0, errors.New("disk on fire") }

// FuzzResync: whatever the bytes, Resync returns a position at or after
// from where a valid batch starts (a header ParseBatch accepts, whose CRC
// matches), or the end.
func FuzzResync(f *testing.F) {
	_, log := rsSegment(f, kafkagen.Options{Seed: 1, Batches: 8, IndexIntervalBytes: 500})
	f.Add(log, int64(1))
	f.Add(append([]byte("garbage before the batches"), log...), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		size := int64(len(data))
		pos, ok, err := scan.Resync(bytes.NewReader(data), size, from)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if pos != size {
				t.Fatalf("not found, but pos %d != size %d", pos, size)
			}
			return
		}
		if pos < max(from, 0) || pos >= size {
			t.Fatalf("pos %d outside [%d, %d)", pos, from, size)
		}
		b, err := record.ParseBatch(data[pos:min(size, pos+record.HeaderReadSize)], pos, "")
		if err != nil || b.End() > size || record.HeaderProblem(&b) != "" || record.ComputeCRC(b.Magic, data[pos:b.End()]) != b.CRC {
			t.Fatalf("no valid batch at %d: %v", pos, err)
		}
	})
}

// Garbage that offers a plausible header again and again is scanned in
// time linear in its size: here a real v2 batch header claiming 1 MiB, with
// a bad CRC, every 64 bytes. Without a bound on the CRC work every
// candidate would cost its claimed megabyte (256 GiB in all). -short
// scans 4 MiB of each garbage (64 GiB without the bound).
func TestResyncPathological(t *testing.T) {
	garbage := 16 << 20
	if testing.Short() {
		garbage = 4 << 20
	}
	_, log := rsSegment(t, kafkagen.Options{Seed: 1, Batches: 2})
	unit := make([]byte, 64)
	copy(unit, log[:record.V2HeaderSize])
	binary.BigEndian.PutUint32(unit[8:], 1<<20-12) // length: a 1 MiB batch
	binary.BigEndian.PutUint32(unit[57:], 0)       // no records, so the count fits
	unit[17] ^= 0xff                               // and the CRC cannot match
	data := bytes.Repeat(unit, garbage/64)
	size := int64(len(data))
	rs := scan.NewResyncer(bytes.NewReader(data), "", size)
	pos, ok, err := rs.Next(0)
	if err != nil || ok || pos != size {
		t.Errorf("%d %v %v", pos, ok, err)
	}
	// The documented bound: 256 MiB, plus 16 bytes per byte scanned.
	if bound := int64(256<<20) + 16*size; rs.CRCBytes() > bound {
		t.Errorf("resync checksummed %d bytes over %d bytes of garbage, more than the bound %d", rs.CRCBytes(), size, bound)
	}
	if rs.CRCBytes() == 0 {
		t.Error("no candidate was checked: the garbage does not exercise the budget")
	}
	// Legacy lookalikes: a repeated small integer has a plausible length
	// and magic 0 at every fourth byte.
	data = bytes.Repeat([]byte{0, 0, 0x10, 0}, garbage/4)
	rs.Reset(bytes.NewReader(data), "", int64(len(data)))
	if pos, ok, err := rs.Next(0); err != nil || ok || pos != int64(len(data)) {
		t.Errorf("legacy lookalikes: %d %v %v", pos, ok, err)
	}
}

func TestHeaderProblem(t *testing.T) {
	_, log := rsSegment(t, kafkagen.Options{Seed: 3, Batches: 1, RecordsPerBatch: 4})
	parse := func(edit func(h []byte)) record.Batch {
		h := slices.Clone(log[:record.HeaderReadSize])
		edit(h)
		b, err := record.ParseBatch(h, 0, "x.log")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, tc := range map[string]struct {
		edit func(h []byte)
		bad  bool
	}{
		"as written":             {func(h []byte) {}, false},
		"magic 3":                {func(h []byte) { h[16] = 3 }, true},
		"codec 5":                {func(h []byte) { h[22] |= 5 }, true},
		"negative count":         {func(h []byte) { binary.BigEndian.PutUint32(h[57:], 0xffffffff) }, true},
		"count above the deltas": {func(h []byte) { binary.BigEndian.PutUint32(h[23:], 0) }, true},
		"count not fitting":      {func(h []byte) { binary.BigEndian.PutUint32(h[8:], 61-12+6); binary.BigEndian.PutUint32(h[23:], 10) }, true},
	} {
		b := parse(tc.edit)
		if got := record.HeaderProblem(&b); (got != "") != tc.bad {
			t.Errorf("%s: %q", name, got)
		}
	}
	legacy := record.Batch{Magic: 1, Attributes: 4}
	if record.HeaderProblem(&legacy) == "" {
		t.Error("zstd in a magic 1 message accepted")
	}
}

// rsPartition generates a partition of two segments and returns it with
// its manifest.
func rsPartition(t *testing.T, o kafkagen.Options) (*inspect.Partition, *kafkagen.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "salvage-0")
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tg.Partitions[0], m
}

func rsEdit(t *testing.T, path string, fn func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

type rsSeen struct {
	segment  string
	position int64
	last     int64
	crcValid bool
}

func salvageAll(t *testing.T, p *inspect.Partition, r inspect.LogRange) ([]rsSeen, []inspect.Damage) {
	t.Helper()
	var seen []rsSeen
	var damage []inspect.Damage
	err := p.WalkSalvage(r, func(w inspect.WalkBatch) error {
		if int64(len(w.Entry)) != w.Batch.Size {
			t.Fatalf("entry of %d bytes for a batch of %d", len(w.Entry), w.Batch.Size)
		}
		seen = append(seen, rsSeen{w.Segment.Name(), w.Batch.Position, w.Batch.LastOffset, w.CRCValid})
		return nil
	}, func(d inspect.Damage) error {
		damage = append(damage, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen, damage
}

// wantSeen lists the manifest's batches, except those for which skip says
// so, with their positions shifted by shift(segment, position).
func wantSeen(m *kafkagen.Manifest, skip func(seg int, b kafkagen.BatchManifest) bool, shift func(seg int, pos int64) int64) []rsSeen {
	var out []rsSeen
	for si, s := range m.Segments {
		for _, b := range s.Batches {
			if skip != nil && skip(si, b) {
				continue
			}
			pos := b.Position
			if shift != nil {
				pos = shift(si, pos)
			}
			out = append(out, rsSeen{kafkagen.SegmentName(s.BaseOffset) + ".log", pos, b.LastOffset, true})
		}
	}
	return out
}

// salvaged is what a damage case of TestWalkSalvage expects: the damaged
// log, the damaged range [pos, end) and its kind (pos -1: none), whether
// the damaged batch is still handed out (with a bad CRC), and how far the
// positions after it move.
type salvaged struct {
	out      []byte
	pos, end int64
	kind     error
	kept     bool
	delta    int64
}

func TestWalkSalvage(t *testing.T) {
	shape := kafkagen.Options{Seed: 8, Segments: 2, Batches: 40}
	// The batch of segment 0 the cases damage.
	const k = 17

	t.Run("clean", func(t *testing.T) {
		p, m := rsPartition(t, shape)
		seen, damage := salvageAll(t, p, inspect.LogRange{})
		if len(damage) != 0 {
			t.Errorf("damage on a clean partition: %+v", damage)
		}
		if want := wantSeen(m, nil, nil); !slices.Equal(seen, want) {
			t.Errorf("seen %v\nwant %v", seen, want)
		}
	})

	cases := []struct {
		name string
		// damage edits segment 0's .log (b is batch k, next the one after).
		damage func(log []byte, b kafkagen.BatchManifest, next kafkagen.BatchManifest) salvaged
	}{
		{"huge length field", func(log []byte, b, next kafkagen.BatchManifest) salvaged {
			binary.BigEndian.PutUint32(log[b.Position+8:], 0x7ffffff0)
			return salvaged{out: log, pos: b.Position, end: next.Position, kind: fileio.ErrCorruptHeader, kept: false, delta: 0}
		}},
		{"length field below 14", func(log []byte, b, next kafkagen.BatchManifest) salvaged {
			binary.BigEndian.PutUint32(log[b.Position+8:], 3)
			return salvaged{out: log, pos: b.Position, end: next.Position, kind: fileio.ErrCorruptHeader, kept: false, delta: 0}
		}},
		{"length field shortened", func(log []byte, b, next kafkagen.BatchManifest) salvaged {
			binary.BigEndian.PutUint32(log[b.Position+8:], uint32(b.Size-12-20))
			return salvaged{out: log, pos: b.Position, end: next.Position, kind: fileio.ErrCRC, kept: false, delta: 0}
		}},
		{"flipped byte in a record", func(log []byte, b, next kafkagen.BatchManifest) salvaged {
			log[b.Position+b.Size-3] ^= 0x40
			return salvaged{out: log, pos: -1, end: -1, kind: nil, kept: true, delta: 0}
		}},
		{"garbage between batches", func(log []byte, b, next kafkagen.BatchManifest) salvaged {
			junk := bytes.Repeat([]byte("junk\x00\x00\x01\x02"), 25)
			out := slices.Concat(log[:b.Position], junk, log[b.Position:])
			return salvaged{out: out, pos: b.Position, end: b.Position + int64(len(junk)), kind: fileio.ErrCorruptHeader, kept: true, delta: int64(len(junk))}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, m := rsPartition(t, shape)
			s0 := &m.Segments[0]
			b, next := s0.Batches[k], s0.Batches[k+1]
			var w salvaged
			rsEdit(t, m.LogPath(s0), func(log []byte) []byte {
				w = tc.damage(log, b, next)
				return w.out
			})
			pos, end, kind, kept, delta := w.pos, w.end, w.kind, w.kept, w.delta
			seen, damage := salvageAll(t, p, inspect.LogRange{})
			want := wantSeen(m, func(seg int, x kafkagen.BatchManifest) bool {
				return seg == 0 && x.Position == b.Position && !kept
			}, func(seg int, x int64) int64 {
				if seg == 0 && x >= b.Position {
					return x + delta
				}
				return x
			})
			if kind == nil && kept {
				for i := range want {
					if want[i].segment == kafkagen.SegmentName(0)+".log" && want[i].position == b.Position {
						want[i].crcValid = false
					}
				}
			}
			if !slices.Equal(seen, want) {
				t.Errorf("seen %v\nwant %v", seen, want)
			}
			if pos < 0 {
				if len(damage) != 0 {
					t.Errorf("damage %+v, want none", damage)
				}
				return
			}
			if len(damage) != 1 {
				t.Fatalf("damage %+v, want one range", damage)
			}
			d := damage[0]
			var ce *fileio.CorruptError
			if d.Segment.BaseOffset != 0 || d.Position != pos || d.End != end || !errors.Is(d.Err, kind) || !errors.As(d.Err, &ce) || ce.Position != pos || ce.File != m.LogPath(s0) {
				t.Errorf("damage %+v (%v), want [%d, %d) of kind %v", d, d.Err, pos, end, kind)
			}
			// The walk without salvage stops in segment 0 at the same place
			// (unless only a CRC is bad) and reports it.
			var plain []int64
			err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
				if w.Segment.BaseOffset == 0 {
					plain = append(plain, w.Batch.Position)
				}
				return nil
			})
			if kind != fileio.ErrCRC && (err == nil || len(plain) != k) {
				t.Errorf("Walk: %d batches of segment 0 and %v, want %d and the damage", len(plain), err, k)
			}
		})
	}

	t.Run("torn tail", func(t *testing.T) {
		p, m := rsPartition(t, shape)
		s1 := &m.Segments[1]
		last := s1.Batches[len(s1.Batches)-1]
		rsEdit(t, m.LogPath(s1), func(log []byte) []byte { return log[:last.Position+last.Size/2] })
		seen, damage := salvageAll(t, p, inspect.LogRange{})
		want := wantSeen(m, func(seg int, x kafkagen.BatchManifest) bool { return seg == 1 && x.Position == last.Position }, nil)
		if !slices.Equal(seen, want) {
			t.Errorf("seen %v\nwant %v", seen, want)
		}
		if len(damage) != 1 || damage[0].Position != last.Position || damage[0].End != last.Position+last.Size/2 || !errors.Is(damage[0].Err, fileio.ErrTorn) {
			t.Errorf("damage %+v", damage)
		}
	})

	t.Run("ranges after damage", func(t *testing.T) {
		p, m := rsPartition(t, shape)
		s0 := &m.Segments[0]
		b := s0.Batches[k]
		rsEdit(t, m.LogPath(s0), func(log []byte) []byte {
			binary.BigEndian.PutUint32(log[b.Position+8:], 0x7ffffff0)
			return log
		})
		// From an offset before the damage, three batches: the two before
		// it and the one after it.
		from := s0.Batches[k-2].LastOffset
		seen, damage := salvageAll(t, p, inspect.LogRange{FromOffset: &from, MaxBatches: 3})
		if len(seen) != 3 || seen[0].position != s0.Batches[k-2].Position || seen[2].position != s0.Batches[k+1].Position || len(damage) != 1 {
			t.Errorf("seen %v, damage %+v", seen, damage)
		}
		// Up to an offset after the damage.
		to := s0.Batches[k+2].LastOffset
		seen, _ = salvageAll(t, p, inspect.LogRange{ToOffset: &to})
		if len(seen) != k+2 || seen[len(seen)-1].last != to {
			t.Errorf("seen %v, want %d batches up to offset %d", seen, k+2, to)
		}
	})

	t.Run("callback errors stop the walk", func(t *testing.T) {
		p, m := rsPartition(t, shape)
		s0 := &m.Segments[0]
		rsEdit(t, m.LogPath(s0), func(log []byte) []byte {
			binary.BigEndian.PutUint32(log[s0.Batches[k].Position+8:], 3)
			return log
		})
		stop := errors.New("stop")
		n := 0
		err := p.WalkSalvage(inspect.LogRange{}, func(inspect.WalkBatch) error { n++; return nil }, func(inspect.Damage) error { return stop })
		if !errors.Is(err, stop) || n != k {
			t.Errorf("%v after %d batches", err, n)
		}
		n = 0
		err = p.WalkSalvage(inspect.LogRange{}, func(inspect.WalkBatch) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		}, func(inspect.Damage) error { return nil })
		if !errors.Is(err, stop) || n != 3 {
			t.Errorf("%v after %d batches", err, n)
		}
	})
}

// TestSkipBadCRC: the salvage decision for a batch whose CRC fails keeps
// a batch whose length is credible (it ends the file, or a batch header
// starts where it ends) and skips to the next valid batch when its length
// field is damaged too.
func TestSkipBadCRC(t *testing.T) {
	m, log := rsSegment(t, kafkagen.Options{Seed: 47, Batches: 10})
	s := &m.Segments[0]
	size := int64(len(log))
	parse := func(data []byte, pos int64) *record.Batch {
		t.Helper()
		b, err := record.ParseBatch(data[pos:min(int64(len(data)), pos+record.HeaderReadSize)], pos, "x.log")
		if err != nil {
			t.Fatal(err)
		}
		return &b
	}
	// Contents damaged, length intact: keep it.
	bad := slices.Clone(log)
	bad[s.Batches[3].Position+70] ^= 1
	rs := scan.NewResyncer(bytes.NewReader(bad), "x.log", size)
	if next, err := rs.SkipBadCRC(parse(bad, s.Batches[3].Position)); next != -1 || err != nil {
		t.Errorf("contents damaged: %d %v, want -1", next, err)
	}
	// The last batch ends the file: keep it.
	last := s.Batches[len(s.Batches)-1].Position
	bad = slices.Clone(log)
	bad[last+70] ^= 1
	rs.Reset(bytes.NewReader(bad), "x.log", size)
	if next, err := rs.SkipBadCRC(parse(bad, last)); next != -1 || err != nil {
		t.Errorf("last batch: %d %v, want -1", next, err)
	}
	// The length field grew by 5 (the v2 CRC does not cover it): no header
	// starts where it claims to end, and batch 4 is the next valid one.
	bad = slices.Clone(log)
	at := s.Batches[3].Position + 8
	binary.BigEndian.PutUint32(bad[at:], binary.BigEndian.Uint32(bad[at:])+5)
	rs.Reset(bytes.NewReader(bad), "x.log", size)
	if next, err := rs.SkipBadCRC(parse(bad, s.Batches[3].Position)); next != s.Batches[4].Position || err != nil {
		t.Errorf("length damaged: %d %v, want %d", next, err, s.Batches[4].Position)
	}
	// The same with nothing valid after it: keep it (nothing marks the end
	// of the damage).
	for _, b := range s.Batches[4:] {
		bad[b.Position+20] ^= 0xff
	}
	rs.Reset(bytes.NewReader(bad), "x.log", size)
	if next, err := rs.SkipBadCRC(parse(bad, s.Batches[3].Position)); next != -1 || err != nil {
		t.Errorf("length damaged, nothing after: %d %v, want -1", next, err)
	}
}

// TestResyncOverZeros: zero runs of every length and alignment (a
// preallocated tail, a sparse hole) before a batch are skipped a block at
// a time, and the batch after them is found at its exact position, from
// every start inside the zeros.
func TestResyncOverZeros(t *testing.T) {
	_, log := rsSegment(t, kafkagen.Options{Seed: 47, Batches: 3})
	for _, zeros := range []int{1, 11, 12, 13, 511, 512, 513, 1000, inspect.ResyncWindow - 5, inspect.ResyncWindow + 700} {
		data := append(make([]byte, zeros), log...)
		rs := scan.NewResyncer(bytes.NewReader(data), "x.log", int64(len(data)))
		for _, from := range []int64{0, 1, int64(zeros) / 2, int64(zeros) - 1, int64(zeros)} {
			pos, ok, err := rs.Next(from)
			if err != nil || !ok || pos != int64(zeros) {
				t.Fatalf("%d zeros, from %d: %d %v %v, want %d", zeros, from, pos, ok, err, zeros)
			}
		}
	}
}

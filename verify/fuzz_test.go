package verify

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/rebuild/gen"
)

// seedSegment returns the files of a small generated segment, for seeding
// the fuzz corpora. Fuzz workers run the setup of a fuzz function again for
// every batch of inputs, so the bytes are generated once per process.
func seedSegment(f *testing.F, o gen.Options) (log, idx, tidx []byte) {
	f.Helper()
	seedMu.Lock()
	defer seedMu.Unlock()
	if s, ok := seeds[o.Seed]; ok {
		return s[0], s[1], s[2]
	}
	tmp, err := os.MkdirTemp("", "kseg-verify-seed")
	if err != nil {
		f.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	m, err := gen.Generate(filepath.Join(tmp, "seed-0"), o)
	if err != nil {
		f.Fatal(err)
	}
	s := &m.Segments[0]
	var out [3][]byte
	for i, p := range []string{m.LogPath(s), m.IndexPath(s), m.TimeIndexPath(s)} {
		if out[i], err = os.ReadFile(p); err != nil {
			f.Fatal(err)
		}
	}
	seeds[o.Seed] = out
	return out[0], out[1], out[2]
}

var (
	seedMu sync.Mutex
	seeds  = map[int64][3][]byte{} // by gen seed; the options of one seed never change
)

// FuzzResync: whatever the bytes, Resync returns a position at or after
// from where a valid batch starts (a header ParseBatch accepts, whose CRC
// matches), or the end.
func FuzzResync(f *testing.F) {
	log, _, _ := seedSegment(f, gen.Options{Seed: 1, Batches: 8, IndexIntervalBytes: 500})
	f.Add(log, int64(1))
	f.Add(append([]byte("garbage before the batches"), log...), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, from int64) {
		size := int64(len(data))
		pos, ok, err := Resync(bytes.NewReader(data), size, from)
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
		b, err := inspect.ParseBatch(data[pos:min(size, pos+inspect.HeaderReadSize)], pos, "")
		if err != nil || b.End() > size || inspect.ComputeCRC(b.Magic, data[pos:b.End()]) != b.CRC {
			t.Fatalf("no valid batch at %d: %v", pos, err)
		}
	})
}

// FuzzVerifySegment: a segment of arbitrary bytes is checked without an
// error or a panic, and every finding is well formed.
func FuzzVerifySegment(f *testing.F) {
	for _, o := range []gen.Options{
		{Seed: 1, Batches: 8, IndexIntervalBytes: 500},
		{Seed: 2, Batches: 6, Magic: 1, Compression: "gzip", IndexIntervalBytes: gen.IndexEveryBatch},
		{Seed: 3, Batches: 20, Transactions: true, IndexIntervalBytes: 300},
	} {
		log, idx, tidx := seedSegment(f, o)
		f.Add(log, idx, tidx, false)
		f.Add(log, idx, tidx, true)
	}
	checks := map[string]bool{}
	for _, c := range Checks() {
		checks[c] = true
	}
	f.Fuzz(func(t *testing.T, log, idx, tidx []byte, deep bool) {
		dir := filepath.Join(t.TempDir(), "fuzz-0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{".log": log, ".index": idx, ".timeindex": tidx} {
			if err := os.WriteFile(filepath.Join(dir, "00000000000000000000"+name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tg, err := inspect.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sum, err := Run(tg, Options{Jobs: 1, Records: deep}, func(f Finding) {
			n++
			if !checks[f.Check] || f.Severity != Severity(f.Check) || f.Message == "" || f.File == "" {
				t.Fatalf("malformed finding %+v", f)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Errors+sum.Warnings != n || sum.Bytes != int64(len(log)) {
			t.Fatalf("summary %+v, %d findings, %d log bytes", sum, n, len(log))
		}
	})
}

// Garbage that offers a plausible header again and again is scanned in
// time linear in its size: here a real v2 batch header claiming 1 MiB, with
// a bad CRC, every 64 bytes. Without a bound on the CRC work every
// candidate would cost its claimed megabyte (256 GiB in all).
func TestResyncPathological(t *testing.T) {
	m, err := gen.Generate(filepath.Join(t.TempDir(), "p-0"), gen.Options{Seed: 1, Batches: 2})
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(m.LogPath(&m.Segments[0]))
	if err != nil {
		t.Fatal(err)
	}
	unit := make([]byte, 64)
	copy(unit, log[:inspect.V2HeaderSize])
	binary.BigEndian.PutUint32(unit[8:], 1<<20-12) // length: a 1 MiB batch
	binary.BigEndian.PutUint32(unit[57:], 0)       // no records, so the count fits
	unit[17] ^= 0xff                               // and the CRC cannot match
	data := bytes.Repeat(unit, 16<<20/64)
	size := int64(len(data))
	w := newWindow(bytes.NewReader(data), "", size, make([]byte, resyncWindow))
	pos, ok, err := resync(w, make([]byte, resyncWindow), 0)
	if err != nil || ok || pos != size {
		t.Errorf("%d %v %v", pos, ok, err)
	}
	if bound := int64(256<<20) + 16*size; w.crcBytes > bound {
		t.Errorf("resync checksummed %d bytes over %d bytes of garbage, more than the bound %d", w.crcBytes, size, bound)
	}
	// Legacy lookalikes: a repeated small integer has a plausible length
	// and magic 0 at every fourth byte.
	data = bytes.Repeat([]byte{0, 0, 0x10, 0}, 16<<20/4)
	if pos, ok, err := Resync(bytes.NewReader(data), int64(len(data)), 0); err != nil || ok || pos != int64(len(data)) {
		t.Errorf("legacy lookalikes: %d %v %v", pos, ok, err)
	}
}

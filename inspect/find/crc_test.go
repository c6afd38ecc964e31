package find_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/find"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestSearchTreatsABadCRCAsDamage: a byte of a record flipped inside a
// batch whose length still holds. Its stored CRC no longer matches, so its
// records are not what the producer wrote (a consumer's CRC check refuses
// the batch, broker recovery truncates there): the batch is damage like an
// unreadable one. Without Salvage the rest of the segment is not searched;
// with it only that batch is lost. Either way one damage event names the
// file and byte position.
func TestSearchTreatsABadCRCAsDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 3, Segments: 3, Batches: 10, RecordsPerBatch: 4, ValueSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	seg := m.Segments[1]
	bad := seg.Batches[4]
	f, err := os.OpenFile(m.LogPath(&seg), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of the first record's value (the 61-byte batch header, the
	// record's length, attributes, deltas and a 7-byte key come first): a
	// letter changed into another, every record still decodes.
	at := bad.Position + 61 + 16
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{b[0] ^ 0x01}, at); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, salvage := range []bool{false, true} {
		var got, want []int64
		var damage []*inspect.Damage
		_, err := find.Search(tg.Partitions, find.Options{Filter: find.Filter{FromOffset: p64(0)}, Salvage: salvage}, func(e find.Event) error {
			if e.Damage != nil {
				damage = append(damage, e.Damage)
			} else {
				got = append(got, e.Match.Record.Offset)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for si, s := range m.Segments {
			for bi, b := range s.Batches {
				if si == 1 && (bi == 4 || bi > 4 && !salvage) {
					continue
				}
				for _, r := range b.Records {
					want = append(want, r.Offset)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("salvage %v: offsets %v, want %v", salvage, got, want)
		}
		if len(damage) != 1 || damage[0].Position != bad.Position || damage[0].Segment.BaseOffset != seg.BaseOffset {
			t.Fatalf("salvage %v: damage %+v, want one at %d in segment %d", salvage, damage, bad.Position, seg.BaseOffset)
		}
		if msg := damage[0].Err.Error(); !errors.Is(damage[0].Err, fileio.ErrCRC) || !strings.Contains(msg, m.LogPath(&seg)) || !strings.Contains(msg, fmt.Sprintf("byte position %d", bad.Position)) {
			t.Errorf("damage error %q is not a CRC mismatch naming the file and byte position", msg)
		}
	}
}

package gentest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// Damaged indexes over intact logs, for the tests of the rule for
// misleading index entries (inspect/misleading.go) in every package that
// follows an index: find, the walks, the lookups and their commands.

// EditOffsetIndex rewrites the entries of an .index in place: edit gets
// each entry's slot, relative offset and position, and may change them.
func EditOffsetIndex(t testing.TB, path string, edit func(slot int, rel, pos *int32)) {
	t.Helper()
	editSlots(t, path, 8, func(slot int, b []byte) {
		rel, pos := int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))
		edit(slot, &rel, &pos)
		binary.BigEndian.PutUint32(b, uint32(rel))
		binary.BigEndian.PutUint32(b[4:], uint32(pos))
	})
}

// EditTimeIndex rewrites the entries of a .timeindex in place: edit gets
// each entry's slot, timestamp and relative offset, and may change them.
func EditTimeIndex(t testing.TB, path string, edit func(slot int, ts *int64, rel *int32)) {
	t.Helper()
	editSlots(t, path, 12, func(slot int, b []byte) {
		ts, rel := int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:]))
		edit(slot, &ts, &rel)
		binary.BigEndian.PutUint64(b, uint64(ts))
		binary.BigEndian.PutUint32(b[8:], uint32(rel))
	})
}

// editSlots hands edit each whole slot of size bytes of the file at path
// to change in place, and writes the file back.
func editSlots(t testing.TB, path string, size int, edit func(slot int, b []byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+size <= len(b); i += size {
		edit(i/size, b[i:i+size])
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// DamageIndexes damages the indexes of m's segments at random: entries
// pointed at other batches, inside batches or past the log, offsets and
// timestamps moved, entries swapped or copied, the time index cut short
// (its closing entry lost), bytes flipped. It returns what it did.
func DamageIndexes(t testing.TB, rng *rand.Rand, m *kafkagen.Manifest) string {
	t.Helper()
	var did []string
	for si := range m.Segments {
		seg := &m.Segments[si]
		if len(seg.Batches) == 0 || rng.IntN(3) == 0 {
			continue
		}
		batch := func() *kafkagen.BatchManifest { return &seg.Batches[rng.IntN(len(seg.Batches))] }
		for range 1 + rng.IntN(3) {
			if seg.IndexEntries > 0 && rng.IntN(2) == 0 {
				k := rng.IntN(seg.IndexEntries)
				kind := rng.IntN(6)
				did = append(did, fmt.Sprintf("seg %d .index slot %d kind %d", si, k, kind))
				EditOffsetIndex(t, m.IndexPath(seg), func(slot int, rel, pos *int32) {
					if slot != k && !(kind == 4 && slot == k+1) {
						return
					}
					switch kind {
					case 0:
						*pos = int32(batch().Position)
					case 1:
						*pos = int32(rng.Int64N(seg.LogSize))
					case 2:
						*pos = int32(seg.LogSize + rng.Int64N(1000))
					case 3:
						*rel += int32(rng.IntN(41) - 20)
					case 4: // swap with the next slot: the next edit call gets slot k+1
						if slot == k {
							*rel, *pos = *rel+int32(rng.IntN(3)), int32(batch().Position)
						}
					case 5:
						*pos ^= 1 << rng.IntN(20)
					}
				})
				continue
			}
			if seg.TimeIndexEntries == 0 {
				continue
			}
			k := rng.IntN(seg.TimeIndexEntries)
			kind := rng.IntN(6)
			did = append(did, fmt.Sprintf("seg %d .timeindex slot %d kind %d", si, k, kind))
			if kind == 5 {
				// Cut the file short: the entries from k on, the closing
				// entry among them, are lost.
				if err := os.Truncate(m.TimeIndexPath(seg), int64(k)*12); err != nil {
					t.Fatal(err)
				}
				seg.TimeIndexEntries = k
				continue
			}
			EditTimeIndex(t, m.TimeIndexPath(seg), func(slot int, ts *int64, rel *int32) {
				if slot != k {
					return
				}
				switch kind {
				case 0:
					*ts -= 1 + rng.Int64N(2000)
				case 1:
					*ts += 1 + rng.Int64N(2000)
				case 2:
					*rel = int32(batch().LastOffset - seg.BaseOffset)
				case 3:
					b := batch()
					*ts, *rel = b.MaxTimestamp-1-rng.Int64N(50), int32(b.LastOffset-seg.BaseOffset)
				case 4:
					*ts ^= 1 << rng.IntN(40)
				}
			})
		}
	}
	return strings.Join(did, ", ")
}

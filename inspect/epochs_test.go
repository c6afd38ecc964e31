package inspect_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// TestEpochMatcher: batches of 10 offsets each (batch i at offsets
// 10i..10i+9, bytes 100i..100i+99) against the checkpoint (1, 20), (3,
// 60), (5, 100): the runs that contradict it, merged while the batch's
// epoch and the entry stay the same; batches below the log start offset,
// below the first entry, newer than the latest epoch, without an epoch or
// of magic 1 are not compared.
func TestEpochMatcher(t *testing.T) {
	var cp sidefile.LeaderEpochCheckpoint
	cp.Entries = []sidefile.EpochEntry{{Epoch: 1, StartOffset: 20}, {Epoch: 3, StartOffset: 60}, {Epoch: 5, StartOffset: 100}}
	batch := func(i int64, epoch int32, magic int8) *record.Batch {
		return &record.Batch{Magic: magic, BaseOffset: 10 * i, LastOffset: 10*i + 9, Position: 100 * i, Size: 100, PartitionLeaderEpoch: epoch}
	}
	for _, c := range []struct {
		logStart int64
		epochs   []int32 // batch i's epoch (-2: magic 1)
		want     string
	}{
		// Healthy: 0 and 1 are below the first entry, 12 newer than 5.
		{0, []int32{0, 0, 1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 7}, ""},
		// Epoch 3 written from 40: two batches in epoch 1's entry.
		{0, []int32{0, 0, 1, 1, 3, 3, 3, 3, 3, 3, 5}, "3 in 1@20 40..59 400..599 (2)"},
		// Epoch 1 went on to 79: in epoch 3's entry; then, after two
		// batches of epoch 3, one of epoch 1 in 5's.
		{0, []int32{0, 0, 1, 1, 1, 1, 1, 1, 3, 3, 1}, "1 in 3@60 60..79 600..799 (2); 1 in 5@100 100..109 1000..1099 (1)"},
		// The same below a log start of 80: only the last batch.
		{80, []int32{0, 0, 1, 1, 1, 1, 1, 1, 3, 3, 1}, "1 in 5@100 100..109 1000..1099 (1)"},
		// A log start inside a batch: compared from the log start.
		{65, []int32{0, 0, 1, 1, 1, 1, 1, 1, 3, 3}, "1 in 3@60 65..79 600..799 (2)"},
		// No epoch and magic 1 end a run.
		{0, []int32{0, 0, 1, 1, 1, 1, 1, -1, 1, -2, 1}, "1 in 3@60 60..69 600..699 (1); 1 in 3@60 80..89 800..899 (1); 1 in 5@100 100..109 1000..1099 (1)"},
	} {
		m := inspect.NewEpochMatcher(&cp, c.logStart)
		var got []string
		note := func(r *inspect.EpochMismatch) {
			if r != nil {
				got = append(got, fmt.Sprintf("%d in %d@%d %d..%d %d..%d (%d)", r.BatchEpoch, r.Entry.Epoch, r.Entry.StartOffset, r.FirstOffset, r.LastOffset, r.FirstPosition, r.EndPosition-1, r.Batches))
			}
		}
		for i, e := range c.epochs {
			magic := int8(2)
			if e == -2 {
				magic, e = 1, -1
			}
			note(m.Batch(batch(int64(i), e, magic)))
		}
		note(m.Flush())
		if s := strings.Join(got, "; "); s != c.want {
			t.Errorf("log start %d, epochs %v:\n got  %s\n want %s", c.logStart, c.epochs, s, c.want)
		}
	}
	if m := inspect.NewEpochMatcher(&sidefile.LeaderEpochCheckpoint{}, 0); m != nil || m.Batch(batch(0, 1, 2)) != nil || m.Flush() != nil {
		t.Error("an empty checkpoint contradicts nothing")
	}
}

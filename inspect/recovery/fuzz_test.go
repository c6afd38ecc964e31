package recovery

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen/gentest"
)

// FuzzPlanSegment plans arbitrary log bytes: never a panic, a hang or an
// I/O error; a plan whose numbers agree with each other; and the same
// indexes when only the valid prefix is planned.
func FuzzPlanSegment(f *testing.F) {
	base, _ := corruptionBase()
	f.Add(base, int64(300))
	f.Add(base[:len(base)-7], int64(0))
	f.Add(append(bytes.Clone(base), make([]byte, 100)...), int64(1))
	f.Add(gentest.Concat(gentest.TxnData(0, 3, 1, 1, true), gentest.TxnData(3, 2, 2, 2, true), gentest.Marker(6, 4, 1, gentest.AbortType), gentest.Marker(7, 5, 2, gentest.AbortType)), int64(0))
	f.Add(gentest.Concat(gentest.LegacyMessage(0, 1, 5, []byte("a")), gentest.LegacyMessage(1, 0, 0, []byte("b"))), int64(0))
	f.Add(gentest.Concat(gentest.Sized(0, 9, 1, 100), gentest.Sized(10, 90, 5, 100), gentest.Sized(101, 29, 6, 100), gentest.Sized(40, 0, 7, 100)), int64(0))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, log []byte, interval int64) {
		interval = interval & 0xffff // keep it small enough to have index points
		if interval == 0 {
			interval = IndexEveryBatch
		}
		pl, err := planBytes(dir, log, interval)
		if err != nil {
			if !errors.Is(err, ErrUnrecoverable) {
				t.Fatalf("error that is not a recovery outcome: %v", err)
			}
			return
		}
		size := int64(len(log))
		if pl.ValidBytes < 0 || pl.ValidBytes > size || pl.TruncatedBytes != size-pl.ValidBytes {
			t.Fatalf("valid %d truncated %d of %d", pl.ValidBytes, pl.TruncatedBytes, size)
		}
		if len(pl.Index) != 8*pl.IndexEntries || len(pl.TimeIndex) != 12*pl.TimeIndexEntries || len(pl.TxnIndex) != 34*pl.TxnEntries {
			t.Fatalf("entry counts do not match the bytes")
		}
		if pl.StopErr == nil {
			if pl.ValidBytes != size {
				t.Fatalf("no stop reason but %d of %d bytes valid", pl.ValidBytes, size)
			}
		} else {
			var ce *fileio.CorruptError
			if !errors.As(pl.StopErr, &ce) {
				t.Fatalf("stop reason %v is not a CorruptError", pl.StopErr)
			}
			switch {
			case errors.Is(pl.StopErr, indexfmt.ErrInvalidOffset):
				if pl.ValidBytes != 0 || pl.IndexEntries+pl.TimeIndexEntries+pl.TxnEntries != 0 {
					t.Fatalf("emptied segment with %d valid bytes", pl.ValidBytes)
				}
				return
			case errors.Is(pl.StopErr, fileio.ErrCorruptRecords):
				if ce.Position >= pl.ValidBytes {
					t.Fatalf("malformed control record at %d, cut at %d: not after the batch", ce.Position, pl.ValidBytes)
				}
			default:
				if ce.Position != pl.ValidBytes {
					t.Fatalf("stop at %d but valid bytes %d", ce.Position, pl.ValidBytes)
				}
			}
		}
		prefix, err := planBytes(dir, log[:pl.ValidBytes], interval)
		if err != nil {
			t.Fatalf("valid prefix: %v", err)
		}
		if !bytes.Equal(prefix.Index, pl.Index) || !bytes.Equal(prefix.TimeIndex, pl.TimeIndex) || !bytes.Equal(prefix.TxnIndex, pl.TxnIndex) {
			t.Fatalf("the valid prefix alone gives other indexes")
		}
	})
}

func planBytes(dir string, log []byte, interval int64) (SegmentRecovery, error) {
	pdir := filepath.Join(dir, "f-0")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return SegmentRecovery{}, err
	}
	path := filepath.Join(pdir, inspect.SegmentName(0)+".log")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		return SegmentRecovery{}, err
	}
	p := &inspect.Partition{Dir: pdir, Segments: []inspect.SegmentFiles{{BaseOffset: 0, Log: path}}}
	plans, err := PlanPartition(p, Options{IndexIntervalBytes: interval})
	if err != nil {
		return SegmentRecovery{}, err
	}
	return plans[0], nil
}

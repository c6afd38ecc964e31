package rebuild

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// TestTxnIndexRebuildInPlace: with every .txnindex deleted (and one
// emptied), rebuild restores the generator's files byte for byte, creates
// none where no transaction was aborted, and leaves the emptied one empty
// when its segment has no abort, as the broker's reset does.
func TestTxnIndexRebuildInPlace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "txn-0")
	m, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 77, Segments: 5, Batches: 40, Transactions: true})
	if err != nil {
		t.Fatal(err)
	}
	orig := map[string][]byte{}
	without := -1
	for i := range m.Segments {
		sm := &m.Segments[i]
		path := m.TxnIndexPath(sm)
		if sm.TxnIndexWritten {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			orig[path] = b
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		} else if without < 0 {
			without = i
		}
	}
	if len(orig) < 2 {
		t.Fatalf("only %d segments with aborts", len(orig))
	}
	if without >= 0 {
		if err := os.WriteFile(m.TxnIndexPath(&m.Segments[without]), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(tg, ApplyOptions{NoBackup: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	for i := range m.Segments {
		path := m.TxnIndexPath(&m.Segments[i])
		got, err := os.ReadFile(path)
		switch want, ok := orig[path]; {
		case ok:
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: rebuilt %x (%v), the broker wrote %x", path, got, err, want)
			}
		case i == without:
			if err != nil || len(got) != 0 {
				t.Errorf("%s: %d bytes (%v), want the empty file kept", path, len(got), err)
			}
		default:
			if !os.IsNotExist(err) {
				t.Errorf("%s: created for a segment without aborts (%v)", path, err)
			}
		}
	}
}

// Package dumpindex lists the entries of .index, .timeindex and .txnindex
// files: the library behind `kseg dump-index`. It applies
// DumpLogSegments' padding rule (the zero-filled slots past the valid
// entries are listed only when asked), bounds a .txnindex beside its log
// to the ABORT markers the log could hold (SegmentFiles.TxnIndexBound),
// and measures the bytes after the last whole entry.
package dumpindex

import (
	"fmt"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
)

// File is one index file, with its segment's base offset, its kind (an
// inspect suffix) and its segment's .log ("" when absent).
type File struct {
	Path       string
	BaseOffset int64
	Kind       string
	Log        string
}

// Files are the index files a target names: the one file of a segment
// target (every index of its segment when the target is the .log), else
// every index file of every segment, in order.
func Files(t *inspect.Target) []File {
	var out []File
	for _, p := range t.Partitions {
		for _, s := range p.Segments {
			all := []File{{s.Index, s.BaseOffset, inspect.IndexSuffix, s.Log}, {s.TimeIndex, s.BaseOffset, inspect.TimeIndexSuffix, s.Log},
				{s.TxnIndex, s.BaseOffset, inspect.TxnIndexSuffix, s.Log}}
			named := false
			for _, f := range all {
				if t.Kind == "segment" && f.Path != "" && t.File == f.Path {
					out, named = append(out, f), true
				}
			}
			if named {
				continue
			}
			for _, f := range all {
				if f.Path != "" {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// Visit receives the entries listed, slot by slot: those of the kind of
// the file dumped.
type Visit struct {
	Offset func(slot int, e indexfmt.OffsetEntry)
	Time   func(slot int, e indexfmt.TimeEntry)
	Txn    func(slot int, e indexfmt.AbortedTxn)
}

// Result is what Dump found besides the entries.
type Result struct {
	Size     int64 // of the file
	Slots    int   // whole entries in it
	Valid    int   // the entries before the zero-filled padding (Slots for a .txnindex)
	Listed   int
	Trailing int64 // bytes after the last whole entry
	// TxnBound is the most entries the .txnindex's log could justify,
	// when it holds more (only that many are listed); -1 otherwise.
	TxnBound int64
}

// Dump lists f's entries through v: every slot with all, else the valid
// ones. An entry that cannot be read stops it with an error naming the
// file.
func Dump(f File, all bool, v Visit) (Result, error) {
	res := Result{TxnBound: -1}
	file, err := fileio.Open(f.Path, fileio.Options{Mapped: true})
	if err != nil {
		return res, err
	}
	defer file.Close()
	res.Size = file.Size()
	slots := fileio.NewIndexSlots(file, res.Size)
	switch f.Kind {
	case inspect.IndexSuffix:
		x := indexfmt.NewOffsetIndexFrom(slots, f.BaseOffset)
		res.Trailing = res.Size % indexfmt.OffsetEntrySize
		err = dumpSlots(&res, x.Slots(), x.ValidEntries, all, x.Entry, v.Offset)
	case inspect.TimeIndexSuffix:
		x := indexfmt.NewTimeIndexFrom(slots, f.BaseOffset)
		res.Trailing = res.Size % indexfmt.TimeEntrySize
		err = dumpSlots(&res, x.Slots(), x.ValidEntries, all, x.Entry, v.Time)
	default:
		x := indexfmt.NewTxnIndexFrom(slots)
		res.Trailing = res.Size % indexfmt.TxnEntrySize
		res.Slots, res.Valid = x.Entries(), x.Entries()
		n := int64(x.Entries())
		// Beside its log, no more entries are listed than the log could
		// justify: a forged or sparse file of billions is not walked.
		if f.Log != "" {
			if b, ok := (inspect.SegmentFiles{Log: f.Log}).TxnIndexBound(); ok && n > b {
				res.TxnBound, n = b, b
			}
		}
		err = each(&res, int(n), x.Entry, v.Txn)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", f.Path, err)
	}
	return res, nil
}

// dumpSlots lists the slots of an offset or time index: every slot with
// all, else the valid ones (DumpLogSegments' padding rule).
func dumpSlots[E any](res *Result, slots int, valid func() (int, error), all bool, entry func(int) (E, error), fn func(int, E)) error {
	res.Slots = slots
	n, err := valid()
	if err != nil {
		return err
	}
	res.Valid = n
	if all {
		n = slots
	}
	return each(res, n, entry, fn)
}

func each[E any](res *Result, n int, entry func(int) (E, error), fn func(int, E)) error {
	for i := 0; i < n; i++ {
		e, err := entry(i)
		if err != nil {
			return err
		}
		fn(i, e)
		res.Listed++
	}
	return nil
}

package cmd

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
)

// epochEntryJSON is the leader-epoch-checkpoint entry an answer falls in.
type epochEntryJSON struct {
	Epoch       int32 `json:"epoch"`
	StartOffset int64 `json:"start_offset"`
}

// epochView answers "which leader epoch wrote this offset" from the
// partition's leader-epoch-checkpoint, as the broker's
// LeaderEpochFileCache.epochForOffset does over the cache it loads: the
// entry with the largest start offset <= offset. nil when the partition
// has no checkpoint or no entry that early; a checkpoint the broker could
// not load is reported once on stderr and gives nil.
type epochView struct {
	cp *sidefile.LeaderEpochCheckpoint
}

func newEpochView(ios *IOStreams, p *inspect.Partition) *epochView {
	f := p.LeaderEpochCheckpoint()
	switch {
	case !f.Present():
		return &epochView{}
	case f.Err != nil:
		ios.Warnf("%s: %v (no epoch_entry given; run kseg verify %s)", f.Path, f.Err, p.Dir)
		return &epochView{}
	}
	if err := f.Value.LoadErr(); err != nil {
		ios.Warnf("%s: %v (no epoch_entry given; run kseg verify %s)", f.Path, err, p.Dir)
		return &epochView{}
	}
	return &epochView{cp: f.Value}
}

func (v *epochView) entry(offset int64) *epochEntryJSON {
	if v.cp == nil {
		return nil
	}
	e, ok := v.cp.EntryFor(offset)
	if !ok {
		return nil
	}
	return &epochEntryJSON{e.Epoch, e.StartOffset}
}

// epochColumns are the leader-epoch view's fields for table and CSV.
func epochColumns[T any](epoch func(T) int32, entry func(T) *epochEntryJSON) []column[T] {
	return []column[T]{
		intColumn("leader_epoch", epoch),
		nullableIntColumn("epoch_entry.epoch", func(t T) *int32 {
			if e := entry(t); e != nil {
				return &e.Epoch
			}
			return nil
		}),
		nullableIntColumn("epoch_entry.start_offset", func(t T) *int64 {
			if e := entry(t); e != nil {
				return &e.StartOffset
			}
			return nil
		}),
	}
}

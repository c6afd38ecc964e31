package groups

import (
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
)

// Report is kseg groups' answer: the committed offsets replayed from a
// target's __consumer_offsets partitions (in name order), and the
// partitions whose damage cut the replay short (each a *CorruptError:
// the offsets after the damage in that segment are not applied).
type Report struct {
	*State
	Damaged []error
	leos    *EndOffsets
}

// Groups replays the __consumer_offsets partitions of t (ErrNoPartitions
// when it has none). Damage does not stop it: the offsets before the
// damage stand, and the damage is in Damaged; any other error does.
func Groups(t *inspect.Target, opts Options) (*Report, error) {
	parts := Partitions(t)
	if len(parts) == 0 {
		return nil, ErrNoPartitions
	}
	inspect.SortPartitions(parts)
	r := &Report{State: NewState(), leos: NewEndOffsets(t.DataDir)}
	for _, p := range parts {
		if err := r.Load(p, opts); err != nil {
			if !fileio.IsCorrupt(err) {
				return nil, err
			}
			r.Damaged = append(r.Damaged, err)
		}
	}
	return r, nil
}

// Lagged is a committed offset with its consumed partition's log end
// offset and the lag behind it (Lag), when the target's data directory
// holds that partition; EndOffsetErr when its end could not be read.
type Lagged struct {
	Offset
	LogEndOffset *int64
	Lag          *int64
	EndOffsetErr error
}

// EachLagged calls fn with each committed offset, in group order, with
// its lag; it returns the number of groups seen, or fn's error.
func (r *Report) EachLagged(fn func(Lagged) error) (groups int, err error) {
	group := ""
	err = r.EachOffset(func(o Offset) error {
		if groups == 0 || o.Group != group {
			groups, group = groups+1, o.Group // sorted by group
		}
		l := Lagged{Offset: o}
		if leo, ok, err := r.leos.Of(o.Topic, o.Partition); err != nil {
			l.EndOffsetErr = err
		} else if ok {
			l.LogEndOffset, l.Lag = &leo, Lag(o, leo)
		}
		return fn(l)
	})
	return groups, err
}

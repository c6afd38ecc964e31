// Package replica compares two replicas of one partition, offline: which
// records exist on one side only or differ, and where one replica would
// truncate as a follower of the other by the leader-epoch protocol. It is
// the library behind `kseg diff`.
package replica

import (
	"sort"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Undefined values of the OffsetsForLeaderEpoch protocol
// (OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET).
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// EpochCache is a replica's leader epoch cache (LeaderEpochFileCache):
// entries with strictly increasing epochs and start offsets.
type EpochCache []sidefile.EpochEntry

// Latest is the cache's latest epoch, ok false when it is empty.
func (c EpochCache) Latest() (int32, bool) {
	if len(c) == 0 {
		return UndefinedEpoch, false
	}
	return c[len(c)-1].Epoch, true
}

// EndOffsetFor is LeaderEpochFileCache.endOffsetFor: the answer a replica
// whose log ends at logEndOffset gives to OffsetsForLeaderEpoch for
// requested. For its latest epoch it answers its log end offset; for an
// older one, the largest epoch <= requested it knows (requested itself
// when it knows none that old) and the start offset of the first epoch
// after requested; for an epoch newer than any it knows, or undefined,
// (UndefinedEpoch, UndefinedEpochOffset).
func (c EpochCache) EndOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	latest, ok := c.Latest()
	switch {
	case requested == UndefinedEpoch:
		return UndefinedEpoch, UndefinedEpochOffset
	case ok && latest == requested:
		return requested, logEndOffset
	}
	// higherEntry: the first entry with an epoch > requested, by binary
	// search (epochs increase in the cache, as in the broker's TreeMap).
	hi := sort.Search(len(c), func(i int) bool { return c[i].Epoch > requested })
	if hi == len(c) {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	if hi == 0 {
		// floorEntry is null: every epoch known is newer.
		return requested, c[0].StartOffset
	}
	return c[hi-1].Epoch, c[hi].StartOffset
}

// TruncateFromEnd is LeaderEpochFileCache.truncateFromEnd: it removes the
// entries starting at or after endOffset (the log was truncated there).
func (c EpochCache) TruncateFromEnd(endOffset int64) EpochCache {
	i := len(c)
	for i > 0 && c[i-1].StartOffset >= endOffset {
		i--
	}
	return c[:i:i]
}

// CacheFromBatches builds the cache a broker builds while it appends (or
// recovers) batches: LeaderEpochFileCache.assign(batch.partitionLeaderEpoch,
// batch.baseOffset) for each v2 batch with an epoch, which adds an entry
// only for an epoch newer than the latest (UnifiedLog.appendAsFollower,
// LogSegment.recover).
func CacheFromBatches(p *inspect.Partition) (EpochCache, error) {
	var c EpochCache
	err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		b := w.Batch
		if b.Magic < 2 || b.PartitionLeaderEpoch < 0 {
			return nil
		}
		if latest, ok := c.Latest(); !ok || b.PartitionLeaderEpoch > latest {
			c = append(c, sidefile.EpochEntry{Epoch: b.PartitionLeaderEpoch, StartOffset: b.BaseOffset})
		}
		return nil
	})
	return c, err
}

// Round is one OffsetsForLeaderEpoch exchange of a follower with its
// leader, and what the follower did with the answer.
type Round struct {
	RequestedEpoch  int32 // the follower's latest epoch
	LeaderEpoch     int32 // the epoch the leader answered with
	LeaderEndOffset int64 // its end offset
	// TruncateTo is where the follower truncated after this round; Final
	// says truncation was complete (otherwise it asks again with its new
	// latest epoch, KIP-279).
	TruncateTo int64
	Final      bool
	// NoHighWatermark: the round sends the follower to its high watermark
	// (an undefined answer, or a follower without epochs), and none is
	// checkpointed: the round is the last and TruncateTo means nothing.
	NoHighWatermark bool
}

// Side is what the truncation protocol knows of one replica.
type Side struct {
	Epochs       EpochCache
	LogEndOffset int64
	// HighWatermark, when known (replication-offset-checkpoint), is where
	// a follower truncates when epochs cannot answer.
	HighWatermark *int64
}

// Truncation computes where follower truncates as a follower of leader,
// as AbstractFetcherThread does (truncateToEpochEndOffsets,
// getOffsetTruncationState; KIP-101, KIP-279):
//
//   - the follower sends its latest epoch; the leader answers with
//     EndOffsetFor over its cache and log end offset;
//   - an undefined end offset (the leader knows no such epoch, or the
//     follower has none): truncate to the follower's high watermark;
//   - an undefined epoch with an end offset: truncate to
//     min(end offset, follower log end offset);
//   - else the follower looks the leader's epoch up in its own cache: when
//     it does not know that epoch, it truncates to the end offset of the
//     largest epoch below it (and its own log end offset) and asks again
//     with its new latest epoch; when it does, it truncates to
//     min(its end offset for the epoch, the leader's end offset, its log
//     end offset), and is done.
//
// ok is false when no truncation point follows (the protocol sends the
// follower to its high watermark, and it has none): the last round then
// says so (NoHighWatermark).
func Truncation(follower, leader Side) (offset int64, rounds []Round, ok bool) {
	cache, leo := follower.Epochs, follower.LogEndOffset
	toHighWatermark := func(r Round) (int64, []Round, bool) {
		if follower.HighWatermark == nil {
			r.Final, r.NoHighWatermark = true, true
			return 0, append(rounds, r), false
		}
		r.TruncateTo, r.Final = min(*follower.HighWatermark, leo), true
		return r.TruncateTo, append(rounds, r), true
	}
	for {
		requested, has := cache.Latest()
		if !has {
			// A follower without epochs (old message format, new broker)
			// truncates to its high watermark (pre-KIP-101 behaviour).
			return toHighWatermark(Round{RequestedEpoch: UndefinedEpoch, LeaderEpoch: UndefinedEpoch, LeaderEndOffset: UndefinedEpochOffset})
		}
		le, lo := leader.Epochs.EndOffsetFor(requested, leader.LogEndOffset)
		r := Round{RequestedEpoch: requested, LeaderEpoch: le, LeaderEndOffset: lo}
		switch {
		case lo == UndefinedEpochOffset:
			return toHighWatermark(r)
		case le == UndefinedEpoch:
			r.TruncateTo, r.Final = min(lo, leo), true
			return r.TruncateTo, append(rounds, r), true
		}
		fe, fo := cache.EndOffsetFor(le, leo)
		switch {
		case fo == UndefinedEpochOffset:
			// The follower did not track epochs that far back.
			r.TruncateTo, r.Final = min(lo, leo), true
		case fe != le:
			r.TruncateTo = min(fo, leo)
			rounds = append(rounds, r)
			leo = r.TruncateTo
			cache = cache.TruncateFromEnd(leo)
			continue
		default:
			r.TruncateTo, r.Final = min(fo, lo, leo), true
		}
		return r.TruncateTo, append(rounds, r), true
	}
}

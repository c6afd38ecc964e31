//go:build race

package cmd

// limRace: the race detector is on. It makes a pass over millions of
// batches take minutes, so TestLimitIndexesAtCapacity leaves its
// whole-partition commands to runs without it (make test RACE=).
const limRace = true

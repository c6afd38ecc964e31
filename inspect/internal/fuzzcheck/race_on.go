//go:build race

package fuzzcheck

// RaceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts of pooled codec paths are not meaningful under -race.
const RaceEnabled = true

//go:build race

package record

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts of pooled codec paths are not meaningful under -race.
const raceEnabled = true

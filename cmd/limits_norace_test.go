//go:build !race

package cmd

// limRace: the race detector is off (see limits_race_test.go).
const limRace = false

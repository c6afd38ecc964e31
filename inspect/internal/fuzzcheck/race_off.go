//go:build !race

package fuzzcheck

const RaceEnabled = false

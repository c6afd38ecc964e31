package verify

import (
	"fmt"
	"testing"
)

// TestLendCores: a read-ahead goes to the last workers-1 segments only (a
// core no other job would use), never with one worker or when turned off,
// to every segment when a test asks, and never to a side-file job.
func TestLendCores(t *testing.T) {
	// Two partitions of three segments, each followed by its side files.
	shape := func() []*segmentJob {
		var jobs []*segmentJob
		for range 2 {
			for range 3 {
				jobs = append(jobs, &segmentJob{})
			}
			jobs = append(jobs, &segmentJob{side: true})
		}
		return jobs
	}
	for _, c := range []struct {
		workers int
		min     int64
		want    string
	}{
		{1, 0, "...-...-"},
		{2, 0, "...-..a-"},
		{3, 0, "...-.aa-"},
		{8, 0, "aaa-aaa-"},
		{2, -1, "...-...-"},
		{1, 1, "aaa-aaa-"},
	} {
		jobs := shape()
		lendCores(jobs, c.workers, c.min)
		got := ""
		for _, j := range jobs {
			switch {
			case j.side && j.ahead:
				got += "!"
			case j.side:
				got += "-"
			case j.ahead:
				got += "a"
			default:
				got += "."
			}
		}
		if got != c.want {
			t.Errorf("%s: got %s, want %s", fmt.Sprintf("workers %d, readAheadMin %d", c.workers, c.min), got, c.want)
		}
	}
}

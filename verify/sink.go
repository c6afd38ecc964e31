package verify

import (
	"fmt"
	"sort"
	"strings"
)

// sink collects one segment's findings, at most max per file and check
// (a damaged file must not make memory grow with its size): past the
// limit they are counted, and one closing finding of the same check says
// how many were left out.
type sink struct {
	max   int // < 0: no limit
	list  []Finding
	next  []Finding // findings about the next segment (segment.overlap)
	count map[capKey]int
	over  map[capKey]*overflow
}

type capKey struct{ file, check string }

type overflow struct {
	n     int
	first Finding
}

func newSink(max int) *sink {
	return &sink{max: max, count: map[capKey]int{}, over: map[capKey]*overflow{}}
}

func (s *sink) add(f Finding) {
	k := capKey{f.File, f.Check}
	if s.max >= 0 && s.count[k] >= s.max {
		if o := s.over[k]; o != nil {
			o.n++
		} else {
			s.over[k] = &overflow{n: 1, first: f}
		}
		return
	}
	s.count[k]++
	s.list = append(s.list, f)
}

func (s *sink) addNext(f Finding) { s.next = append(s.next, f) }

// hasError reports whether an error finding was made about file.
func (s *sink) hasError(file string) bool {
	for k, n := range s.count {
		if k.file == file && n > 0 && Severity(k.check) == SeverityError {
			return true
		}
	}
	return false
}

// has reports whether a finding with the given check was made about file.
func (s *sink) has(file, check string) bool { return s.count[capKey{file, check}] > 0 }

// findings returns the findings in their stable order (see sortFindings),
// with the closing findings for checks over the limit.
func (s *sink) findings() []Finding {
	out := s.list
	keys := make([]capKey, 0, len(s.over))
	for k := range s.over {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].check < keys[j].check
	})
	for _, k := range keys {
		o := s.over[k]
		f := o.first
		f.Message = overflowMessage(o.n, k.check, s.max, f.Message)
		out = append(out, f)
	}
	sortFindings(out)
	return out
}

// overflowMessage is the closing finding's message: n more findings of
// check were left out past the limit max, the first of them saying first.
func overflowMessage(n int, check string, max int, first string) string {
	return fmt.Sprintf("%d more %s findings in this file are not listed (limit %d per file and check); the first of them: %s", n, check, max, first)
}

// fileRank orders a segment's files: the .log, then the offset, time and
// transaction indexes, then anything else.
func fileRank(file string) int {
	switch {
	case strings.HasSuffix(file, ".log"):
		return 0
	case strings.HasSuffix(file, ".index"):
		return 1
	case strings.HasSuffix(file, ".timeindex"):
		return 2
	case strings.HasSuffix(file, ".txnindex"):
		return 3
	}
	return 4
}

// sortFindings orders one segment's findings by file (.log, .index,
// .timeindex, .txnindex), then position (findings without one first),
// keeping the order in which they were made otherwise.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if ra, rb := fileRank(a.File), fileRank(b.File); ra != rb {
			return ra < rb
		}
		if a.File != b.File {
			return a.File < b.File
		}
		switch {
		case a.Position == nil && b.Position == nil:
			return false
		case a.Position == nil:
			return true
		case b.Position == nil:
			return false
		}
		return *a.Position < *b.Position
	})
}

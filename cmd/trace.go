package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fatih/color"

	"github.com/kseg/kseg/inspect"
)

// The --trace story: a lookup's steps (inspect.TraceStep, the JSON "trace"
// array) told under the answer's table as numbered paragraphs, so that the
// output itself explains how a broker finds a record:
//
//	trace: how a broker serves a fetch from offset 1500
//	 1. segment  00000000000000001060.log chosen among 3: the largest base offset <= 1500
//	             base offsets: 0 [1060] 2132
//	 2. offset index  binary search for the largest entry <= 1500 (AbstractIndex.largestLowerBoundSlotFor)
//	             slot 0   offset 1117  <  warm check: past the first warm slot, the search stays in the warm section ...
//	             ...
//	          => offset index slot 7: offset 1491 at position 35122
//	 3. scan     batch headers from byte position 35122 (FileRecords.searchForOffsetWithSize)
//	             position 35122  offsets 1486..1491  last offset 1491 < 1500: skip
//	             ...
//	 => a fetch from offset 1500 returns ...
//
// The words are the steps' messages (TraceStep.Message) and fields; only the
// layout is made here. Lines are escaped, then coloured when stdout takes colour.

// storyIndent lines up the text after a paragraph's number and label.
const storyIndent = "             "

type story struct {
	ios     *IOStreams
	lines   []string
	n       int    // paragraphs so far
	segment string // the segment of the last "segment" step
	// targets are what an "offset" or "time" index search looks for when
	// the steps do not say it (absent when unknown).
	targets map[string]string
}

func (s *story) paint(text string, attrs ...color.Attribute) string {
	text = escapeControl(text)
	if len(attrs) == 0 || !s.ios.ColorEnabled() {
		return text
	}
	return s.ios.outColor(attrs...).Sprint(text)
}

// para starts a numbered paragraph: " 2. label   text".
func (s *story) para(label, text string) {
	s.n++
	head := fmt.Sprintf("%2d. %-9s", s.n, label)
	s.lines = append(s.lines, " "+s.paint(head, color.Bold)+" "+s.paint(text))
}

// more adds an indented line to the current paragraph.
func (s *story) more(text string, attrs ...color.Attribute) {
	s.lines = append(s.lines, storyIndent+s.paint(text, attrs...))
}

// traceStory tells steps as a story under a title; conclusion, when not
// empty, ends it. p gives the segments' base offsets; targets the key an
// "offset" or "time" index is searched for, where the steps do not tell.
// Nothing is told without steps or outside the table format (JSON has the
// "trace" array; CSV has no room for it).
func traceStory(ios *IOStreams, title string, p *inspect.Partition, steps []inspect.TraceStep, targets map[string]string, conclusion string) []string {
	if len(steps) == 0 || !ios.IsTable() {
		return nil
	}
	s := &story{ios: ios, targets: targets}
	s.lines = append(s.lines, "", s.paint("trace: "+title, color.Bold))
	for i := 0; i < len(steps); {
		st := steps[i]
		switch st.Step {
		case "segment":
			s.segment = st.Segment
			s.para("segment", strings.TrimPrefix(st.Message(), "segment "))
			if bases := baseOffsetsLine(p, st.Segment); bases != "" {
				s.more(bases, color.Faint)
			}
			i++
		case "probe":
			j := i
			for j < len(steps) && steps[j].Step == "probe" && steps[j].Index == st.Index {
				j++
			}
			tgt := target(steps, i)
			if tgt == "" {
				tgt = s.targets[st.Index]
			}
			s.probes(steps[i:j], tgt)
			i = j
		case "index_entry":
			s.lines = append(s.lines, "          "+s.paint("=> "+st.Message(), color.FgCyan))
			i++
		case "batch":
			j := i
			for j < len(steps) && steps[j].Step == "batch" {
				j++
			}
			s.batches(steps[i:j])
			i = j
		default:
			s.para("note", st.Message())
			i++
		}
	}
	if conclusion != "" {
		s.lines = append(s.lines, " "+s.paint("=> "+conclusion, color.FgGreen, color.Bold))
	}
	return s.lines
}

// baseOffsetsLine lists the partition's segments by base offset around
// the chosen one, which is bracketed: "base offsets: 0 [1060] 2132".
func baseOffsetsLine(p *inspect.Partition, chosen string) string {
	if p == nil || len(p.Segments) < 2 {
		return ""
	}
	at := -1
	for i, sf := range p.Segments {
		if sf.Name() == chosen {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	lo, hi := max(0, at-3), min(len(p.Segments), at+4)
	var b strings.Builder
	b.WriteString("base offsets:")
	if lo > 0 {
		fmt.Fprintf(&b, " ... (%d more)", lo)
	}
	for i := lo; i < hi; i++ {
		if i == at {
			fmt.Fprintf(&b, " [%d]", p.Segments[i].BaseOffset)
		} else {
			fmt.Fprintf(&b, " %d", p.Segments[i].BaseOffset)
		}
	}
	if hi < len(p.Segments) {
		fmt.Fprintf(&b, " ... (%d more)", len(p.Segments)-hi)
	}
	return b.String()
}

// target is what the probes starting at steps[i] compare with, as far as
// the steps tell: "" when they do not. An offset index searched in a time
// lookup looks for the offset a time-index entry is first reached by, the
// base offset when no entry was <= the timestamp, or the offset of the
// segment's largest timestamp (a max lookup).
func target(steps []inspect.TraceStep, i int) string {
	if steps[i].Index == "offset" {
		for j := i - 1; j >= 0; j-- {
			switch steps[j].Why {
			case inspect.WhyTimeEntry, inspect.WhyGreatestMaxTS, inspect.WhyNoTimeEntryBelow:
				return strconv.FormatInt(steps[j].Offset, 10)
			}
		}
	}
	return ""
}

// probes tells one binary search.
func (s *story) probes(ps []inspect.TraceStep, tgt string) {
	key, name, sfx := "offset", "offset index", inspect.IndexSuffix
	if ps[0].Index == "time" {
		key, name, sfx = "timestamp", "time index", inspect.TimeIndexSuffix
	}
	if base, err := inspect.ParseBaseOffset(s.segment); err == nil {
		name += " " + inspect.SegmentName(base) + sfx
	}
	what := "the target"
	if tgt != "" {
		what = tgt
	} else {
		tgt = "target"
	}
	s.para("index", fmt.Sprintf("%s: binary search for the largest entry <= %s (AbstractIndex.indexSlotRangeFor), %s:", name, what, count(len(ps), "probe")))
	rows := make([][3]string, len(ps))
	width := [2]int{}
	for i, p := range ps {
		slot, k, c := -1, int64(0), 0
		if p.Slot != nil {
			slot = *p.Slot
		}
		if p.Key != nil {
			k = *p.Key
		}
		if p.Compare != nil {
			c = *p.Compare
		}
		rel := map[int]string{-1: "<", 0: "=", 1: ">"}[c]
		rows[i] = [3]string{fmt.Sprintf("slot %d", slot), fmt.Sprintf("%s %d %s %s", key, k, rel, tgt), probeMeaning(ps[0].Index, p.Phase, slot, c)}
		width[0] = max(width[0], len(rows[i][0]))
		width[1] = max(width[1], len(rows[i][1]))
	}
	for _, r := range rows {
		s.more(fmt.Sprintf("%-*s  %-*s  %s", width[0], r[0], width[1], r[1], r[2]))
	}
}

// probeMeaning says what one comparison of the broker's search decides.
func probeMeaning(index, phase string, slot, cmp int) string {
	switch phase {
	case "warm-check":
		where := fmt.Sprintf("slots %d.. are the warm section (the last 8 KiB of entries, whose pages recent reads keep cached)", slot)
		if slot == 0 {
			where = "the index is small enough to be all warm (8 KiB of entries or less)"
		}
		if cmp < 0 {
			return "warm check: the target is past it, so only the warm section is searched; " + where
		}
		return "warm check: the target is not past it, so the cold section is searched; " + where
	case "first-check":
		if cmp > 0 && index == "time" {
			return "the target is below the first entry: no entry <= target, the search goes on from the base offset"
		}
		if cmp > 0 {
			return "the target is below the first entry: no entry <= target, the scan starts at position 0"
		}
		return "the first entry is <= the target: the cold section (slot 0 up to the warm section) is searched"
	}
	section := phase + " section"
	switch {
	case cmp > 0:
		return section + ": above the target, look lower"
	case cmp < 0:
		return section + ": below the target, look higher"
	}
	return section + ": exact match, stop"
}

// batches tells a scan of batch headers.
func (s *story) batches(bs []inspect.TraceStep) {
	from := int64(0)
	if bs[0].Position != nil {
		from = *bs[0].Position
	}
	s.para("scan", fmt.Sprintf("batch headers from byte position %d (FileLogInputStream: 61 bytes each, no record read), %s:", from, count(len(bs), "batch")))
	rows := make([][3]string, len(bs))
	width := [2]int{}
	for i, b := range bs {
		var pos, base, last int64
		if b.Position != nil {
			pos = *b.Position
		}
		if b.BaseOffset != nil {
			base = *b.BaseOffset
		}
		if b.LastOffset != nil {
			last = *b.LastOffset
		}
		verdict := b.Verdict()
		rows[i] = [3]string{fmt.Sprintf("position %d", pos), fmt.Sprintf("offsets %d..%d", base, last), verdict}
		width[0] = max(width[0], len(rows[i][0]))
		width[1] = max(width[1], len(rows[i][1]))
	}
	for i, r := range rows {
		var attrs []color.Attribute
		if i == len(rows)-1 && !strings.HasSuffix(r[2], "skip") {
			attrs = []color.Attribute{color.FgGreen}
		} else {
			attrs = []color.Attribute{color.Faint}
		}
		s.more(fmt.Sprintf("%-*s  %-*s  %s", width[0], r[0], width[1], r[1], r[2]), attrs...)
	}
}

// count is "1 batch", "3 batches", "2 probes", "2 entries": the noun
// agrees with the number (the last word of a phrase takes the plural).
func count[N ~int | ~int64](n N, word string) string {
	switch {
	case n == 1:
		return "1 " + word
	case strings.HasSuffix(word, "ch"):
		return fmt.Sprintf("%d %ses", n, word)
	case strings.HasSuffix(word, "y") && !strings.ContainsRune("aeiou", rune(word[max(len(word)-2, 0)])):
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// offsetTarget is the targets of an offset lookup's story.
func offsetTarget(offset int64) map[string]string {
	return map[string]string{"offset": strconv.FormatInt(offset, 10)}
}

// timeTarget is the targets of a timestamp lookup's story: the time index
// is searched for the timestamp (the special targets search no index).
func timeTarget(ts int64) map[string]string {
	if ts < 0 {
		return nil
	}
	return map[string]string{"time": strconv.FormatInt(ts, 10)}
}

package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Numbers for people, in tables only: JSON and CSV keep the raw values.
// Offsets and positions are never humanised (they must be copyable into
// the next command); sizes, counts and times are.

// humanTimeLayout is humanTime's layout, which zoned parses back.
const humanTimeLayout = "2006-01-02T15:04:05.000Z"

// zoned is a table's reading aid h in the zone the user asked for: a time
// humanTime wrote (UTC) is shown in the local time zone with --local;
// anything else is returned as it is.
func (s *IOStreams) zoned(h string) string {
	if !s.local {
		return h
	}
	t, err := time.Parse(humanTimeLayout, h)
	if err != nil {
		return h
	}
	return t.Local().Format("2006-01-02T15:04:05.000Z07:00")
}

// timeText is ms since the epoch as an RFC 3339 time with milliseconds, in
// UTC (or the local zone with --local), or "-" when there is none
// (Kafka's -1, or past the year 9999).
func (s *IOStreams) timeText(ms int64) string {
	h := humanTime(ms)
	if h == "" {
		return "-"
	}
	return s.zoned(h)
}

// optTimeText is timeText for a timestamp that may be absent.
func (s *IOStreams) optTimeText(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return s.timeText(*ms)
}

// humanSize is a byte count in IEC units with one decimal (3.3 MiB), or in
// bytes below 1 KiB (512 B).
func humanSize(n int64) string {
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		v /= 1024
		if v < 1024 && v > -1024 || unit == "PiB" {
			return fmt.Sprintf("%.1f %s", v, unit)
		}
	}
	return "" // not reached
}

// groupCount is a count with its thousands grouped by commas (1,234,567).
func groupCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// optCount is groupCount for a count that may not have been read: "-"
// then, never a blank that reads as zero.
func optCount[N ~int | ~int64](n *N) string {
	if n == nil {
		return "-"
	}
	return groupCount(int64(*n))
}

// humanDuration is d rounded for people: 850ms, 4.2s, 3m10s, 5h2m, 3d4h.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Round(time.Second)
		return twoUnits(int(d.Minutes()), "m", int(d.Seconds())%60, "s")
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return twoUnits(int(d.Hours()), "h", int(d.Minutes())%60, "m")
	default:
		d = d.Round(time.Hour)
		return twoUnits(int(d.Hours())/24, "d", int(d.Hours())%24, "h")
	}
}

// twoUnits is "3m10s", or "3m" when the second part is zero.
func twoUnits(a int, ua string, b int, ub string) string {
	if b == 0 {
		return strconv.Itoa(a) + ua
	}
	return strconv.Itoa(a) + ua + strconv.Itoa(b) + ub
}

// ago is how long before now the time ms was, for people ("3h ago"), or
// "in the future" for a time after now.
func (s *IOStreams) ago(ms int64) string {
	d := s.now().Sub(time.UnixMilli(ms))
	if d < 0 {
		return "in the future"
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	default:
		return fmt.Sprintf("%dy ago", int(d.Hours()/24/365))
	}
}

// rate is n bytes over d for people (412.3 MiB/s), or "" when d is zero.
func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return humanSize(int64(float64(n)/d.Seconds())) + "/s"
}

// countOf is count (trace.go) with the number grouped: "1,234 batches".
func countOf[N ~int | ~int64](n N, word string) string {
	if n == 1 {
		return count(1, word)
	}
	return groupCount(int64(n)) + strings.TrimPrefix(count(2, word), "2")
}

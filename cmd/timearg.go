package cmd

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
)

// now is the clock relative times count back from (a variable so tests
// can fix it).
var now = time.Now

// timestampHelp lists the accepted TIMESTAMP forms, for error messages.
const timestampHelp = "milliseconds since the epoch, an RFC 3339 time, a date (2024-05-01, 2024-05-01T12:00), a relative time (-1h, -2d, now-30m), earliest, latest or max"

// dateLayouts are the date and date-time forms read as UTC when they carry
// no zone; RFC 3339 (with a zone) is tried first.
var dateLayouts = []string{
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTimestamp reads a TIMESTAMP argument as milliseconds since the
// epoch, or one of the special targets (inspect.TimestampEarliest,
// TimestampLatest, TimestampMax):
//
//	1700000000000               ms since the epoch
//	2023-11-14T22:13:20Z        RFC 3339 (any zone; fractions kept to the ms)
//	2023-11-14, 2023-11-14T22:13, 2023-11-14 22:13:20
//	                            date, date and time: UTC
//	-1h, -90m, -2d, -1w, -1h30m relative to now (units ms s m h d w)
//	now, now-1h                 the same, spelled from now
//	earliest, latest, max
func parseTimestamp(s string) (int64, error) {
	switch strings.ToLower(s) {
	case "earliest":
		return inspect.TimestampEarliest, nil
	case "latest":
		return inspect.TimestampLatest, nil
	case "max":
		return inspect.TimestampMax, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v < 0 {
			return 0, usageErrorf("TIMESTAMP must be >= 0 milliseconds (use earliest, latest or max for the special values, -1h for an hour ago), not %d", v)
		}
		return v, nil
	}
	if ms, ok, err := parseRelative(s); ok || err != nil {
		return ms, err
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return checkEpoch(s, t)
	}
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return checkEpoch(s, t)
		}
	}
	return 0, usageErrorf("TIMESTAMP must be %s, not %q", timestampHelp, s)
}

func checkEpoch(s string, t time.Time) (int64, error) {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, usageErrorf("TIMESTAMP %q is before 1970", s)
	}
	return ms, nil
}

// relativeTime matches "-1h", "-1h30m", "now", "now-2d" (case-insensitive).
var relativeTime = regexp.MustCompile(`^(?i:now)?(-(\d+(ms|s|m|h|d|w))+)?$`)

// relativePart is one number and unit of a relative time.
var relativePart = regexp.MustCompile(`(\d+)(ms|s|m|h|d|w)`)

var unitLengths = map[string]time.Duration{
	"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
	"d": 24 * time.Hour, "w": 7 * 24 * time.Hour,
}

// parseRelative reads a relative time. ok is false when s is not one.
func parseRelative(s string) (ms int64, ok bool, err error) {
	if s == "" || !relativeTime.MatchString(s) {
		return 0, false, nil
	}
	at := now()
	if i := strings.IndexByte(s, '-'); i >= 0 {
		var ago time.Duration
		for _, m := range relativePart.FindAllStringSubmatch(s[i:], -1) {
			n, err := strconv.ParseInt(m[1], 10, 64)
			unit := unitLengths[m[2]]
			if err != nil || n > int64(1<<62)/int64(unit) || ago > time.Duration(1<<62)-time.Duration(n)*unit {
				return 0, true, usageErrorf("TIMESTAMP %q reaches too far back", s)
			}
			ago += time.Duration(n) * unit
		}
		at = at.Add(-ago)
	}
	return checkEpochRelative(s, at)
}

func checkEpochRelative(s string, t time.Time) (int64, bool, error) {
	ms, err := checkEpoch(s, t)
	return ms, true, err
}

// protectRelativeTimes lets "kseg lookup-time PATH -1h" work: the flag
// parser would read -1h as the shorthand flags -1 and -h, so before
// parsing, a relative-time argument of lookup-time (before any "--") is
// rewritten to its "now-1h" spelling. No flag of kseg is a digit, so such
// an argument can never have been meant as a flag.
func protectRelativeTimes(root *cobra.Command, args []string) []string {
	c, _, err := root.Find(args)
	if err != nil || c.Name() != "lookup-time" {
		return args
	}
	var out []string
	for i, a := range args {
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9' && relativeTime.MatchString(a) {
			if out == nil {
				out = slices.Clone(args)
			}
			out[i] = "now" + a
		}
	}
	if out == nil {
		return args
	}
	return out
}

// timestampOption is a flag whose value is a TIMESTAMP (parseTimestamp)
// at or after the epoch: --from-time, --to-time, groups' --at. Value is
// nil when the flag is not given.
type timestampOption struct {
	name, text string
	Value      *int64
	flags      *pflag.FlagSet // to tell a flag given from one left out
}

// AddFlag adds the flag name to f.
func (o *timestampOption) AddFlag(f *pflag.FlagSet, name, usage string) {
	o.name, o.flags = name, f
	f.StringVar(&o.text, name, "", usage)
}

// Validate parses the flag's value if it was given: a usage error names
// the flag when it is not a TIMESTAMP (or is before the epoch).
func (o *timestampOption) Validate() error {
	if !o.flags.Changed(o.name) {
		return nil
	}
	ts, err := parseTimestamp(o.text)
	if err != nil || ts < 0 {
		return usageErrorf("--%s must be milliseconds, an RFC 3339 time, a date or a relative time (-1h), not %q", o.name, o.text)
	}
	o.Value = &ts
	return nil
}

// timeWindowOptions is the --from-time/--to-time pair of dump-log, find
// and timeline; each command words the flags' help itself.
type timeWindowOptions struct{ From, To timestampOption }

// AddFlags adds --from-time and --to-time to f.
func (o *timeWindowOptions) AddFlags(f *pflag.FlagSet, fromUsage, toUsage string) {
	o.From.AddFlag(f, "from-time", fromUsage)
	o.To.AddFlag(f, "to-time", toUsage)
}

// Validate parses the flags given, --from-time first.
func (o *timeWindowOptions) Validate() error {
	if err := o.From.Validate(); err != nil {
		return err
	}
	return o.To.Validate()
}

package cmd

import (
	"fmt"
	"strings"
)

// OutputFormat is the value of -o: chosen once per run, read by the
// renderers below. Run functions hand rows to a lister and never branch on it.
type OutputFormat string

const (
	FormatTable OutputFormat = "table" // the columns an operator scans, fitted to the terminal (default)
	FormatWide  OutputFormat = "wide"  // a table of every field of the JSON form
	FormatJSON  OutputFormat = "json"  // JSON Lines: one object per line
	FormatCSV   OutputFormat = "csv"   // RFC 4180, header row first
	FormatJUnit OutputFormat = "junit" // JUnit XML (verify only)
)

// outputFormats lists the valid values of -o in the order help shows them.
var outputFormats = []OutputFormat{FormatTable, FormatWide, FormatJSON, FormatCSV, FormatJUnit}

// String, Set and Type make *OutputFormat a pflag.Value, so a bad -o value
// is rejected while flags are parsed (exit 2), before any work.
func (f *OutputFormat) String() string { return string(*f) }

func (f *OutputFormat) Set(s string) error {
	for _, v := range outputFormats {
		if s == string(v) {
			*f = v
			return nil
		}
	}
	return fmt.Errorf("valid values are %s", formatList())
}

func (f *OutputFormat) Type() string { return "format" }

func formatList() string {
	names := make([]string, len(outputFormats))
	for i, v := range outputFormats {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

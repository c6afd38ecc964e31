package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// escapeControl replaces control characters, bidirectional-text controls
// and invalid UTF-8 with Go escapes (\n, \x1b, \u202e, \xff), so that text
// from disk (a record key, a file name) stays on one line and cannot drive
// the terminal or reorder what is shown. Clean text is returned as is.
func escapeControl(s string) string { return escapeText(s, false) }

// escapeMessage is escapeControl for a message that may span lines (cobra's
// suggestions): newlines and tabs are kept.
func escapeMessage(s string) string { return escapeText(s, true) }

func escapeText(s string, keepLines bool) string {
	unsafe := func(r rune) bool {
		if keepLines && (r == '\n' || r == '\t') {
			return false
		}
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
	}
	clean := true
	for i, r := range s {
		if unsafe(r) || (r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd")) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// The page: one HTML file with its style, script and data inline, so that
// it opens from a file or a mail attachment with nothing fetched.
var (
	//go:embed page/page.html
	pageHTML string
	//go:embed page/page.css
	pageCSS string
	//go:embed page/page.js
	pageJS string

	pageTemplate = template.Must(template.New("page").Parse(pageHTML))
)

// WriteHTML writes the page of r to w.
//
// The lines are embedded as one JSON array in a <script
// type="application/json"> element, encoded with encoding/json's HTML
// escaping (<, > and & as \u003c, \u003e, \u0026; U+2028 and U+2029
// escaped; invalid UTF-8 as U+FFFD), so no text of the data can close the
// element or open another; the page's script puts every string into the
// document as text. The Content-Security-Policy allows only the page's own
// style and script (by their hashes) and no fetch of any kind.
func WriteHTML(w io.Writer, r *Report) error {
	data, err := encodeLines(r.Lines)
	if err != nil {
		return err
	}
	title, version := "kseg report", ""
	if len(r.Lines) > 0 {
		if h, ok := r.Lines[0].(*HeaderLine); ok {
			title += ": " + strings.Join(h.Paths, " ")
			version = h.Version
		}
	}
	return pageTemplate.Execute(w, map[string]any{
		"Title":      title,
		"Version":    version,
		"CSS":        template.CSS(pageCSS),
		"Script":     template.JS(pageJS),
		"Data":       template.JS(data),
		"StyleHash":  hashSource(pageCSS),
		"ScriptHash": hashSource(pageJS),
	})
}

// encodeLines is the lines as a JSON array, HTML-safe (see WriteHTML).
func encodeLines(lines []Line) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	enc := json.NewEncoder(&b) // HTML escaping on
	for i, l := range lines {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(l); err != nil {
			return nil, fmt.Errorf("encoding the report's %T line: %w", l, err)
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// hashSource is a CSP source expression for an inline element's text.
func hashSource(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

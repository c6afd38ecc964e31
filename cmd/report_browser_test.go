package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// The page of kseg report is tested in a real headless Chromium, driven
// through the DevTools protocol (chromedp). Without a browser these tests
// fail and say how to install one; KSEG_SKIP_BROWSER=1 skips them (make
// test sets it when it finds no Chromium, as the README's Development
// section says; make check, which CI runs, clears it). KSEG_CHROMIUM
// names a Chrome or Chromium binary other than the one on PATH.

// chromiumPath finds the browser the tests drive.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("KSEG_SKIP_BROWSER") == "1" {
		t.Skip("KSEG_SKIP_BROWSER=1: the report page's browser tests are skipped (make check runs them)")
	}
	if p := os.Getenv("KSEG_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium to test kseg report's page in: install Debian's chromium (apt-get install chromium), " +
		"or set KSEG_CHROMIUM to a Chrome or Chromium binary; KSEG_SKIP_BROWSER=1 skips these tests (as the README's quick make test says)")
	return ""
}

// pageRun is one browser tab with the page loaded, and what it saw.
type pageRun struct {
	ctx      context.Context
	mu       sync.Mutex
	requests []string // every URL the page requested
	console  []string // console errors, exceptions, log entries of level error
}

func (r *pageRun) seen() (requests, console []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...), append([]string(nil), r.console...)
}

// openPage starts a headless Chromium with a fresh profile and loads file
// (a file:// URL), listening to its network requests and console before
// the load starts. The browser ends with the test.
func openPage(t *testing.T, file string, width, height int64) *pageRun {
	t.Helper()
	exe := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(int(width), int(height)),
	}
	// A bound on a hung browser, not a timed assertion.
	base, cancelTimeout := context.WithTimeout(context.Background(), 3*time.Minute)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc(); cancelTimeout() })
	r := &pageRun{ctx: ctx}
	// chromedp enables the Runtime, Log and Network domains of a tab: its
	// console calls, exceptions, log entries (a CSP violation, a failed
	// load) and requests all come here.
	err := chromedp.Listen(ctx, func(ev any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			r.requests = append(r.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				r.console = append(r.console, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			r.console = append(r.console, fmt.Sprintf("exception: %s at %s:%d", d.Text, d.URL, d.LineNumber+1))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				r.console = append(r.console, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	u := (&url.URL{Scheme: "file", Path: file}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`))); err != nil {
		t.Fatalf("loading %s in %s: %v", u, exe, err)
	}
	return r
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, r *pageRun, expr string) T {
	t.Helper()
	v, err := chromedp.Run(r.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// checkClean fails the test on any request but the page itself, and on
// any console error, warning or exception (a CSP violation among them).
func (r *pageRun) checkClean(t *testing.T, file string) {
	t.Helper()
	// Events may trail the last action a little: a round trip first.
	eval[bool](t, r, "true")
	requests, console := r.seen()
	page := (&url.URL{Scheme: "file", Path: file}).String()
	for _, u := range requests {
		if u != page {
			t.Errorf("the page requested %s", u)
		}
	}
	if len(requests) == 0 {
		t.Errorf("no request seen at all: the network events were not listened to")
	}
	for _, c := range console {
		t.Errorf("console: %s", c)
	}
}

// reportLines runs kseg report -o json and returns its lines by kind.
func reportLines(t *testing.T, args ...string) (all []map[string]any, byKind map[string][]map[string]any) {
	t.Helper()
	out, stderr, code := runKseg(t, nil, append([]string{"report", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("kseg report -o json: exit %d: %s", code, stderr)
	}
	byKind = map[string][]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a line that is not JSON: %v: %.200s", err, sc.Text())
		}
		all = append(all, m)
		k, _ := m["kind"].(string)
		byKind[k] = append(byKind[k], m)
	}
	return all, byKind
}

// writeReport runs kseg report --html into a temporary file.
func writeReport(t *testing.T, args ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.html")
	if _, stderr, code := runKseg(t, nil, append([]string{"report", "--html", file}, args...)...); code != 0 {
		t.Fatalf("kseg report: exit %d: %s", code, stderr)
	}
	return file
}

// sectionView is what the page shows of a section.
type sectionView struct {
	ID      string `json:"id"`
	Class   string `json:"class"`
	Command string `json:"cmd"`
	Rows    int    `json:"rows"`   // rows of its first table
	Charts  int    `json:"charts"` // charts drawn
}

// sectionsShown lists the page's sections with the rows of their first
// table and their charts.
func sectionsShown(t *testing.T, r *pageRun) []sectionView {
	return eval[[]sectionView](t, r, `[...document.querySelectorAll('main section')].map(s => ({
		id: s.id, class: s.className, cmd: s.querySelector('.cmd code').textContent,
		rows: s.querySelector('table') ? s.querySelector('table tbody').rows.length : 0,
		charts: s.querySelectorAll('.chart svg').length}))`)
}

// tableRows is the text of each cell of each row a table shows.
func tableRows(t *testing.T, r *pageRun, id string) [][]string {
	return eval[[][]string](t, r, `[...document.querySelectorAll('#`+id+` tbody tr')].map(tr => [...tr.cells].map(td => td.textContent))`)
}

func countText(n float64) string { return groupCount(int64(n)) }

// The page loads from a file with no console message and no request but
// itself, every section is drawn with its command, the numbers shown are
// those of -o json, the filters change the findings shown, and a
// finding's link opens its partition's row.
func TestReportPageInBrowser(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), true)
	_, byKind := reportLines(t, reportAt, dir)
	file := writeReport(t, reportAt, dir)
	r := openPage(t, file, 1280, 900)

	shown := sectionsShown(t, r)
	if len(shown) != len(byKind["section"]) {
		t.Fatalf("%d sections drawn, %d in the data", len(shown), len(byKind["section"]))
	}
	rowsOf := map[string]int{}
	for i, s := range byKind["section"] {
		want := sectionView{ID: "sec-" + s["id"].(string), Class: "absent", Command: s["command"].(string)}
		if s["present"].(bool) {
			want.Class = "present"
		}
		got := shown[i]
		if got.ID != want.ID || got.Class != want.Class || got.Command != want.Command {
			t.Errorf("section %d: %+v, want %+v", i, got, want)
		}
		if want.Class == "present" && got.Rows == 0 && got.Charts == 0 {
			t.Errorf("section %s drew no table and no chart", got.ID)
		}
		rowsOf[got.ID] = got.Rows
	}

	// The header's totals.
	head := byKind["report"][0]
	for key, want := range map[string]string{"partitions": countText(head["partitions"].(float64)), "segments": countText(head["segments"].(float64)),
		"errors": countText(head["errors"].(float64)), "warnings": countText(head["warnings"].(float64)), "infos": countText(head["infos"].(float64))} {
		if got := eval[string](t, r, `document.getElementById('sum-`+key+`').textContent`); got != want {
			t.Errorf("%s: the page says %q, -o json %s", key, got, want)
		}
	}

	// The partitions, in the data's order: name, status, findings.
	parts := tableRows(t, r, "partitions-table")
	if len(parts) != len(byKind["partition"]) {
		t.Fatalf("%d partition rows, %d partitions", len(parts), len(byKind["partition"]))
	}
	for i, p := range byKind["partition"] {
		got := parts[i]
		if got[0] != p["name"] || got[6] != p["status"] || got[7] != countText(p["errors"].(float64)) || got[8] != countText(p["warnings"].(float64)) ||
			got[3] != fmt.Sprint(p["next_offset"]) {
			t.Errorf("partition row %v, data %v", got, p)
		}
	}

	// The findings: errors and warnings shown at first, info left out.
	findings := byKind["finding"]
	var errorsWarnings []map[string]any
	for _, f := range findings {
		if f["severity"] != "info" {
			errorsWarnings = append(errorsWarnings, f)
		}
	}
	rows := tableRows(t, r, "findings-table")
	if len(rows) != len(errorsWarnings) {
		t.Fatalf("%d finding rows, %d errors and warnings", len(rows), len(errorsWarnings))
	}
	for i, f := range errorsWarnings {
		pos := ""
		if f["position"] != nil {
			pos = fmt.Sprint(f["position"])
		}
		if rows[i][0] != f["severity"] || rows[i][1] != f["check"] || rows[i][4] != pos || rows[i][6] != f["message"] {
			t.Errorf("finding row %q, data %v", rows[i], f)
		}
	}
	// A filter changes what is shown: without errors, the warnings alone;
	// then one check id.
	if err := chromedp.Do(r.ctx, chromedp.Click(chromedp.CSS(`input[data-severity="error"]`))); err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for _, f := range findings {
		if f["severity"] == "warning" {
			warnings++
		}
	}
	if n := len(tableRows(t, r, "findings-table")); n != warnings || n == len(rows) {
		t.Errorf("errors unticked: %d rows, want the %d warnings", n, warnings)
	}
	if err := chromedp.Do(r.ctx, chromedp.Click(chromedp.CSS(`input[data-severity="error"]`))); err != nil {
		t.Fatal(err)
	}
	eval[bool](t, r, `(s => { s.value = 'log.crc'; s.dispatchEvent(new Event('change')); return true })(document.getElementById('findings-check'))`)
	crc := tableRows(t, r, "findings-table")
	if len(crc) != 1 || crc[0][1] != "log.crc" {
		t.Errorf("check log.crc: rows %q", crc)
	}
	// Its link opens orders-0's row in the partitions table.
	if err := chromedp.Do(r.ctx, chromedp.Click(chromedp.CSS(`#findings-table a.link`))); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, r, `document.querySelector('#partitions-table tr.hl').dataset.dir`); got != filepath.Join(dir, "orders-0") {
		t.Errorf("the finding's link highlighted %q", got)
	}

	// Traffic: a chart per topic, whose total is the data's.
	for _, tr := range byKind["traffic"] {
		if tr["scope"] != "topic" {
			continue
		}
		var total float64
		for _, v := range tr["records"].([]any) {
			total += v.(float64)
		}
		got := eval[string](t, r, `[...document.querySelectorAll('#topic-charts .chart')].find(c => c.dataset.name === `+jsString(tr["name"].(string))+`).querySelector('.sub').textContent`)
		if !strings.HasPrefix(got, countText(total)+" records") {
			t.Errorf("topic %s: chart says %q, the data %v records", tr["name"], got, total)
		}
	}
	// Groups, open transactions, metadata: as many rows as lines (up to a page).
	for id, kind := range map[string]string{"groups-table": "group_offset", "open-transactions-table": "open_transaction", "metadata-table": "metadata_partition", "retention-table": "retention"} {
		if got, want := len(tableRows(t, r, id)), min(50, len(byKind[kind])); got != want || want == 0 {
			t.Errorf("%s: %d rows, %d %s lines", id, got, len(byKind[kind]), kind)
		}
	}

	// Every partition's name in every table is on one line ("payments-0",
	// not "payments-" above "0").
	broken := eval[[]string](t, r, `[...document.querySelectorAll('td.part')].filter(td => {
		const range = document.createRange(); range.selectNodeContents(td);
		return new Set([...range.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top))).size > 1
	}).map(td => td.closest('.tablewrap').id + ': ' + td.textContent)`)
	if n := eval[int](t, r, `document.querySelectorAll('td.part').length`); n < len(byKind["partition"]) {
		t.Errorf("%d partition cells", n)
	}
	if len(broken) > 0 {
		t.Errorf("partition names on more than one line: %q", broken)
	}

	// The partitions sort by size, largest first, as the data's log_bytes.
	if err := chromedp.Do(r.ctx, chromedp.Click(`//table[ancestor::*[@id="partitions-table"]]//th/button[text()="size"]`)); err != nil {
		t.Fatal(err)
	}
	bySize := append([]map[string]any(nil), byKind["partition"]...)
	sort.SliceStable(bySize, func(i, j int) bool { return bySize[i]["log_bytes"].(float64) > bySize[j]["log_bytes"].(float64) })
	var want, got []string
	for i, p := range bySize {
		want = append(want, p["name"].(string))
		got = append(got, tableRows(t, r, "partitions-table")[i][0])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sorted by size: %v, want %v", got, want)
	}
	r.checkClean(t, file)
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hostileDataDir writes a data directory whose name, group ids, topic
// names and finding messages hold markup, quotes, a closing </script>,
// line separators and invalid UTF-8.
func hostileDataDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data <script>window.__pwned=1</script> \"quoted\" 'single' \xff\xfe")
	m, err := kafkagen.Generate(filepath.Join(dir, "orders-0"), kafkagen.Options{Seed: 1, Topic: "orders", Segments: 2, Batches: 30})
	if err != nil {
		t.Fatal(err)
	}
	last := &m.Segments[1]
	if err := os.Truncate(m.LogPath(last), last.LogSize-9); err != nil { // a finding naming the file
		t.Fatal(err)
	}
	var recs []kafkagen.KeyValue
	for i, g := range hostileGroups {
		recs = append(recs, kafkagen.KeyValue{
			Key:   kafkagen.OffsetCommitKey(g, hostileTopic, int32(i)),
			Value: kafkagen.OffsetCommitValue(3, int64(10+i), 0, "<i>meta</i>", kafkagen.DefaultStartTimestamp, -1)})
	}
	if _, err := kafkagen.Generate(filepath.Join(dir, "__consumer_offsets-0"), kafkagen.Options{Seed: 2, Topic: "__consumer_offsets", Records: recs, RecordsPerBatch: 2}); err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	hostileGroups = []string{
		"</script><script>window.__pwned=2</script>",
		`"'><img src=x onerror="window.__pwned=3">`,
		"<!-- <script>window.__pwned=4</script> -->",
		"bad \xff\xfe utf-8 \u2028 and \u2029",
		"]}</script>{\"kind\":\"report\"}",
	}
	hostileTopic = "<svg onload=window.__pwned=5>"
)

// replaceInvalid is s with each byte that is not UTF-8 replaced by
// U+FFFD, as JSON text carries it.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// A page built from hostile data runs no script of the data's, holds
// no element or attribute the data spelled, and shows every such text as
// it is (each byte of invalid UTF-8 as U+FFFD).
func TestReportPageHostileData(t *testing.T) {
	dir := hostileDataDir(t)
	file := writeReport(t, reportAt, dir)
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The embedded JSON holds no '<' at all: nothing in it can end its
	// element or open a comment.
	start := bytes.Index(page, []byte(`<script id="kseg-data" type="application/json">`))
	end := bytes.Index(page[start:], []byte("</script>"))
	data := page[start+len(`<script id="kseg-data" type="application/json">`) : start+end]
	if bytes.ContainsAny(data, "<>") || !bytes.Contains(data, []byte(`\u003c/script\u003e\u003cscript\u003ewindow.__pwned=2`)) {
		t.Errorf("the data element's text holds markup, or not the group id escaped: %.300s", data)
	}
	if n := bytes.Count(page, []byte("<script")); n != 2 {
		t.Errorf("%d <script in the page's bytes, want 2", n)
	}

	r := openPage(t, file, 1280, 900)
	if got := eval[bool](t, r, `typeof window.__pwned !== 'undefined'`); got {
		t.Errorf("a script of the data ran: window.__pwned = %v", eval[any](t, r, `window.__pwned`))
	}
	if n := eval[int](t, r, `document.scripts.length`); n != 2 {
		t.Errorf("%d script elements in the page, want 2", n)
	}
	if n := eval[int](t, r, `document.querySelectorAll('img, iframe, object, embed, i, main svg:not(.chart svg)').length`); n != 0 {
		t.Errorf("%d elements the data spelled", n)
	}
	if bad := eval[[]string](t, r, `[...document.querySelectorAll('*')].flatMap(e => [...e.attributes].filter(a => /^on/i.test(a.name)).map(a => e.tagName + ' ' + a.name))`); len(bad) > 0 {
		t.Errorf("event handler attributes: %v", bad)
	}
	groupsText := eval[string](t, r, `document.getElementById('groups-table').textContent`)
	for _, g := range hostileGroups {
		if want := replaceInvalid(g); !strings.Contains(groupsText, want) {
			t.Errorf("group id %q not shown as text in %q", want, groupsText)
		}
	}
	if !strings.Contains(groupsText, hostileTopic) {
		t.Errorf("topic %q not shown as text", hostileTopic)
	}
	meta := eval[string](t, r, `document.querySelector('header .meta').textContent`)
	if want := replaceInvalid(dir); !strings.Contains(meta, want) {
		t.Errorf("the header shows %q, not the path %q", meta, want)
	}
	findings := eval[string](t, r, `document.getElementById('findings-table').textContent`)
	if !strings.Contains(findings, "log.truncated") {
		t.Errorf("findings: %q", findings)
	}
	r.checkClean(t, file)
}

// The page follows the viewer's theme (prefers-color-scheme), and prints
// without its controls.
func TestReportPageThemesAndPrint(t *testing.T) {
	dir := reportDataDir(t, t.TempDir(), true)
	file := writeReport(t, reportAt, dir)
	r := openPage(t, file, 1280, 900)
	colours := map[string]string{}
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(r.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatal(err)
		}
		colours[scheme] = eval[string](t, r, `getComputedStyle(document.body).backgroundColor + ' ' + getComputedStyle(document.body).color`)
	}
	if colours["light"] == colours["dark"] || !strings.HasPrefix(colours["light"], "rgb(255, 255, 255)") {
		t.Errorf("themes: light %q, dark %q", colours["light"], colours["dark"])
	}
	if _, err := chromedp.Call(r.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	if shown := eval[int](t, r, `[...document.querySelectorAll('.controls, nav, .pager')].filter(e => getComputedStyle(e).display !== 'none').length`); shown != 0 {
		t.Errorf("printing shows %d controls", shown)
	}
	// Before printing every row is drawn; after, the pages come back.
	n := eval[int](t, r, `window.dispatchEvent(new Event('beforeprint')), document.querySelectorAll('#findings-table tbody tr').length`)
	all := eval[int](t, r, `JSON.parse(document.getElementById('kseg-data').textContent).filter(l => l.kind === 'finding' && l.severity !== 'info').length`)
	if n != all {
		t.Errorf("printing draws %d finding rows of %d", n, all)
	}
	eval[bool](t, r, `window.dispatchEvent(new Event('afterprint'))`)
	r.checkClean(t, file)
}

// TestReportScreenshots writes docs/report-demo.png,
// docs/report-damaged.png and docs/report-damaged-dark.png (make
// screenshots): the page on a demo data directory and on a damaged one,
// drawn by Chromium, the damaged one also in the dark theme. It runs only
// when KSEG_SCREENSHOTS names the directory to write them to.
func TestReportScreenshots(t *testing.T) {
	out := os.Getenv("KSEG_SCREENSHOTS")
	if out == "" {
		t.Skip("KSEG_SCREENSHOTS is not set (make screenshots sets it)")
	}
	for _, c := range []struct {
		name    string
		damaged bool
		scheme  string // prefers-color-scheme
	}{{"report-demo.png", false, "light"}, {"report-damaged.png", true, "light"}, {"report-damaged-dark.png", true, "dark"}} {
		root := t.TempDir()
		reportDataDir(t, filepath.Join(root, "data"), c.damaged)
		t.Chdir(root) // the page names the data directory "data", as a user would
		file := filepath.Join(root, "report.html")
		at := time.Date(2023, 11, 15, 0, 0, 0, 0, time.UTC)
		if _, stderr, code := runKseg(t, func(ios *IOStreams) { ios.SetNow(func() time.Time { return at }) },
			"report", reportAt, "--html", file, "data"); code != 0 {
			t.Fatalf("kseg report: exit %d: %s", code, stderr)
		}
		r := openPage(t, file, 1280, 900)
		if _, err := chromedp.Call(r.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: c.scheme}}}); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(r.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, c.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		r.checkClean(t, file)
	}
}

// maxPageBytes is the bound on the page of a data directory of 10,000
// partitions (issue: "the file stays under 20 MB").
const maxPageBytes = 20 << 20

// The page of a data directory of 10,000 partitions (10 topics of 1,000,
// each partition ten minutes of traffic, a batch every 10 s: every
// partition's series has its full count of buckets) stays under 20 MB, loads cleanly,
// and draws no table longer than a page of 50 rows: the partitions table
// shows rows 1–50 of 10,000 with its pager. Long form only (-short skips
// it: writing 10,000 partitions takes a while).
func TestReportPageManyPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 10,000 partitions are written in the long form (make check)")
	}
	chromiumPath(t) // fail (or skip) before writing 10,000 partitions
	const topics, perTopic = 10, 1000
	dir := t.TempDir()
	err := inspect.EachPartition(topics*perTopic, func(i int) error {
		name := fmt.Sprintf("topic-%d-%d", i/perTopic, i%perTopic)
		_, err := kafkagen.Generate(filepath.Join(dir, name), kafkagen.Options{Seed: int64(i), Topic: fmt.Sprintf("topic-%d", i/perTopic),
			Batches: 60, RecordsPerBatch: 2, ValueSize: 16, Traffic: "steady"})
		return err
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := writeReport(t, reportAt, dir)
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the page of %d partitions: %d bytes", topics*perTopic, st.Size())
	if st.Size() >= maxPageBytes {
		t.Errorf("the page of %d partitions is %d bytes, over %d", topics*perTopic, st.Size(), maxPageBytes)
	}

	r := openPage(t, file, 1280, 900)
	tables := eval[map[string]int](t, r, `Object.fromEntries([...document.querySelectorAll('.tablewrap')].map(w => [w.id, w.querySelectorAll('tbody tr').length]))`)
	for id, n := range tables {
		if n > 50 {
			t.Errorf("table %s draws %d rows", id, n)
		}
	}
	if tables["partitions-table"] != 50 {
		t.Errorf("the partitions table draws %d rows, want a page of 50 (tables: %v)", tables["partitions-table"], tables)
	}
	if got := eval[string](t, r, `document.querySelector('#partitions-table').parentElement.querySelector('.pager .range').textContent`); got != "rows 1–50 of 10,000" {
		t.Errorf("the partitions pager says %q", got)
	}
	if n := eval[int](t, r, `document.querySelectorAll('#topic-charts .chart').length`); n != topics {
		t.Errorf("%d topic charts, want %d", n, topics)
	}
	if n := eval[int](t, r, `document.querySelectorAll('main svg').length`); n > topics+1 {
		t.Errorf("%d charts drawn at load, want the %d topics' and at most one partition's", n, topics)
	}
	r.checkClean(t, file)
}

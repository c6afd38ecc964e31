package cmd

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
)

// timelineLines parses timeline -o json into its buckets and summary.
func timelineLines(t *testing.T, out string) ([]timelineBucketJSON, timelineSummaryJSON) {
	t.Helper()
	var buckets []timelineBucketJSON
	var sum timelineSummaryJSON
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(l, `{"kind":"summary"`) {
			if err := json.Unmarshal([]byte(l), &sum); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var b timelineBucketJSON
		if err := json.Unmarshal([]byte(l), &b); err != nil || b.Kind != "bucket" {
			t.Fatalf("not a bucket line: %q (%v)", l, err)
		}
		buckets = append(buckets, b)
	}
	return buckets, sum
}

// shapePartition writes a partition of the given traffic shape with a
// time index entry for every batch but the first of each segment.
func shapePartition(t *testing.T, dir, shape string) *kafkagen.Manifest {
	t.Helper()
	m, err := kafkagen.Generate(filepath.Join(dir, shape+"-0"), kafkagen.Options{
		Seed: 3, Segments: 3, Batches: 40, RecordsPerBatch: 5, ValueSize: 40,
		IndexIntervalBytes: kafkagen.IndexEveryBatch, Traffic: shape,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkAgainstRecords holds a timeline's buckets to the records'
// timestamps. A record is counted at the time of a time index entry at or
// after it: its batch's (the largest timestamp so far), or, for the first
// batch of a segment (which a broker does not index), the next batch's.
// So for every bucket end T, the records counted before T are at most
// those whose timestamp is before T, and at least those whose latest
// possible time is before T. Summed, records are the offset span and
// bytes the log size.
func checkAgainstRecords(t *testing.T, m *kafkagen.Manifest, buckets []timelineBucketJSON, sum timelineSummaryJSON) {
	t.Helper()
	type rec struct{ ts, latest int64 }
	var recs []rec
	var logBytes int64
	for _, s := range m.Segments {
		logBytes += s.LogSize
		maxSoFar := int64(-1)
		for k, b := range s.Batches {
			latest := b.MaxTimestamp
			if k == 0 && len(s.Batches) > 1 {
				latest = max(b.MaxTimestamp, s.Batches[1].MaxTimestamp)
			}
			maxSoFar = max(maxSoFar, latest)
			for _, r := range b.Records {
				recs = append(recs, rec{r.Timestamp, maxSoFar})
			}
		}
	}
	span := m.LogEndOffset - m.Segments[0].BaseOffset
	if sum.Records != span || sum.Bytes != logBytes || int64(len(recs)) != span {
		t.Errorf("summary: %d records, %d bytes; want the offset span %d (%d records) and the log size %d", sum.Records, sum.Bytes, span, len(recs), logBytes)
	}
	var cum, gotRecords, gotBytes int64
	for i, b := range buckets {
		if i > 0 && b.Start != buckets[i-1].End {
			t.Fatalf("bucket %d starts at %d, the one before ends at %d", i, b.Start, buckets[i-1].End)
		}
		cum += b.Records
		gotRecords += b.Records
		gotBytes += b.Bytes
		var upper, lower int64
		for _, r := range recs {
			if r.ts < b.End {
				upper++
			}
			if r.latest < b.End {
				lower++
			}
		}
		if cum < lower || cum > upper {
			t.Errorf("before %s: %d records counted, the records' timestamps allow %d..%d", humanTime(b.End), cum, lower, upper)
		}
	}
	if gotRecords != sum.Records || gotBytes != sum.Bytes {
		t.Errorf("buckets sum to %d records, %d bytes; summary says %d, %d", gotRecords, gotBytes, sum.Records, sum.Bytes)
	}
}

// Steady traffic, a burst and a stop: the chart and the JSON buckets, held
// to golden files and to the records' timestamps; each shape shows.
func TestTimelineShapes(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range []string{"steady", "burst", "stop"} {
		m := shapePartition(t, dir, shape)
		before := hashTree(t, m.Dir)
		clock := func(ios *IOStreams) { ios.SetNow(tickingClock(time.Second)) }
		out, stderr, code := runInWith(t, dir, clock, "-o", "json", "timeline", "--bucket", "1m", shape+"-0")
		if code != 0 || stderr != "" {
			t.Fatalf("%s: exit %d, %s", shape, code, stderr)
		}
		assertGolden(t, "timeline-"+shape+".jsonl", out)
		buckets, sum := timelineLines(t, out)
		if sum.Source != "timeindex" || sum.Partitions != 1 {
			t.Errorf("%s: summary %+v", shape, sum)
		}
		checkAgainstRecords(t, m, buckets, sum)

		var counts []int64
		for _, b := range buckets {
			counts = append(counts, b.Records)
		}
		switch shape {
		case "steady": // a batch every 10 s: every minute has traffic
			if slices.Contains(counts, 0) {
				t.Errorf("steady: an empty minute in %v", counts)
			}
		case "burst": // the busiest minute dwarfs a quiet one
			sorted := slices.Sorted(slices.Values(counts))
			if median := sorted[len(sorted)/2]; sorted[len(sorted)-1] < 10*max(median, 1) {
				t.Errorf("burst: no burst in %v", counts)
			}
		case "stop": // half an hour without traffic
			run, longest := 0, 0
			for _, c := range counts {
				if c == 0 {
					run++
					longest = max(longest, run)
				} else {
					run = 0
				}
			}
			if longest < 25 {
				t.Errorf("stop: longest silence %d minutes in %v", longest, counts)
			}
		}
		for _, w := range []int{80, 160} {
			chart, _, _ := runInWith(t, dir, func(ios *IOStreams) { clock(ios); ios.SetTerminalWidth(w) }, "timeline", "--bucket", "1m", shape+"-0")
			assertGolden(t, fmt.Sprintf("timeline-%s-%d.txt", shape, w), chart)
			assertLinesFit(t, shape, chart, w)
		}
		assertTreeUnchanged(t, m.Dir, before)
	}
}

// Without a time index, the batch headers give the same answer at batch
// resolution, and the summary says where it came from.
func TestTimelineFallsBackToBatches(t *testing.T) {
	dir := t.TempDir()
	m := shapePartition(t, dir, "steady")
	for i := range m.Segments {
		if err := os.Remove(m.TimeIndexPath(&m.Segments[i])); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := runIn(t, dir, "-o", "json", "timeline", "--bucket", "1m", "steady-0")
	if code != 0 || !strings.Contains(stderr, "no usable time index for steady-0/00000000000000000000.log") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	buckets, sum := timelineLines(t, out)
	if sum.Source != "batches" {
		t.Errorf("source %q, want batches", sum.Source)
	}
	checkAgainstRecords(t, m, buckets, sum)
}

// Several partitions: summed by default, one series each with
// --per-partition; --from-time/--to-time keep the buckets in range; --svg
// writes an SVG image of the chart.
func TestTimelinePartitionsRangeAndSVG(t *testing.T) {
	dir := t.TempDir()
	steady := shapePartition(t, dir, "steady")
	stop := shapePartition(t, dir, "stop")
	out, _, code := runIn(t, dir, "-o", "json", "timeline", "--bucket", "5m", ".")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	total, sum := timelineLines(t, out)
	if sum.Partitions != 2 || sum.Records != steady.LogEndOffset+stop.LogEndOffset {
		t.Errorf("summed: %+v", sum)
	}
	out, _, _ = runIn(t, dir, "-o", "json", "timeline", "--bucket", "5m", "--per-partition", ".")
	per, _ := timelineLines(t, out)
	byDir := map[string]int64{}
	sums := make([]int64, len(total))
	for _, b := range per {
		if b.PartitionDir == nil {
			t.Fatalf("no partition_dir: %+v", b)
		}
		byDir[*b.PartitionDir] += b.Records
		for i := range total {
			if total[i].Start == b.Start {
				sums[i] += b.Records
			}
		}
	}
	if byDir["steady-0"] != steady.LogEndOffset || byDir["stop-0"] != stop.LogEndOffset {
		t.Errorf("per partition: %v", byDir)
	}
	for i := range total {
		if sums[i] != total[i].Records {
			t.Errorf("bucket %d: partitions sum to %d, the total says %d", i, sums[i], total[i].Records)
		}
	}

	from, to := total[2].Start, total[4].End-1
	out, _, _ = runIn(t, dir, "-o", "json", "timeline", "--bucket", "5m", "--from-time", fmt.Sprint(from), "--to-time", fmt.Sprint(to), ".")
	ranged, rsum := timelineLines(t, out)
	if len(ranged) != 3 || ranged[0] != total[2] || ranged[2] != total[4] || rsum.Records != total[2].Records+total[3].Records+total[4].Records {
		t.Errorf("range %d..%d: %+v %+v", from, to, ranged, rsum)
	}

	svg := filepath.Join(t.TempDir(), "traffic.svg")
	if _, stderr, code := runIn(t, dir, "timeline", "--bucket", "5m", "--per-partition", "--svg", svg, "."); code != 0 {
		t.Fatalf("--svg: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"svg"`
		Rects   []struct {
			Title string `xml:"title"`
		} `xml:"rect"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not SVG: %v", err)
	}
	bars := 0
	for _, r := range doc.Rects {
		if r.Title != "" {
			bars++
		}
	}
	if bars != len(per) {
		t.Errorf("%d bars in the SVG, %d buckets", bars, len(per))
	}

	if _, stderr, code := runIn(t, dir, "timeline", "--bucket", "1ms", "."); code != 2 || !strings.Contains(stderr, "kseg: hint: choose --bucket 5ms or wider") {
		t.Errorf("too many buckets: exit %d, %q", code, stderr)
	}
}

// On every partition written by a real broker, the buckets sum to the
// partition's offset span and log size (as ls reports them); one without
// timestamps (magic 0) is left out with a warning.
func TestTimelineRealFixtures(t *testing.T) {
	dirs := fixtures.Dirs(t)
	out, stderr, code := runKseg(t, nil, append([]string{"-o", "json", "timeline", "--per-partition"}, dirs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	buckets, sum := timelineLines(t, out)
	records, bytes := map[string]int64{}, map[string]int64{}
	for _, b := range buckets {
		records[*b.PartitionDir] += b.Records
		bytes[*b.PartitionDir] += b.Bytes
	}
	lsOut, _, code := runKseg(t, nil, append([]string{"-o", "json", "ls"}, dirs...)...)
	if code != 0 {
		t.Fatalf("ls: exit %d", code)
	}
	// partition_dir is the partition's name: partitions of the same name
	// under different data directories are summed together.
	var wantRecords, wantBytes int64
	nameRecords, nameBytes := map[string]int64{}, map[string]int64{}
	for _, p := range jsonLines(t, lsOut) {
		dir := p["dir"].(string)
		name := filepath.Base(dir)
		span := int64(p["next_offset"].(float64) - p["base_offset"].(float64))
		size := int64(p["log_bytes"].(float64))
		if p["last_timestamp"] == nil { // magic 0: no time to place it at
			if span > 0 && !strings.Contains(stderr, dir+": ") {
				t.Errorf("%s has no timestamp and no warning: stderr %q", dir, stderr)
			}
			continue
		}
		nameRecords[name] += span
		nameBytes[name] += size
		wantRecords += span
		wantBytes += size
	}
	for name := range records { // a name with no timestamp anywhere shows none
		if _, ok := nameRecords[name]; !ok && records[name] != 0 {
			t.Errorf("%s has no timestamp: %d records shown", name, records[name])
		}
	}
	for name := range nameRecords {
		if records[name] != nameRecords[name] || bytes[name] != nameBytes[name] {
			t.Errorf("%s: %d records, %d bytes in the buckets; ls says offsets %d, log %d bytes", name, records[name], bytes[name], nameRecords[name], nameBytes[name])
		}
	}
	if sum.Records != wantRecords || sum.Bytes != wantBytes {
		t.Errorf("summary %d records, %d bytes; want %d, %d", sum.Records, sum.Bytes, wantRecords, wantBytes)
	}
}

// A corrupt batch header: the timeline still answers. Before the last
// index entry the time index places the traffic around it (the sums stay
// the offset span and log size); past it, the segment is read from its
// batch headers up to the damage, and the bytes after it are counted at
// the last time.
func TestTimelineOnDamagedLog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		seg    int
		batch  func(n int) int
		source string
	}{
		{"mid-log", 1, func(int) int { return 20 }, "timeindex"},
		{"last batch", 2, func(n int) int { return n - 1 }, "batches"},
	} {
		dir := t.TempDir()
		m := shapePartition(t, dir, "steady")
		s := &m.Segments[tc.seg]
		bad := s.Batches[tc.batch(len(s.Batches))]
		f, err := os.OpenFile(m.LogPath(s), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{0, 0, 0, 1}, bad.Position+8); err != nil { // batch length 1: impossible
			t.Fatal(err)
		}
		f.Close()
		out, stderr, code := runIn(t, dir, "-o", "json", "timeline", "steady-0")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		_, sum := timelineLines(t, out)
		var logBytes int64
		for _, s := range m.Segments {
			logBytes += s.LogSize
		}
		records := m.LogEndOffset
		if tc.source == "batches" {
			records = bad.BaseOffset // the damaged batch on is not whole
		}
		if sum.Bytes != logBytes || sum.Records != records || sum.Source != tc.source {
			t.Errorf("%s: summary %+v; want %d records, %d bytes, source %s", tc.name, sum, records, logBytes, tc.source)
		}
	}
}

// gen refuses a traffic shape it does not know.
func TestGenTrafficShapes(t *testing.T) {
	_, stderr, code := runKseg(t, nil, "gen", "--traffic", "spiky", filepath.Join(t.TempDir(), "x-0"))
	if code != 2 || !strings.Contains(stderr, `unknown traffic shape "spiky" (steady|burst|stop)`) {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// TestTimelineCapsBucketsOfAllSeries: the cap on buckets holds for all
// series together. Two partitions of steady traffic over about 10
// minutes: --bucket 1ms makes over half a million buckets for their sum
// (shown), but --per-partition doubles it, which is refused (exit 2) with
// the narrowest width that fits as a hint; at 2ms both series fit, shown
// as a table (a line per bucket) and drawn as an SVG of 800 bars per
// series whose records add up (it had 150 bytes a bucket).
func TestTimelineCapsBucketsOfAllSeries(t *testing.T) {
	dir := t.TempDir()
	var records int64
	for i, name := range []string{"a-0", "b-0"} {
		m, err := kafkagen.Generate(filepath.Join(dir, name), kafkagen.Options{Seed: int64(i), Batches: 100, RecordsPerBatch: 2, ValueSize: 10, Traffic: "steady"})
		if err != nil {
			t.Fatal(err)
		}
		records += m.LogEndOffset
	}
	out, _, code := runIn(t, dir, "-o", "json", "timeline", "--bucket", "1ms", ".")
	buckets, _ := timelineLines(t, out)
	if code != 0 || len(buckets) <= 1<<19 || len(buckets) > 1<<20 {
		t.Fatalf("the sum at 1ms: exit %d, %d buckets", code, len(buckets))
	}
	_, stderr, code := runIn(t, dir, "-o", "json", "timeline", "--per-partition", "--bucket", "1ms", ".")
	if code != 2 || !strings.Contains(stderr, "buckets in all are shown") || !strings.Contains(stderr, "kseg: hint: choose --bucket 2ms or wider, or leave out --per-partition") {
		t.Fatalf("--per-partition at 1ms: exit %d: %s", code, stderr)
	}

	perSeries := int64(len(buckets)+1) / 2 // at 2ms
	svg := filepath.Join(t.TempDir(), "t.svg")
	cw := &countingWriter{}
	_, _, code = runKseg(t, func(ios *IOStreams) { ios.Out = cw }, "timeline", "--per-partition", "--bucket", "2ms", "--svg", svg, dir)
	if code != 0 || cw.n < 2*perSeries*30 {
		t.Fatalf("exit %d, %d bytes written for 2 x %d buckets", code, cw.n, perSeries)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rects []struct {
			Title string `xml:"title"`
		} `xml:"rect"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not SVG: %v", err)
	}
	bars, sum := 0, int64(0)
	for _, r := range doc.Rects {
		if r.Title == "" {
			continue
		}
		bars++
		var n int64
		if i := strings.Index(r.Title, ": "); i < 0 {
			t.Fatalf("bar title %q", r.Title)
		} else if _, err := fmt.Sscanf(r.Title[i+2:], "%d records", &n); err != nil {
			t.Fatalf("bar title %q: %v", r.Title, err)
		}
		sum += n
	}
	if bars != 2*800 || sum != records || len(b) > 2*800*200+4096 {
		t.Errorf("SVG: %d bars of %d records in all (want 1600 of %d), %d bytes", bars, sum, records, len(b))
	}
}

// timelineBucket is the width inspect.Timeline chooses for series series
// over [from, to] with opts' --bucket, its error worded as the command
// words it.
func timelineBucket(opts timelineOptions, from, to int64, series int) (int64, error) {
	w, err := inspect.BucketWidth(inspect.TimelineOptions{Bucket: opts.bucket.Milliseconds(), Buckets: timelineBuckets, MaxBuckets: maxTimelineBuckets}, from, to, series)
	var e *inspect.TooManyBucketsError
	if errors.As(err, &e) {
		return 0, timelineBucketError(opts, e)
	}
	return w, err
}

// TestTimelineBucketFits: the automatic width is widened as far as the
// cap needs for many series (60 buckets each over 20,000 partitions
// would be 1.2 million), never narrowed; an explicit one that does not
// fit is refused with a --bucket value Go parses; spans past 292 years
// are said in days.
func TestTimelineBucketFits(t *testing.T) {
	from, to := int64(1_700_000_000_000), int64(1_700_003_600_000) // an hour
	for _, series := range []int{1, 300, 17_000, 20_000, 1 << 20, 3 << 20} {
		auto := inspect.AutoBucket(to-from, timelineBuckets)
		got, err := timelineBucket(timelineOptions{}, from, to, series)
		if err != nil || got < auto || inspect.BucketsOver(from, to, got)*int64(series) > maxTimelineBuckets && inspect.BucketsOver(from, to, got) > 1 {
			t.Errorf("%d series: width %d (%d buckets each), %v", series, got, inspect.BucketsOver(from, to, got), err)
		}
	}
	_, err := timelineBucket(timelineOptions{bucket: time.Millisecond}, from, to, 300)
	var h *hintError
	if !errors.As(err, &h) || !strings.Contains(h.hint, "choose --bucket 2s or wider") {
		t.Fatalf("1ms over an hour for 300 partitions: %v", err)
	}
	d, perr := time.ParseDuration("2s")
	if w, err := timelineBucket(timelineOptions{bucket: d}, from, to, 300); perr != nil || err != nil || w != 2_000 {
		t.Errorf("the hinted width: %d, %v", w, err)
	}
	for ms, want := range map[int64]string{5: "5ms", 2000: "2s", 120_000: "2m", 48 * 3600e3: "48h", 1500: "1500ms"} {
		if got := durationFlag(ms); got != want {
			t.Errorf("durationFlag(%d) = %s, want %s", ms, got, want)
		}
	}
	if got := humanMillis(math.MaxInt64); got != "106,751,991,167d" {
		t.Errorf("humanMillis(2^63-1) = %s", got)
	}
}

// TestTimelineNamesWhyOffsetsHaveNoTimestamp: offsets without a
// timestamp are left out with a warning that says why: magic 0 batches
// have no timestamp field; v2 batches whose records carry -1
// (RecordBatch.NO_TIMESTAMP, which a producer may send) are not magic 0.
func TestTimelineNamesWhyOffsetsHaveNoTimestamp(t *testing.T) {
	dir := t.TempDir()
	if _, err := kafkagen.Generate(filepath.Join(dir, "old-0"), kafkagen.Options{Seed: 1, Batches: 5, Magic: kafkagen.MagicV0}); err != nil {
		t.Fatal(err)
	}
	v2 := filepath.Join(dir, "none-0")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		t.Fatal(err)
	}
	log := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1, Records: []kafkagen.Record{{OffsetDelta: 0, Timestamp: -1, Value: []byte("a")}, {OffsetDelta: 1, Timestamp: -1, Value: []byte("b")}}})
	if err := os.WriteFile(filepath.Join(v2, kafkagen.SegmentName(0)+".log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKseg(t, nil, "-o", "json", "timeline", filepath.Join(dir, "old-0"))
	if code != 0 || !strings.Contains(stderr, "offsets have no timestamp (magic 0) and are not shown") {
		t.Errorf("magic 0: exit %d: %s", code, stderr)
	}
	_, stderr, code = runKseg(t, nil, "-o", "json", "timeline", v2)
	if code != 0 || strings.Contains(stderr, "magic 0") || !strings.Contains(stderr, "2 offsets have no timestamp (their batches' timestamps are -1") {
		t.Errorf("v2 records at -1: exit %d: %s", code, stderr)
	}
}

// countingWriter counts the bytes written to it and keeps none.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

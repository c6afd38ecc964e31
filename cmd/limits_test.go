//go:build linux

package cmd

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// The limits a broker allows, and kseg at each of them: a 2 GiB segment
// (positions near the int32 limit), indexes at segment.index.bytes
// capacity, offsets near the int64 limit, relative offsets near the int32
// limit, thousands of partitions in a data directory (also with few file
// descriptors). Large files are sparse where the content allows.

var limCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// limV2Batch encodes a v2 batch of count records (each with a 1-byte
// value), offsets base..base+lastDelta (the last record at lastDelta),
// every record at timestamp ts, with a correct CRC.
func limV2Batch(base int64, lastDelta int32, count int32, ts int64) []byte {
	var recs []byte
	for i := int32(0); i < count; i++ {
		delta := i
		if i == count-1 {
			delta = lastDelta
		}
		var body []byte
		body = append(body, 0)                         // attributes
		body = binary.AppendVarint(body, 0)            // timestamp delta
		body = binary.AppendVarint(body, int64(delta)) // offset delta
		body = binary.AppendVarint(body, -1)           // null key
		body = binary.AppendVarint(body, 1)            // value length
		body = append(body, 'v')                       // value
		body = binary.AppendVarint(body, 0)            // no headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	return limV2Header(base, lastDelta, count, ts, recs)
}

// limV2Header frames payload as a v2 batch with a correct CRC.
func limV2Header(base int64, lastDelta, count int32, ts int64, payload []byte) []byte {
	be := binary.BigEndian
	b := be.AppendUint64(nil, uint64(base))
	b = be.AppendUint32(b, uint32(record.V2HeaderSize-record.LogOverhead+len(payload)))
	b = be.AppendUint32(b, 0) // partition leader epoch
	b = append(b, 2)
	b = be.AppendUint32(b, 0) // crc, below
	b = be.AppendUint16(b, 0)
	b = be.AppendUint32(b, uint32(lastDelta))
	b = be.AppendUint64(b, uint64(ts))
	b = be.AppendUint64(b, uint64(ts))
	b = be.AppendUint64(b, math.MaxUint64) // producer id -1
	b = be.AppendUint16(b, math.MaxUint16) // producer epoch -1
	b = be.AppendUint32(b, math.MaxUint32) // base sequence -1
	b = be.AppendUint32(b, uint32(count))
	b = append(b, payload...)
	be.PutUint32(b[17:], crc32.Checksum(b[21:], limCastagnoli))
	return b
}

// limLegacy encodes a magic 0 (ts ignored) or magic 1 message with a null
// key and an empty value: 26 or 34 bytes, the smallest entries there are.
func limLegacy(dst []byte, magic int8, offset, ts int64) []byte {
	be := binary.BigEndian
	start := len(dst)
	dst = be.AppendUint64(dst, uint64(offset))
	size := 14
	if magic == 1 {
		size = 22
	}
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, 0) // crc, below
	dst = append(dst, byte(magic), 0)
	if magic == 1 {
		dst = be.AppendUint64(dst, uint64(ts))
	}
	dst = be.AppendUint32(dst, math.MaxUint32) // null key
	dst = be.AppendUint32(dst, 0)              // empty value
	be.PutUint32(dst[start+12:], crc32.ChecksumIEEE(dst[start+16:]))
	return dst
}

// limWrite writes files into dir.
func limWrite(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// limJSON runs kseg with -o json and decodes every stdout line.
func limJSON(t *testing.T, wantCode int, args ...string) []map[string]any {
	t.Helper()
	out, stderr, code := runKseg(t, nil, append([]string{"-o", "json"}, args...)...)
	if code != wantCode {
		t.Fatalf("kseg %s: exit %d, want %d; stderr: %s", strings.Join(args, " "), code, wantCode, stderr)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber() // offsets near 2^63 must come back exact
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("kseg %s: %v in %q", strings.Join(args, " "), err, sc.Text())
		}
		lines = append(lines, m)
	}
	return lines
}

// limNum reads a JSON number field (dotted names walk into objects) as an
// exact int64.
func limNum(t *testing.T, m map[string]any, name string) int64 {
	t.Helper()
	v, err := jsonField(m, name)
	if err != nil {
		t.Fatalf("%s: %v in %v", name, err, m)
	}
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%s is %T in %v", name, v, m)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return i
}

// limStream runs kseg as a child process and reads its stdout as it
// comes: the number of lines and the last one (a listing of millions of
// lines is not held in memory).
func limStream(t *testing.T, args ...string) (lines int, last, stderr string, code int) {
	t.Helper()
	c := exec.Command(ksegExecutable(t), args...)
	var errOut strings.Builder
	c.Stderr = &errOut
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReaderSize(out, 1<<16)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			lines++
			last = strings.TrimSuffix(line, "\n")
		}
		if err != nil {
			break
		}
	}
	if err := c.Wait(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		code = exit.ExitCode()
	}
	return lines, last, errOut.String(), code
}

// limFindings returns the check ids of verify's error findings (warnings
// are left out), and its summary.
func limFindings(t *testing.T, lines []map[string]any) (checks []string, summary map[string]any) {
	t.Helper()
	for _, l := range lines {
		switch l["kind"] {
		case "finding":
			if l["severity"] == "error" {
				checks = append(checks, fmt.Sprint(l["check"]))
			}
		case "summary":
			summary = l
		}
	}
	if summary == nil {
		t.Fatalf("no summary line")
	}
	return checks, summary
}

// TestLimitTwoGiBSegment: a segment of 2^31-1 bytes, the largest whose
// positions fit the index's int32 (a broker rolls before that). Between a
// small first batch and two small batches ending exactly at the last byte
// lie about 2048 batches of 1 MiB (the default message.max.bytes) without
// records, whose payloads are holes of the sparse file, each with a
// correct CRC; the broker's recovery indexes each of them, so index
// positions run up to just below the int32 limit. Lookups go straight
// there; verify and rebuild read all 2 GiB and agree with the indexes.
func TestLimitTwoGiBSegment(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "big-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const size = math.MaxInt32
	const ts0 = 1700000000000
	const chunk = 1 << 20
	type batch struct {
		pos, size, last, maxTS int64
		hdr                    []byte // the bytes written; the rest of size is a hole
	}
	var batches []batch
	end := int64(0)
	add := func(b []byte, size, last, maxTS int64) {
		batches = append(batches, batch{end, size, last, maxTS, b})
		end += size
	}
	first := limV2Batch(0, 2, 3, ts0)
	add(first, int64(len(first)), 2, ts0)
	tailLen := int64(len(limV2Batch(0, 1, 2, 0)) + len(limV2Batch(0, 2, 3, 0)))
	tailPos := size - tailLen
	zeros := make([]byte, chunk)
	offset := int64(3)
	for end < tailPos {
		n := min(int64(chunk), tailPos-end)
		if rest := tailPos - end - n; rest > 0 && rest < record.V2HeaderSize {
			n -= record.V2HeaderSize // leave no sliver too small for a batch
		}
		ts := ts0 + offset
		h := limV2Header(offset, 0, 0, ts, nil)
		binary.BigEndian.PutUint32(h[8:], uint32(n-record.LogOverhead))
		crc := crc32.Update(crc32.Checksum(h[21:], limCastagnoli), limCastagnoli, zeros[:n-record.V2HeaderSize])
		binary.BigEndian.PutUint32(h[17:], crc)
		add(h, n, offset, ts)
		offset++
	}
	tail1 := limV2Batch(offset, 1, 2, ts0+offset)
	add(tail1, int64(len(tail1)), offset+1, ts0+offset)
	tail2 := limV2Batch(offset+2, 2, 3, ts0+offset+2)
	add(tail2, int64(len(tail2)), offset+4, ts0+offset+2)
	if end != size {
		t.Fatalf("the batches end at %d, not %d", end, size)
	}

	logPath := filepath.Join(dir, "00000000000000000000.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if _, err := f.WriteAt(b.hdr, b.pos); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if blocks := st.Sys().(*syscall.Stat_t).Blocks; blocks*512 > 256<<20 {
		t.Skipf("the file system here does not keep files sparse (%d bytes allocated for the 2 GiB log); not writing 2 GiB", blocks*512)
	}

	// The indexes broker recovery builds (LogSegment.recover) with
	// index.interval.bytes 4096: an entry for each batch starting more than
	// 4096 bytes after the last entry's batch, at the batch's last offset,
	// and a time index entry for the largest timestamp so far whenever it
	// grew; at the end, the time index gets the largest timestamp again
	// (skipped when not larger).
	var idx, tidx []byte
	lastEntryPos, maxTS, maxTSOffset, lastTimeEntry := int64(0), int64(-1), int64(0), int64(-1)
	var entryPos []int64
	for _, b := range batches {
		if b.maxTS > maxTS {
			maxTS, maxTSOffset = b.maxTS, b.last
		}
		if b.pos-lastEntryPos > 4096 {
			idx = indexfmt.AppendOffsetEntry(idx, int32(b.last), int32(b.pos))
			entryPos = append(entryPos, b.pos)
			if maxTS > lastTimeEntry {
				tidx = indexfmt.AppendTimeEntry(tidx, maxTS, int32(maxTSOffset))
				lastTimeEntry = maxTS
			}
			lastEntryPos = b.pos
		}
	}
	if maxTS > lastTimeEntry {
		tidx = indexfmt.AppendTimeEntry(tidx, maxTS, int32(maxTSOffset))
	}
	limWrite(t, dir, map[string][]byte{"00000000000000000000.index": idx, "00000000000000000000.timeindex": tidx})
	lastPos := entryPos[len(entryPos)-1]
	if lastPos < math.MaxInt32-2*chunk {
		t.Fatalf("the last index entry is at %d, not near the int32 limit", lastPos)
	}
	t.Logf("%d batches, %d index entries, the last at position %d", len(batches), len(entryPos), lastPos)

	// Lookups: brute force over the batches, through index entries up to
	// just below the int32 limit.
	s := strconv.FormatInt
	for _, target := range []int64{0, 3, 4, offset / 2, offset - 1, offset, offset + 1, offset + 2, offset + 4} {
		var want batch
		for _, b := range batches {
			if b.last >= target {
				want = b
				break
			}
		}
		res := limJSON(t, 0, "lookup", dir, s(target, 10))[0]
		if limNum(t, res, "batch.position") != want.pos || limNum(t, res, "batch.size") != want.size || limNum(t, res, "scanned_batches") > 2 {
			t.Errorf("lookup %d: %v; want the batch at %d", target, res, want.pos)
		}
	}
	if res := limJSON(t, 1, "lookup", dir, s(offset+5, 10))[0]; res["found"] != false {
		t.Errorf("lookup past the end: %v", res)
	}
	res := limJSON(t, 0, "lookup-time", dir, s(ts0+offset+2, 10))[0]
	if limNum(t, res, "offset") != offset+2 || limNum(t, res, "batch.position") != batches[len(batches)-1].pos {
		t.Errorf("lookup-time of the last timestamp: %v", res)
	}
	rows := limJSON(t, 0, "dump-index", filepath.Join(dir, "00000000000000000000.index"))
	if len(rows) != len(entryPos) || limNum(t, rows[len(rows)-1], "position") != lastPos {
		t.Errorf("dump-index: %d rows, the last %v", len(rows), rows[len(rows)-1])
	}
	rows = limJSON(t, 0, "dump-log", "--from-offset", s(offset-1, 10), dir)
	if len(rows) != 3 || rows[0]["crc_valid"] != true || limNum(t, rows[2], "position") != batches[len(batches)-1].pos {
		t.Errorf("dump-log of the last batches: %v", rows)
	}

	// verify reads all 2 GiB (every CRC) and finds nothing: the indexes are
	// what recovery builds; rebuild's emulation agrees.
	checks, summary := limFindings(t, limJSON(t, 0, "verify", "--strict", dir))
	if len(checks) != 0 || limNum(t, summary, "bytes") != size || limNum(t, summary, "batches") != int64(len(batches)) {
		t.Errorf("verify: %v %v", checks, summary)
	}
	for _, r := range limJSON(t, 0, "rebuild", "--dry-run", dir) {
		if r["changed"] != false || limNum(t, r, "valid_bytes") != size || limNum(t, r, "index_entries") != int64(len(entryPos)) {
			t.Errorf("rebuild --dry-run: %v", r)
		}
	}

	// One byte more than a broker allows: log.size at position MaxInt32
	// (the byte past it is not read), and nothing else.
	if err := os.Truncate(logPath, size+1); err != nil {
		t.Fatal(err)
	}
	lines := limJSON(t, 1, "verify", dir)
	if checks, _ := limFindings(t, lines); len(checks) != 1 || checks[0] != "log.size" || limNum(t, lines[0], "position") != size {
		t.Errorf("verify of a log of 2^31 bytes: %v", lines)
	}
}

// TestLimitIndexesAtCapacity: an offset index and a time index of
// segment.index.bytes (10485760 bytes: 1310720 and 873813 entries), every
// entry real, over logs of the smallest entries a broker writes (magic 0
// and magic 1 messages of 26 and 34 bytes). The indexes read as full, with
// no padding; lookups anywhere answer as brute force, through the CLI too;
// dump-index streams every entry; verify and rebuild agree the indexes are
// what recovery builds. (Those three passes over 2.2 million batches run
// without the race detector only: under it they take minutes.)
func TestLimitIndexesAtCapacity(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	const capacity = kafkagen.MaxIndexBytes
	// Segment 0: magic 1, timestamps increasing, so that the time index
	// fills first (873813 entries) as every batch but the first is indexed.
	// Segment 1: magic 0, no timestamps, 1310720 offset index entries.
	type seg struct {
		base    int64
		magic   int8
		size    int // bytes per message
		batches int
	}
	n0 := capacity / indexfmt.TimeEntrySize // 873813
	n1 := capacity / indexfmt.OffsetEntrySize
	segs := []seg{{0, 1, 34, n0 + 1}, {int64(n0 + 1), 0, 26, n1 + 1}}
	dir := filepath.Join(dataDir, "full-0")
	be := binary.BigEndian
	for _, s := range segs {
		msg := limLegacy(nil, s.magic, 0, 0)
		log := make([]byte, s.size*s.batches)
		idx := make([]byte, indexfmt.OffsetEntrySize*(s.batches-1))
		var tidx []byte
		if s.magic == 1 {
			tidx = make([]byte, indexfmt.TimeEntrySize*(s.batches-1))
		}
		for i := 0; i < s.batches; i++ {
			m := log[i*s.size : (i+1)*s.size]
			copy(m, msg)
			be.PutUint64(m, uint64(s.base+int64(i)))
			ts := int64(1700000000000 + i)
			if s.magic == 1 {
				be.PutUint64(m[18:], uint64(ts))
				be.PutUint32(m[12:], crc32.ChecksumIEEE(m[16:]))
			}
			if i == 0 {
				continue // the first batch of a segment gets no entry
			}
			e := idx[(i-1)*indexfmt.OffsetEntrySize:]
			be.PutUint32(e, uint32(i))
			be.PutUint32(e[4:], uint32(i*s.size))
			if tidx != nil {
				e := tidx[(i-1)*indexfmt.TimeEntrySize:]
				be.PutUint64(e, uint64(ts))
				be.PutUint32(e[8:], uint32(i))
			}
		}
		name := inspect.SegmentName(s.base)
		limWrite(t, dir, map[string][]byte{name + ".log": log, name + ".index": idx, name + ".timeindex": tidx})
	}
	tidx0 := filepath.Join(dir, inspect.SegmentName(0)+".timeindex")
	idx1 := filepath.Join(dir, inspect.SegmentName(segs[1].base)+".index")
	for path, want := range map[string]int64{tidx0: capacity - capacity%indexfmt.TimeEntrySize, idx1: capacity} {
		if st, err := os.Stat(path); err != nil || st.Size() != want {
			t.Fatalf("%s: %v, want %d bytes", path, err, want)
		}
	}

	// The indexes read as the broker reads them: full, no padding, the
	// sanity checks pass, lookups anywhere find the entry below.
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range segs {
		sg, err := inspect.OpenSegment(p.Segments[k], inspect.SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer sg.Close()
		n := s.batches - 1
		if got, err := sg.Index.ValidEntries(); err != nil || got != n || sg.Index.Slots() != n || sg.Index.SanityCheck() != nil {
			t.Fatalf("segment %d offset index: %d valid of %d slots, %v", k, got, sg.Index.Slots(), err)
		}
		if k == 0 {
			if got, err := sg.TimeIndex.ValidEntries(); err != nil || got != n0 || sg.TimeIndex.Slots() != n0 || sg.TimeIndex.SanityCheck() != nil {
				t.Fatalf("time index: %d valid of %d slots, %v", got, sg.TimeIndex.Slots(), err)
			}
		}
		for _, i := range []int{0, 1, 2, 4095, 4096, n / 2, n - 1, n} {
			target := s.base + int64(i)
			b, hit, found, err := sg.LookupOffset(target)
			if err != nil || !found || b.LastOffset != target || b.Position != int64(s.size*i) || hit.Slot != i-1 {
				t.Errorf("segment %d lookup %d: batch %+v, slot %d, %v %v", k, target, b, hit.Slot, found, err)
			}
		}
	}
	res := limJSON(t, 0, "lookup", dir, strconv.FormatInt(segs[1].base+int64(n1), 10))[0]
	if limNum(t, res, "index_entry.slot") != int64(n1-1) || limNum(t, res, "scanned_batches") != 1 {
		t.Errorf("lookup of the last offset: %v", res)
	}
	res = limJSON(t, 0, "lookup", dir, strconv.FormatInt(segs[1].base+int64(n1)/3, 10))[0]
	if limNum(t, res, "index_entry.slot") != int64(n1/3-1) || limNum(t, res, "batch.position") != int64(26*(n1/3)) {
		t.Errorf("lookup in the middle: %v", res)
	}
	res = limJSON(t, 0, "lookup-time", dir, strconv.Itoa(1700000000000+n0))[0]
	if limNum(t, res, "offset") != int64(n0) || limNum(t, res, "timeindex_entry.slot") != int64(n0-1) {
		t.Errorf("lookup-time of the last timestamp: %v", res)
	}
	if limRace {
		t.Log("race detector on: dump-index, verify and rebuild over the 2.2 million batches are left to runs without it")
		return
	}

	// dump-index streams every entry of the full offset index (a table would
	// hold them all first: see docs/reliability.md), and reports no padding.
	lines, last, stderr, code := limStream(t, "-o", "json", "dump-index", idx1)
	if code != 0 || lines != n1 || strings.Contains(stderr, "padding") ||
		!strings.HasSuffix(last, fmt.Sprintf(`"offset":%d,"relative_offset":%d,"position":%d}`, segs[1].base+int64(n1), n1, 26*n1)) {
		t.Errorf("dump-index of the full offset index: exit %d, %d lines for %d entries; stderr %q; the last %q", code, lines, n1, stderr, last)
	}
	// verify: no finding, with the index interval the files were built with.
	checks, summary := limFindings(t, limJSON(t, 0, "verify", "--strict", "--index-interval-bytes", "0", dir))
	if len(checks) != 0 || limNum(t, summary, "batches") != int64(segs[0].batches+segs[1].batches) {
		t.Errorf("verify: %v %v", checks, summary)
	}
	for _, r := range limJSON(t, 0, "rebuild", "--dry-run", "--index-interval-bytes", "0", dir) {
		if r["changed"] != false {
			t.Errorf("rebuild --dry-run: %v", r)
		}
	}
}

// TestLimitOffsetsNearInt64Max: a generated partition whose last offset
// is MaxInt64-1, so that its log end offset is MaxInt64 itself (20-digit
// names starting 92233720368547...). Every command answers as on any
// other partition; verify finds nothing and rebuild changes nothing.
func TestLimitOffsetsNearInt64Max(t *testing.T) {
	o := kafkagen.Options{Seed: 71, Segments: 3, Batches: 20, RecordsPerBatch: 5, CompactionGaps: true, Transactions: true, IndexIntervalBytes: 300}
	probe, err := kafkagen.Generate(filepath.Join(t.TempDir(), "probe-0"), o)
	if err != nil {
		t.Fatal(err)
	}
	o.StartOffset = math.MaxInt64 - probe.LogEndOffset
	dir := filepath.Join(t.TempDir(), "high-0")
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if m.LogEndOffset != math.MaxInt64 {
		t.Fatalf("log end offset %d, want MaxInt64 (the generator's offsets depend on the start offset?)", m.LogEndOffset)
	}
	all := m.Batches()
	lastB := all[len(all)-1]
	s := strconv.FormatInt
	res := limJSON(t, 0, "lookup", dir, s(math.MaxInt64-1, 10))[0]
	if limNum(t, res, "batch.position") != lastB.Position || res["segment"] != inspect.SegmentName(m.Segments[2].BaseOffset)+".log" {
		t.Errorf("lookup MaxInt64-1: %v", res)
	}
	if res := limJSON(t, 1, "lookup", dir, s(math.MaxInt64, 10))[0]; res["found"] != false || !strings.Contains(fmt.Sprint(res["reason"]), s(math.MaxInt64, 10)) {
		t.Errorf("lookup MaxInt64: %v", res)
	}
	res = limJSON(t, 0, "lookup", dir, s(o.StartOffset, 10))[0]
	if limNum(t, res, "batch.position") != 0 || res["segment"] != inspect.SegmentName(o.StartOffset)+".log" {
		t.Errorf("lookup of the first offset: %v", res)
	}
	res = limJSON(t, 0, "lookup-time", dir, "latest")[0]
	if limNum(t, res, "offset") != math.MaxInt64 {
		t.Errorf("lookup-time latest: %v", res)
	}
	out, _, code := runKseg(t, nil, "-o", "csv", "lookup-time", dir, "latest")
	if code != 0 || !strings.Contains(out, s(math.MaxInt64, 10)) {
		t.Errorf("lookup-time latest, csv: exit %d: %q (offsets must print exactly)", code, out)
	}
	rows := limJSON(t, 0, "dump-log", "--from-offset", s(math.MaxInt64-3, 10), "--to-offset", s(math.MaxInt64, 10), dir)
	if len(rows) == 0 || limNum(t, rows[len(rows)-1], "position") != lastB.Position {
		t.Errorf("dump-log of the last offsets: %v", rows)
	}
	checks, _ := limFindings(t, limJSON(t, 0, "verify", "--strict", "--records", "--index-interval-bytes", "300", dir))
	if len(checks) != 0 {
		t.Errorf("verify: %v", checks)
	}
	for _, r := range limJSON(t, 0, "rebuild", "--dry-run", "--index-interval-bytes", "300", dir) {
		if r["changed"] != false {
			t.Errorf("rebuild --dry-run: %v", r)
		}
	}

	// One batch past the limit: base MaxInt64-1 with a last offset delta of
	// 5 wraps around in 64-bit arithmetic (the broker computes
	// baseOffset + lastOffsetDelta as a Java long, which wraps the same
	// way). kseg reports it, and does not crash.
	wrap := limV2Batch(math.MaxInt64-1, 5, 6, 1700000000000)
	over := filepath.Join(t.TempDir(), "wrap-0")
	base := int64(math.MaxInt64 - 10)
	limWrite(t, over, map[string][]byte{inspect.SegmentName(base) + ".log": append(limV2Batch(base, 2, 3, 1700000000000), wrap...)})
	lines := limJSON(t, 1, "verify", over)
	if checks, _ = limFindings(t, lines); len(checks) != 1 || checks[0] != "log.offset-range" || limNum(t, lines[0], "position") != int64(len(limV2Batch(base, 2, 3, 1700000000000))) ||
		!strings.Contains(fmt.Sprint(lines[0]["message"]), "past 2^63-1") {
		t.Errorf("verify of a batch whose last offset wraps past MaxInt64: %v", lines)
	}
	for _, args := range [][]string{{"lookup", over, s(math.MaxInt64-1, 10)}, {"lookup-time", over, "max"}, {"dump-log", "--records", over}, {"rebuild", "--dry-run", over}} {
		mangleRun(t, "a batch wrapping past MaxInt64", append([]string{"-o", "json"}, args...)...)
	}
}

// TestLimitRelativeOffsetsNearInt32Max: a segment whose last batch ends at
// base + MaxInt32, the largest offset an index entry can hold relative to
// its base (a compacted segment can span that much). Its index entries
// carry relative offset MaxInt32. One more offset does not fit: verify
// calls it log.offset-range (the broker would split the segment).
func TestLimitRelativeOffsetsNearInt32Max(t *testing.T) {
	const base = 1000
	const ts0 = 1700000000000
	b1 := limV2Batch(base, 2, 3, ts0)
	b2 := limV2Batch(base+math.MaxInt32-3, 3, 2, ts0+1) // records at MaxInt32-3 and MaxInt32
	dir := filepath.Join(t.TempDir(), "span-0")
	name := inspect.SegmentName(base)
	log := append(append([]byte(nil), b1...), b2...)
	limWrite(t, dir, map[string][]byte{
		name + ".log":       log,
		name + ".index":     indexfmt.AppendOffsetEntry(nil, math.MaxInt32, int32(len(b1))),
		name + ".timeindex": indexfmt.AppendTimeEntry(nil, ts0+1, math.MaxInt32),
	})
	s := strconv.FormatInt
	for target, pos := range map[int64]int64{base + math.MaxInt32: int64(len(b1)), base + 100: int64(len(b1)), base + 1: 0} {
		res := limJSON(t, 0, "lookup", dir, s(target, 10))[0]
		if limNum(t, res, "batch.position") != pos {
			t.Errorf("lookup %d: %v", target, res)
		}
	}
	rows := limJSON(t, 0, "dump-index", filepath.Join(dir, name+".index"))
	if len(rows) != 1 || limNum(t, rows[0], "relative_offset") != math.MaxInt32 || limNum(t, rows[0], "offset") != base+math.MaxInt32 {
		t.Errorf("dump-index: %v", rows)
	}
	res := limJSON(t, 0, "lookup-time", dir, s(ts0+1, 10))[0]
	if limNum(t, res, "offset") != base+math.MaxInt32-3 || limNum(t, res, "timeindex_entry.offset") != base+math.MaxInt32 {
		t.Errorf("lookup-time: %v", res)
	}
	checks, _ := limFindings(t, limJSON(t, 0, "verify", "--strict", "--records", "--index-interval-bytes", "0", dir))
	if len(checks) != 0 {
		t.Errorf("verify: %v", checks)
	}
	for _, r := range limJSON(t, 0, "rebuild", "--dry-run", "--index-interval-bytes", "0", dir) {
		if r["changed"] != false || limNum(t, r, "index_entries") != 1 {
			t.Errorf("rebuild --dry-run: %v", r)
		}
	}

	// base + MaxInt32 + 1 is not representable relative to the base.
	b3 := limV2Batch(base+math.MaxInt32+1, 0, 1, ts0+2)
	limWrite(t, dir, map[string][]byte{name + ".log": append(log, b3...)})
	checks, _ = limFindings(t, limJSON(t, 1, "verify", "--index-interval-bytes", "0", dir))
	found := false
	for _, c := range checks {
		found = found || c == "log.offset-range"
	}
	if !found {
		t.Errorf("verify with offset base+MaxInt32+1: checks %v, want log.offset-range", checks)
	}
	for _, args := range [][]string{{"lookup", dir, s(base+math.MaxInt32+1, 10)}, {"rebuild", "--dry-run", dir}, {"dump-log", dir}} {
		mangleRun(t, "an offset past base+MaxInt32", append([]string{"-o", "json"}, args...)...)
	}
}

// TestLimitThousandsOfPartitions: a data directory of 2000 partitions (20
// topics of 100; -short: 1000, 10 topics), each one segment. rebuild
// --dry-run and dump-index cover all of them and release every file they
// open; verify covers all of them in a process limited to 64 open files.
func TestLimitThousandsOfPartitions(t *testing.T) {
	src, err := kafkagen.Generate(filepath.Join(t.TempDir(), "src-0"), kafkagen.Options{Seed: 81, Batches: 3, RecordsPerBatch: 2, ValueSize: 10, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	if err != nil {
		t.Fatal(err)
	}
	seg := &src.Segments[0]
	dataDir := filepath.Join(t.TempDir(), "data")
	topics, partitions := 20, 100
	if testing.Short() {
		topics = 10
	}
	for tp := 0; tp < topics; tp++ {
		for p := 0; p < partitions; p++ {
			dir := filepath.Join(dataDir, fmt.Sprintf("topic%02d-%d", tp, p))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			// Hard links: the same bytes in every partition, quick to make.
			for _, f := range []string{src.LogPath(seg), src.IndexPath(seg), src.TimeIndexPath(seg)} {
				if err := os.Link(f, filepath.Join(dir, filepath.Base(f))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	n := topics * partitions
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()
	rows := limJSON(t, 0, "rebuild", "--dry-run", "--index-interval-bytes", "0", dataDir)
	if len(rows) != n {
		t.Errorf("rebuild --dry-run: %d rows for %d segments", len(rows), n)
	}
	for _, r := range rows {
		if r["changed"] != false {
			t.Fatalf("rebuild --dry-run: %v", r)
		}
	}
	if rows := limJSON(t, 0, "dump-index", dataDir); len(rows) != n*(seg.IndexEntries+seg.TimeIndexEntries) {
		t.Errorf("dump-index: %d rows, want %d", len(rows), n*(seg.IndexEntries+seg.TimeIndexEntries))
	}
	if after := fds(); after != before {
		t.Errorf("%d open files before the commands, %d after", before, after)
	}

	// verify in a process limited to 64 open files (soft and hard: Go
	// cannot raise it), with two segments checked at once.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(sh, "-c", `ulimit -n 64 && exec "$0" "$@"`, ksegExecutable(t), "-o", "json", "verify", "--strict", "-j", "2", "--index-interval-bytes", "0", dataDir)
	out, err := c.Output()
	if err != nil {
		t.Fatalf("verify under 64 open files: %v: %s", err, out)
	}
	want := fmt.Sprintf(`{"kind":"summary","partitions":%d,"segments":%d,"batches":%d,`, n, n, 3*n)
	if !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), `"errors":0,"warnings":0,"infos":0}`) {
		t.Errorf("verify under 64 open files: %s; want a clean summary starting %s", out, want)
	}
}

package inspect_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
)

// Files changing underneath kseg: a segment or index cut by another
// process while kseg has it mapped (the broker's truncateTo, retention, an
// operator's rm), and an active segment a broker keeps appending to.

// liveGenerate writes a one-partition data directory and returns the
// partition directory and its manifest.
func liveGenerate(t *testing.T, o kafkagen.Options) (string, *kafkagen.Manifest) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "live-0")
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// truncateFromAnotherProcess cuts path to size with the truncate(1) tool, a
// process other than the one holding the mapping; without the tool it
// falls back to truncate(2) from this process, which faults the mapping
// the same way.
func truncateFromAnotherProcess(t *testing.T, path string, size int64) {
	t.Helper()
	if tool, err := exec.LookPath("truncate"); err == nil {
		if out, err := exec.Command(tool, "-s", strconv.FormatInt(size, 10), path).CombinedOutput(); err != nil {
			t.Fatalf("truncate %s: %v: %s", path, err, out)
		}
		return
	}
	t.Logf("no truncate(1) in PATH: truncating %s from this process", path)
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// wantFault requires err to be a *CorruptError of kind ErrFault naming file.
func wantFault(t *testing.T, what string, err error, file string) {
	t.Helper()
	var ce *fileio.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, fileio.ErrFault) {
		t.Fatalf("%s: got %v (%T), want a *CorruptError of kind ErrFault", what, err, err)
	}
	if ce.File != file {
		t.Fatalf("%s: the error names %q, want %q: %v", what, ce.File, file, err)
	}
}

// TestMappedLogTruncatedUnderneath: a .log cut by another process after
// kseg mapped it raises SIGBUS on the next access to the lost pages; the
// fault guard turns it into an error naming the file, and the process
// lives on to use the other files.
func TestMappedLogTruncatedUnderneath(t *testing.T) {
	dir, m := liveGenerate(t, kafkagen.Options{Seed: 41, Batches: 300, IndexIntervalBytes: 1000})
	seg := &m.Segments[0]
	if seg.LogSize < 8*4096 {
		t.Fatalf("log of %d bytes: too small to span several pages", seg.LogSize)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	logPath := m.LogPath(seg)
	last := seg.Batches[len(seg.Batches)-1]

	s, err := inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The same segment with the log mapped too: its lookups read the
	// mappings under one fault guard for the whole lookup.
	sm, err := inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{Log: fileio.Options{Mapped: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	// Before the cut the lookups answer (and touch the last pages).
	for _, s := range []*inspect.Segment{s, sm} {
		if b, _, found, err := s.LookupOffset(last.LastOffset); err != nil || !found || b.Position != last.Position {
			t.Fatalf("before the cut: %+v %v %v", b, found, err)
		}
	}
	if a, err := sm.LookupTimestamp(last.MaxTimestamp, sm.BaseOffset); err != nil || !a.Found {
		t.Fatalf("timestamp lookup before the cut: %+v %v", a, err)
	}

	// Cut to one page: the header scan of the last batches now reads pages
	// the file no longer has.
	truncateFromAnotherProcess(t, logPath, 4096)
	_, _, _, err = s.LookupOffset(last.LastOffset)
	wantFault(t, "LookupOffset after the cut", err, logPath)
	_, _, _, err = sm.LookupOffset(last.LastOffset)
	wantFault(t, "LookupOffset after the cut, log mapped", err, logPath)
	_, err = sm.LookupTimestamp(last.MaxTimestamp, sm.BaseOffset)
	wantFault(t, "LookupTimestamp after the cut, log mapped", err, logPath)
	// Every mapped read of a lost page says the same, including a scan
	// over the whole file as opened.
	sc := s.Batches(0)
	n := 0
	for sc.Next() {
		if b := sc.Batch(); b.Position != seg.Batches[n].Position || b.LastOffset != seg.Batches[n].LastOffset {
			t.Fatalf("batch %d before the fault: %+v, manifest %+v", n, b, seg.Batches[n])
		}
		n++
	}
	wantFault(t, "Scan after the cut", sc.Err(), logPath)
	var ce *fileio.CorruptError
	errors.As(sc.Err(), &ce)
	// The pages up to the new size are still there: the scan stopped at or
	// after the first batch crossing into a lost page.
	if ce.Position < 4096-record.HeaderReadSize || ce.Position > 2*4096 {
		t.Errorf("fault at position %d, the file was cut to 4096 bytes", ce.Position)
	}
	if n == 0 {
		t.Errorf("no batch read before the fault, though the first page is intact")
	}
	// The same process still works: a fresh open sees the new size and
	// reports a torn tail, as for any damaged file.
	p2, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p2.LookupOffset(last.LastOffset, inspect.LookupOptions{})
	if err != nil || res.Found {
		t.Errorf("after reopening: %+v %v, want not found", res, err)
	}
}

// TestMappedIndexTruncatedUnderneath: the offset and time indexes cut to
// zero bytes while mapped: the next search fails naming the index file.
func TestMappedIndexTruncatedUnderneath(t *testing.T) {
	// Enough entries to need several pages: the cut makes every slot read a
	// fault, not a short read.
	dir, m := liveGenerate(t, kafkagen.Options{Seed: 42, Batches: 2000, RecordsPerBatch: 2, ValueSize: 8, IndexIntervalBytes: kafkagen.IndexEveryBatch})
	seg := &m.Segments[0]
	if seg.IndexFileSize < 3*4096 || seg.TimeIndexFileSize < 3*4096 {
		t.Fatalf("indexes of %d and %d bytes: too small", seg.IndexFileSize, seg.TimeIndexFileSize)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	target := seg.Batches[len(seg.Batches)/2].LastOffset
	if _, _, found, err := s.LookupOffset(target); err != nil || !found {
		t.Fatalf("before the cut: %v %v", found, err)
	}
	truncateFromAnotherProcess(t, m.IndexPath(seg), 0)
	truncateFromAnotherProcess(t, m.TimeIndexPath(seg), 0)
	_, _, _, err = s.LookupOffset(target)
	wantFault(t, "LookupOffset", err, m.IndexPath(seg))
	_, err = s.LookupTimestamp(seg.Batches[10].MaxTimestamp, s.BaseOffset)
	wantFault(t, "LookupTimestamp", err, m.TimeIndexPath(seg))
	_, _, err = s.TimeIndex.Lookup(seg.Batches[10].MaxTimestamp, nil)
	wantFault(t, "TimeIndex.Lookup", err, m.TimeIndexPath(seg))
	if _, err := s.Index.ValidEntries(); err == nil {
		t.Errorf("ValidEntries over a cut index: no error")
	} else {
		wantFault(t, "ValidEntries", err, m.IndexPath(seg))
	}
}

// TestPreadFileTruncatedUnderneath: the pread path (verify, rebuild,
// dump-log) reports a file that became shorter than when it was opened as
// ErrFault too, naming the file, instead of a silent short read.
func TestPreadFileTruncatedUnderneath(t *testing.T) {
	_, m := liveGenerate(t, kafkagen.Options{Seed: 43, Batches: 100})
	seg := &m.Segments[0]
	logPath := m.LogPath(seg)
	f, err := fileio.Open(logPath, fileio.Options{CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	truncateFromAnotherProcess(t, logPath, seg.LogSize/2)
	s := inspect.NewLogIterator(inspect.IterOptions{Window: 4096})
	s.Reset(f, nil, 0)
	n := 0
	for s.Next() {
		if _, err := s.Entry(); err != nil {
			wantFault(t, "Entry", err, logPath)
			return
		}
		n++
	}
	wantFault(t, "LogIterator", s.Err(), logPath)
	if n == 0 || int64(n) >= int64(len(seg.Batches)) {
		t.Errorf("%d of %d batches read before the fault", n, len(seg.Batches))
	}
}

// TestConcurrentTruncationNeverCrashes: one goroutine cuts and restores a
// segment's files again and again while another runs lookups and scans on
// mappings that may be cut at any instant. Every outcome must be an answer
// that agrees with the manifest or an error naming the file; a SIGBUS that
// escaped the guard would kill the test binary.
func TestConcurrentTruncationNeverCrashes(t *testing.T) {
	dir, m := liveGenerate(t, kafkagen.Options{Seed: 44, Batches: 400, IndexIntervalBytes: 2000})
	seg := &m.Segments[0]
	logPath, idxPath := m.LogPath(seg), m.IndexPath(seg)
	logBytes, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	idxBytes, err := os.ReadFile(idxPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	byLast := map[int64]kafkagen.BatchManifest{}
	for _, b := range seg.Batches {
		byLast[b.LastOffset] = b
	}

	const rounds = 300
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(44, 1))
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Cut in place (the inode the reader mapped), then restore.
			_ = os.Truncate(logPath, rng.Int64N(int64(len(logBytes))))
			_ = os.Truncate(idxPath, rng.Int64N(int64(len(idxBytes))+1))
			_ = os.WriteFile(logPath, logBytes, 0o644)
			_ = os.WriteFile(idxPath, idxBytes, 0o644)
		}
	}()
	rng := rand.New(rand.NewPCG(44, 2))
	faults, answers := 0, 0
	for i := 0; i < rounds; i++ {
		s, err := inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{})
		if err != nil {
			continue // a file may be absent for an instant of WriteFile's truncation: fine
		}
		target := seg.Batches[rng.IntN(len(seg.Batches))].LastOffset
		b, _, found, err := s.LookupOffset(target)
		switch {
		case err != nil:
			var ce *fileio.CorruptError
			if !errors.As(err, &ce) || (ce.File != logPath && ce.File != idxPath) {
				t.Errorf("round %d: %v: not a CorruptError naming the log or the index", i, err)
			}
			if errors.Is(err, fileio.ErrFault) {
				faults++
			}
		case found:
			// A batch read whole through the mapping is either the
			// manifest's or bytes of a file being rewritten; a header the
			// manifest knows must match it exactly.
			if mb, ok := byLast[b.LastOffset]; ok && b.BaseOffset == mb.BaseOffset && b.Position != mb.Position {
				t.Errorf("round %d: batch %d..%d at %d, manifest says %d", i, b.BaseOffset, b.LastOffset, b.Position, mb.Position)
			}
			answers++
		}
		sc := s.Batches(0)
		for sc.Next() {
		}
		if err := sc.Err(); err != nil {
			var ce *fileio.CorruptError
			if !errors.As(err, &ce) || ce.File != logPath {
				t.Errorf("round %d: scan: %v", i, err)
			}
		}
		s.Close()
	}
	close(stop)
	wg.Wait()
	t.Logf("%d rounds: %d answers, %d faults turned into errors", rounds, answers, faults)
}

// TestGrowingLogReadToAConsistentPoint: a goroutine appends whole batches
// to the active segment, as a broker does, while lookups and walks run.
// Each reader works on the file as it was when it opened it: everything
// that was fully written by then is read exactly as the manifest has it,
// nothing is invented past it, and a batch caught half written can only
// show up as a torn tail exactly where that batch starts.
func TestGrowingLogReadToAConsistentPoint(t *testing.T) {
	dir, m := liveGenerate(t, kafkagen.Options{Seed: 45, Batches: 600, RecordsPerBatch: 3, IndexIntervalBytes: 1500})
	seg := &m.Segments[0]
	logPath := m.LogPath(seg)
	full, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	batches := seg.Batches
	// Start with the first 50 batches and indexes that cover only them (a
	// broker writes the log, then the index entry).
	initial := batches[50].Position
	if err := os.WriteFile(logPath, full[:initial], 0o644); err != nil {
		t.Fatal(err)
	}
	var idx, tidx []byte
	for _, e := range seg.OffsetIndex {
		if int64(e.Position) < initial {
			idx = indexfmt.AppendOffsetEntry(idx, int32(e.Offset-seg.BaseOffset), e.Position)
		}
	}
	for _, e := range seg.TimeIndex {
		if e.Offset < batches[50].BaseOffset {
			tidx = indexfmt.AppendTimeEntry(tidx, e.Timestamp, int32(e.Offset-seg.BaseOffset))
		}
	}
	if err := os.WriteFile(m.IndexPath(seg), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.TimeIndexPath(seg), tidx, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	// committed: the number of batches wholly inside size bytes.
	committed := func(size int64) int {
		n := 0
		for n < len(batches) && batches[n].Position+batches[n].Size <= size {
			n++
		}
		return n
	}

	// The appender goes at the readers' pace: it waits for a round of reads
	// to start before each few batches, so that appends and reads overlap
	// all along. One batch in five is written in two halves with a round
	// in between, as a reader can catch a broker's write half done.
	done := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	tick := make(chan struct{}, 1)
	wait := func() bool {
		select {
		case <-tick:
			return true
		case <-stop:
			return false
		}
	}
	appendErr := make(chan error, 1)
	go func() {
		defer close(done)
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			appendErr <- err
			return
		}
		defer f.Close()
		for i, b := range batches[50:] {
			entry := full[b.Position : b.Position+b.Size]
			if i%5 == 0 {
				if _, err := f.Write(entry[:b.Size/2]); err != nil {
					appendErr <- err
					return
				}
				if !wait() {
					return
				}
				entry = entry[b.Size/2:]
			}
			if _, err := f.Write(entry); err != nil {
				appendErr <- err
				return
			}
			if i%3 == 0 && !wait() {
				return
			}
		}
		appendErr <- nil
	}()

	rng := rand.New(rand.NewPCG(45, 1))
	rounds, finished, torn := 0, false, 0
	for !finished {
		select {
		case <-done:
			finished = true // one more round over the complete log
		default:
		}
		rounds++
		select {
		case tick <- struct{}{}:
		default:
		}
		st, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		before := committed(st.Size())

		// An offset lookup.
		wi := rng.IntN(len(batches))
		want := batches[wi]
		target := want.LastOffset - rng.Int64N(want.LastOffset-want.BaseOffset+1)
		res, err := p.LookupOffset(target, inspect.LookupOptions{})
		if err != nil {
			t.Fatalf("round %d: LookupOffset(%d): %v", rounds, target, err)
		}
		if res.Found {
			if res.Batch.Position != want.Position || res.Batch.LastOffset != want.LastOffset || res.Batch.Size != want.Size {
				t.Fatalf("round %d: LookupOffset(%d) = batch at %d (%d..%d), manifest: at %d (%d..%d)", rounds, target,
					res.Batch.Position, res.Batch.BaseOffset, res.Batch.LastOffset, want.Position, want.BaseOffset, want.LastOffset)
			}
		} else if wi < before {
			t.Fatalf("round %d: offset %d not found, but its batch was written before the lookup (%s)", rounds, target, res.Reason)
		}

		// A walk over everything.
		n := 0
		err = p.Walk(inspect.LogRange{}, func(wb inspect.WalkBatch) error {
			b := batches[n]
			if wb.Batch.Position != b.Position || wb.Batch.LastOffset != b.LastOffset || !wb.CRCValid || int64(len(wb.Entry)) != b.Size {
				t.Fatalf("round %d: walk batch %d at %d (crc ok %v), manifest at %d", rounds, n, wb.Batch.Position, wb.CRCValid, b.Position)
			}
			n++
			return nil
		})
		if n < before {
			t.Fatalf("round %d: walk read %d batches, %d were written before it started", rounds, n, before)
		}
		if err != nil {
			var ce *fileio.CorruptError
			if !errors.Is(err, fileio.ErrTorn) || !errors.As(err, &ce) || ce.File != logPath || n >= len(batches) || ce.Position != batches[n].Position {
				t.Fatalf("round %d: walk stopped after %d batches with %v; only a torn tail where batch %d starts is possible", rounds, n, err, n)
			}
			torn++
		}

		// The log end offset as the broker reads it at load.
		s, err := inspect.OpenSegment(p.Segments[0], inspect.SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		next, err := s.NextOffset()
		k := committed(s.LogSize)
		s.Close()
		if err != nil || k < before || next != batches[k-1].LastOffset+1 {
			t.Fatalf("round %d: NextOffset %d, %v; the %d batches inside the size at open end at %d", rounds, next, err, k, batches[k-1].LastOffset+1)
		}
	}
	if err := <-appendErr; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rounds of reads while %d batches were appended; %d walks ended at a batch half written", rounds, len(batches)-50, torn)
}

// TestLookupsOnAPartitionWithoutSegments: a directory without segment
// files, read with ReadPartition (Resolve refuses it, a library caller need
// not), answers every lookup with "not found" instead of panicking.
func TestLookupsOnAPartitionWithoutSegments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := inspect.ReadPartition(dir)
	if err != nil || len(p.Segments) != 0 {
		t.Fatalf("ReadPartition: %d segments, %v", len(p.Segments), err)
	}
	for _, trace := range []bool{false, true} {
		o := inspect.LookupOptions{Trace: trace}
		if r, err := p.LookupOffset(5, o); err != nil || r.Found || r.Reason == "" {
			t.Errorf("LookupOffset: %+v, %v", r, err)
		}
		for _, ts := range []int64{1700000000000, inspect.TimestampEarliest, inspect.TimestampLatest, inspect.TimestampMax} {
			if r, err := p.LookupTime(ts, o); err != nil || r.Found || r.Reason == "" {
				t.Errorf("LookupTime(%d): %+v, %v", ts, r, err)
			}
		}
		if _, err := p.LookupTime(-7, o); err == nil {
			t.Errorf("LookupTime(-7): no error for a timestamp that cannot be searched")
		}
	}
	if err := p.Walk(inspect.LogRange{}, func(inspect.WalkBatch) error { t.Error("a batch"); return nil }); err != nil {
		t.Errorf("Walk: %v", err)
	}
}

package verify

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kseg/kseg/indexfmt"
	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/kafkagen/gentest/fixtures"
	"github.com/kseg/kseg/inspect/sidefile"
)

// sfDataDir generates a partition <data>/orders-0 and the data directory's
// checkpoint files as a broker leaves them after a clean shutdown.
func sfDataDir(t *testing.T, o kafkagen.Options) (data, dir string, m *kafkagen.Manifest) {
	t.Helper()
	data = t.TempDir()
	dir = filepath.Join(data, "orders-0")
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	cp := func(name string, off int64) {
		b := sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: off}, {Topic: "other", Partition: 3, Offset: 7}})
		sfWrite(t, filepath.Join(data, name), b)
	}
	cp(sidefile.RecoveryPointCheckpointFile, m.LogEndOffset)
	cp(sidefile.ReplicationCheckpointFile, m.LogEndOffset)
	sfWrite(t, filepath.Join(data, sidefile.LogStartOffsetCheckpointFile), []byte("0\n0\n"))
	sfWrite(t, filepath.Join(data, sidefile.MetaPropertiesFile), []byte("#\n#Mon Jan 01 00:00:00 UTC 2024\nnode.id=1\nversion=1\ncluster.id=abc\n"))
	return data, dir, m
}

func sfWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sfRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sfVerify runs verify with side-file checks and returns the findings of
// the side-file check ids only.
func sfVerify(t *testing.T, path string) []Finding {
	t.Helper()
	got, _ := verifyPath(t, path, Options{SideFiles: true, Jobs: 2})
	var out []Finding
	for _, f := range got {
		if slices.Contains(SideFileChecks(), f.Check) {
			out = append(out, f)
		}
	}
	return out
}

func sfDescribe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		pos, off := "null", "null"
		if f.Position != nil {
			pos = fmt.Sprint(*f.Position)
		}
		if f.Offset != nil {
			off = fmt.Sprint(*f.Offset)
		}
		fmt.Fprintf(&b, "\n  %s %s %s @%s offset %s: %s", f.Severity, f.Check, filepath.Base(f.File), pos, off, f.Message)
	}
	return b.String()
}

// sfExpect asserts exactly one side-file finding with the check, file base
// name and position (-1: null).
func sfExpect(t *testing.T, name string, got []Finding, check, file string, pos int64) {
	t.Helper()
	if len(got) != 1 || got[0].Check != check || filepath.Base(got[0].File) != file ||
		(pos < 0) != (got[0].Position == nil) || (pos >= 0 && *got[0].Position != pos) || got[0].Severity != Severity(check) {
		t.Errorf("%s: findings %s\n  want one %s in %s at %d", name, sfDescribe(got), check, file, pos)
	}
}

var sfShape = kafkagen.Options{Seed: 31, Segments: 3, Batches: 60, Transactions: true, LeaderEpoch: 2, LeaderEpochBumps: true, IndexIntervalBytes: 1024}

// TestSideFilesClean: generated partitions in a data directory as a clean
// broker leaves them have no side-file findings, and the shapes hold
// aborted transactions, so txnindex.mismatch had something to compare.
func TestSideFilesClean(t *testing.T) {
	for i, o := range []kafkagen.Options{sfShape,
		{Seed: 32, Segments: 2, Batches: 50, Transactions: true, Compression: "zstd", CompactionGaps: true},
		{Seed: 33, Segments: 2, Batches: 30, EmptyActiveSegment: true},
		{Seed: 34, Segments: 2, Batches: 30, Transactions: true, PreallocatedIndexBytes: 4096},
		{Seed: 35, Segments: 1, Batches: 30, Magic: 1},
	} {
		data, _, m := sfDataDir(t, o)
		if got := sfVerify(t, data); len(got) != 0 {
			t.Errorf("shape %d: %s", i, sfDescribe(got))
		}
		if i == 0 {
			aborts := 0
			for _, s := range m.Segments {
				aborts += s.TxnEntries
			}
			if aborts < 3 {
				t.Fatalf("shape 0 has %d aborted transactions", aborts)
			}
		}
	}
}

func TestSnapshotFindings(t *testing.T) {
	data, dir, m := sfDataDir(t, sfShape)
	fresh := func() {
		os.RemoveAll(data)
		data, dir, m = sfDataDir(t, sfShape)
	}
	snap := func(off int64) string { return filepath.Join(dir, kafkagen.SegmentName(off)+".snapshot") }

	// CRC: one byte of an entry flipped.
	b := sfRead(t, snap(m.Snapshots[0]))
	if len(b) < 56 {
		t.Fatalf("the first snapshot has no producer (%d bytes)", len(b))
	}
	b[len(b)-1] ^= 1
	sfWrite(t, snap(m.Snapshots[0]), b)
	sfExpect(t, "crc", sfVerify(t, data), SnapshotCRC, filepath.Base(snap(m.Snapshots[0])), 2)

	// Unknown version.
	fresh()
	b = sfRead(t, snap(m.LogEndOffset))
	b[1] = 2
	sfWrite(t, snap(m.LogEndOffset), b)
	sfExpect(t, "version", sfVerify(t, data), SnapshotFormat, filepath.Base(snap(m.LogEndOffset)), 0)

	// Entries cut.
	fresh()
	b = sfRead(t, snap(m.Snapshots[0]))
	n := (len(b) - 10) / 46
	sfWrite(t, snap(m.Snapshots[0]), b[:len(b)-10])
	sfExpect(t, "cut", sfVerify(t, data), SnapshotFormat, filepath.Base(snap(m.Snapshots[0])), int64(10+46*(n-1)))

	// Beyond the log end offset.
	fresh()
	sfWrite(t, snap(m.LogEndOffset+100), sidefile.AppendProducerSnapshot(nil, nil))
	sfExpect(t, "beyond", sfVerify(t, data), SnapshotOffset, filepath.Base(snap(m.LogEndOffset+100)), -1)

	// Inside a batch of several records.
	fresh()
	var inside int64 = -1
	for _, bm := range m.Segments[1].Batches {
		if bm.LastOffset > bm.BaseOffset+1 && !bm.Control {
			inside = bm.BaseOffset + 1
			break
		}
	}
	if inside < 0 {
		t.Fatal("no multi-record batch")
	}
	sfWrite(t, snap(inside), sidefile.AppendProducerSnapshot(nil, nil))
	sfExpect(t, "inside a batch", sfVerify(t, data), SnapshotOffset, filepath.Base(snap(inside)), -1)

	// A stray snapshot at a batch boundary (as an older clean shutdown
	// leaves): the broker deletes it at load; no finding.
	fresh()
	bm := m.Segments[1].Batches[5]
	sfWrite(t, snap(bm.LastOffset+1), sidefile.AppendProducerSnapshot(nil, nil))
	if got := sfVerify(t, data); len(got) != 0 {
		t.Errorf("stray snapshot at a boundary: %s", sfDescribe(got))
	}
}

func TestCheckpointFindings(t *testing.T) {
	data, dir, m := sfDataDir(t, sfShape)
	fresh := func() {
		os.RemoveAll(data)
		data, dir, m = sfDataDir(t, sfShape)
	}
	cp := func(name string, entries ...sidefile.OffsetCheckpointEntry) {
		sfWrite(t, filepath.Join(data, name), sidefile.AppendOffsetCheckpoint(nil, entries))
	}

	cp(sidefile.RecoveryPointCheckpointFile, sidefile.OffsetCheckpointEntry{Topic: "orders", Partition: 0, Offset: m.LogEndOffset + 5})
	got := sfVerify(t, data)
	sfExpect(t, "recovery point", got, CheckpointRecoveryPoint, sidefile.RecoveryPointCheckpointFile, -1)
	if len(got) == 1 && (got[0].Offset == nil || *got[0].Offset != m.LogEndOffset+5) {
		t.Errorf("recovery point offset %v", got[0].Offset)
	}

	fresh()
	cp(sidefile.LogStartOffsetCheckpointFile, sidefile.OffsetCheckpointEntry{Topic: "orders", Partition: 0, Offset: m.LogEndOffset + 1})
	sfExpect(t, "log start", sfVerify(t, data), CheckpointLogStart, sidefile.LogStartOffsetCheckpointFile, -1)
	// At the log end: an empty log, fine.
	cp(sidefile.LogStartOffsetCheckpointFile, sidefile.OffsetCheckpointEntry{Topic: "orders", Partition: 0, Offset: m.LogEndOffset})
	if got := sfVerify(t, data); len(got) != 0 {
		t.Errorf("log start at the log end: %s", sfDescribe(got))
	}

	for _, c := range []struct {
		name, file string
		content    string
		pos        int64
	}{
		{"recovery point count", sidefile.RecoveryPointCheckpointFile, "0\n2\norders 0 5\n", 15},
		{"replication blank line", sidefile.ReplicationCheckpointFile, "0\n1\norders 0 5\n\n", 15},
		{"cleaner version", sidefile.CleanerCheckpointFile, "1\n0\n", 0},
		{"log start fields", sidefile.LogStartOffsetCheckpointFile, "0\n1\norders 0\n", 4},
		{"meta.properties", sidefile.MetaPropertiesFile, "version=1\ncluster.id=x\n", -1},
		{"leader epochs", filepath.Join("orders-0", sidefile.LeaderEpochCheckpointFile), "0\n1\n2 x\n", 4},
		{"partition.metadata", filepath.Join("orders-0", sidefile.PartitionMetadataFile), "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 11},
	} {
		fresh()
		sfWrite(t, filepath.Join(data, c.file), []byte(c.content))
		sfExpect(t, c.name, sfVerify(t, data), CheckpointFormat, filepath.Base(c.file), c.pos)
	}

	// Leader epochs: beyond the log end, out of order, missing the last
	// batch's epoch. The shape bumps the epoch at each segment: 2, 3, 4.
	ee := func(epoch int32, start int64) sidefile.EpochEntry {
		return sidefile.EpochEntry{Epoch: epoch, StartOffset: start}
	}
	epochs := func(es ...sidefile.EpochEntry) {
		sfWrite(t, filepath.Join(dir, sidefile.LeaderEpochCheckpointFile), sidefile.AppendLeaderEpochCheckpoint(nil, es))
	}
	s1, s2 := m.Segments[1].BaseOffset, m.Segments[2].BaseOffset
	fresh()
	epochs(ee(2, 0), ee(3, s1), ee(4, s2), ee(5, m.LogEndOffset))
	if got := sfVerify(t, data); len(got) != 0 {
		t.Errorf("an epoch starting at the log end: %s", sfDescribe(got))
	}
	epochs(ee(2, 0), ee(3, s1), ee(4, s2), ee(5, m.LogEndOffset+3))
	sfExpect(t, "epoch beyond", sfVerify(t, data), LeaderEpochRange, sidefile.LeaderEpochCheckpointFile, -1)
	epochs(ee(2, 0), ee(4, s1), ee(3, s2))
	// The broker's cache keeps (2, 0) and (3, s2): epoch 4 is dropped, so
	// the last batch's epoch is missing from it as well, and the second
	// segment's batches (epoch 3) fall in its epoch 2.
	got = sfVerify(t, data)
	if len(got) != 3 || got[0].Check != LeaderEpochMismatch || !strings.Contains(got[0].Message, fmt.Sprintf("offsets %d..%d (", s1, s2-1)) ||
		!strings.Contains(got[0].Message, fmt.Sprintf("written in leader epoch 3, but the checkpoint puts offset %d in epoch 2 (its entry from offset 0 up to %d)", s1, s2)) ||
		got[1].Check != LeaderEpochRange || !strings.Contains(got[1].Message, "entry 1: epoch 4 from offset") ||
		!strings.Contains(got[2].Message, "leader epoch 4, newer than the checkpoint's latest epoch (3)") {
		t.Errorf("epochs out of order: %s", sfDescribe(got))
	}
	epochs(ee(2, 0), ee(-1, s1))
	sfExpect(t, "negative epoch", sfVerify(t, data), CheckpointFormat, sidefile.LeaderEpochCheckpointFile, -1)
	epochs(ee(2, 0), ee(3, s1))
	got = sfVerify(t, data)
	if len(got) != 1 || got[0].Check != LeaderEpochRange || !strings.Contains(got[0].Message, "leader epoch 4, newer than the checkpoint's latest epoch (3)") {
		t.Errorf("last epoch missing: %s", sfDescribe(got))
	}
}

func TestTxnIndexMismatch(t *testing.T) {
	data, _, m := sfDataDir(t, sfShape)
	fresh := func() {
		os.RemoveAll(data)
		data, _, m = sfDataDir(t, sfShape)
	}
	// A segment with at least two aborted transactions.
	si := -1
	for i, s := range m.Segments {
		if s.TxnEntries >= 2 {
			si = i
			break
		}
	}
	if si < 0 {
		t.Fatal("no segment with two aborted transactions")
	}
	txn := func() string { return m.TxnIndexPath(&m.Segments[si]) }
	name := filepath.Base(txn())

	// The file is gone: read_committed consumers get the aborted records.
	os.Remove(txn())
	got := sfVerify(t, data)
	sfExpect(t, "missing file", got, TxnIndexMismatch, name, 0)
	if len(got) == 1 && !strings.Contains(got[0].Message, "the missing file lacks") {
		t.Errorf("missing file: %s", got[0].Message)
	}

	// The last entry cut off.
	fresh()
	b := sfRead(t, txn())
	sfWrite(t, txn(), b[:len(b)-34])
	sfExpect(t, "entry lost", sfVerify(t, data), TxnIndexMismatch, name, int64(len(b)-34))

	// An entry's last stable offset changed, everything else sound.
	fresh()
	b = sfRead(t, txn())
	lso := binary.BigEndian.Uint64(b[34+26:])
	binary.BigEndian.PutUint64(b[34+26:], lso-1)
	sfWrite(t, txn(), b)
	sfExpect(t, "lso", sfVerify(t, data), TxnIndexMismatch, name, 34)

	// An extra, well-formed entry for a marker that is a COMMIT (or none).
	fresh()
	b = sfRead(t, txn())
	last := indexfmt.DecodeTxnEntry(b[len(b)-34:])
	var extra int64 = -1
	for _, bm := range m.Segments[si].Batches {
		if bm.Control && bm.ControlType == 1 && bm.BaseOffset > last.LastOffset {
			extra = bm.BaseOffset
			break
		}
	}
	if extra >= 0 {
		e := last
		e.FirstOffset, e.LastOffset, e.LastStableOffset = last.LastOffset+1, extra, extra+1
		sfWrite(t, txn(), indexfmt.AppendTxnEntry(b, e))
		sfExpect(t, "extra", sfVerify(t, data), TxnIndexMismatch, name, int64(len(b)))
	}

	// The low byte of the version field: the broker reads byte 0 only, so
	// the entry is the same to it.
	fresh()
	b = sfRead(t, txn())
	b[34+1] = 1
	sfWrite(t, txn(), b)
	if got := sfVerify(t, data); len(got) != 0 {
		t.Errorf("version low byte: %s", sfDescribe(got))
	}

	// A structural problem is txnindex.version's, not a mismatch too.
	fresh()
	b = sfRead(t, txn())
	b[34] = 1
	sfWrite(t, txn(), b)
	all, _ := verifyPath(t, data, Options{SideFiles: true, IndexIntervalBytes: sfShape.IndexIntervalBytes})
	var checks []string
	for _, f := range all {
		checks = append(checks, f.Check)
	}
	if !slices.Equal(checks, []string{TxnIndexVersion}) {
		t.Errorf("version byte: %v", checks)
	}

	// A single segment named on the command line is compared too.
	fresh()
	os.Remove(txn())
	got = sfVerify(t, m.LogPath(&m.Segments[si]))
	sfExpect(t, "single segment", got, TxnIndexMismatch, name, 0)
}

// TestTxnIndexMismatchStartState: when the log starts above 0 the replay
// from the first segment is trusted only with a snapshot at its base
// showing no open transaction.
func TestTxnIndexMismatchStartState(t *testing.T) {
	o := sfShape
	o.StartOffset = 5000
	data, dir, m := sfDataDir(t, o)
	var si = -1
	for i, s := range m.Segments {
		if s.TxnEntries > 0 {
			si = i
		}
	}
	os.Remove(m.TxnIndexPath(&m.Segments[si]))
	base := filepath.Join(dir, kafkagen.SegmentName(m.Segments[0].BaseOffset)+".snapshot")
	if _, err := os.Stat(base); err == nil {
		t.Fatal("the generator wrote a snapshot at the first segment's base")
	}
	if got := sfVerify(t, data); len(got) != 0 {
		t.Errorf("unknown start state: %s", sfDescribe(got))
	}
	sfWrite(t, base, sidefile.AppendProducerSnapshot(nil, nil))
	sfExpect(t, "empty snapshot at the start", sfVerify(t, data), TxnIndexMismatch, filepath.Base(m.TxnIndexPath(&m.Segments[si])), 0)
	sfWrite(t, base, sidefile.AppendProducerSnapshot(nil, []sidefile.ProducerEntry{{ProducerID: 1, LastOffset: -1, CurrentTxnFirstOffset: 4990}}))
	if got := sfVerify(t, data); len(got) != 0 {
		t.Errorf("open transaction at the start: %s", sfDescribe(got))
	}
}

// TestSideFilesRealFixtures: the real brokers' directories have no
// side-file error, and the warnings are listed.
func TestSideFilesRealFixtures(t *testing.T) {
	for _, dir := range fixtures.Dirs(t) {
		if got := sfVerify(t, dir); len(got) != 0 {
			t.Errorf("%s: %s", filepath.Base(dir), sfDescribe(got))
		}
	}
}

// TestSideFileChecksDocumented: every side-file check id is a row of the
// contract's check table, with its severity.
func TestSideFileChecksDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "cli-contract.md"))
	if err != nil {
		t.Skip("docs/cli-contract.md not found")
	}
	for _, c := range SideFileChecks() {
		row := "| `" + c + "` | " + Severity(c) + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("no contract row %q", row)
		}
	}
}

// TestSideFilesRandomDamage: random bytes in the side files never make Run
// fail or panic, and every side finding is well formed.
func TestSideFilesRandomDamage(t *testing.T) {
	for seed := uint64(0); seed < 12; seed++ {
		data, dir, m := sfDataDir(t, kafkagen.Options{Seed: int64(seed), Segments: 2, Batches: 20, Transactions: true})
		files, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
		files = append(files, filepath.Join(dir, sidefile.LeaderEpochCheckpointFile), filepath.Join(dir, sidefile.PartitionMetadataFile),
			filepath.Join(data, sidefile.RecoveryPointCheckpointFile), filepath.Join(data, sidefile.MetaPropertiesFile), m.TxnIndexPath(&m.Segments[0]))
		rng := seed*2654435761 + 1
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || len(b) == 0 {
				continue
			}
			rng = rng*6364136223846793005 + 1442695040888963407
			b[int(rng>>33)%len(b)] ^= byte(rng>>8) | 1
			sfWrite(t, f, b)
		}
		tg, err := inspect.Resolve(data)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(tg, Options{SideFiles: true}, func(f Finding) {
			if Severity(f.Check) == "" || f.Severity != Severity(f.Check) || f.File == "" || f.Message == "" {
				t.Errorf("seed %d: malformed finding %+v", seed, f)
			}
		})
		if err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}

// TestSideFindingsOrderAcrossJobs: side files are checked by the workers
// as a job after each partition's segments, yet the findings come out in
// Run's order whatever Options.Jobs: per partition, its segments'
// findings, then leftover files after its last segment, then its side
// files; the summary's segment count does not include the side jobs.
func TestSideFindingsOrderAcrossJobs(t *testing.T) {
	data := t.TempDir()
	var segments int
	for p := range 3 {
		o := sfShape
		o.Seed = int64(40 + p)
		dir := filepath.Join(data, fmt.Sprintf("orders-%d", p))
		m, err := kafkagen.Generate(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		segments += len(m.Segments)
		// A segment finding (the first segment's time index gone), a
		// leftover after the last segment, and a side-file finding (a
		// snapshot's CRC).
		if err := os.Remove(filepath.Join(dir, kafkagen.SegmentName(m.Segments[0].BaseOffset)+inspect.TimeIndexSuffix)); err != nil {
			t.Fatal(err)
		}
		sfWrite(t, filepath.Join(dir, kafkagen.SegmentName(m.LogEndOffset+1000)+inspect.IndexSuffix), nil)
		snap := filepath.Join(dir, kafkagen.SegmentName(m.Snapshots[0])+".snapshot")
		b := sfRead(t, snap)
		b[len(b)-1] ^= 1
		sfWrite(t, snap, b)
	}
	want, sum := verifyPath(t, data, Options{SideFiles: true, Jobs: 1, IndexIntervalBytes: sfShape.IndexIntervalBytes})
	if sum.Segments != segments || sum.Partitions != 3 {
		t.Errorf("summary counts %d segments in %d partitions, want %d in 3", sum.Segments, sum.Partitions, segments)
	}
	// The order within each partition, and partitions in turn.
	var seq []string
	for _, f := range want {
		part := filepath.Base(filepath.Dir(f.File))
		kind := "segment"
		switch {
		case f.Check == SegmentLeftover:
			kind = "leftover"
		case slices.Contains(SideFileChecks(), f.Check):
			kind = "side"
		}
		if k := part + " " + kind; len(seq) == 0 || seq[len(seq)-1] != k {
			seq = append(seq, k)
		}
	}
	wantSeq := []string{
		"orders-0 segment", "orders-0 leftover", "orders-0 side",
		"orders-1 segment", "orders-1 leftover", "orders-1 side",
		"orders-2 segment", "orders-2 leftover", "orders-2 side",
	}
	if !slices.Equal(seq, wantSeq) {
		t.Fatalf("findings come in the order %q, want %q:%s", seq, wantSeq, sfDescribe(want))
	}
	for _, jobs := range []int{2, 3, 8} {
		got, gotSum := verifyPath(t, data, Options{SideFiles: true, Jobs: jobs, IndexIntervalBytes: sfShape.IndexIntervalBytes})
		if sfDescribe(got) != sfDescribe(want) || gotSum != sum {
			t.Errorf("jobs %d: findings%s\nsummary %+v\nwant (jobs 1)%s\nsummary %+v", jobs, sfDescribe(got), gotSum, sfDescribe(want), sum)
		}
	}
}

// TestLeaderEpochMismatch: a leader-epoch-checkpoint that contradicts
// the batches is leader-epoch.mismatch, one finding per run of batches,
// naming their offsets and bytes and the entry. The shape writes epochs
// 2, 3, 4 from each segment's base offset (s0 = 0, s1, s2). Epoch 3 said
// to start 30 offsets late puts the first batches of segment 1 in epoch
// 2; said to start 30 early, it puts the last batches of segment 0 in
// epoch 3. A log start offset (log-start-offset-checkpoint) after them
// takes them out of the comparison; so does a first entry after them (a
// cache truncated from the start). Alternating epochs past the limit of
// findings are counted in one more finding. The same with one worker and
// two (segment jobs on both cores share the checkpoint).
func TestLeaderEpochMismatch(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		data, dir, m := sfDataDir(t, sfShape)
		s1, s2 := m.Segments[1].BaseOffset, m.Segments[2].BaseOffset
		epochs := func(es ...sidefile.EpochEntry) {
			sfWrite(t, filepath.Join(dir, sidefile.LeaderEpochCheckpointFile), sidefile.AppendLeaderEpochCheckpoint(nil, es))
		}
		run := func() []Finding {
			got, _ := verifyPath(t, data, Options{SideFiles: true, Jobs: jobs})
			var out []Finding
			for _, f := range got {
				if f.Check == LeaderEpochMismatch {
					out = append(out, f)
				}
			}
			return out
		}
		// The batches' first offset at or after o, and the last offset
		// of the batches before it (both in the manifest).
		split := func(o int64) (first, lastBefore int64, pos int64) {
			for _, b := range m.Batches() {
				if b.BaseOffset >= o {
					return b.BaseOffset, lastBefore, b.Position
				}
				lastBefore = b.LastOffset
			}
			t.Fatalf("no batch at or after %d", o)
			return
		}
		ee := func(e int32, o int64) sidefile.EpochEntry { return sidefile.EpochEntry{Epoch: e, StartOffset: o} }

		late, lastBeforeLate, _ := split(s1 + 30)
		_, _, s1Pos := split(s1)
		epochs(ee(2, 0), ee(3, late), ee(4, s2))
		got := run()
		if len(got) != 1 || *got[0].Offset != s1 || got[0].Severity != SeverityWarning ||
			!strings.Contains(got[0].Message, fmt.Sprintf("offsets %d..%d (", s1, lastBeforeLate)) ||
			!strings.Contains(got[0].Message, fmt.Sprintf("bytes %d..", s1Pos)) ||
			!strings.Contains(got[0].Message, fmt.Sprintf("written in leader epoch 3, but the checkpoint puts offset %d in epoch 2 (its entry from offset 0 up to %d)", s1, late)) {
			t.Errorf("-j %d: epoch 3 late: %s", jobs, sfDescribe(got))
		}

		early, _, earlyPos := split(s1 - 30)
		epochs(ee(2, 0), ee(3, early), ee(4, s2))
		got = run()
		if len(got) != 1 || *got[0].Offset != early || !strings.Contains(got[0].Message, fmt.Sprintf("offsets %d..%d (", early, s1-1)) ||
			!strings.Contains(got[0].Message, fmt.Sprintf("bytes %d..", earlyPos)) ||
			!strings.Contains(got[0].Message, fmt.Sprintf("written in leader epoch 2, but the checkpoint puts offset %d in epoch 3 (its entry from offset %d up to %d)", early, early, s2)) {
			t.Errorf("-j %d: epoch 3 early: %s", jobs, sfDescribe(got))
		}
		// The log start offset at s1: the early batches are not compared.
		sfWrite(t, filepath.Join(data, sidefile.LogStartOffsetCheckpointFile), sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: s1}}))
		if got := run(); len(got) != 0 {
			t.Errorf("-j %d: below the log start: %s", jobs, sfDescribe(got))
		}
		os.Remove(filepath.Join(data, sidefile.LogStartOffsetCheckpointFile))
		// A cache truncated from the start at s1 (no entry below it).
		epochs(ee(3, s1), ee(4, s2))
		if got := run(); len(got) != 0 {
			t.Errorf("-j %d: below the first entry: %s", jobs, sfDescribe(got))
		}
		// Every other offset of segments 1 and 2 an epoch of its own: far
		// more runs than the limit of 100 findings.
		var es []sidefile.EpochEntry
		for o := s1; o < m.LogEndOffset; o += 2 {
			es = append(es, ee(int32(10+o), o))
		}
		epochs(append([]sidefile.EpochEntry{ee(2, 0)}, es...)...)
		got = run()
		if len(got) != 101 || !strings.Contains(got[100].Message, "more leader-epoch.mismatch findings in this file are not listed (limit 100 per file and check)") {
			t.Errorf("-j %d: many runs: %d findings, the last %s", jobs, len(got), sfDescribe(got[len(got)-1:]))
		}
	}
}

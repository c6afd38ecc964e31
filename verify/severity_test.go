package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// warningJustified names, for every check that can be a warning, what a
// broker does differently because of it (the severity rule: a warning
// means a broker will behave differently than with healthy data). A new
// warning check must say here why it is one.
var warningJustified = map[string]string{
	IndexPadding:            "a segment the next start does not recover (below the recovery point, KAFKA-10207, or after a clean shutdown) is loaded with every padding slot counted as an entry (AbstractIndex: entries = size / entry size): lookups scan from the segment start and the index looks full, so an active segment rolls at once",
	TimeIndexPadding:        "as index.padding; the last slot reads as timestamp 0, which the broker takes as the segment's largest timestamp (LogSegment.maxTimestampSoFar), so time retention deletes the segment early (KAFKA-10207)",
	IndexMissing:            "LogLoader.loadSegmentFiles rebuilds a missing offset index at every start, reading the whole segment (slower start)",
	TimeIndexMissing:        "the broker creates an empty time index and, unless it recovers the segment, takes the segment's largest timestamp from the .log's modification time (LogSegment.largestTimestamp): retention and timestamp lookups change",
	TimeIndexClosingEntry:   "on a rolled segment the next start does not recover, the broker takes the segment's largest timestamp from the last entry (LogSegment.maxTimestampSoFar), older than its records': time retention deletes it early",
	SegmentLeftover:         "LogLoader.removeTempFilesAndCollectSwapFiles deletes .deleted/.cleaned files and orphaned indexes and swaps .swap files in at the next start: the files in the partition change",
	SnapshotCRC:             "ProducerStateManager deletes a snapshot it cannot read and rebuilds producer state from an older one or the log (slower start; idempotence state from the log)",
	SnapshotFormat:          "as snapshot.crc: the snapshot is deleted at load and producer state rebuilt",
	SnapshotOffset:          "a snapshot beyond the log end is deleted at load (ProducerStateManager.truncateAndReload); one inside a batch restores producer state at an offset no batch ends at",
	CheckpointRecoveryPoint: "a recovery point beyond the log end: the log lost data the broker had flushed, and the broker's next start resets the point (LogLoader)",
	LeaderEpochRange:        "LeaderEpochFileCache drops the entries (epochs and start offsets must increase, entries past the log end are truncated): the epochs a follower's OffsetsForLeaderEpoch gets change",
	LeaderEpochMismatch:     "the broker loads the checkpoint as it is and answers OffsetsForLeaderEpoch from it (LeaderEpochFileCache.endOffsetFor), not from the batches: a follower of this replica is told an epoch's end where its batches say otherwise, and truncates there",
}

func TestWarningChecksJustified(t *testing.T) {
	var warnings []string
	for _, c := range Checks() {
		if ValidSeverity(c, SeverityWarning) {
			warnings = append(warnings, c)
		}
	}
	for _, c := range SideFileChecks() {
		if ValidSeverity(c, SeverityWarning) {
			warnings = append(warnings, c)
		}
	}
	sort.Strings(warnings)
	var justified []string
	for c, why := range warningJustified {
		justified = append(justified, c)
		if len(why) < 40 {
			t.Errorf("%s: justification %q says too little", c, why)
		}
	}
	sort.Strings(justified)
	if fmt.Sprint(warnings) != fmt.Sprint(justified) {
		t.Errorf("warning checks %v, justified %v: every warning check needs the broker behaviour that makes it one", warnings, justified)
	}
	for _, c := range []string{IndexStale, TimeIndexStale} {
		if Severity(c) != SeverityInfo || ValidSeverity(c, SeverityWarning) {
			t.Errorf("%s: severity %s; a valid index that differs from a rebuild changes nothing a broker does", c, Severity(c))
		}
	}
}

// writeRecoveryPoint writes the data directory's
// recovery-point-offset-checkpoint with one entry for demo-0.
func writeRecoveryPoint(t *testing.T, data string, point int64) {
	t.Helper()
	writeFile(t, filepath.Join(data, "recovery-point-offset-checkpoint"), fmt.Appendf(nil, "0\n1\ndemo 0 %d\n", point))
}

// A rolled segment whose time index lacks the closing entry, and a padded
// index, are warnings only where the broker's next start keeps them: below
// the recovery point (KAFKA-10207) or after a clean shutdown; info where
// that start recovers the segment.
func TestSeverityFollowsRecovery(t *testing.T) {
	for _, tc := range []struct {
		name    string
		point   int64 // -1: no checkpoint
		clean   bool
		wantSev string
	}{
		{"no checkpoint: everything recovered", -1, false, SeverityInfo},
		{"recovery point at the log end", 1 << 40, false, SeverityWarning},
		{"clean shutdown", -1, true, SeverityWarning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			m := generateAt(t, filepath.Join(data, "demo-0"), kafkagen.Options{Seed: 5, Segments: 3, Batches: 40})
			if tc.point >= 0 {
				writeRecoveryPoint(t, data, min(tc.point, m.Segments[2].BaseOffset))
			}
			if tc.clean {
				writeFile(t, filepath.Join(data, ".kafka_cleanshutdown"), nil)
			}
			// Segment 0: the closing entry is cut off. Segment 1: its index
			// gets a zero tail.
			s0, _, _, tidx0 := segFiles(m, 0)
			truncateFile(t, tidx0, int64(len(s0.TimeIndex)-1)*12)
			s1, _, idx1, _ := segFiles(m, 1)
			edit(t, idx1, func(b []byte) []byte { return append(b, make([]byte, 64)...) })

			got, sum := verifyPath(t, m.Dir, Options{})
			expect(t, got, want{TimeIndexClosingEntry, base(tidx0), int64(len(s0.TimeIndex)-1) * 12}, want{IndexPadding, base(idx1), int64(s1.IndexEntries) * 8})
			for _, f := range got {
				if f.Severity != tc.wantSev {
					t.Errorf("%s: severity %s, want %s: %s", f.Check, f.Severity, tc.wantSev, f.Message)
				}
			}
			if tc.wantSev == SeverityWarning && (sum.Warnings != 2 || !strings.Contains(got[1].Message, "does not recover")) {
				t.Errorf("summary %+v, message %q", sum, got[1].Message)
			}
			if tc.wantSev == SeverityInfo && (sum.Infos != 2 || sum.Warnings != 0) {
				t.Errorf("summary %+v", sum)
			}
		})
	}
}

// On the active segment a missing closing entry is the normal state of a
// running broker: info whatever the recovery point says.
func TestActiveSegmentClosingEntryIsInfo(t *testing.T) {
	data := t.TempDir()
	m := generateAt(t, filepath.Join(data, "demo-0"), kafkagen.Options{Seed: 6, Segments: 2, Batches: 30, PreallocatedIndexBytes: 4096})
	writeRecoveryPoint(t, data, m.Segments[1].BaseOffset)
	got, sum := verifyPath(t, m.Dir, Options{})
	if sum.Warnings != 0 || sum.Errors != 0 {
		t.Errorf("summary %+v on a running broker's partition: %s", sum, describe(got))
	}
	// Without padding, and with the last entry gone (older than the
	// segment's largest timestamp), the closing entry's absence is
	// reported, as info.
	s, _, idx, tidx := segFiles(m, 1)
	truncateFile(t, idx, int64(s.IndexEntries)*8)
	truncateFile(t, tidx, int64(s.TimeIndexEntries-1)*12)
	got, sum = verifyPath(t, m.Dir, Options{})
	expect(t, got, want{TimeIndexClosingEntry, base(tidx), int64(s.TimeIndexEntries-1) * 12})
	if got[0].Severity != SeverityInfo || sum.Warnings != 0 {
		t.Errorf("%s on the active segment: severity %s, summary %+v", got[0].Check, got[0].Severity, sum)
	}
}

// Every freshly generated partition is healthy: no warning, no error,
// whatever its shape, with or without a recovery point checkpoint at the
// log end.
func TestGeneratedHealthyHasNoWarnings(t *testing.T) {
	shapes := []kafkagen.Options{
		{Seed: 1, Segments: 3, Batches: 30},
		{Seed: 2, Segments: 2, Batches: 30, IndexIntervalBytes: 300},
		{Seed: 3, Segments: 2, Batches: 30, IndexIntervalBytes: kafkagen.IndexEveryBatch, Compression: "zstd", Transactions: true},
		{Seed: 4, Segments: 2, Batches: 30, PreallocatedIndexBytes: 4096},
		{Seed: 5, Segments: 2, Batches: 30, PreallocatedIndexBytes: 4096, EmptyActiveSegment: true},
		{Seed: 6, Segments: 2, Batches: 30, CompactionGaps: true, Compression: "lz4"},
		{Seed: 7, Segments: 2, Batches: 30, Magic: 1, Compression: "gzip", Timestamps: "jumping"},
		{Seed: 8, Segments: 2, Batches: 30, Magic: kafkagen.MagicV0, Compression: "snappy"},
		{Seed: 9, Segments: 3, Batches: 20, LeaderEpochBumps: true, LogAppendTime: 0.5},
		{Seed: 10, Segments: 2, Batches: 30, Timestamps: "random", IndexIntervalBytes: 1000},
	}
	for i, o := range shapes {
		for _, checkpoint := range []bool{false, true} {
			data := t.TempDir()
			m := generateAt(t, filepath.Join(data, "demo-0"), o)
			if checkpoint {
				writeRecoveryPoint(t, data, m.LogEndOffset)
			}
			got, sum := verifyPath(t, m.Dir, Options{SideFiles: true})
			if sum.Errors != 0 || sum.Warnings != 0 {
				t.Errorf("shape %d (%+v), checkpoint %v: %+v%s", i, o, checkpoint, sum, describe(got))
			}
		}
	}
}

// On data written by real brokers, no index that a broker uses as it is
// gets a warning: *.stale findings are info; missing index files stay
// warnings (the broker rebuilds them at load), except a missing
// .timeindex beside a log that carries no timestamp (info).
func TestRealFixturesNoStaleWarnings(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(realFixtures, "*"))
	if len(dirs) == 0 {
		t.Skipf("real broker fixtures not found at %s", realFixtures)
	}
	stale, missing := 0, 0
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		got, _ := verifyPath(t, d, Options{SideFiles: true})
		for _, f := range got {
			switch f.Check {
			case IndexStale, TimeIndexStale:
				stale++
				if f.Severity != SeverityInfo {
					t.Errorf("%s: %s is a %s", f.File, f.Check, f.Severity)
				}
			case IndexMissing, TimeIndexMissing:
				missing++
				// A missing .timeindex beside a log without timestamps
				// (magic 0, or empty) changes nothing: info.
				noTimestamps := f.Check == TimeIndexMissing && strings.Contains(f.Message, "no batch of the log carries a timestamp")
				if noTimestamps != (f.Severity == SeverityInfo) || f.Severity == SeverityError {
					t.Errorf("%s: %s is a %s", f.File, f.Check, f.Severity)
				}
			default:
				if f.Severity == SeverityWarning {
					t.Errorf("%s: warning %s on a real broker's data: %s", f.File, f.Check, f.Message)
				}
			}
		}
	}
	if stale == 0 || missing == 0 {
		t.Errorf("%d stale and %d missing-index findings on the real fixtures; both kinds are there", stale, missing)
	}
}

// A missing .timeindex is a warning when the log carries timestamps (the
// broker falls back to the .log's modification time instead of them), and
// info when it carries none (magic 0: the same answer either way).
func TestTimeIndexMissingFollowsTimestamps(t *testing.T) {
	for _, tc := range []struct {
		magic int8
		want  string
	}{{kafkagen.MagicV0, SeverityInfo}, {1, SeverityWarning}, {2, SeverityWarning}} {
		m := generate(t, kafkagen.Options{Seed: 3, Segments: 1, Batches: 20, Magic: tc.magic})
		if err := os.Remove(m.TimeIndexPath(&m.Segments[0])); err != nil {
			t.Fatal(err)
		}
		got, _ := verifyPath(t, m.Dir, Options{})
		n := 0
		for _, f := range got {
			if f.Check == TimeIndexMissing {
				n++
				if f.Severity != tc.want {
					t.Errorf("magic %d: timeindex.missing is %s, want %s: %s", tc.magic, f.Severity, tc.want, f.Message)
				}
			}
		}
		if n != 1 {
			t.Errorf("magic %d: %d timeindex.missing findings, want 1", tc.magic, n)
		}
	}
}

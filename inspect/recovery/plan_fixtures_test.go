package recovery

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
)

// How an index file of the real fixtures compares with what recovery
// rebuilds, and why (kafka-on-disk.md sections 5.8, 6.4, 6.7, 8.1, 9.5).
type fixtureVerdict int

const (
	// identical: written by a broker whose append path indexes as recovery
	// does for this segment (one batch per append, no restart while the
	// segment was active), or by recovery itself.
	identical fixtureVerdict = iota
	// missing: the file is not in the fixture (preallocated 10 MiB files
	// could not be retrieved, or the broker had not created it); the plan
	// is what recovery would create.
	missing
	// closeEntries: the time index holds one close-time entry per clean
	// shutdown while the segment was active (LogSegment.close appends the
	// max timestamp so far); recovery writes only the last one. Every
	// on-disk entry is still a running maximum of the log, and the planned
	// entries are among them.
	closeEntries
	// respaced: index.interval.bytes spacing restarted at a broker restart
	// (bytesSinceLastIndexEntry is not persisted), so later index points
	// differ from recovery's.
	respaced
	// legacyAppend: a 2.x leader indexed per append and put record-level
	// offsets in the time index, besides restarting the spacing.
	legacyAppend
)

func (v fixtureVerdict) String() string {
	return [...]string{"identical", "missing", "close-time entries", "respaced after restart", "2.x append path"}[v]
}

type fixtureExpect struct{ index, timeIndex fixtureVerdict }

// fixtureExpectations: every segment of ../shared/fixtures/real, by
// fixture/partition/segment base name.
var fixtureExpectations = map[string]fixtureExpect{
	"cp-kraft-ksql-txn-committed/__transaction_state-44/00000000000000000000":                                             {identical, identical},
	"cp-kraft-ksql-txn-committed/_confluent-ksql-default__command_topic-0/00000000000000000000":                           {identical, identical},
	"cp-kraft-multiseg-compacted/__cluster_metadata-0/00000000000000032026":                                               {identical, identical},
	"cp-kraft-multiseg-compacted/__cluster_metadata-0/00000000000000079481":                                               {identical, identical},
	"cp-kraft-multiseg-compacted/__consumer_offsets-13/00000000000000000000":                                              {identical, identical},
	"cp-kraft-multiseg-compacted/__consumer_offsets-13/00000000000000000021":                                              {identical, closeEntries},
	"cp-kraft-multiseg-compacted/postCreated-0/00000000000000000011":                                                      {identical, closeEntries},
	"cp-kraft-multiseg-compacted/postCreated-0/00000000000000000016":                                                      {identical, identical},
	"cp-kraft-snappy-small/wallet_event-0/00000000000000000000":                                                           {identical, closeEntries},
	"cp51-zk-lz4-unclean-noindex/__consumer_offsets-13/00000000000000000000":                                              {missing, missing},
	"cp51-zk-lz4-unclean-noindex/_confluent-controlcenter-5-1-2-1-monitoring-trigger-event-rekey-0/00000000000000000000":  {missing, missing},
	"cp76-kraft-lz4-logappendtime/__consumer_offsets-34/00000000000000000000":                                             {identical, identical},
	"cp76-kraft-lz4-logappendtime/_confluent-command-0/00000000000000000000":                                              {identical, identical},
	"cp76-kraft-lz4-logappendtime/_confluent-controlcenter-7-6-0-1-monitoring-trigger-event-rekey-0/00000000000000000000": {identical, identical},
	"kafka361-kraft-windows-metadata/__cluster_metadata-0/00000000000000000000":                                           {identical, identical},
	"kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000000000":                                            {identical, identical},
	"kafka40-kraft-snappy-retention/__cluster_metadata-0/00000000000000005151":                                            {respaced, respaced},
	"kafka40-kraft-snappy-retention/oms_order_status_changed-2/00000000000000010917":                                      {respaced, respaced},
	"kafkalite-magic0-none-gzip-snappy/hamlet-gzip-0/00000000000000000000":                                                {missing, missing},
	"kafkalite-magic0-none-gzip-snappy/hamlet-none-0/00000000000000000000":                                                {missing, missing},
	"kafkalite-magic0-none-gzip-snappy/hamlet-snappy-0/00000000000000000000":                                              {missing, missing},
	"kraft-metadata-tiny/__cluster_metadata-0/00000000000000000000":                                                       {identical, identical},
	"zk-kafka26-unclean-noindex/__consumer_offsets-21/00000000000000000000":                                               {identical, identical},
	"zk-kafka26-unclean-noindex/__consumer_offsets-21/00000000000000000056":                                               {missing, missing},
	"zk-kafka26-unclean-noindex/first_topic-0/00000000000000000004":                                                       {missing, missing},
	"zk-kafka2x-clean/__consumer_offsets-18/00000000000000000000":                                                         {legacyAppend, legacyAppend},
	"zk-kafka2x-clean/first_topic-0/00000000000000000000":                                                                 {identical, closeEntries},
}

// TestPlanRealFixtures plans every segment of the real broker data: no
// error, the whole log valid (no fixture has a damaged tail), and each
// index file compared as the table above says.
func TestPlanRealFixtures(t *testing.T) {
	root := fixturesDir(t)
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		target, err := inspect.Resolve(filepath.Join(root, e.Name()))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		for _, p := range target.Partitions {
			plans, err := PlanPartition(p, Options{})
			if err != nil {
				t.Errorf("%s: PlanPartition: %v", p.Dir, err)
				continue
			}
			for i := range plans {
				pl := &plans[i]
				key := e.Name() + "/" + p.Name() + "/" + inspect.SegmentName(pl.Segment.BaseOffset)
				seen[key] = true
				want, ok := fixtureExpectations[key]
				if !ok {
					t.Errorf("%s: not in fixtureExpectations; classify it", key)
					continue
				}
				if pl.StopErr != nil || pl.TruncatedBytes != 0 {
					t.Errorf("%s: recovery stops at %d: %v", key, pl.ValidBytes, pl.StopErr)
				}
				checkFixtureIndex(t, key+".index", pl.Segment.Index, pl.Index, want.index, nil)
				checkFixtureIndex(t, key+".timeindex", pl.Segment.TimeIndex, pl.TimeIndex, want.timeIndex, pl)
				if pl.TxnIndex != nil || pl.Segment.TxnIndex != "" {
					t.Errorf("%s: no fixture has an aborted transaction, plan has %d bytes", key, len(pl.TxnIndex))
				}
			}
		}
	}
	for key := range fixtureExpectations {
		if !seen[key] {
			t.Errorf("%s: expected segment not found in the fixtures", key)
		}
	}
}

func checkFixtureIndex(t *testing.T, key, path string, planned []byte, want fixtureVerdict, pl *SegmentRecovery) {
	t.Helper()
	if path == "" {
		if want != missing {
			t.Errorf("%s: file absent, expected %v", key, want)
		}
		return
	}
	disk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	same := bytes.Equal(disk, planned)
	switch want {
	case identical:
		if !same {
			t.Errorf("%s: rebuilt %d bytes differ from the broker's %d", key, len(planned), len(disk))
		}
	case missing:
		t.Errorf("%s: expected absent, found %d bytes", key, len(disk))
	default:
		if same {
			t.Errorf("%s: expected to differ (%v) but is identical", key, want)
		}
		if want == closeEntries {
			checkCloseEntries(t, key, disk, planned, pl)
		}
	}
}

// checkCloseEntries confirms the close-time explanation: every on-disk
// time-index entry is a running maximum of the log (timestamp = max batch
// timestamp up to the first batch reaching it, offset = that batch's last
// offset), and the rebuilt entries are a subset of them.
func checkCloseEntries(t *testing.T, key string, disk, planned []byte, pl *SegmentRecovery) {
	t.Helper()
	f, err := fileio.Open(pl.Segment.Log, fileio.Options{CacheNeutral: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type entry struct{ ts, off int64 }
	var maxima []entry
	maxTs := int64(-1)
	s := inspect.NewLogIterator(inspect.IterOptions{Headers: true})
	s.Reset(f, nil, 0)
	for s.Next() {
		if b := s.Batch(); b.MaxTimestamp > maxTs {
			maxTs = b.MaxTimestamp
			maxima = append(maxima, entry{b.MaxTimestamp, b.LastOffset})
		}
	}
	decode := func(b []byte) []entry {
		var out []entry
		for i := 0; i+12 <= len(b); i += 12 {
			out = append(out, entry{int64(binary.BigEndian.Uint64(b[i:])), pl.Segment.BaseOffset + int64(binary.BigEndian.Uint32(b[i+8:]))})
		}
		return out
	}
	onDisk := decode(disk)
	for _, e := range onDisk {
		if !slices.Contains(maxima, e) {
			t.Errorf("%s: on-disk entry %v is not a running maximum of the log", key, e)
		}
	}
	for _, e := range decode(planned) {
		if !slices.Contains(onDisk, e) {
			t.Errorf("%s: rebuilt entry %v is not on disk", key, e)
		}
	}
}

package inspect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internal/fuzzcheck"
	"github.com/kseg/kseg/inspect/kafkagen"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Fuzz targets for every parser of disk bytes in this package, with
// invariants beyond "no panic": valid input round-trips, answers agree
// with brute force, errors are *CorruptErrors that say where, and no
// allocation is sized by an unchecked length read from the input. Seed
// corpora are committed under testdata/fuzz/<target>/ (see
// docs/reliability.md for how they are made); `make fuzz` runs each target.

// fzAppendHeader encodes the header fields of b as they sit on disk (the
// first 61 bytes of a v2 batch, the first 18 or 26 of a legacy message):
// the inverse of ParseBatch.
func fzAppendHeader(dst []byte, b *record.Batch) []byte {
	be := binary.BigEndian
	if b.Magic >= 2 {
		dst = be.AppendUint64(dst, uint64(b.BaseOffset))
		dst = be.AppendUint32(dst, uint32(b.Size-record.LogOverhead))
		dst = be.AppendUint32(dst, uint32(b.PartitionLeaderEpoch))
		dst = append(dst, byte(b.Magic))
		dst = be.AppendUint32(dst, b.CRC)
		dst = be.AppendUint16(dst, uint16(b.Attributes))
		dst = be.AppendUint32(dst, uint32(b.LastOffsetDelta))
		dst = be.AppendUint64(dst, uint64(b.BaseTimestamp))
		dst = be.AppendUint64(dst, uint64(b.MaxTimestamp))
		dst = be.AppendUint64(dst, uint64(b.ProducerID))
		dst = be.AppendUint16(dst, uint16(b.ProducerEpoch))
		dst = be.AppendUint32(dst, uint32(b.BaseSequence))
		return be.AppendUint32(dst, uint32(b.RecordCount))
	}
	dst = be.AppendUint64(dst, uint64(b.LastOffset))
	dst = be.AppendUint32(dst, uint32(b.Size-record.LogOverhead))
	dst = be.AppendUint32(dst, b.CRC)
	dst = append(dst, byte(b.Magic), byte(b.Attributes))
	if b.Magic == 1 {
		dst = be.AppendUint64(dst, uint64(b.MaxTimestamp))
	}
	return dst
}

// FuzzBatchHeader reads data as a .log. Properties: ParseBatch of the
// first entry either fails with a positioned *CorruptError or decodes
// fields that encode back to exactly the bytes read (every magic: v2 and
// the two legacy layouts); the headers-only LogIterator and the windowed
// one (window from the input) see the same entries, stop at the
// same position for the same reason, and move forward by at least 26
// bytes; entries and streamed CRCs agree with the bytes; the scan
// allocates no more than its window and the largest entry, whatever the
// length fields say.
func FuzzBatchHeader(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	// v0 and v1 messages are in the committed corpus (seed-v0-*, seed-v1-*).
	f.Add(kafkagen.AppendBatch(nil, kafkagen.Batch{BaseOffset: 7, ProducerID: -1, Records: []kafkagen.Record{{Value: []byte("a")}, {OffsetDelta: 1, Value: []byte("b")}}}), uint16(30))
	// A length field claiming 2 GiB, and one below the minimum.
	huge := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1})
	binary.BigEndian.PutUint32(huge[8:], math.MaxInt32)
	f.Add(huge, uint16(0))
	small := kafkagen.AppendBatch(nil, kafkagen.Batch{ProducerID: -1})
	binary.BigEndian.PutUint32(small[8:], 13)
	f.Add(small, uint16(1))

	f.Fuzz(func(t *testing.T, data []byte, window uint16) {
		const name = "fuzz.log"
		size := int64(len(data))
		if len(data) >= record.HeaderSizeUpToMagic {
			hdr := data[:min(len(data), record.HeaderReadSize)]
			b, err := record.ParseBatch(hdr, 0, name)
			// Decoding into a Batch that held another header (as the
			// iterators reuse theirs) gives the same header and error.
			reused := record.Batch{Position: -9, Size: 1, Magic: 7, BaseOffset: 3, LastOffset: 4, CRC: 5, Attributes: 6, PartitionLeaderEpoch: 7,
				LastOffsetDelta: 8, BaseTimestamp: 9, MaxTimestamp: 10, ProducerID: 11, ProducerEpoch: 12, BaseSequence: 13, RecordCount: 14}
			if err2 := record.ParseBatchTo(&reused, hdr, 0, name); reused != b || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
				t.Fatalf("ParseBatchTo into a used Batch: %+v, %v; ParseBatch: %+v, %v", reused, err2, b, err)
			}
			if err != nil {
				fuzzcheck.WantCorrupt(t, "ParseBatch", err, name, size, fileio.ErrTorn, fileio.ErrCorruptHeader)
				if ce := err.(*fileio.CorruptError); ce.Position != 0 {
					t.Fatalf("ParseBatch error at %d, the entry starts at 0", ce.Position)
				}
			} else {
				enc := fzAppendHeader(nil, &b)
				if !bytes.Equal(enc, data[:len(enc)]) {
					t.Fatalf("magic %d header does not round-trip:\n got %x\nwant %x", b.Magic, enc, data[:len(enc)])
				}
				if b.Size < record.LogOverhead+record.MinEntryLength || (b.Magic >= 2 && b.LastOffset != b.BaseOffset+int64(b.LastOffsetDelta)) {
					t.Fatalf("decoded %+v", b)
				}
				if b2, err := record.ParseBatch(enc, 0, name); err != nil || b2 != b {
					t.Fatalf("re-parse: %+v, %v; want %+v", b2, err, b)
				}
			}
		}

		win := int(window % 8192)
		type seen struct{ pos, size, last int64 }
		var viaHeaders []seen
		viaEntries := make([]seen, 0, len(data)/(record.LogOverhead+record.MinEntryLength)+1)
		sc := NewLogIterator(IterOptions{Headers: true})
		sc.ResetReader(bytes.NewReader(data), name, size, 0)
		for sc.Next() {
			b := sc.Batch()
			viaHeaders = append(viaHeaders, seen{b.Position, b.Size, b.LastOffset})
		}
		var es *LogIterator
		alloc := fuzzcheck.Allocated(func() {
			es = NewLogIterator(IterOptions{Window: win})
			es.ResetReader(bytes.NewReader(data), name, size, 0)
			for es.Next() {
				b := es.Batch()
				viaEntries = append(viaEntries, seen{b.Position, b.Size, b.LastOffset})
				entry, err := es.Entry()
				if err != nil {
					t.Fatalf("Entry at %d: %v", b.Position, err)
				}
				if int64(len(entry)) != b.Size || !bytes.Equal(entry, data[b.Position:b.End()]) {
					t.Fatalf("Entry at %d: %d bytes that are not the file's", b.Position, len(entry))
				}
				crc, ok, err := es.CheckCRC()
				if err != nil || crc != record.ComputeCRC(b.Magic, entry) || ok != (crc == b.CRC) {
					t.Fatalf("CheckCRC at %d: %d %v %v, computed %d", b.Position, crc, ok, err, record.ComputeCRC(b.Magic, entry))
				}
			}
		})
		if bound := uint64(max(win, DefaultWindow)) + 2*uint64(size) + fuzzcheck.Slack(); alloc > bound {
			t.Fatalf("scanning %d bytes with a %d-byte window allocated %d bytes (bound %d)", size, win, alloc, bound)
		}
		if len(viaHeaders) != len(viaEntries) {
			t.Fatalf("headers-only iterator saw %d entries, windowed %d", len(viaHeaders), len(viaEntries))
		}
		next := int64(0)
		for i, s := range viaHeaders {
			if s != viaEntries[i] || s.pos != next || s.size < record.LogOverhead+record.MinEntryLength || s.pos+s.size > size {
				t.Fatalf("entry %d: %+v / %+v, expected at %d", i, s, viaEntries[i], next)
			}
			next += s.size
		}
		if sc.Position() != es.Position() || sc.Position() < next || sc.Position() > size {
			t.Fatalf("stop positions: headers-only %d, windowed %d, after the last entry %d", sc.Position(), es.Position(), next)
		}
		switch err1, err2 := sc.Err(), es.Err(); {
		case (err1 == nil) != (err2 == nil):
			t.Fatalf("stop reasons differ: %v / %v", err1, err2)
		case err1 == nil:
			if next != size {
				t.Fatalf("clean end at %d of %d bytes", next, size)
			}
		default:
			fuzzcheck.WantCorrupt(t, "headers-only", err1, name, size, fileio.ErrTorn, fileio.ErrCorruptHeader)
			fuzzcheck.WantCorrupt(t, "windowed", err2, name, size, fileio.ErrTorn, fileio.ErrCorruptHeader)
			if errors.Is(err1, fileio.ErrTorn) != errors.Is(err2, fileio.ErrTorn) || err1.(*fileio.CorruptError).Position != next {
				t.Fatalf("stop reasons differ or are misplaced (entries end at %d): %v / %v", next, err1, err2)
			}
		}
	})
}

// fzJavaParseInt is java.lang.Integer.parseInt for ASCII input: an
// optional sign, then at least one decimal digit, in range.
func fzJavaParseInt(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	digits := s
	if s[0] == '+' || s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err == nil
}

// FuzzNames: segment file names and partition directory names.
// ParseBaseOffset accepts exactly the names whose part before the first
// '.' is decimal digits in the int64 range, and a 20-digit name made from
// its answer parses back to it. ParsePartitionDirName agrees with a
// reference written from LocalLog.parseTopicPartitionName (split at the
// last '-', Integer.parseInt of the rest), refusing the -delete, -future
// and -stray forms, and a name built from its answer parses back to it.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"00000000000000000368.log", "00000000000000000000.index.deleted", "9223372036854775807.timeindex",
		"9223372036854775808.log", ".log", "12a.log", "-1.log", "+5.log", "orders-0", "my-topic-12", "t-+3", "t--1", "t-",
		"-5", "x-1.0123456789abcdef0123456789abcdef-delete", "x-2147483648", "__consumer_offsets-49"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v, err := ParseBaseOffset(name)
		prefix, _, hasDot := strings.Cut(name, ".")
		okRef := hasDot && prefix != "" && strings.Trim(prefix, "0123456789") == ""
		if okRef {
			_, perr := strconv.ParseInt(prefix, 10, 64)
			okRef = perr == nil
		}
		switch {
		case (err == nil) != okRef:
			t.Fatalf("ParseBaseOffset(%q) = %d, %v; reference says ok=%v", name, v, err, okRef)
		case err != nil:
			if !errors.Is(err, fileio.ErrNotKafka) {
				t.Fatalf("ParseBaseOffset(%q): %v is not ErrNotKafka", name, err)
			}
		default:
			if v < 0 || strconv.FormatInt(v, 10) != strings.TrimLeft(prefix, "0") && !(v == 0 && strings.Trim(prefix, "0") == "") {
				t.Fatalf("ParseBaseOffset(%q) = %d", name, v)
			}
			if v2, err := ParseBaseOffset(SegmentName(v) + LogSuffix); err != nil || v2 != v || len(SegmentName(v)) < 20 {
				t.Fatalf("SegmentName(%d) = %q parses to %d, %v", v, SegmentName(v), v2, err)
			}
		}

		topic, part, ok := ParsePartitionDirName(name)
		suffixed := strings.HasSuffix(name, "-delete") || strings.HasSuffix(name, "-future") || strings.HasSuffix(name, "-stray")
		refOK := false
		var refTopic string
		var refPart int32
		if i := strings.LastIndexByte(name, '-'); !suffixed && i > 0 {
			refTopic = name[:i]
			refPart, refOK = fzJavaParseInt(name[i+1:])
		}
		if ok != refOK || ok && (topic != refTopic || part != refPart) {
			t.Fatalf("ParsePartitionDirName(%q) = %q, %d, %v; reference %q, %d, %v", name, topic, part, ok, refTopic, refPart, refOK)
		}
		if !ok {
			if topic != "" || part != -1 {
				t.Fatalf("ParsePartitionDirName(%q) refused but returned %q, %d", name, topic, part)
			}
			return
		}
		again := topic + "-" + strconv.Itoa(int(part))
		if t2, p2, ok2 := ParsePartitionDirName(again); !ok2 || t2 != topic || p2 != part {
			t.Fatalf("%q from %q parses to %q, %d, %v", again, name, t2, p2, ok2)
		}
	})
}

// FuzzCheckpointFiles gives the same bytes to every reader of a small
// broker file: the offset and leader-epoch checkpoints, partition.metadata,
// meta.properties, .kafka_cleanshutdown and producer snapshots. Each either
// reads them or returns a *CorruptError naming the file and a position in
// it; what was read writes back (with the package's writers) to bytes that
// read the same, and a snapshot with no trailing bytes writes back to
// exactly its input. Reading allocates in proportion to the input, never
// to a count inside it.
func FuzzCheckpointFiles(f *testing.F) {
	f.Add(sidefile.AppendOffsetCheckpoint(nil, []sidefile.OffsetCheckpointEntry{{Topic: "orders", Partition: 0, Offset: 368}, {Topic: "__consumer_offsets", Partition: 49, Offset: 0}}))
	f.Add(sidefile.AppendLeaderEpochCheckpoint(nil, []sidefile.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 3, StartOffset: 1000}}))
	f.Add([]byte("0\n99999999\na 1 2\n"))
	f.Add([]byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"))
	f.Add([]byte("#\nversion=1\nnode.id=1\ncluster.id=abc\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA\n"))
	f.Add([]byte(`{"version":0,"brokerEpoch":42}`))
	f.Add(sidefile.AppendProducerSnapshot(nil, []sidefile.ProducerEntry{{ProducerID: 1, ProducerEpoch: 2, LastSequence: 9, LastOffset: 100, OffsetDelta: 9, Timestamp: 5, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}}))
	huge := sidefile.AppendProducerSnapshot(nil, nil)
	binary.BigEndian.PutUint32(huge[6:], math.MaxInt32)
	f.Add(huge)

	f.Fuzz(func(t *testing.T, b []byte) {
		size := int64(len(b))
		bound := 512*uint64(len(b)) + fuzzcheck.Slack()
		check := func(what string, err error, kind error) {
			t.Helper()
			if err != nil {
				fuzzcheck.WantCorrupt(t, what, err, what, size, kind)
			}
		}
		var (
			oc  *sidefile.OffsetCheckpoint
			lc  *sidefile.LeaderEpochCheckpoint
			pm  *sidefile.PartitionMetadata
			ps  *sidefile.ProducerSnapshot
			err [6]error
		)
		alloc := fuzzcheck.Allocated(func() {
			oc, err[0] = sidefile.ParseOffsetCheckpoint(sidefile.RecoveryPointCheckpointFile, b)
			lc, err[1] = sidefile.ParseLeaderEpochCheckpoint(sidefile.LeaderEpochCheckpointFile, b)
			pm, err[2] = sidefile.ParsePartitionMetadata(sidefile.PartitionMetadataFile, b)
			_, err[3] = sidefile.ParseMetaProperties(sidefile.MetaPropertiesFile, b)
			_, err[4] = sidefile.ParseCleanShutdown(sidefile.CleanShutdownFile, b)
			ps, err[5] = sidefile.ParseProducerSnapshot("00000000000000000368.snapshot", b)
		})
		if alloc > bound {
			t.Fatalf("reading %d bytes allocated %d (bound %d)", len(b), alloc, bound)
		}
		check(sidefile.RecoveryPointCheckpointFile, err[0], sidefile.ErrCheckpointFormat)
		check(sidefile.LeaderEpochCheckpointFile, err[1], sidefile.ErrCheckpointFormat)
		check(sidefile.PartitionMetadataFile, err[2], sidefile.ErrCheckpointFormat)
		check(sidefile.MetaPropertiesFile, err[3], sidefile.ErrCheckpointFormat)
		check(sidefile.CleanShutdownFile, err[4], sidefile.ErrCheckpointFormat)
		check("00000000000000000368.snapshot", err[5], sidefile.ErrCorruptSnapshot)

		if err[0] == nil {
			again, err := sidefile.ParseOffsetCheckpoint("again", sidefile.AppendOffsetCheckpoint(nil, oc.Entries))
			if err != nil || len(again.Entries) != len(oc.Entries) {
				t.Fatalf("offset checkpoint round trip: %v", err)
			}
			for i := range oc.Entries {
				if again.Entries[i] != oc.Entries[i] {
					t.Fatalf("offset checkpoint entry %d: %+v, then %+v", i, oc.Entries[i], again.Entries[i])
				}
			}
		}
		if err[1] == nil {
			again, err := sidefile.ParseLeaderEpochCheckpoint("again", sidefile.AppendLeaderEpochCheckpoint(nil, lc.Entries))
			if err != nil || len(again.Entries) != len(lc.Entries) {
				t.Fatalf("leader epoch round trip: %v", err)
			}
			for i := range lc.Entries {
				if again.Entries[i] != lc.Entries[i] {
					t.Fatalf("leader epoch entry %d: %+v, then %+v", i, lc.Entries[i], again.Entries[i])
				}
			}
		}
		if err[2] == nil {
			// Written back canonically (a non-canonical last character, whose
			// unused bits Java's Base64 decoder ignores too, comes back
			// canonical), it reads as the same id.
			again, err := sidefile.ParsePartitionMetadata("again", []byte("version: 0\ntopic_id: "+sidefile.FormatUUID(pm.UUID)))
			if err != nil || again.UUID != pm.UUID || again.TopicID != sidefile.FormatUUID(pm.UUID) {
				t.Fatalf("partition.metadata round trip: %+v, %v", again, err)
			}
		}
		if err[5] == nil {
			out := sidefile.AppendProducerSnapshot(nil, ps.Entries)
			if ps.TrailingBytes == 0 && !bytes.Equal(out, b) {
				t.Fatalf("snapshot of %d entries writes back differently", len(ps.Entries))
			}
			again, err := sidefile.ParseProducerSnapshot("again", out)
			if err != nil || len(again.Entries) != len(ps.Entries) {
				t.Fatalf("snapshot round trip: %v", err)
			}
			for i := range ps.Entries {
				if again.Entries[i] != ps.Entries[i] {
					t.Fatalf("snapshot entry %d: %+v, then %+v", i, ps.Entries[i], again.Entries[i])
				}
			}
		} else if ps != nil && int64(len(ps.Entries))*sidefile.ProducerSnapshotEntrySize > size {
			t.Fatalf("%d snapshot entries decoded from %d bytes", len(ps.Entries), size)
		}
	})
}

// fzPartitions are the partitions FuzzLookupPartition damages: generated
// once per process (fuzz workers run the setup again for each batch of
// inputs), as the bytes of each file.
var (
	fzPartOnce sync.Once
	fzParts    []fzPartition
	fzPartErr  error
)

type fzPartition struct {
	bases []int64
	files [][3][]byte // per segment: .log, .index, .timeindex
	last  int64       // the last offset of the log
}

func fzLoadPartitions() ([]fzPartition, error) {
	fzPartOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "kseg-fuzz-lookup")
		if err != nil {
			fzPartErr = err
			return
		}
		defer os.RemoveAll(tmp)
		for i, o := range []kafkagen.Options{
			{Seed: 1, Segments: 2, Batches: 12, RecordsPerBatch: 3, ValueSize: 16, IndexIntervalBytes: 150},
			{Seed: 2, Segments: 2, Batches: 12, RecordsPerBatch: 4, ValueSize: 16, Compression: "lz4", Transactions: true, CompactionGaps: true, IndexIntervalBytes: kafkagen.IndexEveryBatch},
			{Seed: 3, Segments: 2, Batches: 10, RecordsPerBatch: 3, ValueSize: 16, Magic: 1, Compression: "gzip", Timestamps: "jumping", IndexIntervalBytes: 100},
			{Seed: 4, Segments: 1, Batches: 15, RecordsPerBatch: 2, ValueSize: 16, Magic: kafkagen.MagicV0, IndexIntervalBytes: 80, StartOffset: 1000},
		} {
			m, err := kafkagen.Generate(filepath.Join(tmp, "p-"+strconv.Itoa(i)), o)
			if err != nil {
				fzPartErr = err
				return
			}
			var p fzPartition
			for si := range m.Segments {
				s := &m.Segments[si]
				var fs [3][]byte
				for k, path := range []string{m.LogPath(s), m.IndexPath(s), m.TimeIndexPath(s)} {
					if fs[k], err = os.ReadFile(path); err != nil {
						fzPartErr = err
						return
					}
				}
				p.bases = append(p.bases, s.BaseOffset)
				p.files = append(p.files, fs)
			}
			p.last = m.LogEndOffset - 1
			fzParts = append(fzParts, p)
		}
	})
	return fzParts, fzPartErr
}

// fzChain scans a .log from position 0 without any index: the batches in
// file order up to the first damage, where the scan stopped, and why.
func fzChain(name string, log []byte) (batches []record.Batch, stop int64, err error) {
	sc := NewLogIterator(IterOptions{Headers: true})
	sc.ResetReader(bytes.NewReader(log), name, int64(len(log)), 0)
	for sc.Next() {
		batches = append(batches, *sc.Batch())
	}
	return batches, sc.Position(), sc.Err()
}

// FuzzLookupPartition builds a partition from a generated one with bytes
// of its logs and indexes flipped, a log cut short, an index extended with
// zero padding or removed, all chosen by the input, and writes it to disk.
// Then:
//   - LookupOffset agrees with brute force (the broker's read with no
//     index: segment by segment from the floor segment, a scan from
//     position 0 to the first batch whose last offset >= target) whenever
//     the indexes are consistent with what decodes: every slot at or below
//     the target points at a batch start (or the end) of the scan from 0,
//     after which no batch has a last offset below the slot's offset;
//   - otherwise it still answers with a batch whose header is the bytes at
//     its position, or fails with a *CorruptError naming the file;
//   - Walk delivers exactly the batches of those scans, segment after
//     segment, and returns the first damage;
//   - LookupTime and NextOffset never panic and fail only with errors
//     naming the file;
//   - all of it allocates in proportion to the files, not to what their
//     length fields claim.
func FuzzLookupPartition(f *testing.F) {
	f.Add(uint8(0), []byte{}, []byte{}, uint16(0), int64(5))
	f.Add(uint8(0), []byte{0, 0, 9, 0xff}, []byte{}, uint16(0), int64(30))
	f.Add(uint8(1), []byte{}, []byte{1, 0, 4, 0x80}, uint16(0), int64(40))
	f.Add(uint8(2), []byte{1, 0, 100, 1}, []byte{0, 0, 3, 1}, uint16(301), int64(20))
	f.Add(uint8(3), []byte{}, []byte{}, uint16(2*200), int64(1010))
	f.Add(uint8(6), []byte{}, []byte{}, uint16(0), int64(-1))

	parts, err := fzLoadPartitions()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, shape uint8, logFlips, idxFlips []byte, cut uint16, target int64) {
		fzCheckLookups(t, parts, shape, logFlips, idxFlips, cut, target)
	})
}

// TestLookupPartitionRandomDamage runs FuzzLookupPartition's checks over
// random damage from a fixed seed in every test run, and requires the
// brute-force comparison to have applied to most of the inputs whose
// damage spared the indexes, and to some whose indexes were damaged.
func TestLookupPartitionRandomDamage(t *testing.T) {
	parts, err := fzLoadPartitions()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	ops := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	n := 300
	if testing.Short() {
		n = 60
	}
	counts := map[string][2]int{}
	for i := 0; i < n; i++ {
		kind := []string{"log", "index", "both", "cut"}[i%4]
		var logFlips, idxFlips []byte
		var cut uint16
		switch kind {
		case "log":
			logFlips = ops(1 + rng.IntN(3))
		case "index":
			idxFlips = ops(1 + rng.IntN(2))
		case "both":
			logFlips, idxFlips = ops(1), ops(1)
		case "cut":
			cut = uint16(rng.Uint32())
		}
		shape := uint8(rng.Uint32())
		target := rng.Int64N(200)
		consistent := fzCheckLookups(t, parts, shape, logFlips, idxFlips, cut, target)
		c := counts[kind]
		c[0]++
		if consistent {
			c[1]++
		}
		counts[kind] = c
	}
	for kind, c := range counts {
		t.Logf("%s damage: %d inputs, %d compared with brute force", kind, c[0], c[1])
	}
	if c := counts["log"]; c[1]*2 < c[0] {
		t.Errorf("log damage: only %d of %d inputs compared with brute force", c[1], c[0])
	}
	if c := counts["index"]; c[1] == 0 {
		t.Errorf("index damage: no input compared with brute force")
	}
}

// fzCheckLookups is the body of FuzzLookupPartition; it reports whether
// the indexes were consistent, so that the answer was compared with brute
// force.
func fzCheckLookups(t *testing.T, parts []fzPartition, shape uint8, logFlips, idxFlips []byte, cut uint16, target int64) bool {
	t.Helper()
	src := parts[int(shape)%len(parts)]
	nseg := len(src.bases)
	files := make([][3][]byte, nseg)
	for i := range files {
		for k := range files[i] {
			files[i][k] = bytes.Clone(src.files[i][k])
		}
	}
	flip := func(ops []byte, kind int) {
		for ; len(ops) >= 4; ops = ops[4:] {
			b := files[int(ops[0])%nseg][kind]
			if len(b) > 0 {
				b[(int(ops[1])<<8|int(ops[2]))%len(b)] ^= ops[3]
			}
		}
	}
	flip(logFlips, 0)
	flip(idxFlips, 1)
	if cut != 0 {
		seg := int(cut) % nseg
		if l := files[seg][0]; len(l) > 0 {
			files[seg][0] = l[:int(cut>>1)%len(l)]
		}
	}
	// Two more shapes of damage from the shape byte: zero padding after
	// the last segment's index (an unclean shutdown), and no index.
	last := &files[nseg-1]
	if shape&0x40 != 0 {
		last[1] = append(last[1], make([]byte, 8*int(shape&0x0f))...)
	}
	if target >= 0 {
		target = src.bases[0] + target%(src.last-src.bases[0]+8) - 2
	}

	dir := filepath.Join(t.TempDir(), "fuzz-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var total int64
	for i, base := range src.bases {
		for k, sfx := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
			if k == 1 && i == nseg-1 && shape&0x80 != 0 {
				files[i][1] = nil
				continue // the index is absent
			}
			total += int64(len(files[i][k]))
			if err := os.WriteFile(filepath.Join(dir, SegmentName(base)+sfx), files[i][k], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	p, err := ReadPartition(dir)
	if err != nil || len(p.Segments) != nseg {
		t.Fatalf("ReadPartition: %d segments, %v", len(p.Segments), err)
	}
	logName := func(i int) string { return p.Segments[i].Log }

	// Brute force.
	type chain struct {
		batches []record.Batch
		stop    int64
		err     error
	}
	chains := make([]chain, nseg)
	for i := range chains {
		c := &chains[i]
		c.batches, c.stop, c.err = fzChain(logName(i), files[i][0])
	}
	wantSeg, wantPos, wantFound, wantErr := -1, int64(-1), false, false
	consistent := true
	first := -1
	for i := range src.bases {
		if src.bases[i] <= target {
			first = i
		}
	}
	if first >= 0 {
		for i := first; i < nseg && !wantFound && !wantErr; i++ {
			consistent = consistent && fzIndexConsistent(files[i][1], src.bases[i], target, chains[i].batches, chains[i].stop)
			for _, b := range chains[i].batches {
				if b.LastOffset >= target {
					wantSeg, wantPos, wantFound = i, b.Position, true
					break
				}
			}
			if !wantFound && chains[i].err != nil && !errors.Is(chains[i].err, fileio.ErrTorn) {
				wantErr = true
			}
		}
	}

	var res *OffsetLookup
	alloc := fuzzcheck.Allocated(func() { res, err = p.LookupOffset(target, LookupOptions{Trace: shape&1 == 1}) })
	if bound := 4*uint64(total) + fuzzcheck.Slack(); alloc > bound {
		t.Fatalf("LookupOffset allocated %d bytes over %d bytes of files (bound %d)", alloc, total, bound)
	}
	switch {
	case err != nil:
		var ce *fileio.CorruptError
		if !errors.As(err, &ce) || !strings.HasPrefix(ce.File, dir) {
			t.Fatalf("LookupOffset(%d): %v is not a CorruptError naming a file of the partition", target, err)
		}
	case res.Found:
		seg := -1
		for i := range p.Segments {
			if p.Segments[i].BaseOffset == res.SegmentBaseOffset {
				seg = i
			}
		}
		log := files[seg][0]
		at := res.Batch.Position
		b, perr := record.ParseBatch(log[at:min(int64(len(log)), at+record.HeaderReadSize)], at, logName(seg))
		if perr != nil || b != res.Batch || b.End() > int64(len(log)) || b.LastOffset < target {
			t.Fatalf("LookupOffset(%d) answered %+v; the bytes there say %+v, %v", target, res.Batch, b, perr)
		}
	}
	if consistent {
		gotSeg := -1
		if err == nil && res.Found {
			for i := range p.Segments {
				if p.Segments[i].BaseOffset == res.SegmentBaseOffset {
					gotSeg = i
				}
			}
		}
		switch {
		case wantErr != (err != nil):
			t.Fatalf("LookupOffset(%d): error %v; brute force expects an error: %v", target, err, wantErr)
		case err == nil && (res.Found != wantFound || wantFound && (gotSeg != wantSeg || res.Batch.Position != wantPos)):
			t.Fatalf("LookupOffset(%d): found %v in segment %d at %d; brute force: %v in %d at %d", target, res.Found, gotSeg, res.Batch.Position, wantFound, wantSeg, wantPos)
		}
	}

	// Walk is the scans from position 0, segment after segment.
	var walked []record.Batch
	var walkErr error
	alloc = fuzzcheck.Allocated(func() {
		walkErr = p.Walk(LogRange{}, func(wb WalkBatch) error {
			walked = append(walked, *wb.Batch)
			if int64(len(wb.Entry)) != wb.Batch.Size || wb.CRCValid != (record.ComputeCRC(wb.Batch.Magic, wb.Entry) == wb.Batch.CRC) {
				t.Fatalf("Walk: entry of %d bytes for %+v, crc ok %v", len(wb.Entry), wb.Batch, wb.CRCValid)
			}
			return nil
		})
	})
	if bound := uint64(nseg)*(DefaultWindow+64<<10) + 4*uint64(total) + fuzzcheck.Slack(); alloc > bound {
		t.Fatalf("Walk allocated %d bytes over %d bytes of files (bound %d)", alloc, total, bound)
	}
	var wantWalk []record.Batch
	var wantWalkErr error
	for i := range chains {
		wantWalk = append(wantWalk, chains[i].batches...)
		if wantWalkErr == nil {
			wantWalkErr = chains[i].err
		}
	}
	if len(walked) != len(wantWalk) {
		t.Fatalf("Walk delivered %d batches, the scans find %d", len(walked), len(wantWalk))
	}
	for i := range walked {
		if walked[i] != wantWalk[i] {
			t.Fatalf("Walk batch %d: %+v, scan: %+v", i, walked[i], wantWalk[i])
		}
	}
	if (walkErr == nil) != (wantWalkErr == nil) || walkErr != nil && walkErr.Error() != wantWalkErr.Error() {
		t.Fatalf("Walk error %v, the scans stop with %v", walkErr, wantWalkErr)
	}

	// Time lookups and the log end: no panic, errors name a file.
	for _, ts := range []int64{TimestampEarliest, TimestampLatest, TimestampMax, 0, kafkagen.DefaultStartTimestamp + target%1000} {
		if _, err := p.LookupTime(ts, LookupOptions{Trace: shape&2 == 2}); err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("LookupTime(%d): %v does not name a file of the partition", ts, err)
			}
		}
	}
	for i := range p.Segments {
		s, err := OpenSegment(p.Segments[i], SegmentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.NextOffset(); err != nil && !strings.Contains(err.Error(), dir) {
			t.Fatalf("NextOffset: %v does not name a file", err)
		}
		s.Close()
	}
	return consistent
}

// fzIndexConsistent reports whether every slot of an offset index whose
// offset is <= target points where a lookup starting there gives the same
// answer as a scan from position 0: at a batch start of that scan (or where
// it stopped), with every batch before it ending below the slot's offset.
func fzIndexConsistent(idx []byte, base, target int64, batches []record.Batch, stop int64) bool {
	for s := 0; s+8 <= len(idx); s += 8 {
		off := base + int64(int32(binary.BigEndian.Uint32(idx[s:])))
		pos := int64(int32(binary.BigEndian.Uint32(idx[s+4:])))
		if off > target {
			continue
		}
		ok := pos == stop
		for _, b := range batches {
			if b.Position == pos {
				ok = true
				break
			}
			if b.LastOffset >= off {
				return false
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

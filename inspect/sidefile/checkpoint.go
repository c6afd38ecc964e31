package sidefile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
)

// Names of the small text files a broker keeps beside the segments: in a
// data directory (log.dirs entry) and in each partition directory.
const (
	RecoveryPointCheckpointFile  = "recovery-point-offset-checkpoint" // LogManager.RecoveryPointCheckpointFile
	LogStartOffsetCheckpointFile = "log-start-offset-checkpoint"      // LogManager.LogStartOffsetCheckpointFile
	ReplicationCheckpointFile    = "replication-offset-checkpoint"    // ReplicaManager.HighWatermarkFilename
	CleanerCheckpointFile        = "cleaner-offset-checkpoint"        // LogCleanerManager.offsetCheckpointFile
	MetaPropertiesFile           = "meta.properties"                  // MetaPropertiesEnsemble
	CleanShutdownFile            = ".kafka_cleanshutdown"             // CleanShutdownFileHandler
	LeaderEpochCheckpointFile    = "leader-epoch-checkpoint"          // LeaderEpochCheckpointFile
	PartitionMetadataFile        = "partition.metadata"               // PartitionMetadataFile
)

// ErrCheckpointFormat is the kind of the *CorruptError a checkpoint or
// properties file that its broker reader refuses yields (an IOException
// such as "Malformed line in checkpoint file", "Unrecognised version",
// "Expected [n] entries"). How much that matters depends on the file: see
// the Parse functions.
var ErrCheckpointFormat = errors.New("malformed checkpoint file")

// MaxCheckpointBytes bounds the text files the Read functions read whole.
var MaxCheckpointBytes int64 = 64 << 20

// eachJavaLine calls fn with each line of b and the byte position it
// starts at, split as java.io.BufferedReader.readLine does: lines end at
// "\n", "\r" or "\r\n", and a last line without a terminator still
// counts; an empty file has no lines. The lines are views into b, never
// collected: a file of millions of lines costs its own bytes only. fn
// returning false stops the walk.
func eachJavaLine(b []byte, fn func(line []byte, pos int64) bool) {
	start := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			continue
		}
		if !fn(b[start:i], int64(start)) {
			return
		}
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		start = i + 1
	}
	if start < len(b) {
		fn(b[start:], int64(start))
	}
}

// checkpointLine is one line of a text file and the byte position it
// starts at.
type checkpointLine struct {
	text string
	pos  int64
}

// javaLines collects eachJavaLine's lines, for the files of a few lines
// (partition.metadata, meta.properties).
func javaLines(b []byte) []checkpointLine {
	var out []checkpointLine
	eachJavaLine(b, func(line []byte, pos int64) bool {
		out = append(out, checkpointLine{string(line), pos})
		return true
	})
	return out
}

// javaWhitespace splits like Java's Pattern.compile("\\s+").split(line):
// \s is [ \t\n\x0B\f\r]; a leading separator yields an empty first field,
// trailing empty fields are dropped.
func javaWhitespace(s string) []string {
	isSpace := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\x0b' || c == '\f' || c == '\r'
	}
	var out []string
	start := 0
	for i := 0; i < len(s); {
		if !isSpace(s[i]) {
			i++
			continue
		}
		out = append(out, s[start:i])
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		start = i
	}
	out = append(out, s[start:])
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// javaInt parses like Integer.parseInt / Long.parseLong: an optional sign
// and decimal digits, nothing else, within range (bits 32 or 64). Java
// also accepts non-ASCII Unicode digits; kseg does not.
func javaInt(s string, bits int) (int64, bool) {
	if s == "" || s == "+" || s == "-" {
		return 0, false
	}
	digits := s
	if s[0] == '+' || s[0] == '-' {
		digits = s[1:]
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, bits)
	return v, err == nil
}

// readCheckpoint is CheckpointFile.CheckpointReadBuffer.read: an empty file
// or one without a count line has no entries; the first line must be the
// expected version, the second the entry count, and every following line
// must parse (blank lines are malformed); the number of lines must equal the
// count. parse is called for each entry line and reports whether it parsed.
func readCheckpoint(file string, b []byte, version int, parse func(line string) bool) error {
	var (
		n     int64 // lines seen
		count int64
		err   error
	)
	bad := func(pos int64, format string, args ...any) error {
		return fileio.Corruptf(file, pos, ErrCheckpointFormat, format, args...)
	}
	eachJavaLine(b, func(line []byte, pos int64) bool {
		n++
		text := string(line)
		switch n {
		case 1:
			v, ok := javaInt(text, 32)
			if !ok {
				err = bad(pos, "malformed version line %q", text)
			} else if v != int64(version) {
				err = bad(pos, "unrecognised version %d, expected version %d", v, version)
			}
		case 2:
			var ok bool
			if count, ok = javaInt(text, 32); !ok || count < 0 {
				err = bad(pos, "malformed entry count line %q", text)
			}
		default:
			if !parse(text) {
				err = bad(pos, "malformed line %q", text)
			}
		}
		return err == nil
	})
	if err != nil || n <= 2 {
		return err
	}
	if n-2 != count {
		return fileio.Corruptf(file, int64(len(b)), ErrCheckpointFormat, "expected [%d] entries, but found [%d]", count, n-2)
	}
	return nil
}

// OffsetCheckpointEntry is one line of an offset checkpoint.
type OffsetCheckpointEntry struct {
	Topic     string
	Partition int32
	Offset    int64
}

// OffsetCheckpoint is a data directory's recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, replication-offset-checkpoint or
// cleaner-offset-checkpoint (OffsetCheckpointFile, version 0): lines
// "<topic> <partition> <offset>" in no particular order.
type OffsetCheckpoint struct {
	Entries []OffsetCheckpointEntry // in file order
}

// OffsetCheckpointVersion is OffsetCheckpointFile.CURRENT_VERSION.
const OffsetCheckpointVersion = 0

// ParseOffsetCheckpoint reads an offset checkpoint with the broker's strict
// rules (section 1.6 of the format notes): on any problem it returns the
// entries read before the bad line and a *CorruptError of kind
// ErrCheckpointFormat. A broker that cannot read its recovery-point or
// log-start checkpoint logs a warning and uses an empty map: recovery
// from offset 0 after an unclean shutdown, and the first segment's base as
// the log start offset.
func ParseOffsetCheckpoint(file string, b []byte) (*OffsetCheckpoint, error) {
	c := &OffsetCheckpoint{}
	err := readCheckpoint(file, b, OffsetCheckpointVersion, func(line string) bool {
		f := javaWhitespace(line)
		if len(f) != 3 {
			return false
		}
		p, ok1 := javaInt(f[1], 32)
		o, ok2 := javaInt(f[2], 64)
		if !ok1 || !ok2 {
			return false
		}
		c.Entries = append(c.Entries, OffsetCheckpointEntry{Topic: f[0], Partition: int32(p), Offset: o})
		return true
	})
	return c, err
}

// Lookup returns the offset recorded for a partition. When a partition is
// listed twice the later line wins, as in the broker's map.
func (c *OffsetCheckpoint) Lookup(topic string, partition int32) (int64, bool) {
	var off int64
	found := false
	for _, e := range c.Entries {
		if e.Topic == topic && e.Partition == partition {
			off, found = e.Offset, true
		}
	}
	return off, found
}

// AppendOffsetCheckpoint writes an offset checkpoint as
// CheckpointFile.write does on Linux ("\n" line ends).
func AppendOffsetCheckpoint(dst []byte, entries []OffsetCheckpointEntry) []byte {
	dst = fmt.Appendf(dst, "%d\n%d\n", OffsetCheckpointVersion, len(entries))
	for _, e := range entries {
		dst = fmt.Appendf(dst, "%s %d %d\n", e.Topic, e.Partition, e.Offset)
	}
	return dst
}

// EpochEntry is one leader epoch and the first offset written in it.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// LeaderEpochCheckpoint is a partition's leader-epoch-checkpoint
// (LeaderEpochCheckpointFile, version 0): lines "<epoch> <startOffset>",
// sorted by epoch. Epoch E begins at StartOffset: the base offset of the
// first batch written with partition leader epoch E.
type LeaderEpochCheckpoint struct {
	Entries []EpochEntry // in file order

	// kept lists, once Cache has run, the indexes into Entries that the
	// broker's cache keeps, in order; cacheErr is its error.
	kept     []int32
	cached   bool
	cacheErr error
}

// LeaderEpochCheckpointVersion is LeaderEpochCheckpointFile.CURRENT_VERSION.
const LeaderEpochCheckpointVersion = 0

// ParseLeaderEpochCheckpoint reads a leader-epoch-checkpoint with the
// broker's strict rules; on a problem it returns the entries before it and
// a *CorruptError of kind ErrCheckpointFormat. (A broker that cannot read
// it fails to load the partition.)
func ParseLeaderEpochCheckpoint(file string, b []byte) (*LeaderEpochCheckpoint, error) {
	// Sized once from the entry count line, as far as the file could hold
	// that many lines ("E O\n": at least 4 bytes each): no regrowth.
	c := &LeaderEpochCheckpoint{}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		if j := bytes.IndexByte(b[i+1:], '\n'); j >= 0 {
			if n, ok := javaInt(string(b[i+1:i+1+j]), 32); ok && n > 0 {
				c.Entries = make([]EpochEntry, 0, min(n, int64(len(b))/4))
			}
		}
	}
	err := readCheckpoint(file, b, LeaderEpochCheckpointVersion, func(line string) bool {
		f := javaWhitespace(line)
		if len(f) != 2 {
			return false
		}
		e, ok1 := javaInt(f[0], 32)
		o, ok2 := javaInt(f[1], 64)
		if !ok1 || !ok2 {
			return false
		}
		c.Entries = append(c.Entries, EpochEntry{Epoch: int32(e), StartOffset: o})
		return true
	})
	return c, err
}

// ErrNegativeEpoch: an entry with a negative epoch or start offset, which
// the broker's cache refuses when it loads the file
// (LeaderEpochFileCache.assign: IllegalArgumentException), so the
// partition does not load.
var ErrNegativeEpoch = errors.New("invalid partition leader epoch entry")

// Cache returns what the broker's LeaderEpochFileCache holds after loading
// the file: the entries are assigned in file order, and assign skips an
// entry with the latest epoch unless it starts earlier (isUpdateNeeded),
// and otherwise first removes every entry whose epoch or start offset is
// not below the new one's (maybeTruncateNonMonotonicEntries). The result
// has epochs and start offsets both strictly increasing. An entry with a
// negative value stops the load: the entries before it and an error of
// kind ErrNegativeEpoch are returned.
func (c *LeaderEpochCheckpoint) Cache() ([]EpochEntry, error) {
	c.load()
	cache := make([]EpochEntry, len(c.kept))
	for i, k := range c.kept {
		cache[i] = c.Entries[k]
	}
	return cache, c.cacheErr
}

// load runs the broker's assignments once and keeps which entries stay:
// a stack of indexes, 4 bytes per entry kept (lookups ask it for every
// answer).
func (c *LeaderEpochCheckpoint) load() {
	if c.cached {
		return
	}
	c.cached = true
	for i, e := range c.Entries {
		if e.Epoch < 0 || e.StartOffset < 0 {
			c.cacheErr = fmt.Errorf("%w: entry %d (epoch %d, start offset %d)", ErrNegativeEpoch, i, e.Epoch, e.StartOffset)
			return
		}
		if n := len(c.kept); n > 0 {
			if l := c.Entries[c.kept[n-1]]; e.Epoch == l.Epoch && e.StartOffset >= l.StartOffset {
				continue
			}
		}
		for len(c.kept) > 0 {
			l := c.Entries[c.kept[len(c.kept)-1]]
			if l.Epoch < e.Epoch && l.StartOffset < e.StartOffset {
				break
			}
			c.kept = c.kept[:len(c.kept)-1]
		}
		c.kept = append(c.kept, int32(i))
	}
}

// LoadErr is Cache's error without the copy of the cache: nil when the
// broker loads the file's entries.
func (c *LeaderEpochCheckpoint) LoadErr() error {
	c.load()
	return c.cacheErr
}

// Kept calls fn for each entry in file order with whether the broker's
// cache keeps that very line (a repeated line is kept once, at its first
// occurrence). It stops at fn's first false.
func (c *LeaderEpochCheckpoint) Kept(fn func(i int, e EpochEntry, kept bool) bool) {
	c.load()
	k := 0
	for i, e := range c.Entries {
		in := k < len(c.kept) && int(c.kept[k]) == i
		if in {
			k++
		}
		if !fn(i, e, in) {
			return
		}
	}
}

// EntryFor returns the epoch entry covering offset as the broker's
// LeaderEpochFileCache.epochForOffset answers it over its cache (Cache):
// the entry with the largest start offset <= offset, found by binary
// search (start offsets increase in the cache). ok is false when every
// entry starts after offset or the file does not load.
func (c *LeaderEpochCheckpoint) EntryFor(offset int64) (e EpochEntry, ok bool) {
	c.load()
	if c.cacheErr != nil {
		return e, false
	}
	n := sort.Search(len(c.kept), func(i int) bool { return c.Entries[c.kept[i]].StartOffset > offset })
	if n == 0 {
		return e, false
	}
	return c.Entries[c.kept[n-1]], true
}

// EpochRange is EntryFor with where the entry's epoch ends: the next
// kept entry's start offset (math.MaxInt64 after the latest).
func (c *LeaderEpochCheckpoint) EpochRange(offset int64) (e EpochEntry, end int64, ok bool) {
	c.load()
	if c.cacheErr != nil {
		return e, 0, false
	}
	n := sort.Search(len(c.kept), func(i int) bool { return c.Entries[c.kept[i]].StartOffset > offset })
	end = math.MaxInt64
	if n < len(c.kept) {
		end = c.Entries[c.kept[n]].StartOffset
	}
	if n == 0 {
		return e, end, false
	}
	return c.Entries[c.kept[n-1]], end, true
}

// Latest is the cache's latest entry (the current epoch), ok false when
// there is none or the file does not load.
func (c *LeaderEpochCheckpoint) Latest() (EpochEntry, bool) {
	c.load()
	if c.cacheErr != nil || len(c.kept) == 0 {
		return EpochEntry{}, false
	}
	return c.Entries[c.kept[len(c.kept)-1]], true
}

// AppendLeaderEpochCheckpoint writes a leader-epoch-checkpoint as the
// broker does on Linux.
func AppendLeaderEpochCheckpoint(dst []byte, entries []EpochEntry) []byte {
	dst = fmt.Appendf(dst, "%d\n%d\n", LeaderEpochCheckpointVersion, len(entries))
	for _, e := range entries {
		dst = fmt.Appendf(dst, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return dst
}

// PartitionMetadata is a partition's partition.metadata (KIP-516): the
// topic id. Written exactly as "version: 0\ntopic_id: <id>" without a
// trailing newline, where <id> is the 16-byte UUID in URL-safe base64
// without padding (Uuid.toString).
type PartitionMetadata struct {
	Version int32
	TopicID string   // as written
	UUID    [16]byte // decoded
}

var partitionMetadataSplit = regexp.MustCompile(`:[ \t\n\x0b\f\r]+`)

// ParsePartitionMetadata reads partition.metadata as
// PartitionMetadataReadBuffer.read does: each of the first two lines is split
// at ":\s+" and must give exactly two parts (the names before the colon are
// not checked); the version must be an int >= 0; the id must decode to 16
// bytes and not be all zero. Later lines are ignored. A broker that cannot
// read it fails to load the partition.
func ParsePartitionMetadata(file string, b []byte) (*PartitionMetadata, error) {
	pm := &PartitionMetadata{}
	lines := javaLines(b)
	bad := func(pos int64, format string, args ...any) error {
		return fileio.Corruptf(file, pos, ErrCheckpointFormat, format, args...)
	}
	if len(lines) == 0 {
		return pm, bad(0, "empty partition metadata file")
	}
	parts := javaSplit(partitionMetadataSplit, lines[0].text)
	if len(parts) != 2 {
		return pm, bad(lines[0].pos, "malformed line %q", lines[0].text)
	}
	v, ok := javaInt(parts[1], 32)
	if !ok {
		return pm, bad(lines[0].pos, "malformed line %q", lines[0].text)
	}
	pm.Version = int32(v)
	if v < 0 {
		return pm, bad(lines[0].pos, "unrecognized version of partition metadata file: %d", v)
	}
	if len(lines) < 2 {
		return pm, bad(int64(len(b)), "no topic_id line")
	}
	parts = javaSplit(partitionMetadataSplit, lines[1].text)
	if len(parts) != 2 {
		return pm, bad(lines[1].pos, "malformed line %q", lines[1].text)
	}
	pm.TopicID = parts[1]
	u, err := ParseUUID(parts[1])
	if err != nil {
		return pm, bad(lines[1].pos, "topic id %q: %v", parts[1], err)
	}
	pm.UUID = u
	if u == ([16]byte{}) {
		return pm, bad(lines[1].pos, "invalid topic ID in partition metadata file (the all-zero id)")
	}
	return pm, nil
}

// javaSplit is Pattern.split: a leading empty field is kept only when the
// match at 0 has positive width, trailing empty fields are dropped.
func javaSplit(re *regexp.Regexp, s string) []string {
	out := re.Split(s, -1)
	for len(out) > 1 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// ParseUUID decodes a Kafka Uuid string (Uuid.fromString): URL-safe base64
// of 16 bytes, 22 characters without padding (24 with "==" padding is
// accepted too, as Java's URL decoder does).
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	if len(s) > 24 {
		return u, fmt.Errorf("too long to be a base64 UUID")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimSuffix(s, "=="))
	if err != nil {
		return u, fmt.Errorf("not URL-safe base64")
	}
	if len(b) != 16 {
		return u, fmt.Errorf("decodes to %d bytes, a UUID has 16", len(b))
	}
	copy(u[:], b)
	return u, nil
}

// FormatUUID prints a UUID as Kafka's Uuid.toString does.
func FormatUUID(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// MetaProperties is a data directory's meta.properties (MetaProperties):
// Java properties, version 0 (ZooKeeper mode, broker.id) or 1 (KRaft,
// node.id and cluster.id required).
type MetaProperties struct {
	// Properties in file order (a key given twice keeps its last value, at
	// its first position).
	Keys   []string
	Values map[string]string

	Version     int32  // the version key, 0 when absent
	ClusterID   string // "" when absent or empty
	NodeID      *int32 // node.id (v1) or broker.id (v0); nil when absent
	DirectoryID string // "" when absent
}

// ParseMetaProperties reads meta.properties as java.util.Properties.load
// does (ParseProperties). It then
// checks what MetaProperties requires: version 0 or 1; for version 1 a
// node.id and a cluster.id; an int node.id or broker.id; a valid
// directory.id. A broker refuses to start on a data directory whose
// meta.properties fails these checks.
func ParseMetaProperties(file string, b []byte) (*MetaProperties, error) {
	mp := &MetaProperties{Values: map[string]string{}}
	bad := func(pos int64, format string, args ...any) error {
		return fileio.Corruptf(file, pos, ErrCheckpointFormat, format, args...)
	}
	props, err := ParseProperties(file, b)
	if err != nil {
		return mp, err
	}
	for _, e := range props.List {
		mp.Keys = append(mp.Keys, e.Key)
		mp.Values[e.Key] = e.Value
	}
	if v, ok := mp.Values["version"]; ok {
		n, ok := javaInt(v, 32)
		if !ok {
			return mp, bad(-1, "version %q is not an integer", v)
		}
		mp.Version = int32(n)
	}
	mp.ClusterID = mp.Values["cluster.id"]
	mp.DirectoryID = mp.Values["directory.id"]
	idKey := "broker.id"
	if mp.Version == 1 {
		idKey = "node.id"
	}
	switch mp.Version {
	case 0, 1:
	default:
		return mp, bad(-1, "unknown meta.properties version %d (want 0 or 1)", mp.Version)
	}
	if v, ok := mp.Values[idKey]; ok {
		n, ok := javaInt(v, 32)
		if !ok {
			return mp, bad(-1, "%s %q is not an integer", idKey, v)
		}
		id := int32(n)
		mp.NodeID = &id
	}
	if mp.Version == 1 {
		if mp.NodeID == nil {
			return mp, bad(-1, "version 1 requires node.id")
		}
		if _, ok := mp.Values["cluster.id"]; !ok {
			return mp, bad(-1, "version 1 requires cluster.id")
		}
	}
	if mp.DirectoryID != "" {
		if _, err := ParseUUID(mp.DirectoryID); err != nil {
			return mp, bad(-1, "directory.id %q: %v", mp.DirectoryID, err)
		}
	}
	return mp, nil
}

// CleanShutdown is what a data directory's .kafka_cleanshutdown says. Its
// presence means every partition in the directory was closed cleanly, so
// the broker skips recovery at its next start. Up to 3.6 the file is
// empty; from 3.7 it holds {"version":0,"brokerEpoch":N}.
type CleanShutdown struct {
	Version     *int32
	BrokerEpoch *int64
}

// ParseCleanShutdown reads .kafka_cleanshutdown (CleanShutdownFileHandler).
// An empty file is the pre-3.7 marker. Content that is not the expected
// JSON is an error of kind ErrCheckpointFormat; the broker then reads no
// broker epoch but still takes the shutdown as clean (the file exists).
func ParseCleanShutdown(file string, b []byte) (CleanShutdown, error) {
	var cs CleanShutdown
	if len(bytes.TrimSpace(b)) == 0 {
		return cs, nil
	}
	var v struct {
		Version     *int32 `json:"version"`
		BrokerEpoch *int64 `json:"brokerEpoch"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return cs, fileio.Corruptf(file, 0, ErrCheckpointFormat, "not the expected JSON {\"version\":0,\"brokerEpoch\":N}: %v", err)
	}
	cs.Version, cs.BrokerEpoch = v.Version, v.BrokerEpoch
	return cs, nil
}

// SortedPartitions returns the checkpoint's entries sorted by topic and
// partition (for stable output; the file order is map order).
func (c *OffsetCheckpoint) SortedPartitions() []OffsetCheckpointEntry {
	out := append([]OffsetCheckpointEntry(nil), c.Entries...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/record"
	"github.com/kseg/kseg/inspect/sidefile"
)

// File suffixes (LogFileUtils).
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	TxnIndexSuffix  = ".txnindex"
	SnapshotSuffix  = ".snapshot"
)

// SegmentFiles names the files of one segment; an empty path means the file
// is absent. Base offsets come from the 20-digit names (LogFileUtils
// .offsetFromFileName: the digits before the first '.').
type SegmentFiles struct {
	BaseOffset int64
	Log        string
	Index      string
	TimeIndex  string
	TxnIndex   string
	// Snapshot is set when Log is a KRaft metadata snapshot
	// (MetadataSnapshot.Segment), not a segment's .log.
	Snapshot *MetadataSnapshot
}

// TxnIndexBound is the most entries the segment's .txnindex can hold
// given its log's size now (record.MaxTxnIndexEntries: one aborted
// transaction per control batch); false without a log that can be
// statted. Readers of a .txnindex read no further: a forged or sparse
// file of billions of entries is not walked.
func (s SegmentFiles) TxnIndexBound() (int64, bool) {
	if s.Log == "" {
		return 0, false
	}
	st, err := os.Stat(s.Log)
	if err != nil {
		return 0, false
	}
	return record.MaxTxnIndexEntries(st.Size()), true
}

// set records path as the segment's file with the given suffix.
func (s *SegmentFiles) set(suffix, path string) {
	f := s.field(suffix)
	if f == nil {
		return
	}
	// Two names with the same base offset and suffix (20 digits and 19,
	// say): the one that sorts last is kept, whatever order the directory
	// was listed in.
	if *f == "" || path > *f {
		*f = path
	}
}

// field is the path field of the file with the given suffix, nil for
// another suffix.
func (s *SegmentFiles) field(suffix string) *string {
	var f *string
	switch suffix {
	case LogSuffix:
		f = &s.Log
	case IndexSuffix:
		f = &s.Index
	case TimeIndexSuffix:
		f = &s.TimeIndex
	case TxnIndexSuffix:
		f = &s.TxnIndex
	}
	return f
}

// Name is the .log's base name, as the contract's "segment" fields print it.
// A metadata snapshot's is its own name.
func (s *SegmentFiles) Name() string {
	if s.Snapshot != nil {
		return filepath.Base(s.Log)
	}
	return SegmentName(s.BaseOffset) + LogSuffix
}

// SegmentName is the 20-digit file name prefix for a base offset
// (LogFileUtils.filenamePrefixFromOffset).
func SegmentName(baseOffset int64) string { return fmt.Sprintf("%020d", baseOffset) }

// Skipped is a file or directory discovery noted but did not use.
type Skipped struct {
	Path   string
	Reason string
}

// Partition is one partition directory and its segments in base-offset order.
type Partition struct {
	Dir       string // the path as given, or joined from the data dir
	Topic     string // "" when the name does not parse as <topic>-<partition>
	Partition int32  // -1 when the name does not parse
	Segments  []SegmentFiles
	Skipped   []Skipped
	// SingleSegment is set when the user named a single segment file: commands then
	// work on that segment alone.
	SingleSegment bool
	// DataDir is the data directory holding the partition directory, where
	// the broker keeps its checkpoints ("" when not known).
	DataDir string
	// Snapshots are the producer state snapshots the listing found, as
	// ListSnapshots lists them (ReadPartition only).
	Snapshots []SnapshotFile
	// MetadataSnapshots are the KRaft metadata snapshots the listing found
	// (<end offset>-<epoch>.checkpoint, in __cluster_metadata-0), by end
	// offset (ReadPartition only).
	MetadataSnapshots []MetadataSnapshot
}

// Name is the directory's base name; for a symbolic link named otherwise,
// the name of the partition directory it points to.
func (p *Partition) Name() string {
	name := filepath.Base(p.Dir)
	if p.Topic != "" {
		if _, _, ok := ParsePartitionDirName(name); !ok {
			return fmt.Sprintf("%s-%d", p.Topic, p.Partition)
		}
	}
	return name
}

// Target is what a PATH argument resolved to: a data directory (several
// partitions), a partition directory, or one segment file.
type Target struct {
	Path       string
	Kind       string // "data_dir", "partition", "segment"
	DataDir    string // the data directory holding the partitions, when known
	File       string // for Kind "segment": the file named
	Partitions []*Partition
	Skipped    []Skipped
	// Bootstrap is the data directory's bootstrap.checkpoint (Kind
	// "data_dir"), nil when it has none.
	Bootstrap *MetadataSnapshot
}

// ParseBaseOffset reads a segment file name's base offset: the decimal
// digits before the first '.' (LogFileUtils.offsetFromFileName). Unlike the
// broker it insists on digits only.
func ParseBaseOffset(name string) (int64, error) {
	i := strings.IndexByte(name, '.')
	if i <= 0 {
		return 0, fmt.Errorf("%s: %w: no base offset in the name", name, fileio.ErrNotKafka)
	}
	for _, c := range name[:i] {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s: %w: the name does not start with a base offset", name, fileio.ErrNotKafka)
		}
	}
	v, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: base offset out of range", name, fileio.ErrNotKafka)
	}
	return v, nil
}

// ParsePartitionDirName follows LocalLog.parseTopicPartitionName for plain
// <topic>-<partition> names. ok is false for names with a -delete, -future
// or -stray suffix and for names that do not parse.
func ParsePartitionDirName(name string) (topic string, partition int32, ok bool) {
	for _, sfx := range []string{"-delete", "-future", "-stray"} {
		if strings.HasSuffix(name, sfx) {
			return "", -1, false
		}
	}
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return "", -1, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil {
		return "", -1, false
	}
	return name[:i], int32(p), true
}

// ValidTopicName is Kafka's Topic.isValid: 1 to 249 characters of
// [a-zA-Z0-9._-], and not "." or "..". Only such a name can be a topic's
// directory name; any other (a "../x" read from a record) names no
// partition of a data directory.
func ValidTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > maxTopicNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxTopicNameLength is Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// segmentSuffix returns the suffix of a segment file name, or "" when the
// name is not a segment file (LogFileUtils.isLogFile / isIndexFile: the name
// must END with the suffix, so x.log.swap is not a log).
func segmentSuffix(name string) string {
	for _, s := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if strings.HasSuffix(name, s) {
			return s
		}
	}
	return ""
}

// leftoverSuffixes are the files the broker itself deletes or renames at
// load (LogLoader.removeTempFilesAndCollectSwapFiles): why discovery skips
// one, and what the broker does with it.
var leftoverSuffixes = []struct{ suffix, reason, atLoad string }{
	{".deleted", "scheduled for deletion (.deleted)",
		"file renamed for asynchronous deletion (.deleted): the broker deletes it at load (LogLoader.removeTempFilesAndCollectSwapFiles)"},
	{".cleaned", "log cleaner output not yet swapped in (.cleaned)",
		"log cleaner or segment split output not yet swapped in (.cleaned): the broker deletes it at load, and any .swap file at or above its base offset with it"},
	{".swap", "log cleaner swap file (.swap)",
		"interrupted segment swap of the log cleaner or a split (.swap): at load the broker deletes the segment files its offsets cover (producer snapshots included) and renames it into place"},
}

// leftoverReason explains a file the broker deletes or renames at load
// ("" for any other file).
func leftoverReason(name string) string {
	for _, l := range leftoverSuffixes {
		if strings.HasSuffix(name, l.suffix) {
			return l.reason
		}
	}
	return ""
}

// LeftoverAtLoad says what the broker does at load with a file it deletes
// or renames then (.deleted, .cleaned, .swap); "" for any other file.
func LeftoverAtLoad(name string) string {
	for _, l := range leftoverSuffixes {
		if strings.HasSuffix(name, l.suffix) {
			return l.atLoad
		}
	}
	return ""
}

// ReadPartition lists the segments of one partition directory without
// opening any of them.
func ReadPartition(dir string) (*Partition, error) {
	// Listed unsorted (os.ReadDir sorts): segments and skipped files are
	// sorted below, and sorting a listing of thousands of files cost a
	// time lookup more than its search.
	f, err := fileio.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	p := &Partition{Dir: dir, Partition: -1}
	p.Topic, p.Partition, _ = ParsePartitionDirName(filepath.Base(filepath.Clean(dir)))
	if p.Topic == "" {
		// A symbolic link named otherwise (orders -> /data/orders-0):
		// the broker knows the directory by its own name.
		if real, ok := symlinkTarget(dir); ok {
			p.Topic, p.Partition, _ = ParsePartitionDirName(filepath.Base(real))
		}
	}
	if p.Topic == "" {
		p.Partition = -1
	}
	// filepath.Join(dir, name) for every name of the listing, without
	// cleaning the whole path again for each (a listed name is never "",
	// "." or "..", nor holds a separator).
	prefix := filepath.Join(dir, "x")
	prefix = prefix[:len(prefix)-1]
	byBase := make(map[int64]*SegmentFiles, len(ents)/3+1)
	for _, e := range ents {
		name := e.Name()
		path := prefix + name
		if e.IsDir() {
			continue
		}
		if r := leftoverReason(name); r != "" {
			p.Skipped = append(p.Skipped, Skipped{path, r})
			continue
		}
		if off, ok := snapshotOffset(name); ok {
			p.Snapshots = append(p.Snapshots, SnapshotFile{Offset: off, Path: path})
			continue
		}
		if ms, ok := ParseMetadataSnapshotName(name); ok && !ms.Bootstrap {
			ms.Path = path
			p.MetadataSnapshots = append(p.MetadataSnapshots, ms)
			continue
		}
		sfx := segmentSuffix(name)
		if sfx == "" {
			continue
		}
		base, err := ParseBaseOffset(name)
		if err != nil {
			p.Skipped = append(p.Skipped, Skipped{path, "not a segment file name"})
			continue
		}
		s := byBase[base]
		if s == nil {
			s = &SegmentFiles{BaseOffset: base}
			byBase[base] = s
		}
		s.set(sfx, path)
	}
	for _, s := range byBase {
		if s.Log == "" {
			// An index without its log is deleted by the broker at load
			// (LogLoader.loadSegmentFiles, "orphaned").
			for _, f := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" {
					p.Skipped = append(p.Skipped, Skipped{f, "index file without a .log (orphaned)"})
				}
			}
			continue
		}
		p.Segments = append(p.Segments, *s)
	}
	sort.Slice(p.Segments, func(i, j int) bool { return p.Segments[i].BaseOffset < p.Segments[j].BaseOffset })
	sort.Slice(p.Skipped, func(i, j int) bool { return p.Skipped[i].Path < p.Skipped[j].Path })
	sortSnapshots(p.Snapshots)
	sortMetadataSnapshots(p.MetadataSnapshots)
	return p, nil
}

// Resolve finds out what path names: a segment file (.log, .index,
// .timeindex, .txnindex), a partition directory (it holds segment files), or
// a data directory (it holds partition directories). Partition directories
// named <topic>-<p>.<uuid>-delete / -future / -stray are noted and skipped,
// as are directories whose names do not parse and the KRaft
// __cluster_metadata-0 directory is treated like any partition.
func Resolve(path string) (*Target, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return resolveFile(path)
	}
	p, err := ReadPartition(path)
	if err != nil {
		return nil, err
	}
	if len(p.Segments) > 0 {
		p.DataDir = dataDirOf(path)
		return &Target{Path: path, Kind: "partition", DataDir: p.DataDir, Partitions: []*Partition{p}}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	t := &Target{Path: path, Kind: "data_dir", DataDir: path, Bootstrap: bootstrapIn(path)}
	// Each subdirectory in listing order: a partition directory to read,
	// or one skipped for its name (with the reason). The partitions are
	// read together (readPartitions), the target assembled in that order.
	var subs, reasons []string
	for _, e := range ents {
		sub := filepath.Join(path, e.Name())
		if !isDirEntry(e, sub) {
			continue
		}
		reason := ""
		if _, _, ok := ParsePartitionDirName(e.Name()); !ok {
			reason = "not a <topic>-<partition> directory"
			for _, sfx := range []string{"-delete", "-future", "-stray"} {
				if strings.HasSuffix(e.Name(), sfx) {
					reason = "partition directory being deleted or moved (" + sfx + ")"
				}
			}
		}
		subs, reasons = append(subs, sub), append(reasons, reason)
	}
	parts, errs := readPartitions(subs, reasons)
	for i, sub := range subs {
		sp, err := parts[i], errs[i]
		switch {
		case reasons[i] != "":
			t.Skipped = append(t.Skipped, Skipped{sub, reasons[i]})
		case err != nil:
			t.Skipped = append(t.Skipped, Skipped{sub, err.Error()})
		case len(sp.Segments) == 0:
			t.Skipped = append(t.Skipped, Skipped{sub, "no segments"})
		default:
			sp.DataDir = path
			t.Partitions = append(t.Partitions, sp)
		}
	}
	if len(t.Partitions) == 0 {
		if len(p.Skipped) > 0 {
			t.Skipped = append(p.Skipped, t.Skipped...)
		}
		return nil, fmt.Errorf("%s: %w: no segments and no partition directories found", path, fileio.ErrNotKafka)
	}
	return t, nil
}

// readPartitions reads the directories dirs whose skip reason is ""
// (ReadPartition) on up to GOMAXPROCS goroutines (InOrder) and returns the
// partitions and errors in the order of dirs. Each directory costs an
// open, two getdents and a close, and the parsing of its names: one
// goroutine listing a data directory of thousands of partitions kept every
// command waiting (docs/performance.md, run O).
func readPartitions(dirs, skip []string) ([]*Partition, []error) {
	parts := make([]*Partition, len(dirs))
	errs := make([]error, len(dirs))
	workers := min(runtime.GOMAXPROCS(0), len(dirs)/16+1) // a few directories are not worth a goroutine
	InOrder(len(dirs), workers, len(dirs), func(_, i int) {
		if skip[i] == "" {
			parts[i], errs[i] = ReadPartition(dirs[i])
		}
	}, func(int) bool { return true })
	return parts, errs
}

// isDirEntry reports whether e, listed at path, is a directory, following a
// symbolic link as the broker does: LogManager.loadLogs loads every entry
// of a log directory whose File.isDirectory, and that follows links.
func isDirEntry(e fs.DirEntry, path string) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func resolveFile(path string) (*Target, error) {
	name := filepath.Base(path)
	if strings.HasSuffix(name, CheckpointSuffix) {
		return resolveSnapshotFile(path)
	}
	sfx := segmentSuffix(name)
	if sfx == "" {
		return nil, fmt.Errorf("%s: %w: expected a .log, .index, .timeindex or .txnindex file, a KRaft snapshot (.checkpoint), a partition directory or a data directory", path, fileio.ErrNotKafka)
	}
	base, err := ParseBaseOffset(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	p, err := ReadPartition(dir)
	if err != nil {
		return nil, err
	}
	var seg *SegmentFiles
	for i := range p.Segments {
		if p.Segments[i].BaseOffset == base {
			seg = &p.Segments[i]
		}
	}
	if seg == nil {
		// An index whose .log is missing: still inspectable on its own.
		seg = &SegmentFiles{BaseOffset: base}
	}
	// The named file is the one the user gave, in the spelling given: it
	// replaces the listing's name for the same file (a/b/../b/x.index is
	// listed as a/b/x.index), so that commands recognise it as the file
	// named and print it as given.
	*seg.field(sfx) = path
	p.Segments = []SegmentFiles{*seg}
	p.SingleSegment = true
	p.Skipped = nil
	p.DataDir = dataDirOf(dir)
	return &Target{Path: path, Kind: "segment", DataDir: p.DataDir, File: path, Partitions: []*Partition{p}}, nil
}

// dataDirOf is the data directory holding partition directory dir: its
// lexical parent (a/b/../orders-0/ is in a), or, when dir itself is a
// symbolic link, the parent of the directory it points to, where the
// broker keeps that partition's checkpoints.
func dataDirOf(dir string) string {
	if real, ok := symlinkTarget(dir); ok {
		return filepath.Dir(real)
	}
	return filepath.Dir(filepath.Clean(dir))
}

// symlinkTarget is the path dir's symbolic link resolves to, when dir
// (cleaned) is one.
func symlinkTarget(dir string) (string, bool) {
	fi, err := os.Lstat(filepath.Clean(dir))
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	return real, true
}

// IsNotExist reports whether err says a path does not exist.
func IsNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// SortPartitions orders partitions by topic, then partition number
// (orders-2 before orders-10), then directory.
func SortPartitions(ps []*Partition) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Dir < b.Dir
	})
}

// LogManagerPartitions lists the partitions of targets that a broker's
// log manager owns (all but the KRaft metadata log, whose producer state
// and retention the Raft layer keeps), sorted (SortPartitions), and the
// files of their data directories, each read once.
func LogManagerPartitions(targets []*Target) ([]*Partition, map[string]*sidefile.DataDirFiles) {
	var parts []*Partition
	dds := map[string]*sidefile.DataDirFiles{}
	for _, t := range targets {
		for _, p := range t.Partitions {
			if p.Topic == "__cluster_metadata" {
				continue
			}
			parts = append(parts, p)
			if p.DataDir != "" && dds[p.DataDir] == nil {
				dds[p.DataDir] = sidefile.ReadDataDirFiles(p.DataDir)
			}
		}
	}
	SortPartitions(parts)
	return parts, dds
}

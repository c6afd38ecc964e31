package verify

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/internaltopics"
	"github.com/kseg/kseg/inspect/record"
)

// Check ids of KRaft metadata snapshots (<end offset>-<epoch>.checkpoint
// in __cluster_metadata-0, and a data directory's bootstrap.checkpoint).
// Their batches are checked as a segment's .log is (log.crc,
// log.corrupt-header, log.truncated, log.offset-order, log.records, with
// the snapshot as the file and no segment): a broker reads a snapshot with
// its CRCs checked (RecordsIterator), so damage there is an error too.
const (
	// SnapshotHeader (error): the snapshot's first batch is not a control
	// batch whose first record is a SnapshotHeader: a broker refuses to
	// load it (RecordsSnapshotReader.nextBatch throws).
	SnapshotHeader = "snapshot.header"
	// SnapshotFooter (error): the snapshot's last batch does not end with
	// a SnapshotFooter record. The writer appends it last, when it
	// freezes the snapshot (RecordsSnapshotWriter, BatchFileWriter.close),
	// so the file is incomplete; a broker does not check the footer and
	// loads an image that lacks what followed.
	SnapshotFooter = "snapshot.footer"
)

func init() {
	severityOf[SnapshotHeader] = SeverityError
	severityOf[SnapshotFooter] = SeverityError
}

// SnapshotChecks lists the check ids proper to metadata snapshots.
func SnapshotChecks() []string { return []string{SnapshotHeader, SnapshotFooter} }

// snapshotFraming checks that a metadata snapshot starts with a snapshot
// header and ends with a footer, reading its batches up to the first
// damage (which its log.* finding reports; nothing is said about the
// framing beyond it).
func snapshotFraming(s *inspect.MetadataSnapshot) ([]Finding, error) {
	var (
		dec       record.RecordDecoder
		first     = true
		header    string // what the first batch holds instead of a header, "" when it holds one
		lastPos   int64  = -1
		lastFoot  bool
		lastWhat  string
		sawBatch  bool
		decodeErr error
	)
	p := s.Partition()
	err := p.Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		b := w.Batch
		sawBatch = true
		lastPos, lastFoot, lastWhat = b.Position, false, "a data batch"
		var types []string
		if b.IsControl() {
			decodeErr = dec.Records(w.Segment.Log, w.Entry, b, func(r *record.Record) error {
				types = append(types, internaltopics.DecodeControl(r.Key, r.Value).String())
				return nil
			})
			if decodeErr != nil {
				return decodeErr // log.records reports it
			}
			lastWhat = "a control batch of no record"
			if n := len(types); n > 0 {
				lastFoot = types[n-1] == record.ControlSnapshotFooter.String()
				lastWhat = "a control batch ending with a " + types[n-1] + " record"
			}
		}
		if first {
			first = false
			switch {
			case !b.IsControl():
				header = "a data batch"
			case len(types) == 0:
				header = "a control batch of no record"
			case types[0] != record.ControlSnapshotHeader.String():
				header = "a control batch starting with a " + types[0] + " record"
			}
		}
		return nil
	})
	var ce *fileio.CorruptError
	if err != nil && !errors.As(err, &ce) {
		return nil, err
	}
	var out []Finding
	name := s.Path
	switch {
	case !sawBatch && err == nil:
		out = append(out, sideFinding(SnapshotHeader, name, nil, ptr(int64(0)), nil,
			"no batch: a metadata snapshot starts with a control batch holding a SnapshotHeader record; a broker refuses to load it (RecordsSnapshotReader.nextBatch)"))
	case header != "":
		out = append(out, sideFinding(SnapshotHeader, name, nil, ptr(int64(0)), nil,
			"the first batch is %s, not a control batch whose first record is a SnapshotHeader: a broker refuses to load this snapshot (RecordsSnapshotReader.nextBatch)", header))
	}
	if sawBatch && err == nil && !lastFoot {
		out = append(out, sideFinding(SnapshotFooter, name, nil, ptr(lastPos), nil,
			"the last batch is %s, not one ending with a SnapshotFooter record, which the writer appends last (RecordsSnapshotWriter): the snapshot is incomplete, and a broker, which does not check the footer, loads an image without what followed", lastWhat))
	}
	return out, nil
}

// snapshotJob reports whether j checks a metadata snapshot.
func (j *segmentJob) snapshot() bool { return j.files.Snapshot != nil }

// finishSnapshot turns a snapshot job's log findings into findings about
// the file alone (no segment) and adds its framing findings.
func finishSnapshot(j *segmentJob, res *segmentResult) {
	for i := range res.findings {
		res.findings[i].SegmentBaseOffset = nil
	}
	fs, err := snapshotFraming(j.files.Snapshot)
	if err != nil {
		res.err = fmt.Errorf("%s: %w", j.files.Log, err)
		return
	}
	res.findings = append(res.findings, fs...)
}

// bootstrapFindings checks the data directory's bootstrap.checkpoint, a
// small file (the feature levels and credentials `kafka-storage format`
// was given), on the caller's goroutine with the data directory's files.
func bootstrapFindings(t *inspect.Target, o *Options) ([]Finding, error) {
	if !o.SideFiles || t.Bootstrap == nil {
		return nil, nil
	}
	j := &segmentJob{part: -1, files: t.Bootstrap.Segment(), dir: t.DataDir}
	b := &buffers{scan: make([]byte, scanBuffer), it: inspect.NewLogIterator(inspect.IterOptions{Salvage: true, Window: o.Window})}
	res := runJob(o, j, b)
	if res.err == nil {
		finishSnapshot(j, res)
	}
	return res.findings, res.err
}

package verify

import (
	"errors"
	"fmt"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/fileio"
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
// header and ends with a footer (inspect.SnapshotFraming), reading its
// batches up to the first damage (which its log.* finding reports;
// nothing is said about the framing beyond it).
func snapshotFraming(s *inspect.MetadataSnapshot) ([]Finding, error) {
	var (
		dec     record.RecordDecoder
		framing inspect.SnapshotFraming
		types   []record.ControlType
	)
	err := s.Partition().Walk(inspect.LogRange{}, func(w inspect.WalkBatch) error {
		types = types[:0]
		if w.Batch.IsControl() {
			var err error
			if types, err = inspect.ControlTypes(types, &dec, w.Segment.Log, w.Entry, w.Batch); err != nil {
				return errStopFraming // log.records reports it
			}
		}
		framing.Add(w.Batch, types)
		return nil
	})
	var ce *fileio.CorruptError
	switch {
	case errors.Is(err, errStopFraming), errors.As(err, &ce):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var out []Finding
	if p := framing.HeaderProblem(); p != "" {
		out = append(out, sideFinding(SnapshotHeader, s.Path, nil, ptr(0), nil,
			"%s: a broker refuses to load this snapshot (RecordsSnapshotReader.nextBatch)", p))
	}
	if p, pos := framing.FooterProblem(); p != "" {
		out = append(out, sideFinding(SnapshotFooter, s.Path, nil, ptr(pos), nil,
			"%s, which the writer appends last (RecordsSnapshotWriter): the snapshot is incomplete, and a broker, which does not check the footer, loads an image without what followed", p))
	}
	return out, nil
}

var errStopFraming = errors.New("stop")

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

package inspect

import (
	"fmt"
	"path/filepath"
)

// TimelineOptions say what Timeline charts.
type TimelineOptions struct {
	// Bucket is the bucket width (ms); 0 chooses about Buckets over the
	// span (AutoBucket), widened as far as MaxBuckets needs.
	Bucket int64
	// Buckets is about how many buckets the automatic width gives.
	Buckets int
	// MaxBuckets bounds the buckets of all series together.
	MaxBuckets int
	// From and To bound the span shown (ms; -1: the data's).
	From, To int64
	// PerPartition makes one series per partition instead of their sum.
	PerPartition bool
	// Progress, when set, is called after each partition's traffic is read.
	Progress func(partition string, done, total int64)
}

// TimelineSeries is the buckets of one partition, or of all summed
// (Partition nil).
type TimelineSeries struct {
	Partition *Partition
	Buckets   []TimelineBucket
}

// UntimedTraffic is a partition's offsets that have no timestamp and are
// not in any bucket, and why (Why: magic 0 batches, or timestamps of -1).
type UntimedTraffic struct {
	Dir     string
	Records int64
	Why     string
}

// TimelineChart is kseg timeline's answer: the span [From, To] (-1, -1
// when nothing in range has a timestamp), the bucket width, the series,
// their records and bytes summed, and what the reader should be told.
type TimelineChart struct {
	Partitions     int
	From, To       int64
	Bucket         int64
	Series         []TimelineSeries
	Records, Bytes int64
	// Source is "timeindex", or "batches" when a segment without a usable
	// time index was read from its batch headers.
	Source string
	// FromBatches are those segments' .log files; Misleading the time
	// index entries that made one unusable (such a segment is not in
	// FromBatches).
	FromBatches []string
	Misleading  []*MisleadingEntry
	Untimed     []UntimedTraffic
}

// TooManyBucketsError is an explicit bucket width whose buckets over the
// span, for each of Series series, are more than Max in all; Fitting is
// the narrowest width that fits.
type TooManyBucketsError struct {
	Bucket, Span, Buckets, Fitting int64
	Series, Max                    int
}

func (e *TooManyBucketsError) Error() string {
	return fmt.Sprintf("a bucket of %d ms makes %d buckets over %d ms for each of %d series: at most %d in all", e.Bucket, e.Buckets, e.Span, e.Series, e.Max)
}

// Timeline reads the traffic of parts (Partition.Traffic) and sums it
// into buckets of one width over the span of their timestamps. On a
// *TooManyBucketsError the chart returned has the span, the source and
// the warnings, and no series.
func Timeline(parts []*Partition, opts TimelineOptions) (*TimelineChart, error) {
	traffic := make([][]SegmentTraffic, len(parts))
	for i, p := range parts {
		segs, err := p.Traffic()
		if err != nil {
			return nil, fmt.Errorf("reading the traffic of %s: %w", p.Dir, err)
		}
		traffic[i] = segs
		if opts.Progress != nil {
			opts.Progress(p.Name(), int64(i+1), int64(len(parts)))
		}
	}
	c := &TimelineChart{Partitions: len(parts)}
	c.span(parts, traffic, opts)
	nSeries := 1
	if opts.PerPartition {
		nSeries = len(parts)
	}
	bucket, err := BucketWidth(opts, c.From, c.To, nSeries)
	if err != nil {
		return c, err
	}
	c.Bucket = bucket
	total := TimelineSeries{Buckets: NewBuckets(c.From, c.To, bucket)}
	for i, p := range parts {
		s := &total
		if opts.PerPartition {
			c.Series = append(c.Series, TimelineSeries{Partition: p, Buckets: NewBuckets(c.From, c.To, bucket)})
			s = &c.Series[len(c.Series)-1]
		}
		r, b, ur, _ := AddTraffic(s.Buckets, bucket, traffic[i])
		c.Records = CappedSum(c.Records, r)
		c.Bytes = CappedSum(c.Bytes, b)
		if ur > 0 {
			c.Untimed = append(c.Untimed, UntimedTraffic{Dir: p.Dir, Records: ur, Why: whyUntimed(traffic[i])})
		}
	}
	if !opts.PerPartition {
		c.Series = []TimelineSeries{total}
	}
	return c, nil
}

// span sets the span common to every series (the data's, within
// opts.From and opts.To), the source, and the segments read from their
// batch headers.
func (c *TimelineChart) span(parts []*Partition, traffic [][]SegmentTraffic, opts TimelineOptions) {
	from, to := int64(-1), int64(-1)
	c.Source = "timeindex"
	for i, p := range parts {
		f, t := TimeSpan(traffic[i])
		if f >= 0 && (from < 0 || f < from) {
			from = f
		}
		to = max(to, t)
		for _, s := range traffic[i] {
			if !s.FromBatches {
				continue
			}
			c.Source = "batches"
			if s.Misleading != nil {
				c.Misleading = append(c.Misleading, s.Misleading)
				continue
			}
			c.FromBatches = append(c.FromBatches, filepath.Join(p.Dir, SegmentName(s.BaseOffset)+LogSuffix))
		}
	}
	if opts.From >= 0 && from >= 0 {
		from = max(from, opts.From)
	}
	if opts.To >= 0 && to >= 0 {
		to = min(to, opts.To)
	}
	if to < from {
		from, to = -1, -1 // nothing in the range
	}
	c.From, c.To = from, to
}

// whyUntimed says why a partition's offsets have no timestamp: magic 0
// batches have no timestamp field; magic 1 and 2 batches may carry -1.
func whyUntimed(segs []SegmentTraffic) string {
	var magic0, minus1 bool
	for _, s := range segs {
		magic0, minus1 = magic0 || s.Magic0, minus1 || s.NoTimestamp
	}
	switch {
	case magic0 && minus1:
		return "magic 0 batches, and batches whose timestamps are -1"
	case minus1:
		return "their batches' timestamps are -1: written without one"
	}
	return "magic 0"
}

// BucketsOver is how many buckets of width bucket cover [from, to] (0
// when nothing has a timestamp).
func BucketsOver(from, to, bucket int64) int64 {
	if from < 0 {
		return 0
	}
	return (to-BucketStart(from, bucket))/bucket + 1
}

// bucketsPerSeries is how many buckets each of series series may have:
// max in all, and at least one each (a bucket as wide as the span; past
// max series the output is a line per partition).
func bucketsPerSeries(series, maxBuckets int) int64 {
	return max(int64(maxBuckets/max(series, 1)), 1)
}

// bucketLadder are the widths (ms) suggested for an explicit width and
// taken by the automatic width when about opts.Buckets per series would
// make too many in all: round widths, then whole days.
var bucketLadder = []int64{1, 2, 5, 10, 20, 50, 100, 200, 500,
	1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 2 * 60e3, 5 * 60e3, 10 * 60e3, 15 * 60e3, 30 * 60e3,
	3600e3, 2 * 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 24 * 3600e3}

// fittingBucket is the narrowest width of at least min ms, from
// bucketLadder or whole days, whose buckets over [from, to] for each of
// series series are at most maxBuckets in all.
func fittingBucket(from, to, min int64, series, maxBuckets int) int64 {
	perSeries := bucketsPerSeries(series, maxBuckets)
	for _, w := range bucketLadder {
		if w >= min && BucketsOver(from, to, w) <= perSeries {
			return w
		}
	}
	day := int64(24 * 3600e3)
	w := max((to-from)/max(perSeries-1, 1)/day, 1) * day
	for BucketsOver(from, to, w) > perSeries && w < to-from+day {
		w += day
	}
	return w
}

// BucketWidth is the bucket width (ms): opts.Bucket, refused with a
// *TooManyBucketsError when its buckets over [from, to] for each of
// series series are more than opts.MaxBuckets in all; else the automatic
// width, widened as far as that cap needs.
func BucketWidth(opts TimelineOptions, from, to int64, series int) (int64, error) {
	perSeries := bucketsPerSeries(series, opts.MaxBuckets)
	if opts.Bucket == 0 {
		bucket := AutoBucket(to-from, opts.Buckets)
		if BucketsOver(from, to, bucket) > perSeries {
			bucket = fittingBucket(from, to, bucket, series, opts.MaxBuckets)
		}
		return bucket, nil
	}
	n := BucketsOver(from, to, opts.Bucket)
	if n <= perSeries {
		return opts.Bucket, nil
	}
	return 0, &TooManyBucketsError{Bucket: opts.Bucket, Span: to - from, Buckets: n, Series: series, Max: opts.MaxBuckets,
		Fitting: fittingBucket(from, to, opts.Bucket, series, opts.MaxBuckets)}
}

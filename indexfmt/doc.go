// Package indexfmt holds Kafka's three index formats as pure codecs over
// bytes: the offset index (.index), the time index (.timeindex) and the
// transaction index (.txnindex). It counts valid entries the way both the
// broker and DumpLogSegments do, reproduces the broker's warm/cold binary
// search probe for probe, and knows the append rules a broker follows when it
// writes the next entry.
//
// Nothing here opens files: an index is read through an io.ReaderAt (a
// memory mapping in kseg, a bytes.Reader in tests) with a known size.
package indexfmt

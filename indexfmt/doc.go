// Package indexfmt holds Kafka's three index formats as pure codecs over
// bytes: the offset index (.index), the time index (.timeindex) and the
// transaction index (.txnindex). It counts valid entries the way both the
// broker and DumpLogSegments do, reproduces the broker's warm/cold binary
// search probe for probe, and knows the append rules a broker follows when it
// writes the next entry.
//
// The algorithms are those of the storage module's AbstractIndex,
// OffsetIndex, TimeIndex, TransactionIndex and AbortedTxn as of Kafka 4.0.
// The warm/cold search dates from 2.1.0; older brokers searched the whole
// index at once, which gives the same answers on a well-formed index but may
// not on a corrupt one.
//
// Nothing here opens files: an index is read through an io.ReaderAt (a
// memory mapping in kseg, a bytes.Reader in tests) with a known size. An
// OffsetIndex or TimeIndex keeps a scratch buffer so that lookups allocate
// nothing; give each goroutine its own.
package indexfmt

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
// Nothing here opens or reads files, and nothing here decides how bytes are
// fetched: an index is an array of fixed-size slots, asked for through a
// SlotReader. The pair of constructors follows debug/elf's NewFile and
// Open: NewOffsetIndex, NewTimeIndex and NewTxnIndex read an index held in
// memory (a rebuilt index, a test's bytes), and NewOffsetIndexFrom,
// NewTimeIndexFrom and NewTxnIndexFrom read a file through the SlotReader
// kseg's file-access layer implements (fileio.IndexSlots), which owns the
// read policy: chunked in-order reads, the prefetch of a search's last
// levels, the buffers that let lookups allocate nothing. The codecs hold no
// state of their own: an index over bytes may be shared between
// goroutines, one over a file as its reader allows.
package indexfmt

// Package scan is the engine under inspect.LogIterator: the broker's stop
// rules over a .log (cursor, FileLogInputStream.nextBatch), the read
// window entries and streaming CRCs are read through (readWindow), the
// read-ahead that puts a second core on one segment (readAhead), and the
// resynchronisation past damage (Resyncer). Nothing outside inspect reads
// a log through it directly: LogIterator is the one iterator.
package scan

// Package verify checks Kafka partition data on disk and reports every kind
// of damage it finds as a Finding with a stable check id (the contract's
// `kseg verify` section): the .log's batches (length, magic, CRC, offsets,
// torn tails), the offset and time indexes against the log (judged by
// whether a broker's lookups would answer correctly, not by the newest
// writer's layout), zero-filled index tails, missing indexes, indexes that
// differ from what broker recovery would rebuild, .txnindex basics,
// overlapping segments and leftover files.
//
// Past a corrupt batch verify does not stop: it reads the .log through a
// salvaging inspect.LogIterator, which resumes at the next position where
// a valid batch starts; the bytes in between are reported as one damaged
// range, and the rest of the segment is checked.
//
// Nothing here prints, reads flags or exits; Run hands findings to a
// callback and returns a Summary.
package verify

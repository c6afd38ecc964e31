// Package fileio is how kseg reads and writes files: Open, the one opener
// (a memory mapping or pread, with the fault guard of mapped files,
// GuardFaults, and, on request, page-cache neutrality), ReadFile for small
// files read whole, WriteAtomic, the one way a file is written (rebuild's
// files, timeline --svg, report --html), and the damage kinds with
// CorruptError, which every layer above raises to say which bytes of which
// file were wrong. It knows nothing of Kafka's formats.
package fileio

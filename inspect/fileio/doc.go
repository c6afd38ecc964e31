// Package fileio is how kseg reads files: Open, the one opener (a memory
// mapping or pread, with the fault guard of mapped files and, on request,
// page-cache neutrality), ReadFile for small files read whole, and the
// damage kinds with CorruptError, which every layer above raises to say
// which bytes of which file were wrong. It knows nothing of Kafka's formats.
package fileio

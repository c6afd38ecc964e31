package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/rebuild"
)

// Errors a person can act on. Every error kseg reports names the file and,
// where it applies, the byte position (fileio.CorruptError says both);
// reportError then adds one line, "kseg: hint: ...", with the check that
// failed (the id verify reports it under) and the command to run next,
// when there is one to suggest. The hint is derived from the error itself,
// so every command gets the same advice for the same trouble.

// hintError carries the hint of an error whose kind alone does not say
// what to do (a PATH that is not a Kafka path, several partitions where
// one is needed).
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

// withHint attaches a hint to err (nil stays nil).
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hintError{err: err, hint: hint}
}

// checkOf is the verify check id for a kind of log damage.
func checkOf(err error) string {
	switch {
	case errors.Is(err, fileio.ErrTorn):
		return "log.truncated"
	case errors.Is(err, fileio.ErrCorruptHeader):
		return "log.corrupt-header"
	case errors.Is(err, fileio.ErrCRC):
		return "log.crc"
	case errors.Is(err, fileio.ErrCorruptRecords), errors.Is(err, fileio.ErrTooLarge):
		return "log.records"
	}
	return ""
}

// nextStep is the hint for err reported by the command named cmd, or ""
// when kseg has nothing better to say than the error itself.
func nextStep(cmd string, err error) string {
	if err == nil || strings.Contains(err.Error(), "run kseg ") {
		return "" // the message already says what to run
	}
	var h *hintError
	if errors.As(err, &h) {
		return h.hint
	}
	var ce *fileio.CorruptError
	switch {
	case errors.As(err, &ce) && errors.Is(err, fileio.ErrFault):
		return "the file shrank while kseg read it (is a broker still writing or deleting it?): run again, or copy the partition directory and work on the copy"
	case errors.As(err, &ce):
		dir := filepath.Dir(ce.File)
		check := checkOf(err)
		lead := "run kseg verify " + dir + " to list every problem"
		if check != "" {
			lead = "verify reports this as " + check + "; " + lead
		}
		switch cmd {
		case "rebuild":
			return lead + "; kseg rebuild --dry-run --truncate-log " + dir + " shows the cut broker recovery would make"
		case "dump-log":
			return lead + "; kseg dump-log --salvage lists the batches past the damage"
		}
		return lead + "; kseg rebuild --dry-run --truncate-log " + dir + " shows what broker recovery would do about it"
	case errors.Is(err, rebuild.ErrLocked):
		return "stop the broker first; or write elsewhere with --out DIR (nothing under PATH is touched), or use --force if no broker runs and the lock is stale"
	case errors.Is(err, os.ErrPermission):
		return "kseg needs read access (rebuild: write access) to the files: run it as the broker's user, e.g. sudo -u kafka kseg ..."
	}
	return ""
}

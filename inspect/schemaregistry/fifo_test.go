//go:build unix

package schemaregistry_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kseg/kseg/inspect/schemaregistry"
)

// TestSchemaFileFIFO: a FIFO named like a schema file in a --schemas
// directory is refused as not a regular file instead of blocking the open.
func TestSchemaFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "1.avsc")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := schemaregistry.Open(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Open with a FIFO schema file: %v, want an error naming it as not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open still blocked after 10s on a FIFO schema file")
	}
}

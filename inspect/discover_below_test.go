package inspect_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

func TestStatPath(t *testing.T) {
	dir := t.TempDir()
	if st, err := inspect.StatPath(dir); err != nil || !st.IsDir() {
		t.Errorf("a directory: %v %v", st, err)
	}
	missing := filepath.Join(dir, "nosuch")
	_, err := inspect.StatPath(missing)
	if err == nil || err.Error() != missing+": no such file or directory" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// DataDirsBelow finds the data directories one and two levels down, in
// name order, not three, not a partition directory's parent's siblings
// that are not data directories, and looks into no more than
// MaxDataDirsBelow directories.
func TestDataDirsBelow(t *testing.T) {
	root := t.TempDir()
	gen := func(dir string) {
		t.Helper()
		if _, err := kafkagen.Generate(dir, kafkagen.Options{Seed: 1, Segments: 1, Batches: 2}); err != nil {
			t.Fatal(err)
		}
	}
	gen(filepath.Join(root, "broker-2", "data", "orders-0"))
	gen(filepath.Join(root, "broker-2", "data", "orders-1"))
	gen(filepath.Join(root, "broker-1", "orders-0"))
	gen(filepath.Join(root, "deep", "a", "b", "orders-0")) // three levels down
	for _, d := range []string{"empty", "broker-2/notes"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "README"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := inspect.DataDirsBelow(root)
	want := []inspect.FoundDataDir{{Path: filepath.Join(root, "broker-1"), Partitions: 1}, {Path: filepath.Join(root, "broker-2", "data"), Partitions: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DataDirsBelow:\n got %+v\nwant %+v", got, want)
	}
	if got := inspect.DataDirsBelow(filepath.Join(root, "nosuch")); got != nil {
		t.Errorf("below a missing path: %+v", got)
	}

	// The bound: a data directory listed after MaxDataDirsBelow others is
	// not looked into.
	many := t.TempDir()
	for i := 0; i < inspect.MaxDataDirsBelow; i++ {
		if err := os.Mkdir(filepath.Join(many, fmt.Sprintf("d%03d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gen(filepath.Join(many, "zz", "orders-0"))
	if got := inspect.DataDirsBelow(many); len(got) != 0 {
		t.Errorf("past the bound: %+v", got)
	}
	if err := os.Remove(filepath.Join(many, "d000")); err != nil {
		t.Fatal(err)
	}
	if got := inspect.DataDirsBelow(many); len(got) != 1 || got[0].Path != filepath.Join(many, "zz") {
		t.Errorf("at the bound: %+v", got)
	}
}

package verify

import (
	"path/filepath"
	"testing"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/kafkagen"
)

// BenchmarkVerify checks a generated partition of two 64 MiB segments
// (uncompressed v2, 1 KiB values) with one and two jobs.
func BenchmarkVerify(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "bench-0")
	m, err := kafkagen.Generate(dir, kafkagen.BenchOptions(1, 2, 64<<20))
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, s := range m.Segments {
		size += s.LogSize
	}
	tg, err := inspect.Resolve(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		b.Run(map[int]string{1: "j1", 2: "j2"}[jobs], func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for range b.N {
				sum, err := Run(tg, Options{Jobs: jobs}, func(f Finding) { b.Fatalf("finding %+v", f) })
				if err != nil || sum.Batches == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

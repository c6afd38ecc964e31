package topicconfig

import (
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/sidefile"
)

// FuzzServerProperties: any server.properties and --config value either
// resolves or fails with an error naming where the bad value came from;
// nothing panics, and what resolves passes LogConfig's checks.
func FuzzServerProperties(f *testing.F) {
	f.Add([]byte("log.retention.hours=168\nlog.cleanup.policy=compact,delete\n"), "retention.ms=1000")
	f.Add([]byte("log.retention.ms=\\\n  -5\nlog.cleaner.min.cleanable.ratio=0.7d\n"), "min.compaction.lag.ms=10")
	f.Add([]byte("transaction.max.timeout.ms=\\u0031\n"), "cleanup.policy=")
	f.Fuzz(func(t *testing.T, file []byte, flag string) {
		p, err := sidefile.ParseProperties("server.properties", file)
		if err != nil {
			if !strings.Contains(err.Error(), "server.properties") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		r, err := New(Inputs{ServerProperties: p, File: "server.properties", Flags: []string{flag}})
		if err != nil {
			if !strings.Contains(err.Error(), "server.properties:") && !strings.Contains(err.Error(), "--config") && !strings.Contains(err.Error(), "topic ") {
				t.Fatalf("error without its source: %v", err)
			}
			return
		}
		c, err := r.Topic("t")
		if err != nil {
			t.Fatalf("New accepted what Topic refuses: %v", err)
		}
		if c.RetentionMs < -1 || c.MinCleanableRatio < 0 || c.MinCleanableRatio > 1 || c.MinCompactionLagMs > c.MaxCompactionLagMs || c.SegmentBytes < 14 {
			t.Fatalf("out of range: %+v", c)
		}
	})
}

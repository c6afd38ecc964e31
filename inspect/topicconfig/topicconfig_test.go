package topicconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/sidefile"
)

func props(t *testing.T, text string) (*sidefile.Properties, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadServerProperties(path)
	if err != nil {
		t.Fatal(err)
	}
	return p, path
}

func resolve(t *testing.T, in Inputs, topic string) *Config {
	t.Helper()
	r, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Topic(topic)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := resolve(t, Inputs{}, "orders")
	if c.RetentionMs != 604800000 || c.RetentionBytes != -1 || !c.Delete || c.Compact || c.MinCleanableRatio != 0.5 ||
		c.MaxCompactionLagMs != 1<<63-1 || c.MinCompactionLagMs != 0 || c.TransactionMaxTimeoutMs != 900000 ||
		c.TransactionLogPartitions != 50 || !c.CleanerEnable || c.RemoteStorage {
		t.Fatalf("defaults: %+v", c)
	}
	for _, k := range []string{RetentionMs, CleanupPolicy, TransactionMaxTimeoutMs} {
		if c.Sources[k] != SourceDefault {
			t.Errorf("%s from %s", k, c.Sources[k])
		}
	}
	// Internal topics are created compacted.
	if c := resolve(t, Inputs{}, "__consumer_offsets"); !c.Compact || c.Delete || c.Sources[CleanupPolicy] != SourceDefault {
		t.Fatalf("__consumer_offsets: %+v", c)
	}
}

// The broker's retention synonyms: ms, then minutes, then hours, the
// first set winning (ServerTopicConfigSynonyms), a negative value -1
// (KafkaConfig.logRetentionTimeMillis).
func TestServerPropertiesSynonyms(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int64
	}{
		{"log.retention.hours=48\n", 48 * 3600000},
		{"log.retention.minutes=90\nlog.retention.hours=48\n", 90 * 60000},
		{"log.retention.hours=48\nlog.retention.minutes=90\nlog.retention.ms=1234\n", 1234},
		{"log.retention.ms=-5\n", -1},
		{"log.retention.hours=-1\n", -1},
		{"# comment\n  log.retention.ms : 77 \n", 77},
		{"log.retention.\\\n    ms=88\n", 88},
	} {
		p, path := props(t, tc.file)
		c := resolve(t, Inputs{ServerProperties: p, File: path}, "t")
		if c.RetentionMs != tc.want || c.Sources[RetentionMs] != SourceFile {
			t.Errorf("%q: retention.ms %d from %s, want %d from file", tc.file, c.RetentionMs, c.Sources[RetentionMs], tc.want)
		}
	}
	p, path := props(t, "log.cleanup.policy = compact, delete\nlog.cleaner.min.cleanable.ratio=0.25\ntransaction.max.timeout.ms=60000\nlog.retention.bytes=1000\n")
	c := resolve(t, Inputs{ServerProperties: p, File: path}, "t")
	if !c.Compact || !c.Delete || c.MinCleanableRatio != 0.25 || c.TransactionMaxTimeoutMs != 60000 || c.RetentionBytes != 1000 {
		t.Fatalf("%+v", c)
	}
}

// The layers, later winning: file, image broker, image topic, flag.
func TestLayers(t *testing.T) {
	p, path := props(t, "log.retention.ms=1000\nlog.retention.bytes=5000\nlog.cleanup.policy=delete\n")
	img := &Image{
		Broker: map[string]string{"log.retention.ms": "2000"},
		Topics: map[string]map[string]string{"orders": {"retention.bytes": "7000", "cleanup.policy": "compact"}},
	}
	in := Inputs{ServerProperties: p, File: path, Image: img, Flags: []string{"cleanup.policy=compact,delete"}}
	c := resolve(t, in, "orders")
	if c.RetentionMs != 2000 || c.Sources[RetentionMs] != SourceBroker {
		t.Errorf("retention.ms %d from %s", c.RetentionMs, c.Sources[RetentionMs])
	}
	if c.RetentionBytes != 7000 || c.Sources[RetentionBytes] != SourceTopic {
		t.Errorf("retention.bytes %d from %s", c.RetentionBytes, c.Sources[RetentionBytes])
	}
	if !c.Compact || !c.Delete || c.Sources[CleanupPolicy] != SourceFlag {
		t.Errorf("cleanup.policy %v from %s", c.CleanupPolicy, c.Sources[CleanupPolicy])
	}
	other := resolve(t, in, "payments")
	if other.RetentionBytes != 5000 || other.Sources[RetentionBytes] != SourceFile {
		t.Errorf("payments retention.bytes %d from %s", other.RetentionBytes, other.Sources[RetentionBytes])
	}
	if got := c.SourcesOf(RetentionMs, RetentionBytes); got[RetentionMs] != "broker" || got[RetentionBytes] != "topic" {
		t.Errorf("SourcesOf: %v", got)
	}
}

func TestBadValues(t *testing.T) {
	p, path := props(t, "num.partitions=3\nlog.retention.hours=a week\n")
	_, err := New(Inputs{ServerProperties: p, File: path})
	if err == nil || !strings.Contains(err.Error(), path+":2") || !strings.Contains(err.Error(), "log.retention.hours") {
		t.Errorf("unparsable file value: %v", err)
	}
	for flag, want := range map[string]string{
		"retention.ms=-2":                   "at least -1",
		"retention.ms=ten":                  "not a long",
		"min.cleanable.dirty.ratio=1.5":     "between 0 and 1",
		"cleanup.policy=compact,archive":    "not a valid value",
		"retention.hours=1":                 "unknown key",
		"retention.ms":                      "KEY=VALUE",
		"transaction.max.timeout.ms=0":      "at least 1",
		"max.compaction.lag.ms=0":           "at least 1",
		"segment.bytes=99999999999":         "not an int",
		"remote.storage.enable=yes":         "true or false",
		"min.compaction.lag.ms=10000000000": "conflict", // above the flag's max below
	} {
		flags := []string{flag}
		if strings.HasPrefix(flag, "min.compaction") {
			flags = append(flags, "max.compaction.lag.ms=1000")
		}
		if _, err := New(Inputs{Flags: flags}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--config %s: %v, want %q", flag, err, want)
		}
	}
	// A topic-level image value out of range.
	img := &Image{Topics: map[string]map[string]string{"t": {"retention.ms": "-7"}}}
	if _, err := New(Inputs{Image: img}); err == nil || !strings.Contains(err.Error(), "topic t") {
		t.Errorf("image: %v", err)
	}
	// Absurd but valid: Long.MAX_VALUE retention.
	c := resolve(t, Inputs{Flags: []string{"retention.ms=9223372036854775807"}}, "t")
	if c.RetentionMs != 1<<63-1 || c.Sources[RetentionMs] != SourceFlag {
		t.Errorf("%+v", c)
	}
}

func TestRemoteStorage(t *testing.T) {
	if c := resolve(t, Inputs{Flags: []string{"remote.storage.enable=true"}}, "t"); c.RemoteStorage {
		t.Error("tiered without remote.log.storage.system.enable")
	}
	in := Inputs{Flags: []string{"remote.storage.enable=true", "remote.log.storage.system.enable=true"}}
	if c := resolve(t, in, "t"); !c.RemoteStorage {
		t.Error("not tiered")
	}
	if c := resolve(t, in, "__consumer_offsets"); c.RemoteStorage {
		t.Error("internal topic tiered")
	}
}

// fakeImage stands for a metadata image: resource "" is the cluster
// default, "1" broker 1's own.
type fakeImage struct {
	broker map[string]map[string]string
	topics map[string]map[string]string
}

func (f fakeImage) BrokerConfig(id int32) map[string]string {
	out := map[string]string{}
	for k, v := range f.broker[""] {
		out[k] = v
	}
	for k, v := range f.broker[fmt.Sprint(id)] {
		out[k] = v
	}
	return out
}
func (f fakeImage) TopicConfig(t string) map[string]string { return f.topics[t] }
func (f fakeImage) TopicNames() []string {
	var out []string
	for t := range f.topics {
		out = append(out, t)
	}
	return out
}

// The image layer through FromImage: the broker's own config over the
// cluster default, over the file; topic configs over both.
func TestFromImage(t *testing.T) {
	img := fakeImage{
		broker: map[string]map[string]string{"": {"log.retention.ms": "1000", "log.cleanup.policy": "compact"}, "1": {"log.retention.ms": "2000"}},
		topics: map[string]map[string]string{"orders": {"retention.ms": "3000"}},
	}
	p, path := props(t, "log.retention.ms=500\nlog.retention.bytes=99\n")
	in := Inputs{ServerProperties: p, File: path, Image: FromImage(img, 1)}
	c := resolve(t, in, "payments")
	if c.RetentionMs != 2000 || c.Sources[RetentionMs] != SourceBroker || !c.Compact || c.RetentionBytes != 99 || c.Sources[RetentionBytes] != SourceFile {
		t.Fatalf("payments: %+v", c)
	}
	if c := resolve(t, in, "orders"); c.RetentionMs != 3000 || c.Sources[RetentionMs] != SourceTopic {
		t.Fatalf("orders: %+v", c)
	}
	in.Image = FromImage(img, -1)
	if c := resolve(t, in, "payments"); c.RetentionMs != 1000 {
		t.Fatalf("unknown node: %+v", c)
	}
}

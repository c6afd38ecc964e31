// Package topicconfig resolves the configuration a broker applies to a
// topic's partitions, as txns, retention and cleaner need it: Kafka's
// defaults (LogConfig, KafkaConfig, ServerLogConfigs and the coordinators'
// configs), then a broker's server.properties (broker names mapped to
// topic-level names as ServerTopicConfigSynonyms and
// KafkaConfig.extractLogConfigMap map them), then the metadata image's
// broker-level and topic-level configs, then --config flags; the later
// wins. Every effective value records where it came from.
package topicconfig

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kseg/kseg/inspect/fileio"
	"github.com/kseg/kseg/inspect/sidefile"
)

// Source says where an effective value came from.
type Source string

const (
	SourceDefault Source = "default" // Kafka's default (or an internal topic's creation config)
	SourceFile    Source = "file"    // --server-properties
	SourceBroker  Source = "broker"  // the metadata image's broker-level configs
	SourceTopic   Source = "topic"   // the metadata image's topic-level configs
	SourceFlag    Source = "flag"    // --config KEY=VALUE
)

// Topic-level keys (TopicConfig) the analyses read.
const (
	RetentionMs          = "retention.ms"
	RetentionBytes       = "retention.bytes"
	CleanupPolicy        = "cleanup.policy"
	SegmentBytes         = "segment.bytes"
	MinCompactionLagMs   = "min.compaction.lag.ms"
	MaxCompactionLagMs   = "max.compaction.lag.ms"
	MinCleanableRatio    = "min.cleanable.dirty.ratio"
	DeleteRetentionMs    = "delete.retention.ms"
	RemoteStorageEnable  = "remote.storage.enable"
	LocalRetentionMs     = "local.retention.ms"
	LocalRetentionBytes  = "local.retention.bytes"
	MessageTimestampType = "message.timestamp.type"
)

// Broker-level keys the analyses read (no topic-level form).
const (
	TransactionMaxTimeoutMs  = "transaction.max.timeout.ms"           // TransactionStateManagerConfig
	ProducerIDExpirationMs   = "producer.id.expiration.ms"            // TransactionLogConfig (ProducerStateManagerConfig)
	TransactionLogPartitions = "transaction.state.log.num.partitions" // TransactionLogConfig
	CleanerEnable            = "log.cleaner.enable"                   // CleanerConfig
	RemoteLogSystemEnable    = "remote.log.storage.system.enable"     // RemoteLogManagerConfig
)

type kind uint8

const (
	kLong kind = iota
	kInt
	kDouble
	kBool
	kList
	kString
)

// setting is one key: its type, default and validator (ConfigDef).
type setting struct {
	name  string
	kind  kind
	def   string
	check func(v value) error
	// synonyms are the broker keys that set it, highest priority first,
	// with the factor turning their unit into the topic key's
	// (ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS); a broker-only
	// key is its own synonym.
	synonyms []synonym
	broker   bool // broker-level only: no topic-level form
}

type synonym struct {
	name   string
	kind   kind
	factor int64
}

// value is a parsed config value.
type value struct {
	i    int64
	f    float64
	b    bool
	list []string
	s    string
}

func atLeast(min int64) func(value) error {
	return func(v value) error {
		if v.i < min {
			return fmt.Errorf("value must be at least %d", min)
		}
		return nil
	}
}

// settings are the keys with Kafka 4.0's defaults (LogConfig.CONFIG,
// KafkaConfig).
var settings = []setting{
	{name: RetentionMs, kind: kLong, def: "604800000", check: atLeast(-1), // LogConfig.DEFAULT_RETENTION_MS
		synonyms: []synonym{{"log.retention.ms", kLong, 1}, {"log.retention.minutes", kInt, 60 * 1000}, {"log.retention.hours", kInt, 60 * 60 * 1000}}},
	{name: RetentionBytes, kind: kLong, def: "-1", synonyms: []synonym{{"log.retention.bytes", kLong, 1}}},
	{name: CleanupPolicy, kind: kList, def: "delete", check: validPolicy, synonyms: []synonym{{"log.cleanup.policy", kList, 1}}},
	{name: SegmentBytes, kind: kInt, def: "1073741824", check: atLeast(14), synonyms: []synonym{{"log.segment.bytes", kInt, 1}}},
	{name: MinCompactionLagMs, kind: kLong, def: "0", check: atLeast(0), synonyms: []synonym{{"log.cleaner.min.compaction.lag.ms", kLong, 1}}},
	{name: MaxCompactionLagMs, kind: kLong, def: strconv.FormatInt(math.MaxInt64, 10), check: atLeast(1), synonyms: []synonym{{"log.cleaner.max.compaction.lag.ms", kLong, 1}}},
	{name: MinCleanableRatio, kind: kDouble, def: "0.5", check: between01, synonyms: []synonym{{"log.cleaner.min.cleanable.ratio", kDouble, 1}}},
	{name: DeleteRetentionMs, kind: kLong, def: "86400000", check: atLeast(0), synonyms: []synonym{{"log.cleaner.delete.retention.ms", kLong, 1}}},
	{name: RemoteStorageEnable, kind: kBool, def: "false"},
	{name: LocalRetentionMs, kind: kLong, def: "-2", check: atLeast(-2), synonyms: []synonym{{"log.local.retention.ms", kLong, 1}}},
	{name: LocalRetentionBytes, kind: kLong, def: "-2", check: atLeast(-2), synonyms: []synonym{{"log.local.retention.bytes", kLong, 1}}},
	{name: MessageTimestampType, kind: kString, def: "CreateTime", check: validTimestampType, synonyms: []synonym{{"log.message.timestamp.type", kString, 1}}},
	{name: TransactionMaxTimeoutMs, kind: kInt, def: "900000", check: atLeast(1), broker: true},
	{name: ProducerIDExpirationMs, kind: kInt, def: "86400000", check: atLeast(1), broker: true},
	{name: TransactionLogPartitions, kind: kInt, def: "50", check: atLeast(1), broker: true},
	{name: CleanerEnable, kind: kBool, def: "true", broker: true},
	{name: RemoteLogSystemEnable, kind: kBool, def: "false", broker: true},
}

func validPolicy(v value) error {
	for _, p := range v.list {
		if p != "compact" && p != "delete" {
			return fmt.Errorf("string %q is not a valid value (compact, delete)", p)
		}
	}
	return nil
}

func between01(v value) error {
	if v.f < 0 || v.f > 1 {
		return fmt.Errorf("value must be between 0 and 1")
	}
	return nil
}

func validTimestampType(v value) error {
	if v.s != "CreateTime" && v.s != "LogAppendTime" {
		return fmt.Errorf("string %q is not CreateTime or LogAppendTime", v.s)
	}
	return nil
}

// internalTopicDefaults are the topic configs a broker creates its
// internal topics with (GroupCoordinator's offsets topic configs,
// TransactionStateManager.transactionTopicConfigs): without the metadata
// image they stand for the topic-level configs those topics always have.
var internalTopicDefaults = map[string]map[string]string{
	"__consumer_offsets":  {CleanupPolicy: "compact", SegmentBytes: "104857600"},
	"__transaction_state": {CleanupPolicy: "compact", SegmentBytes: "104857600"},
}

// IsInternal reports whether the broker treats topic as internal (no
// tiered storage: UnifiedLog.isRemoteLogEnabled, Topic.isInternal).
func IsInternal(topic string) bool {
	_, ok := internalTopicDefaults[topic]
	return ok
}

func settingOf(name string) *setting {
	for i := range settings {
		if settings[i].name == name {
			return &settings[i]
		}
	}
	return nil
}

// parse parses s as ConfigDef.parseType does for kind k (values are
// trimmed; a list splits on commas with blanks around them).
func parse(k kind, s string) (value, error) {
	t := strings.TrimSpace(s)
	switch k {
	case kLong, kInt:
		bits := 64
		if k == kInt {
			bits = 32
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, bits)
		if err != nil || t == "" || strings.HasPrefix(t, "+-") || strings.HasPrefix(t, "+") && len(t) == 1 {
			what := "a long"
			if k == kInt {
				what = "an int"
			}
			return value{}, fmt.Errorf("%q is not %s", s, what)
		}
		return value{i: n}, nil
	case kDouble:
		u := strings.TrimRight(t, "dDfF")
		f, err := strconv.ParseFloat(u, 64)
		if err != nil || u == "" {
			return value{}, fmt.Errorf("%q is not a number", s)
		}
		return value{f: f}, nil
	case kBool:
		switch strings.ToLower(t) {
		case "true":
			return value{b: true}, nil
		case "false":
			return value{b: false}, nil
		}
		return value{}, fmt.Errorf("%q is not true or false", s)
	case kList:
		if t == "" {
			return value{list: []string{}}, nil
		}
		parts := strings.Split(t, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return value{list: parts}, nil
	}
	return value{s: t}, nil
}

// Image is what the metadata image contributes: the broker-level configs
// that apply to this broker (the cluster default, overridden by the
// broker's own: DynamicBrokerConfig), by broker key, and each topic's
// topic-level configs.
type Image struct {
	Broker map[string]string
	Topics map[string]map[string]string
}

// Inputs are the layers above the defaults.
type Inputs struct {
	// ServerProperties is a server.properties file's keys (broker names)
	// and File its path, for errors; nil when not given.
	ServerProperties *sidefile.Properties
	File             string
	// Image is the metadata image's configs (nil: no image).
	Image *Image
	// Flags are --config KEY=VALUE settings, topic-level names (or the
	// broker-level keys above), in the order given.
	Flags []string
}

// Resolver resolves topic configurations. It is safe for concurrent use
// once built.
type Resolver struct {
	broker map[string]layered // broker key → value and source (file, then image)
	topics map[string]map[string]string
	flags  map[string]string
}

type layered struct {
	raw    string
	source Source
	where  string // for errors: file:line or "metadata image"
}

// ReadServerProperties reads a server.properties file.
func ReadServerProperties(path string) (*sidefile.Properties, error) {
	b, err := fileio.ReadFile(path, sidefile.MaxCheckpointBytes)
	if err != nil {
		return nil, err
	}
	return sidefile.ParseProperties(path, b)
}

// New builds a Resolver, checking every value given as the broker would
// (ConfigDef types and validators, LogConfig.validate): a value that does
// not parse or is out of range is an error naming where it came from.
func New(in Inputs) (*Resolver, error) {
	r := &Resolver{broker: map[string]layered{}, topics: map[string]map[string]string{}, flags: map[string]string{}}
	if in.ServerProperties != nil {
		for _, p := range in.ServerProperties.List {
			r.broker[p.Key] = layered{p.Value, SourceFile, fmt.Sprintf("%s:%d", in.File, p.Line)}
		}
	}
	if in.Image != nil {
		for k, v := range in.Image.Broker {
			r.broker[k] = layered{v, SourceBroker, "the metadata image's broker configs"}
		}
		for t, m := range in.Image.Topics {
			r.topics[t] = m
		}
	}
	for _, f := range in.Flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("--config %q: want KEY=VALUE", f)
		}
		st := settingOf(k)
		if st == nil {
			return nil, fmt.Errorf("--config %s: unknown key (known: %s)", k, strings.Join(Keys(), ", "))
		}
		r.flags[k] = v
	}
	// Check every value given, whether or not a later layer hides it: a
	// broker refuses to start on a value of the wrong type. Ranges are
	// checked on the effective values (LogConfig's validators run on the
	// values KafkaConfig derives, after unit conversion).
	for i := range settings {
		st := &settings[i]
		for _, syn := range st.synonymsOrSelf() {
			if l, ok := r.broker[syn.name]; ok {
				if _, err := parse(syn.kind, l.raw); err != nil {
					return nil, fmt.Errorf("%s: %s: %w", l.where, syn.name, err)
				}
			}
		}
		if v, ok := r.flags[st.name]; ok {
			if _, err := checked(st, v); err != nil {
				return nil, fmt.Errorf("--config %s: %w", st.name, err)
			}
		}
	}
	for t, m := range r.topics {
		for k, v := range m {
			if st := settingOf(k); st != nil && !st.broker {
				if _, err := checked(st, v); err != nil {
					return nil, fmt.Errorf("metadata image: topic %s: %s: %w", t, k, err)
				}
			}
		}
	}
	// LogConfig.validate: min.compaction.lag.ms <= max.compaction.lag.ms,
	// for the flags' and the broker's values (each topic is checked when
	// resolved).
	if _, err := r.Topic(""); err != nil {
		return nil, err
	}
	return r, nil
}

// checked parses raw as st's type and applies st's validator.
func checked(st *setting, raw string) (value, error) {
	v, err := parse(st.kind, raw)
	if err != nil {
		return v, err
	}
	if st.check != nil {
		err = st.check(v)
	}
	return v, err
}

func (st *setting) synonymsOrSelf() []synonym {
	if st.broker {
		return []synonym{{st.name, st.kind, 1}}
	}
	return st.synonyms
}

// Keys lists the keys --config accepts.
func Keys() []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.name
	}
	sort.Strings(out)
	return out
}

// Config is a topic's effective configuration.
type Config struct {
	Topic               string
	RetentionMs         int64
	RetentionBytes      int64
	Compact, Delete     bool
	CleanupPolicy       []string
	SegmentBytes        int64
	MinCompactionLagMs  int64
	MaxCompactionLagMs  int64
	MinCleanableRatio   float64
	DeleteRetentionMs   int64
	RemoteStorage       bool // remote.storage.enable on a broker with remote.log.storage.system.enable, not an internal topic
	LocalRetentionMs    int64
	LocalRetentionBytes int64
	LogAppendTime       bool

	TransactionMaxTimeoutMs  int64
	ProducerIDExpirationMs   int64
	TransactionLogPartitions int32
	CleanerEnable            bool

	// Sources says where each key's value came from; Raw is each value as
	// given (after unit conversion for the broker's synonyms).
	Sources map[string]Source
	Raw     map[string]string
}

// SourcesOf returns the sources of the given keys, for a line's
// config_source object.
func (c *Config) SourcesOf(keys ...string) map[string]string {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = string(c.Sources[k])
	}
	return m
}

// Topic resolves topic's configuration.
func (r *Resolver) Topic(topic string) (*Config, error) {
	c := &Config{Topic: topic, Sources: map[string]Source{}, Raw: map[string]string{}}
	vals := map[string]value{}
	for i := range settings {
		st := &settings[i]
		raw, src := st.def, SourceDefault
		if d, ok := internalTopicDefaults[topic][st.name]; ok {
			raw = d
		}
		// The broker's value: the first of its synonyms that is set
		// (file and image merged, the image winning per key).
		for _, syn := range st.synonymsOrSelf() {
			l, ok := r.broker[syn.name]
			if !ok {
				continue
			}
			v, err := parse(syn.kind, l.raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", l.where, syn.name, err)
			}
			switch syn.kind {
			case kInt, kLong:
				if syn.factor != 1 {
					// KafkaConfig.logRetentionTimeMillis: minutes or
					// hours to ms, a negative result meaning -1.
					v.i *= syn.factor
				}
				if st.name == RetentionMs && v.i < 0 {
					v.i = -1
				}
				raw = strconv.FormatInt(v.i, 10)
			default:
				raw = l.raw
			}
			src = l.source
			break
		}
		if !st.broker {
			if v, ok := r.topics[topic][st.name]; ok {
				raw, src = v, SourceTopic
			}
		}
		if v, ok := r.flags[st.name]; ok {
			raw, src = v, SourceFlag
		}
		v, err := checked(st, raw)
		if err != nil {
			return nil, fmt.Errorf("topic %s: %s=%q (from %s): %w", topic, st.name, raw, src, err)
		}
		vals[st.name] = v
		c.Sources[st.name], c.Raw[st.name] = src, strings.TrimSpace(raw)
	}
	c.RetentionMs = vals[RetentionMs].i
	c.RetentionBytes = vals[RetentionBytes].i
	c.CleanupPolicy = vals[CleanupPolicy].list
	for _, p := range c.CleanupPolicy {
		switch strings.ToLower(p) {
		case "compact":
			c.Compact = true
		case "delete":
			c.Delete = true
		}
	}
	c.SegmentBytes = vals[SegmentBytes].i
	c.MinCompactionLagMs = vals[MinCompactionLagMs].i
	c.MaxCompactionLagMs = vals[MaxCompactionLagMs].i
	c.MinCleanableRatio = vals[MinCleanableRatio].f
	c.DeleteRetentionMs = vals[DeleteRetentionMs].i
	c.LocalRetentionMs = vals[LocalRetentionMs].i
	c.LocalRetentionBytes = vals[LocalRetentionBytes].i
	c.LogAppendTime = vals[MessageTimestampType].s == "LogAppendTime"
	c.TransactionMaxTimeoutMs = vals[TransactionMaxTimeoutMs].i
	c.ProducerIDExpirationMs = vals[ProducerIDExpirationMs].i
	c.TransactionLogPartitions = int32(vals[TransactionLogPartitions].i)
	c.CleanerEnable = vals[CleanerEnable].b
	c.RemoteStorage = vals[RemoteStorageEnable].b && vals[RemoteLogSystemEnable].b && !IsInternal(topic)
	// LogConfig.validate.
	if c.MinCompactionLagMs > c.MaxCompactionLagMs {
		return nil, fmt.Errorf("topic %s: conflict topic configs %s (%d, from %s) > %s (%d, from %s)", topic,
			MinCompactionLagMs, c.MinCompactionLagMs, c.Sources[MinCompactionLagMs], MaxCompactionLagMs, c.MaxCompactionLagMs, c.Sources[MaxCompactionLagMs])
	}
	return c, nil
}

// Describe is "key=value (source)" for keys, for notes and tables.
func (c *Config) Describe(keys ...string) string {
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", k, c.Raw[k], c.Sources[k]))
	}
	return strings.Join(slices.Clip(parts), ", ")
}

// OrDefaults is r, or a resolver of Kafka's defaults alone when r is nil.
func OrDefaults(r *Resolver) *Resolver {
	if r != nil {
		return r
	}
	d, err := New(Inputs{})
	if err != nil {
		panic(err) // the defaults are valid (TestDefaults)
	}
	return d
}

// ImageSource is what a KRaft metadata image offers the resolver: the
// dynamic broker-level configs in effect on a broker (the cluster default
// overridden by the broker's own, DynamicBrokerConfig), each topic's
// topic-level configs, and the topics.
type ImageSource interface {
	BrokerConfig(id int32) map[string]string
	TopicConfig(topic string) map[string]string
	TopicNames() []string
}

// FromImage is the Image layer of a metadata image as seen by broker
// nodeID (-1 when unknown: the cluster default alone).
func FromImage(img ImageSource, nodeID int32) *Image {
	out := &Image{Broker: img.BrokerConfig(nodeID), Topics: map[string]map[string]string{}}
	for _, t := range img.TopicNames() {
		if c := img.TopicConfig(t); len(c) > 0 {
			out.Topics[t] = c
		}
	}
	return out
}

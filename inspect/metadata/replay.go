package metadata

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/kseg/kseg/inspect/internaltopics"
)

// The replay of one metadata record into the image, rule by rule as
// MetadataDelta.replay dispatches it. kseg applies each record to the
// image at once instead of gathering a delta and applying it at the end of
// a commit: for a log a controller wrote the result is the same, and a
// record that breaks a rule is skipped alone (errRule), where the broker's
// delta would fail as a whole.

// errRule marks a record the image's rules refuse; its message says which
// rule.
var errRule = errors.New("cannot apply")

func ruleErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errRule, fmt.Sprintf(format, args...))
}

// Metadata record type names (MetadataRecordType), as the decoder names
// them.
const (
	recRegisterBroker      = "RegisterBrokerRecord"
	recUnregisterBroker    = "UnregisterBrokerRecord"
	recTopic               = "TopicRecord"
	recPartition           = "PartitionRecord"
	recConfig              = "ConfigRecord"
	recPartitionChange     = "PartitionChangeRecord"
	recFenceBroker         = "FenceBrokerRecord"
	recUnfenceBroker       = "UnfenceBrokerRecord"
	recRemoveTopic         = "RemoveTopicRecord"
	recFeatureLevel        = "FeatureLevelRecord"
	recProducerIDs         = "ProducerIdsRecord"
	recBrokerRegChange     = "BrokerRegistrationChangeRecord"
	recNoOp                = "NoOpRecord"
	recZkMigrationState    = "ZkMigrationStateRecord"
	recBeginTransaction    = "BeginTransactionRecord"
	recEndTransaction      = "EndTransactionRecord"
	recAbortTransaction    = "AbortTransactionRecord"
	recRegisterController  = "RegisterControllerRecord"
	featureMetadataVersion = "metadata.version" // MetadataVersion.FEATURE_NAME
)

// Sentinels of the partition records (PartitionChangeRecord.json,
// LeaderRecoveryState, DirectoryId).
const (
	noLeaderChange         = -2                       // PartitionChangeRecord.leader: the leader did not change
	leaderRecoveryNoChange = -1                       // LeaderRecoveryState.NO_CHANGE
	migratingDirectory     = "AAAAAAAAAAAAAAAAAAAAAA" // DirectoryId.MIGRATING, Uuid(0, 0)
)

// replay applies one decoded metadata record (not a transaction marker) to
// the image.
func (im *Image) replay(d *internaltopics.Decoded) error {
	r := fields(d.Value)
	switch d.Type {
	case recRegisterBroker:
		return im.registerBroker(r)
	case recUnregisterBroker:
		// ClusterDelta.replay(UnregisterBrokerRecord): the registration
		// goes, whatever its epoch.
		delete(im.Brokers, r.i32("brokerId", -1))
	case recRegisterController:
		c := &Controller{ID: r.i32("controllerId", -1), IncarnationID: r.str("incarnationId"),
			ZkMigrationReady: r.bool("zkMigrationReady", false), Listeners: r.endpoints("endPoints"), Features: r.featureRanges("features")}
		im.Controllers[c.ID] = c
	case recFenceBroker, recUnfenceBroker:
		// ClusterDelta.replay(Fence/UnfenceBrokerRecord).
		action := "fence"
		if d.Type == recUnfenceBroker {
			action = "unfence"
		}
		b, err := im.brokerOrThrow(r.i32("id", -1), r.i64("epoch", -1), action)
		if err != nil {
			return err
		}
		nb := *b
		nb.Fenced = d.Type == recFenceBroker
		im.Brokers[b.ID] = &nb
	case recBrokerRegChange:
		return im.brokerRegistrationChange(r)
	case recTopic:
		// TopicsDelta.replay(TopicRecord): a new topic image with no
		// partitions, under its id and its name.
		t := &Topic{Name: r.str("name"), ID: r.str("topicId"), Partitions: map[int32]*Partition{}}
		im.TopicsByID[t.ID] = t
		im.Topics[t.Name] = t
	case recPartition:
		return im.partition(r)
	case recPartitionChange:
		return im.partitionChange(r)
	case recRemoveTopic:
		return im.removeTopic(r)
	case recConfig:
		im.config(r)
	case recFeatureLevel:
		// FeaturesDelta.replay: metadata.version is kept whatever its
		// level (the broker refuses a level it does not know,
		// MetadataVersion.fromFeatureLevel; kseg does not judge); another
		// feature at level 0 is removed.
		name, level := r.str("name"), r.i16("featureLevel", 0)
		if level == 0 && name != featureMetadataVersion {
			delete(im.Features, name)
		} else {
			im.Features[name] = level
		}
	case recZkMigrationState:
		im.ZkMigrationState = int8(r.i64("zkMigrationState", 0))
	case recProducerIDs:
		im.NextProducerID = r.i64("nextProducerId", -1) // ProducerIdsDelta.replay
	case recNoOp:
		// Only moves the offset (MetadataDelta.replay).
	case recBeginTransaction, recEndTransaction, recAbortTransaction:
		// The loader handles these before the delta; MetadataDelta.replay
		// does not know them (a snapshot holding one).
		return ruleErr("MetadataDelta.replay: unknown metadata record type %s (a transaction marker outside the log)", d.Type)
	default:
		// ACLs, client quotas, SCRAM credentials and delegation tokens:
		// replayed by the broker, not part of the image kseg builds.
	}
	return nil
}

// registerBroker is ClusterDelta.replay(RegisterBrokerRecord) with
// BrokerRegistration.fromRecord: the record replaces any registration of
// the id.
func (im *Image) registerBroker(r fields) error {
	b := &Broker{
		ID: r.i32("brokerId", -1), Epoch: r.i64("brokerEpoch", -1), IncarnationID: r.str("incarnationId"),
		Listeners: r.endpoints("endPoints"), Features: r.featureRanges("features"),
		Fenced:               r.bool("fenced", true),                // default "true" (RegisterBrokerRecord.json)
		InControlledShutdown: r.bool("inControlledShutdown", false), // version 1+, default false
		IsMigratingZkBroker:  r.bool("isMigratingZkBroker", false),  // version 2+, default false
	}
	if rack, ok := r.get("rack"); ok && rack != nil {
		s := rack.(string)
		b.Rack = &s
	}
	b.LogDirs, _ = r.uuids("logDirs")
	b.LogDirs = sortedCopy(b.LogDirs)
	im.Brokers[b.ID] = b
	return nil
}

// brokerOrThrow is ClusterDelta.getBrokerOrThrow.
func (im *Image) brokerOrThrow(id int32, epoch int64, action string) (*Broker, error) {
	b := im.Brokers[id]
	if b == nil {
		return nil, ruleErr("ClusterDelta: tried to %s broker %d, but that broker was not registered", action, id)
	}
	if b.Epoch != epoch {
		return nil, ruleErr("ClusterDelta: tried to %s broker %d, but the given epoch, %d, did not match the current broker epoch, %d", action, id, epoch, b.Epoch)
	}
	return b, nil
}

// brokerRegistrationChange is ClusterDelta.replay(BrokerRegistrationChangeRecord):
// fenced 1 fences, -1 unfences, 0 leaves it (BrokerRegistrationFencingChange);
// inControlledShutdown 1 sets it, 0 leaves it
// (BrokerRegistrationInControlledShutdownChange); logDirs, when not empty,
// replace the broker's.
func (im *Image) brokerRegistrationChange(r fields) error {
	b, err := im.brokerOrThrow(r.i32("brokerId", -1), r.i64("brokerEpoch", -1), "change")
	if err != nil {
		return err
	}
	nb := *b
	switch f := r.i64("fenced", 0); f {
	case 1:
		nb.Fenced = true
	case -1:
		nb.Fenced = false
	case 0:
	default:
		return ruleErr("ClusterDelta: unknown value for fenced field: %d", f)
	}
	switch c := r.i64("inControlledShutdown", 0); c {
	case 1:
		nb.InControlledShutdown = true
	case 0:
	default:
		return ruleErr("ClusterDelta: unknown value for inControlledShutdown field: %d", c)
	}
	if dirs, ok := r.uuids("logDirs"); ok && len(dirs) > 0 {
		nb.LogDirs = sortedCopy(dirs)
	}
	im.Brokers[nb.ID] = &nb
	return nil
}

// partition is TopicsDelta.replay(PartitionRecord), a new registration
// (PartitionRegistration(PartitionRecord)) replacing any of the id.
func (im *Image) partition(r fields) error {
	id, pid := r.str("topicId"), r.i32("partitionId", -1)
	t := im.TopicsByID[id]
	if t == nil {
		// TopicsDelta.getOrCreateTopicDelta makes a delta of no topic
		// image, which TopicDelta.apply cannot apply.
		return ruleErr("TopicsDelta: PartitionRecord for partition %d of topic id %s, which is not in the image", pid, id)
	}
	p := &Partition{
		Replicas: r.ints("replicas"), ISR: r.ints("isr"),
		RemovingReplicas: r.ints("removingReplicas"), AddingReplicas: r.ints("addingReplicas"),
		Leader: r.i32("leader", -1), LeaderRecoveryState: int8(r.i64("leaderRecoveryState", 0)),
		LeaderEpoch: r.i32("leaderEpoch", -1), PartitionEpoch: r.i32("partitionEpoch", -1),
		ELR: r.ints("eligibleLeaderReplicas"), LastKnownELR: r.ints("lastKnownElr"),
	}
	dirs, _ := r.uuids("directories")
	if len(dirs) > 0 && len(dirs) != len(p.Replicas) {
		return ruleErr("PartitionRegistration: %d directories for %d replicas (InvalidReplicaDirectoriesException)", len(dirs), len(p.Replicas))
	}
	if _, err := leaderRecoveryState(p.LeaderRecoveryState); err != nil {
		return err
	}
	p.Directories = defaultToMigrating(dirs, len(p.Replicas))
	t.Partitions[pid] = p
	return nil
}

// partitionChange is TopicDelta.replay(PartitionChangeRecord) with
// PartitionRegistration.merge: the fields the record carries replace the
// registration's (a null or absent list: unchanged); a leader other than
// -2 sets the leader and bumps the leader epoch; the partition epoch is
// bumped every time.
func (im *Image) partitionChange(r fields) error {
	id, pid := r.str("topicId"), r.i32("partitionId", -1)
	t := im.TopicsByID[id]
	if t == nil {
		return ruleErr("TopicDelta: unable to find partition %s:%d: the topic id is not in the image", id, pid)
	}
	old := t.Partitions[pid]
	if old == nil {
		return ruleErr("TopicDelta: unable to find partition %s:%d (topic %s has no partition %d)", id, pid, t.Name, pid)
	}
	p := *old
	replicas, changed := r.intsOrNull("replicas")
	if changed {
		p.Replicas = replicas
	}
	dirs, dirsSet := r.uuidsOrNull("directories")
	if changed && dirsSet && len(dirs) > 0 && len(replicas) != len(dirs) {
		return ruleErr("PartitionRegistration.merge: %d directories for %d replicas (InvalidReplicaDirectoriesException)", len(dirs), len(replicas))
	}
	if !dirsSet {
		dirs = old.Directories
	}
	p.Directories = defaultToMigrating(dirs, len(p.Replicas))
	if len(p.Directories) > 0 && len(p.Directories) != len(p.Replicas) {
		return ruleErr("PartitionRegistration: the lengths for replicas (%d) and directories (%d) do not match", len(p.Replicas), len(p.Directories))
	}
	for _, l := range []struct {
		name string
		dst  *[]int32
	}{{"isr", &p.ISR}, {"removingReplicas", &p.RemovingReplicas}, {"addingReplicas", &p.AddingReplicas},
		{"eligibleLeaderReplicas", &p.ELR}, {"lastKnownElr", &p.LastKnownELR}} {
		if v, ok := r.intsOrNull(l.name); ok {
			*l.dst = v
		}
	}
	if leader := r.i32("leader", noLeaderChange); leader != noLeaderChange {
		p.Leader, p.LeaderEpoch = leader, old.LeaderEpoch+1
	}
	if s := int8(r.i64("leaderRecoveryState", leaderRecoveryNoChange)); s != leaderRecoveryNoChange {
		// LeaderRecoveryState.changeTo.
		if _, err := leaderRecoveryState(s); err != nil {
			return err
		}
		p.LeaderRecoveryState = s
	}
	p.PartitionEpoch = old.PartitionEpoch + 1
	t.Partitions[pid] = &p
	return nil
}

// leaderRecoveryState is LeaderRecoveryState.of: 0 and 1 only.
func leaderRecoveryState(v int8) (int8, error) {
	if v != 0 && v != 1 {
		return 0, ruleErr("LeaderRecoveryState: value %d is not a valid leader recovery state", v)
	}
	return v, nil
}

// defaultToMigrating is PartitionRegistration.defaultToMigrating: no
// directories, or only MIGRATING ones, become MIGRATING for each replica.
func defaultToMigrating(dirs []string, replicas int) []string {
	for _, d := range dirs {
		if d != migratingDirectory {
			return dirs
		}
	}
	if len(dirs) == replicas {
		return dirs // already MIGRATING for each replica (the image's own, never changed in place)
	}
	out := make([]string, replicas)
	for i := range out {
		out[i] = migratingDirectory
	}
	return out
}

// removeTopic is TopicsDelta.replay(RemoveTopicRecord) and
// ConfigurationsDelta.replay(RemoveTopicRecord, name): the topic leaves
// the image, under its id and its name, and so do its configs.
func (im *Image) removeTopic(r fields) error {
	id := r.str("topicId")
	t := im.TopicsByID[id]
	if t == nil {
		return ruleErr("TopicsDelta: unable to delete topic with id %s: no such topic found", id)
	}
	delete(im.TopicsByID, id)
	delete(im.Topics, t.Name)
	delete(im.Configs, ConfigResource{ResourceTopic, t.Name})
	return nil
}

// config is ConfigurationsDelta.replay(ConfigRecord): a value sets the
// config, null removes it; a resource left with no config leaves the image
// (ConfigurationsDelta.apply keeps only non-empty images).
func (im *Image) config(r fields) {
	res := ConfigResource{resourceType(int8(r.i64("resourceType", 0))), r.str("resourceName")}
	name := r.str("name")
	v, ok := r.get("value")
	cfg := im.Configs[res]
	if !ok || v == nil {
		delete(cfg, name)
		if len(cfg) == 0 {
			delete(im.Configs, res)
		}
		return
	}
	if cfg == nil {
		cfg = map[string]string{}
		im.Configs[res] = cfg
	}
	cfg[name] = v.(string)
}

// fields reads a decoded record's fields, with the schema's defaults for
// those absent (tagged fields not written, fields of later versions).
type fields internaltopics.Fields

func (r fields) get(name string) (any, bool) { return internaltopics.Fields(r).Get(name) }

func (r fields) i64(name string, def int64) int64 {
	if v, ok := r.get(name); ok {
		if n, ok := v.(int64); ok {
			return n
		}
	}
	return def
}

func (r fields) i32(name string, def int32) int32 { return int32(r.i64(name, int64(def))) }
func (r fields) i16(name string, def int16) int16 { return int16(r.i64(name, int64(def))) }

func (r fields) bool(name string, def bool) bool {
	if v, ok := r.get(name); ok {
		if b, ok := v.(bool); ok {
			return b
		}
	}
	return def
}

func (r fields) str(name string) string {
	if v, ok := r.get(name); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return ""
}

// intsOrNull is an int32 array field; false when absent or null.
func (r fields) intsOrNull(name string) ([]int32, bool) {
	v, ok := r.get(name)
	if !ok || v == nil {
		return nil, false
	}
	items := v.([]any)
	out := make([]int32, len(items))
	for i, x := range items {
		out[i] = int32(x.(int64))
	}
	return out, true
}

// ints is an int32 array field, empty when absent or null
// (Replicas.toArray of a null list, PartitionRegistration's null ELR).
func (r fields) ints(name string) []int32 {
	v, _ := r.intsOrNull(name)
	if v == nil {
		v = []int32{}
	}
	return v
}

// uuidsOrNull is a uuid array field; false when absent or null.
func (r fields) uuidsOrNull(name string) ([]string, bool) {
	v, ok := r.get(name)
	if !ok || v == nil {
		return nil, false
	}
	items := v.([]any)
	out := make([]string, len(items))
	for i, x := range items {
		out[i] = x.(string)
	}
	return out, true
}

func (r fields) uuids(name string) ([]string, bool) { return r.uuidsOrNull(name) }

// endpoints reads a listener list (BrokerEndpoint, ControllerEndpoint),
// keyed by name as BrokerRegistration keeps them (the last of a name
// wins), sorted by name.
func (r fields) endpoints(name string) []Endpoint {
	v, _ := r.get(name)
	items, _ := v.([]any)
	byName := map[string]Endpoint{}
	for _, x := range items {
		e := fields(x.(internaltopics.Fields))
		byName[e.str("name")] = Endpoint{Name: e.str("name"), Host: e.str("host"), Port: uint16(e.i64("port", 0)), SecurityProtocol: e.i16("securityProtocol", 0)}
	}
	out := make([]Endpoint, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Endpoint) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// featureRanges reads a supported feature list, keyed by name, sorted.
func (r fields) featureRanges(name string) []FeatureRange {
	v, _ := r.get(name)
	items, _ := v.([]any)
	byName := map[string]FeatureRange{}
	for _, x := range items {
		f := fields(x.(internaltopics.Fields))
		byName[f.str("name")] = FeatureRange{Name: f.str("name"), Min: f.i16("minSupportedVersion", 0), Max: f.i16("maxSupportedVersion", 0)}
	}
	out := make([]FeatureRange, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b FeatureRange) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// sortedCopy sorts directory ids as BrokerRegistration does
// (Uuid.compareTo: the most significant 64 bits, then the least, each as
// a signed long).
func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	if out == nil {
		out = []string{}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		x, y := uuidBits(a), uuidBits(b)
		if c := cmp.Compare(x[0], y[0]); c != 0 {
			return c
		}
		return cmp.Compare(x[1], y[1])
	})
	return out
}

// uuidBits is a uuid's two longs (zero for a string that is not one).
func uuidBits(s string) [2]int64 {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return [2]int64{}
	}
	return [2]int64{int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))}
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

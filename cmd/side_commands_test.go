package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kseg/kseg/inspect/kafkagen"
)

// In-process tests of issue #7's command-line parts (decoders, leader-epoch
// view, side-file checks, recovery plan, dump-snapshot, dump-checkpoint);
// the testscripts keep one end-to-end run of each.

// sideGen generates a partition under the current directory, with kseg
// gen's default seed.
func sideGen(t *testing.T, dir string, o kafkagen.Options) *kafkagen.Manifest {
	t.Helper()
	if o.Seed == 0 {
		o.Seed = 1
	}
	m, err := kafkagen.Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sideWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sideRun runs kseg in process and checks the exit code and that every
// pattern matches stdout (a leading "!" means it must not match; "stderr:"
// matches stderr instead).
func sideRun(t *testing.T, code int, args []string, patterns ...string) string {
	t.Helper()
	out, errOut, got := runKseg(t, nil, args...)
	if got != code {
		t.Fatalf("kseg %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errOut)
	}
	for _, p := range patterns {
		text, neg := out, false
		if strings.HasPrefix(p, "!") {
			neg, p = true, p[1:]
		}
		if strings.HasPrefix(p, "stderr:") {
			text, p = errOut, strings.TrimPrefix(p, "stderr:")
		}
		if regexp.MustCompile("(?m)"+p).MatchString(text) == neg {
			want := "no match"
			if neg {
				want = "a match it must not have"
			}
			t.Errorf("kseg %s: %s for %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), want, p, out, errOut)
		}
	}
	return out
}

func TestDumpLogDecoderChoice(t *testing.T) {
	t.Chdir(t.TempDir())
	sideGen(t, "__consumer_offsets-7", kafkagen.Options{Batches: 3, RecordsPerBatch: 1})
	sideGen(t, "orders-0", kafkagen.Options{Batches: 2, RecordsPerBatch: 1})
	// Text keys start with "ke": key version 27493, a record type the
	// decoder does not know (a note, as for a newer broker's records).
	out := sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "__consumer_offsets-7"},
		`"decoded":\{"decoder":"consumer_offsets","type":"unknown","key_version":27493,"value":null,"note":"key version 27493 is not a record type this decoder knows"\}\}$`)
	if n := strings.Count(out, `"decoded"`); n != 3 {
		t.Errorf("%d decoded records, want 3", n)
	}
	sideRun(t, 0, []string{"-o", "json", "dump-log", "__consumer_offsets-7"}, `!"decoded"`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", "--decoder", "none", "__consumer_offsets-7"}, `!"decoded"`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "orders-0"}, `!"decoded"`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--transaction-log-decoder", "orders-0"},
		`"kind":"record",.*"decoded":\{"decoder":"transaction_state","type":"transaction","key_version":27493,"value":null,"error":"key: unknown version: TransactionLogKey version 27493 is not one this decoder knows \(0\)"\}\}$`)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--decoder", "cluster_metadata", "orders-0"}, `"decoded":\{"decoder":"cluster_metadata",.*"error":"`)
	sideRun(t, 0, []string{"dump-log", "--records", "__consumer_offsets-7"}, `^position +offsets .* +decoded$`)
	sideRun(t, 0, []string{"-o", "csv", "dump-log", "--offsets-decoder", "orders-0"}, `^kind,position,.*,decoded$`)
	sideRun(t, 2, []string{"dump-log", "--decoder", "offsets", "orders-0"},
		`stderr:decoder must be one of auto, none, schema-registry, consumer_offsets, transaction_state, cluster_metadata, share_group_state, remote_log_metadata, not "offsets"`)
	sideRun(t, 2, []string{"dump-log", "--offsets-decoder", "--cluster-metadata-decoder", "orders-0"}, `stderr:give one decoder`)
	sideRun(t, 2, []string{"dump-log", "--decoder", "none", "--offsets-decoder", "orders-0"}, `stderr:give one decoder`)
}

func TestDumpLogDecodersRealFixtures(t *testing.T) {
	real := requireRealFixtures(t)
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", filepath.Join(real, "cp-kraft-multiseg-compacted", "__consumer_offsets-13")},
		`"offset":17,.*"decoded":\{"decoder":"consumer_offsets","type":"offset_commit","key_version":1,"key":\{"group":"my-consumer-group","topic":"postCreated","partition":0\},"value_version":4,"value":\{"offset":11,"leaderEpoch":40,"metadata":"","commitTimestamp":1776150036177\}\}\}$`,
		`"offset":20,.*"decoded":\{"decoder":"consumer_offsets","type":"group_metadata","key_version":2,"key":\{"group":"my-consumer-group"\},"value_version":3,"value":\{"protocolType":"consumer","generation":11,"protocol":"range",`,
		`!"error"`)
	out := sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", filepath.Join(real, "cp-kraft-ksql-txn-committed", "__transaction_state-44")},
		`"transactionStatus":4,"transactionState":"CompleteCommit"`)
	if n := strings.Count(out, `"decoded":{"decoder":"transaction_state","type":"transaction","key_version":0,"key":{"transactionalId":"default_"}`); n != 4 {
		t.Errorf("%d transaction records of default_, want 4", n)
	}
	sideRun(t, 0, []string{"-o", "json", "dump-log", "--records", filepath.Join(real, "kraft-metadata-tiny", "__cluster_metadata-0")},
		`"offset":2,.*"decoded":\{"decoder":"cluster_metadata","type":"FeatureLevelRecord","frame_version":1,"api_key":12,"value_version":0,"value":\{"name":"metadata.version","featureLevel":20\}\}\}$`,
		`"offset":0,.*"control":\{"type":"leader_change","version":0,"leaderId":1,"voters":\[\{"voterId":1\}\],"grantingVoters":\[\{"voterId":1\}\]\}\}$`)
}

func TestLookupLeaderEpochView(t *testing.T) {
	t.Chdir(t.TempDir())
	sideGen(t, "demo-0", kafkagen.Options{Segments: 3, Batches: 20, LeaderEpoch: 4})
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "60"}, `"batch":\{"base_offset":58,.*"leader_epoch":4,"epoch_entry":\{"epoch":4,"start_offset":0\}\}$`)
	// Three epochs in the checkpoint (the batches all say 4: the view shows
	// where the two disagree).
	sideWrite(t, "demo-0/leader-epoch-checkpoint", "0\n3\n1 0\n3 50\n4 100\n")
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "60"}, `"leader_epoch":4,"epoch_entry":\{"epoch":3,"start_offset":50\}\}$`)
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "49"}, `"epoch_entry":\{"epoch":1,"start_offset":0\}\}$`)
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "100"}, `"epoch_entry":\{"epoch":4,"start_offset":100\}\}$`)
	sideRun(t, 0, []string{"lookup", "demo-0", "60"}, `^leader_epoch +4$`, `^epoch_entry.epoch +3$`, `^epoch_entry.start_offset +50$`)
	// latest has no batch (-1) and the epoch at the log end; max the
	// batch's epoch; earliest the first.
	sideRun(t, 0, []string{"-o", "json", "lookup-time", "demo-0", "latest"}, `"offset":348,.*"batch":null,"leader_epoch":-1,"epoch_entry":\{"epoch":4,"start_offset":100\}\}$`)
	sideRun(t, 0, []string{"-o", "json", "lookup-time", "demo-0", "max"}, `"offset":347,.*"leader_epoch":4,"epoch_entry":\{"epoch":4,"start_offset":100\}\}$`)
	sideRun(t, 0, []string{"-o", "json", "lookup-time", "demo-0", "earliest"}, `"offset":0,.*"epoch_entry":\{"epoch":1,"start_offset":0\}\}$`)
	sideRun(t, 0, []string{"-o", "csv", "lookup-time", "demo-0", "max"}, `,leader_epoch,epoch_entry.epoch,epoch_entry.start_offset$`, `,4,4,100$`)
	// The broker's cache drops (5, 40), which conflicts with (4, 30).
	sideWrite(t, "demo-0/leader-epoch-checkpoint", "0\n3\n3 0\n5 40\n4 30\n")
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "45"}, `"epoch_entry":\{"epoch":4,"start_offset":30\}\}$`)
	// No checkpoint: null. A checkpoint the broker could not load: null
	// and a warning.
	os.Remove("demo-0/leader-epoch-checkpoint")
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "60"}, `"leader_epoch":4,"epoch_entry":null\}$`, `!stderr:.`)
	sideWrite(t, "demo-0/leader-epoch-checkpoint", "0\n3\n1 0\n")
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "60"}, `"epoch_entry":null\}$`,
		`stderr:warning: demo-0/leader-epoch-checkpoint: .*expected \[3\] entries, but found \[1\]`)
	sideWrite(t, "demo-0/leader-epoch-checkpoint", "0\n2\n1 0\n-2 5\n")
	sideRun(t, 0, []string{"-o", "json", "lookup", "demo-0", "60"}, `"epoch_entry":null\}$`, `stderr:warning: .*invalid partition leader epoch entry`)

	if real := realFixturesIfAny(); real != "" {
		p := filepath.Join(real, "kafka40-kraft-snappy-retention", "oms_order_status_changed-2")
		sideRun(t, 0, []string{"-o", "json", "lookup", p, "12000"}, `"leader_epoch":10,"epoch_entry":\{"epoch":10,"start_offset":10917\}\}$`)
		sideRun(t, 0, []string{"-o", "json", "lookup", p, "14100"}, `"leader_epoch":14,"epoch_entry":\{"epoch":14,"start_offset":14009\}\}$`)
	}
}

func realFixturesIfAny() string {
	dir := realFixtures
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

func TestVerifySideFilesAndRecoveryPlan(t *testing.T) {
	real := realFixturesIfAny() // before Chdir
	t.Chdir(t.TempDir())
	sideGen(t, "data/orders-0", kafkagen.Options{Segments: 3, Batches: 40, Transactions: true, LeaderEpoch: 3})
	sideRun(t, 0, []string{"-o", "json", "verify", "data"}, `"errors":0,"warnings":0`)

	// A lost .txnindex: read_committed consumers would get aborted records.
	if err := os.Rename("data/orders-0/00000000000000000140.txnindex", "saved.txnindex"); err != nil {
		t.Fatal(err)
	}
	sideRun(t, 1, []string{"-o", "json", "verify", "data"},
		`"severity":"error","check":"txnindex.mismatch","file":"data/orders-0/00000000000000000140.txnindex","segment_base_offset":140,"position":0,`,
		`"errors":1,"warnings":0`)
	if err := os.Rename("saved.txnindex", "data/orders-0/00000000000000000140.txnindex"); err != nil {
		t.Fatal(err)
	}

	sideWrite(t, "data/recovery-point-offset-checkpoint", "0\n2\norders 0 900\nother 1 5\n")
	sideWrite(t, "data/log-start-offset-checkpoint", "0\n1\norders 0 600\n")
	sideWrite(t, "data/orders-0/leader-epoch-checkpoint", "0\n1\n2 0\n")
	sideRun(t, 1, []string{"-o", "json", "verify", "data"},
		`"severity":"warning","check":"checkpoint.recovery-point","file":"data/recovery-point-offset-checkpoint","segment_base_offset":null,"position":null,"offset":900,`,
		`"severity":"error","check":"checkpoint.log-start","file":"data/log-start-offset-checkpoint","segment_base_offset":null,"position":null,"offset":600,`,
		`"severity":"warning","check":"leader-epoch.range","file":"data/orders-0/leader-epoch-checkpoint",.*newer than the checkpoint's latest epoch \(2\)`,
		`"errors":1,"warnings":2`)
	sideWrite(t, "data/orders-0/leader-epoch-checkpoint", "0\n1\n3 0\n")
	os.Remove("data/log-start-offset-checkpoint")

	sideWrite(t, "data/replication-offset-checkpoint", "0\n2\norders 0 5\n")
	sideWrite(t, "data/orders-0/00000000000000000200.snapshot", "garbage\n")
	sideRun(t, 1, []string{"-o", "wide", "verify", "data"},
		`error +checkpoint.format +data/replication-offset-checkpoint +15 +.*expected \[2\] entries, but found \[1\]`,
		`warning +snapshot.format +data/orders-0/00000000000000000200.snapshot +0 +200 +.*unknown file version`)
	os.Remove("data/replication-offset-checkpoint")
	os.Remove("data/orders-0/00000000000000000200.snapshot")

	// The recovery plan: 900 is beyond the log end, so the last segment.
	out := sideRun(t, 0, []string{"-o", "json", "verify", "--recovery-plan", "data"},
		`^\{"kind":"recovery_plan","partition":"orders-0","dir":"data/orders-0","clean_shutdown":false,"recovery_point":900,"recovery_point_source":"checkpoint","log_end_offset":535,"segments":\[\{"segment":"00000000000000000351.log","base_offset":351,"bytes":[0-9]+,"reason":"recovery_point"\}\],"segment_count":1,"bytes":[0-9]+,"estimate":\{"scan_rate_bytes_per_second":[0-9.e+]+,"seconds":[0-9.e+-]+\}\}$`)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], `{"kind":"summary"`) {
		t.Errorf("want finding, plan, summary:\n%s", out)
	}
	sideWrite(t, "data/recovery-point-offset-checkpoint", "0\n1\norders 0 150\n")
	sideRun(t, 0, []string{"-o", "json", "verify", "--recovery-plan", "data"},
		`"recovery_point":150,"recovery_point_source":"checkpoint","log_end_offset":535,"segments":\[\{"segment":"00000000000000000140.log","base_offset":140,.*\{"segment":"00000000000000000351.log".*"segment_count":2,`)
	sideRun(t, 0, []string{"verify", "--recovery-plan", "data"},
		`^partition +clean_shutdown +recovery_point +recovery_point_source +log_end_offset +segment_count +segments +bytes +estimate.seconds$`,
		`^orders-0 +false +150 +checkpoint +535 +2 +00000000000000000140.log \.\. 00000000000000000351.log +[0-9]+ +[0-9.]+$`,
		`^estimates at kseg's read rate in this run: [0-9]+ bytes/s`)
	sideRun(t, 0, []string{"-o", "csv", "verify", "--recovery-plan", "data"},
		`stderr:(?m)^kseg: recovery plan for orders-0: 2 segments, [0-9]+ bytes from recovery point 150 \(checkpoint\), about`)
	os.Remove("data/recovery-point-offset-checkpoint")
	sideRun(t, 0, []string{"-o", "json", "verify", "--recovery-plan", "data/orders-0"},
		`"recovery_point":0,"recovery_point_source":"absent",.*"segment_count":3,`)

	if real != "" {
		sideRun(t, 0, []string{"-o", "json", "verify", "--recovery-plan", filepath.Join(real, "cp-kraft-multiseg-compacted"), filepath.Join(real, "zk-kafka26-unclean-noindex")},
			`"kind":"recovery_plan","partition":"__consumer_offsets-13",.*"clean_shutdown":true,"recovery_point":25,`,
			`"kind":"recovery_plan","partition":"__consumer_offsets-21",.*"clean_shutdown":false,`,
			`"errors":0`)
	}
}

func TestDumpSnapshotErrors(t *testing.T) {
	real := realFixturesIfAny()
	t.Chdir(t.TempDir())
	sideGen(t, "t-0", kafkagen.Options{Segments: 2, Batches: 12, Transactions: true})
	snap := func(name string, size int64) {
		b, err := os.ReadFile("t-0/00000000000000000070.snapshot")
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, make([]byte, max(0, size-int64(len(b))))...)
		sideWrite(t, "t-0/"+name, string(b[:size]))
	}
	// Stale bytes after the entries: CRC fails; listed, warned, exit 0.
	snap("00000000000000000071.snapshot", 150)
	sideRun(t, 0, []string{"-o", "json", "dump-snapshot", "t-0/00000000000000000071.snapshot"},
		`"kind":"snapshot","file":"t-0/00000000000000000071.snapshot","offset":71,"version":1,"crc":3856109576,"crc_valid":false,"producers":3,"trailing_bytes":2`,
		`stderr:warning: 00000000000000000071.snapshot: crc 3856109576 does not match the bytes \(computed [0-9]+\): a broker deletes this snapshot at load`)
	snap("00000000000000000072.snapshot", 100)
	out := sideRun(t, 2, []string{"-o", "json", "dump-snapshot", "t-0/00000000000000000072.snapshot"},
		`"kind":"snapshot",.*"offset":72,"version":1,.*"producers":1,"trailing_bytes":44`,
		`stderr:00000000000000000072.snapshot: byte position 56: corrupt producer snapshot: 3 producer entries declared, the file holds 1`)
	if n := strings.Count(out, `"kind":"producer"`); n != 1 {
		t.Errorf("%d producers listed from the cut snapshot, want 1", n)
	}
	sideWrite(t, "t-0/00000000000000000073.snapshot", "garbage\n")
	sideRun(t, 2, []string{"-o", "json", "dump-snapshot", "t-0/00000000000000000073.snapshot"},
		`"kind":"snapshot",.*"offset":73,"version":26465,`,
		`stderr:byte position 0: corrupt producer snapshot: snapshot contained an unknown file version 26465`)
	sideRun(t, 2, []string{"dump-snapshot", "t-0/00000000000000000000.log"}, `stderr:expected a .snapshot file`)
	sideRun(t, 2, []string{"dump-snapshot", "nosuch"}, `stderr:nosuch: no such file or directory`)
	if real != "" {
		sideRun(t, 0, []string{"-o", "json", "dump-snapshot", filepath.Join(real, "cp-kraft-snappy-small", "wallet_event-0")},
			`"kind":"snapshot",.*"offset":7,"version":1,.*"crc_valid":true,"producers":2,`,
			`"kind":"producer",.*"producer_id":1000,"producer_epoch":0,"coordinator_epoch":-1,"current_txn_first_offset":-1,"last_timestamp":1762959382648,"last_sequence":5,"last_offset":6,"offset_delta":0,"first_sequence":5,"first_offset":6\}$`)
		sideRun(t, 0, []string{"-o", "json", "dump-snapshot", filepath.Join(real, "cp-kraft-ksql-txn-committed")},
			`"producer_id":0,"producer_epoch":0,"coordinator_epoch":0,"current_txn_first_offset":-1,`)
	}
}

func TestDumpCheckpointCases(t *testing.T) {
	real := realFixturesIfAny()
	t.Chdir(t.TempDir())
	sideGen(t, "data/orders-0", kafkagen.Options{Segments: 2, Batches: 10, LeaderEpoch: 7})
	sideWrite(t, "data/orders-0/leader-epoch-checkpoint", "0\n3\n3 0\n5 40\n4 30\n")
	sideRun(t, 0, []string{"-o", "json", "dump-checkpoint", "data/orders-0/leader-epoch-checkpoint"},
		`"epoch":3,"start_offset":0,"in_cache":true`, `"epoch":5,"start_offset":40,"in_cache":false`, `"epoch":4,"start_offset":30,"in_cache":true`)
	sideRun(t, 0, []string{"dump-checkpoint", "data/orders-0/leader-epoch-checkpoint"}, `epoch 5 +40 \(dropped by the broker's cache\)$`)
	sideWrite(t, "data/replication-offset-checkpoint", "0\n2\norders 0 5\norders 1\n")
	out := sideRun(t, 2, []string{"-o", "json", "dump-checkpoint", "data/replication-offset-checkpoint"},
		`"kind":"offset","file":"data/replication-offset-checkpoint","checkpoint":"high_watermark","topic":"orders","partition":0,"offset":5\}`,
		`stderr:replication-offset-checkpoint: byte position 15: malformed checkpoint file: malformed line "orders 1"`)
	if n := strings.Count(out, "\n"); n != 1 {
		t.Errorf("%d lines, want 1", n)
	}
	sideWrite(t, "data/.kafka_cleanshutdown", "")
	sideRun(t, 0, []string{"dump-checkpoint", "data/.kafka_cleanshutdown"}, `^clean_shutdown +data/.kafka_cleanshutdown +clean_shutdown +present$`)
	sideRun(t, 2, []string{"dump-checkpoint", "data/orders-0/00000000000000000000.log"}, `stderr:expected a checkpoint file`)
	sideRun(t, 2, []string{"dump-checkpoint", "data/orders-0/00000000000000000000.log", "nosuch"}, `stderr:expected a checkpoint file`)
	if err := os.MkdirAll("empty", 0o755); err != nil {
		t.Fatal(err)
	}
	sideRun(t, 2, []string{"dump-checkpoint", "empty"}, `stderr:no checkpoint, epoch, partition metadata or properties files`)
	if real != "" {
		sideRun(t, 0, []string{"-o", "json", "dump-checkpoint", filepath.Join(real, "cp-kraft-multiseg-compacted")},
			`"checkpoint":"cleaner","topic":"__consumer_offsets","partition":13,"offset":21\}`,
			`"kind":"property","file":".*/meta.properties","key":"cluster.id","value":""\}`,
			`"kind":"clean_shutdown",.*"broker_epoch":79484\}`,
			`"kind":"partition_metadata",.*__cluster_metadata-0/partition.metadata","version":0,"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ"\}`)
		sideRun(t, 0, []string{"-o", "json", "dump-checkpoint", filepath.Join(real, "kafka361-kraft-windows-metadata", "replication-offset-checkpoint")}, `!.`)
	}
}

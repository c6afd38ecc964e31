package cmd

import (
	"encoding/json"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/internaltopics"
)

// Values of dump-log --decoder besides the decoder names.
const (
	decoderAuto = "auto" // from the partition directory's topic
	decoderNone = "none"
)

// DumpLogSegments' flags for the same decoders, accepted as shortcuts.
var decoderShortcuts = []struct{ flag, decoder, usage string }{
	{"offsets-decoder", internaltopics.ConsumerOffsets, "decode records as __consumer_offsets records (--decoder consumer_offsets)"},
	{"transaction-log-decoder", internaltopics.TransactionState, "decode records as __transaction_state records (--decoder transaction_state)"},
	{"cluster-metadata-decoder", internaltopics.ClusterMetadata, "decode records as KRaft metadata records (--decoder cluster_metadata)"},
}

func addDecoderFlags(f *pflag.FlagSet, opts *dumpLogOptions) {
	f.StringVar(&opts.decoder, "decoder", decoderAuto, "internal-topic decoder: auto (from the topic), none, "+strings.Join(internaltopics.Decoders(), ", "))
	for _, s := range decoderShortcuts {
		f.Bool(s.flag, false, s.usage)
	}
}

// resolveDecoderFlags checks --decoder and the shortcuts (at most one
// choice); an explicit decoder implies --records, as any decoder option
// implies --print-data-log in DumpLogSegments.
func resolveDecoderFlags(f *pflag.FlagSet, opts *dumpLogOptions) error {
	valid := append([]string{decoderAuto, decoderNone}, internaltopics.Decoders()...)
	ok := false
	for _, v := range valid {
		ok = ok || opts.decoder == v
	}
	if !ok {
		return usageErrorf("--decoder must be one of %s, not %q", strings.Join(valid, ", "), opts.decoder)
	}
	chosen := ""
	if f.Changed("decoder") {
		chosen = "--decoder"
	}
	for _, s := range decoderShortcuts {
		if on, _ := f.GetBool(s.flag); on {
			if chosen != "" {
				return usageErrorf("give one decoder: --%s and %s were both given", s.flag, chosen)
			}
			chosen, opts.decoder = "--"+s.flag, s.decoder
		}
	}
	if opts.decoder != decoderAuto && opts.decoder != decoderNone {
		opts.records = true
	}
	return nil
}

// recordDecoder is the decoder dump-log applies to p's records ("" none).
func recordDecoder(opts dumpLogOptions, p *inspect.Partition) string {
	if !opts.records {
		return ""
	}
	switch opts.decoder {
	case decoderAuto:
		return internaltopics.ForTopic(p.Topic)
	case decoderNone:
		return ""
	}
	return opts.decoder
}

// decodedRecordLine is recordLine plus the internal-topic decoding of a
// data record (control records are not the topic's records).
func decodedRecordLine(r *inspect.Record, b *inspect.Batch, encoding, decoder string, headers bool) recordLineJSON {
	line := recordLine(r, b, encoding, headers)
	if decoder != "" && !b.IsControl() {
		d := internaltopics.Decode(decoder, r.Key, r.Value)
		line.Decoded = &d
	}
	return line
}

// logColumnsFor adds a "decoded" column to the table and CSV views when a
// decoder runs: the record type, then key and value as compact JSON.
func logColumnsFor(decoder string) []column[logLine] {
	if decoder == "" {
		return logColumns
	}
	cols := append([]column[logLine](nil), logColumns...)
	return append(cols, textColumn("decoded", func(l logLine) string {
		if l.record == nil || l.record.Decoded == nil {
			return ""
		}
		return decodedText(l.record.Decoded)
	}))
}

func decodedText(d *internaltopics.Decoded) string {
	var b strings.Builder
	b.WriteString(d.Type)
	if d.Key != nil {
		k, _ := json.Marshal(d.Key)
		b.WriteString(" key=")
		b.Write(k)
	}
	switch {
	case d.Tombstone:
		b.WriteString(" value=null (tombstone)")
	case d.Value != nil:
		v, _ := json.Marshal(d.Value)
		b.WriteString(" value=")
		b.Write(v)
	}
	if d.Note != "" {
		b.WriteString(" (" + d.Note + ")")
	}
	if d.Error != "" {
		b.WriteString(" error: " + d.Error)
	}
	return strings.TrimSpace(b.String())
}

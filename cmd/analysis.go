package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kseg/kseg/inspect"
	"github.com/kseg/kseg/inspect/metadata"
	"github.com/kseg/kseg/inspect/topicconfig"
)

// analysisOptions are the flags txns, retention and cleaner share: the
// topic configuration's layers and "now".
type analysisOptions struct {
	serverProperties string
	configs          []string
	at               timestampOption
}

// AddFlags adds --server-properties, --config and --at to f.
func (o *analysisOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.serverProperties, "server-properties", "", "a broker's server.properties `FILE`: its log.* settings replace Kafka's defaults")
	f.StringArrayVar(&o.configs, "config", nil, "a topic-level setting `KEY=VALUE` over every other layer (repeatable: --config retention.ms=604800000)")
	o.at.AddFlag(f, "at", "\"now\" for the analysis (ms, RFC 3339, a date, or relative: -1h); default: the wall clock")
}

// configArgs are --server-properties and --config as given, for a
// command line that repeats them.
func (o *analysisOptions) configArgs() []string {
	var args []string
	if o.serverProperties != "" {
		args = append(args, "--server-properties", o.serverProperties)
	}
	for _, c := range o.configs {
		args = append(args, "--config", c)
	}
	return args
}

// Validate parses --at.
func (o *analysisOptions) Validate() error { return o.at.Validate() }

// now is --at, else the wall clock.
func (o *analysisOptions) now() int64 {
	if o.at.Value != nil {
		return *o.at.Value
	}
	return time.Now().UnixMilli()
}

// resolver builds the topic configuration resolver from the layers: the
// server.properties file, the metadata image of a __cluster_metadata-0
// among the targets (as of --at), and the --config flags. A bad file or
// value is a usage error naming it.
func (o *analysisOptions) resolver(ios *IOStreams, targets []*inspect.Target) (*topicconfig.Resolver, error) {
	in := topicconfig.Inputs{Flags: o.configs}
	if o.serverProperties != "" {
		p, err := topicconfig.ReadServerProperties(o.serverProperties)
		if err != nil {
			return nil, usageErrorf("--server-properties: %v", err)
		}
		in.ServerProperties, in.File = p, o.serverProperties
	}
	layer, err := metadata.ConfigLayer(targets, o.at.Value)
	if err != nil {
		ios.Warnf("%v: each topic is taken with Kafka's defaults, --server-properties and --config only (config_source says which)", err)
	}
	in.Image = layer
	r, err := topicconfig.New(in)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return r, nil
}

// configSourceText prints a config_source map for tables and CSV:
// "key=source" pairs in key order.
func configSourceText(m map[string]string, keys []string) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%s", k, m[k])
	}
	return s
}

// newAnalysisCommand wires an analysis command (txns, retention,
// cleaner): its PATHs, the flags they share, and run.
func newAnalysisCommand(ios *IOStreams, c *cobra.Command, run func(*IOStreams, analysisOptions, []string) error) *cobra.Command {
	var opts analysisOptions
	c.Args = cobra.MinimumNArgs(1)
	c.RunE = func(_ *cobra.Command, args []string) error {
		if err := opts.Validate(); err != nil {
			return err
		}
		return run(ios, opts, args)
	}
	opts.AddFlags(c.Flags())
	return c
}

// runAnalysis resolves the paths, builds the topic configuration and runs
// one analysis (txns, retention, cleaner) under a progress bar named
// name.
func runAnalysis[R any](ios *IOStreams, opts analysisOptions, paths []string, name string,
	analyze func(targets []*inspect.Target, configs *topicconfig.Resolver, now int64, progress func(done, total int64)) (R, error)) (R, error) {
	var zero R
	targets, err := resolveTargets(paths)
	if err != nil {
		return zero, err
	}
	cfg, err := opts.resolver(ios, targets)
	if err != nil {
		return zero, err
	}
	bar := ios.progress(name)
	defer bar.done()
	return analyze(targets, cfg, opts.now(), bar.callback())
}

// warnHighWatermarks says, once for all partitions, how many had no
// replication-offset-checkpoint entry (or an unreadable file): their high
// watermark is taken as the log start offset, as a restarting broker
// takes it, and every answer that depends on it assumes so.
func warnHighWatermarks(ios *IOStreams, sources []string) {
	n := 0
	for _, s := range sources {
		if s != inspect.HighWatermarkFromCheckpoint {
			n++
		}
	}
	if n > 0 {
		ios.Warnf("%d of %d partitions have no replication-offset-checkpoint entry (or it does not read): their high watermark is taken as the log start offset, as a restarting broker sets it", n, len(sources))
	}
}

package cmd

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at link time by release builds (cmd/internal/release):
//
//	go build -ldflags "-X github.com/kseg/kseg/cmd.version=v1.2.3"
//
// Otherwise it comes from the module version recorded in the binary
// (go install github.com/kseg/kseg@v1.2.3), else "devel".
var version = ""

// versionString is the first line of --version after "kseg ".
func versionString() string {
	v := version
	if v == "" {
		v = "devel"
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	return v + " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

// versionText is what --version prints: the version line, then the build
// information linked into the binary (its module, every module compiled
// in with its version and sum, the build settings), indented as
// `go version -m` prints it, so a bug report carries all of it.
func versionText() string {
	var b strings.Builder
	b.WriteString("kseg " + versionString() + "\n")
	if info, ok := debug.ReadBuildInfo(); ok {
		bi := *info
		bi.GoVersion = "" // already on the first line; go version -m omits it too
		if s := strings.TrimSuffix(bi.String(), "\n"); s != "" {
			b.WriteString("\t" + strings.ReplaceAll(s, "\n", "\n\t") + "\n")
		}
	}
	return b.String()
}

package cmd

import (
	"runtime"
	"runtime/debug"
)

// version is set at link time by release builds:
//
//	go build -ldflags "-X github.com/kseg/kseg/cmd.version=v1.2.3"
//
// Otherwise it comes from the module version recorded in the binary
// (go install github.com/kseg/kseg@v1.2.3), else "devel".
var version = ""

// versionString is what --version prints after "kseg ".
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

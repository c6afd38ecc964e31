// Command release builds kseg's release artifacts (cmd/internal/release):
//
//	go run ./cmd/internal/releasetool build [-version V] [-os OS -arch ARCH] [-o bin/kseg]   one binary (default: this platform's)
//	go run ./cmd/internal/releasetool dist  [-version V] [-o bin/dist]   every platform, the images, SHA256SUMS
//	go run ./cmd/internal/releasetool image [-version V] [-arch A] [-binary B] -o FILE
//
// The version defaults to what git describes the tree as. make build,
// make dist and make image run it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	"github.com/kseg/kseg/cmd/internal/release"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: release build|dist|image [flags]")
	}
	fs := flag.NewFlagSet("release "+args[0], flag.ContinueOnError)
	version := fs.String("version", "", "the version stamped in (default: git describe --tags --always --dirty)")
	goCmd := fs.String("go", "go", "the go command")
	dir := fs.String("C", ".", "the module root")
	var out, binary, arch, goos *string
	switch args[0] {
	case "build":
		out = fs.String("o", "bin/kseg", "the binary written")
		goos = fs.String("os", "", "the target's GOOS (default: this machine's)")
		arch = fs.String("arch", "", "the target's GOARCH (default: this machine's)")
	case "dist":
		out = fs.String("o", "bin/dist", "the release directory written (absent or empty)")
	case "image":
		out = fs.String("o", "", "the image tarball written")
		binary = fs.String("binary", "", "the linux binary put in the image (default: built for linux/ARCH)")
		arch = fs.String("arch", runtime.GOARCH, "the image's architecture")
	default:
		return fmt.Errorf("unknown command %q: build, dist or image", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *version == "" {
		*version = release.Describe(ctx, *dir)
	}
	f := flags{goCmd: *goCmd, dir: *dir, version: *version}
	switch args[0] {
	case "build":
		return f.build(ctx, *goos, *arch, *out)
	case "dist":
		return f.dist(ctx, *out)
	}
	return f.image(ctx, *arch, *binary, *out)
}

// flags are the flags every subcommand has.
type flags struct{ goCmd, dir, version string }

// build builds one binary for goos/goarch (default: this machine's).
func (f flags) build(ctx context.Context, goos, arch, out string) error {
	var p release.Platform
	if goos != "" || arch != "" {
		p = release.Platform{OS: goos, Arch: arch}
		if p.OS == "" {
			p.OS = runtime.GOOS
		}
		if p.Arch == "" {
			p.Arch = runtime.GOARCH
		}
	}
	return release.Build{Go: f.goCmd, Dir: f.dir, Platform: p, Version: f.version, Out: out}.Run(ctx)
}

// dist writes the release directory out and prints the files written.
func (f flags) dist(ctx context.Context, out string) error {
	created, err := release.SourceTime(ctx, f.dir)
	if err != nil {
		return err
	}
	names, err := release.Dist{Go: f.goCmd, Dir: f.dir, Version: f.version, Created: created, Out: out}.Run(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Println(filepath.Join(out, n))
	}
	return nil
}

// image writes the image tarball out, of binary (default: one built for
// linux/arch).
func (f flags) image(ctx context.Context, arch, binary, out string) error {
	if out == "" {
		return fmt.Errorf("image: -o is required")
	}
	p := release.Platform{OS: "linux", Arch: arch}
	if binary == "" {
		tmp, err := os.MkdirTemp("", "kseg-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		binary = filepath.Join(tmp, release.BinaryName(p))
		if err := (release.Build{Go: f.goCmd, Dir: f.dir, Platform: p, Version: f.version, Out: binary}).Run(ctx); err != nil {
			return err
		}
	}
	created, err := release.SourceTime(ctx, f.dir)
	if err != nil {
		return err
	}
	return release.Image{Binary: binary, Platform: p, Version: f.version, Created: created}.Write(out)
}

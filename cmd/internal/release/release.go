// Package release builds what kseg ships: the binary of each platform,
// static and reproducible (Build), the release directory with its
// SHA256SUMS (Dist), and the image tarball for Kubernetes (WriteImage).
// cmd/internal/releasetool runs them for make build, dist and image; the tests build
// through the same functions, so what they check is what ships.
package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Platform is a GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the ones a release ships a binary for. Windows gets the
// binary too: the read-only commands work there; rebuild in place cannot
// see a broker's lock (rebuild/lock_other.go), so docs/install.md tells
// Windows users to write with --out only.
var Platforms = []Platform{
	{"linux", "amd64"},
	{"linux", "arm64"},
	{"darwin", "amd64"},
	{"darwin", "arm64"},
	{"windows", "amd64"},
}

// ImagePlatforms are the ones a release ships an image for.
var ImagePlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}}

// versionVar is the variable the version is stamped into.
const versionVar = "github.com/kseg/kseg/cmd.version"

// validVersion is what a stamped version may hold: git describe's output,
// a tag, "devel". Nothing the linker flags would split or quote.
var validVersion = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z._+-]*$`)

// LDFlags are the linker flags of a release build: -s -w leave out the
// symbol table and the DWARF debugging information (a third of the
// binary; a panic's stack trace still names every function, file and line,
// from the runtime's own table, which -s keeps), -buildid= leaves the build
// id empty, and -X stamps the version.
func LDFlags(version string) string {
	return "-s -w -buildid= -X " + versionVar + "=" + version
}

// Build is one go build of a release binary.
type Build struct {
	Go       string   // the go command; "go" when empty
	Dir      string   // where go build runs: the module root
	Package  string   // the main package; "." when empty
	Platform Platform // the target; the host's when empty
	Version  string   // stamped into cmd.version
	Out      string   // the binary written
}

// Run builds b.Out: cgo off (a static binary with no C library to match
// on the host), -trimpath (no path of the build machine in the binary),
// no VCS stamp (the version is what is stamped, so a source tree without
// .git builds the same bytes), LDFlags. The environment's GOFLAGS is
// dropped and GOAMD64/GOARM64 pinned to the baseline, so a developer's
// settings change nothing: the same source, version and Go toolchain give
// the same bytes.
func (b Build) Run(ctx context.Context) error {
	if !validVersion.MatchString(b.Version) {
		return fmt.Errorf("version %q: want letters, digits and . _ + - only", b.Version)
	}
	if b.Out == "" {
		return errors.New("release build: no output file")
	}
	out, err := filepath.Abs(b.Out)
	if err != nil {
		return err
	}
	pkg := b.Package
	if pkg == "" {
		pkg = "."
	}
	cmd := exec.CommandContext(ctx, goCommand(b.Go), "build", "-trimpath", "-buildvcs=false",
		"-ldflags="+LDFlags(b.Version), "-o", out, pkg)
	cmd.Dir = b.Dir
	cmd.Env = buildEnv(os.Environ(), b.Platform)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", b.target(), err, msg)
	}
	return nil
}

func (b Build) target() string {
	if b.Platform == (Platform{}) {
		return "this platform"
	}
	return b.Platform.String()
}

func goCommand(g string) string {
	if g == "" {
		return "go"
	}
	return g
}

// buildEnv is env for a release build of p: without GOFLAGS and the
// variables set here, then CGO_ENABLED=0, GOAMD64=v1, GOARM64=v8.0 and,
// unless p is empty (the host), GOOS and GOARCH.
func buildEnv(env []string, p Platform) []string {
	set := []string{"CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0"}
	if p != (Platform{}) {
		set = append(set, "GOOS="+p.OS, "GOARCH="+p.Arch)
	}
	drop := []string{"GOFLAGS", "CGO_ENABLED", "GOAMD64", "GOARM64", "GOOS", "GOARCH"}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// BinaryName is the file name of p's binary in a release.
func BinaryName(p Platform) string {
	name := "kseg-" + p.OS + "-" + p.Arch
	if p.OS == "windows" {
		name += ".exe"
	}
	return name
}

// ImageName is the file name of p's image tarball in a release.
func ImageName(p Platform) string { return "kseg-image-" + p.OS + "-" + p.Arch + ".tar" }

// SumsName is the checksum file of a release.
const SumsName = "SHA256SUMS"

// Dist is a release directory.
type Dist struct {
	Go      string    // the go command; "go" when empty
	Dir     string    // the module root
	Version string    // stamped into each binary and image
	Created time.Time // the images' creation time
	Out     string    // the directory written; it must be absent or empty
}

// Run builds every platform's binary and every image platform's image into
// d.Out, then SHA256SUMS over them, and returns the files' names. It
// stops at the first platform that fails to build.
func (d Dist) Run(ctx context.Context) ([]string, error) {
	if err := emptyDir(d.Out); err != nil {
		return nil, err
	}
	var names []string
	for _, p := range Platforms {
		b := Build{Go: d.Go, Dir: d.Dir, Platform: p, Version: d.Version, Out: filepath.Join(d.Out, BinaryName(p))}
		if err := b.Run(ctx); err != nil {
			return nil, err
		}
		names = append(names, BinaryName(p))
	}
	for _, p := range ImagePlatforms {
		img := Image{Binary: filepath.Join(d.Out, BinaryName(p)), Platform: p, Version: d.Version, Created: d.Created}
		if err := img.Write(filepath.Join(d.Out, ImageName(p))); err != nil {
			return nil, err
		}
		names = append(names, ImageName(p))
	}
	if err := WriteSums(d.Out, names); err != nil {
		return nil, err
	}
	return append(names, SumsName), nil
}

// emptyDir makes dir, or checks that it holds nothing: a release
// directory holds what SHA256SUMS lists and nothing else.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s: not empty (a release directory holds only what %s lists)", dir, SumsName)
	}
	return nil
}

// WriteSums writes dir/SHA256SUMS for the files named, in the format
// `sha256sum -c` and `shasum -a 256 -c` check: "<hex>  <name>" per line,
// sorted by name.
func WriteSums(dir string, names []string) error {
	names = slices.Sorted(slices.Values(names))
	var b strings.Builder
	for _, name := range names {
		sum, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		b.WriteString(sum + "  " + name + "\n")
	}
	return os.WriteFile(filepath.Join(dir, SumsName), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Describe is the version git describes the tree in dir as (the nearest
// tag, the commits since and the commit; -dirty with uncommitted changes),
// or "devel" without git or a repository.
func Describe(ctx context.Context, dir string) string {
	out, err := git(ctx, dir, "describe", "--tags", "--always", "--dirty")
	if err != nil || !validVersion.MatchString(out) {
		return "devel"
	}
	return out
}

// SourceTime is the images' creation time: SOURCE_DATE_EPOCH when set
// (the reproducible-builds convention), else the time of the commit in
// dir, else the Unix epoch; never the time of the build, so that two
// builds of one commit give the same image.
func SourceTime(ctx context.Context, dir string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	out, err := git(ctx, dir, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("git log: commit time %q: %w", out, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

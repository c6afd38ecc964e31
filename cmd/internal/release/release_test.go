package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// testVersion is stamped into the binaries the tests build.
const testVersion = "v1.2.3-test.4+abc"

// built is kseg built as make build builds it (Build, the host's
// platform), once for every test of the package that needs it: a cold
// build takes most of a minute on two cores.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// builtBinary returns the shared binary, building it the first time.
func builtBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the built binary is checked as a Linux ELF executable; this is " + runtime.GOOS)
	}
	root := moduleRoot(t)
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "kseg-release-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "kseg")
		built.err = Build{Dir: root, Version: testVersion, Out: built.bin}.Run(context.Background())
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// dynamicParts lists what makes an ELF file depend on the system it runs
// on: an interpreter (PT_INTERP: the dynamic loader), a dynamic section,
// needed libraries (DT_NEEDED).
func dynamicParts(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var parts []string
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			interp, _ := io.ReadAll(p.Open())
			parts = append(parts, "PT_INTERP "+strings.TrimRight(string(interp), "\x00"))
		case elf.PT_DYNAMIC:
			parts = append(parts, "PT_DYNAMIC")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, err
	}
	for _, l := range libs {
		parts = append(parts, "DT_NEEDED "+l)
	}
	return parts, nil
}

// The binary make build writes loads no library and names no loader: it
// runs on any Linux kernel Go supports, whatever its C library.
func TestBinaryIsStatic(t *testing.T) {
	// The check itself finds a dynamic executable's loader and libraries.
	if sh, err := exec.LookPath("sh"); err == nil {
		if parts, err := dynamicParts(sh); err == nil && len(parts) == 0 {
			t.Logf("%s is static here; the check is not exercised on a dynamic executable", sh)
		} else if err == nil && !slices.ContainsFunc(parts, func(s string) bool { return strings.HasPrefix(s, "DT_NEEDED ") }) {
			t.Errorf("%s: %v: a dynamic executable's DT_NEEDED not found", sh, parts)
		}
	}
	bin := builtBinary(t)
	parts, err := dynamicParts(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) > 0 {
		t.Errorf("the release binary is dynamic: %v", parts)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// -s -w: no symbol table, no DWARF (TestStrippedPanicNamesFunctionsAndLines
	// shows what a user still gets).
	for _, s := range []string{".symtab", ".debug_info"} {
		if f.Section(s) != nil {
			t.Errorf("the release binary has a %s section: not stripped", s)
		}
	}
}

// run runs bin in dir with exactly env and returns stdout, stderr and the
// exit code.
func run(t *testing.T, dir string, env []string, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// copyFile copies the file src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode fs.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// checkRunsAlone runs bin from a directory holding nothing but a copy of
// it, with an empty environment (no PATH, HOME, TERM, TZ): --version, then
// a partition generated there and read back.
func checkRunsAlone(t *testing.T, bin string) {
	t.Helper()
	dir := t.TempDir()
	alone := filepath.Join(dir, "kseg")
	copyFile(t, bin, alone, 0o755)
	env := []string{}
	stdout, stderr, code := run(t, dir, env, alone, "--version")
	want := "kseg " + testVersion + " (" + runtime.Version() + " linux/" + runtime.GOARCH + ")\n"
	if code != 0 || !strings.HasPrefix(stdout, want) {
		t.Fatalf("--version: exit %d, stdout %q (want it to start with %q), stderr %q", code, stdout, want, stderr)
	}
	if _, stderr, code := run(t, dir, env, alone, "gen", "--segments", "2", "--batches", "40", "--compression", "zstd", "orders-0"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	stdout, stderr, code = run(t, dir, env, alone, "verify", "-o", "json", "orders-0")
	if code != 0 || !strings.Contains(stdout, `"kind":"summary"`) {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = run(t, dir, env, alone, "lookup", "-o", "json", "orders-0", "100")
	if code != 0 || !strings.Contains(stdout, `"found":true`) {
		t.Fatalf("lookup: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestBinaryRunsAloneWithEmptyEnvironment(t *testing.T) {
	checkRunsAlone(t, builtBinary(t))
}

// --version prints the version line, then exactly what go version -m
// reads from the binary: module, every dependency with its version and
// sum, the build settings.
func TestVersionIsGoVersionM(t *testing.T) {
	bin := builtBinary(t)
	stdout, stderr, code := run(t, t.TempDir(), []string{}, bin, "--version")
	if code != 0 || stderr != "" {
		t.Fatalf("--version: exit %d, stderr %q", code, stderr)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	first, rest, _ := strings.Cut(stdout, "\n")
	if want := "kseg " + testVersion + " (" + runtime.Version() + " linux/" + runtime.GOARCH + ")"; first != want {
		t.Errorf("--version first line %q, want %q", first, want)
	}
	goFirst, goRest, _ := strings.Cut(string(out), "\n")
	if goFirst != bin+": "+runtime.Version() {
		t.Errorf("go version -m first line %q", goFirst)
	}
	if rest != goRest {
		t.Errorf("--version after its first line:\n%s\ngo version -m:\n%s", rest, goRest)
	}
	for _, want := range []string{"\tpath\tgithub.com/kseg/kseg\n", "\tdep\tgithub.com/spf13/cobra\tv", "\tbuild\t-trimpath=true\n", "\tbuild\tCGO_ENABLED=0\n"} {
		if !strings.Contains(rest, want) {
			t.Errorf("--version: no %q in\n%s", want, rest)
		}
	}
}

// copyTree copies the module's source (not .git, bin or testdata, which a
// build does not read) from src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || d.Name() == "testdata" || rel == "bin") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Two builds of the same source, from different directories into
// different files, give the same bytes: no path, build id or VCS state
// of the machine gets in.
func TestBuildIsReproducible(t *testing.T) {
	first := builtBinary(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "elsewhere", "kseg-src")
	copyTree(t, moduleRoot(t), src)
	second := filepath.Join(dir, "out", "kseg")
	if err := (Build{Dir: src, Version: testVersion, Out: second}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two builds differ: %d and %d bytes", len(a), len(b))
	}
	for _, s := range []string{moduleRoot(t), src, dir} {
		if bytes.Contains(a, []byte(s)) {
			t.Errorf("the binary holds the build path %s", s)
		}
	}
}

// crashProgram panics in crash, on line 6 of its main.go.
const crashProgram = `package main

import "os"

func crash(xs []int, i int) int {
	return xs[i]
}

func main() {
	os.Exit(crash(nil, len(os.Args)))
}
`

// A panic of a binary built as releases are (symbols and DWARF stripped)
// still prints every function with its file and line: they come from the
// runtime's pclntab, which -s -w keep. Stripping costs a bug report
// nothing (only debuggers and go tool nm need what it removes).
func TestStrippedPanicNamesFunctionsAndLines(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks an ELF binary")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"go.mod": "module example.com/crash\n\ngo 1.26\n", "main.go": crashProgram} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "crash")
	if err := (Build{Dir: src, Version: testVersion, Out: bin}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	stripped := f.Section(".symtab") == nil && f.Section(".debug_info") == nil
	f.Close()
	if !stripped {
		t.Fatal("the release flags left a symbol table or DWARF in")
	}
	_, stderr, code := run(t, dir, []string{}, bin)
	if code != 2 {
		t.Errorf("exit %d, want 2 (a panic)", code)
	}
	for _, want := range []string{
		"panic: runtime error: index out of range [1] with length 0",
		"goroutine 1 [running]:",
		"main.crash(...)\n\texample.com/crash/main.go:6\n",
		"main.main()\n\texample.com/crash/main.go:10 +0x",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the panic's trace lacks %q:\n%s", want, stderr)
		}
	}
}

// Written twice, the image tarball is the same bytes (a small file
// stands for the binary: gzipping 19 MB at the best level takes minutes
// under the race detector, and nothing here depends on the size).
func TestImageIsReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kseg")
	if err := os.WriteFile(bin, bytes.Repeat([]byte("not really kseg\n"), 4096), 0o755); err != nil {
		t.Fatal(err)
	}
	im := Image{Binary: bin, Platform: Platform{"linux", "arm64"}, Version: testVersion, Created: time.Unix(1700000000, 0)}
	var tarballs [2][]byte
	for i := range tarballs {
		path := filepath.Join(dir, fmt.Sprintf("image-%d.tar", i))
		if err := im.Write(path); err != nil {
			t.Fatal(err)
		}
		var err error
		if tarballs[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if len(tarballs[0]) == 0 || !bytes.Equal(tarballs[0], tarballs[1]) {
		t.Errorf("two writes of the image differ (%d and %d bytes)", len(tarballs[0]), len(tarballs[1]))
	}
	if err := (Image{Binary: bin, Platform: Platform{"darwin", "arm64"}, Version: testVersion}).Write(filepath.Join(dir, "darwin.tar")); err == nil {
		t.Error("an image of a darwin binary was written")
	}
}

// The image tarball, read back with the library that wrote it: a valid
// image (every digest and diff id checks out), the config as built, one
// layer holding the binary and its directories and nothing else; the
// binary from the layer is the one put in, and runs.
func TestImage(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	created := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	im := Image{Binary: bin, Platform: Platform{"linux", runtime.GOARCH}, Version: testVersion, Created: created}
	path := filepath.Join(dir, "image.tar")
	if err := im.Write(path); err != nil {
		t.Fatal(err)
	}

	tag, err := name.NewTag("kseg:v1.2.3-test.4-abc")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("the image read back is not valid: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH || !cfg.Created.Time.Equal(created) {
		t.Errorf("config: os %q, architecture %q, created %v", cfg.OS, cfg.Architecture, cfg.Created.Time)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{ImageBinary}) || cfg.Config.User != ImageUser ||
		!slices.Contains(cfg.Config.Env, "PATH=/usr/local/bin") || cfg.Config.Labels["org.opencontainers.image.version"] != testVersion {
		t.Errorf("config: %+v", cfg.Config)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 {
		t.Fatalf("%d layers, %d diff ids; want one", len(layers), len(cfg.RootFS.DiffIDs))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var names []string
	extracted := filepath.Join(dir, "from-layer")
	if err := os.Mkdir(extracted, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bufio.NewReader(rc))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		if hdr.Uid != 0 || hdr.Gid != 0 || !hdr.ModTime.Equal(created) || hdr.Mode != 0o755 {
			t.Errorf("%s: uid %d gid %d mtime %v mode %o", hdr.Name, hdr.Uid, hdr.Gid, hdr.ModTime, hdr.Mode)
		}
		if "/"+hdr.Name == ImageBinary {
			content, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(bin)
			if !bytes.Equal(content, want) {
				t.Errorf("the binary in the layer differs from the one put in (%d and %d bytes)", len(content), len(want))
			}
			if err := os.WriteFile(filepath.Join(extracted, "kseg"), content, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := []string{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/kseg"}; !slices.Equal(names, want) {
		t.Fatalf("layer entries %q, want %q", names, want)
	}
	checkRunsAlone(t, filepath.Join(extracted, "kseg"))
}

// SHA256SUMS is what sha256sum -c checks: "<hex>  <name>", by name.
func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"kseg-linux-amd64": "abc", "kseg-darwin-arm64": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteSums(dir, []string{"kseg-linux-amd64", "kseg-darwin-arm64"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, SumsName))
	if err != nil {
		t.Fatal(err)
	}
	// The SHA-256 of "" and of "abc" (FIPS 180-2, appendix B.1).
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  kseg-darwin-arm64\n" +
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  kseg-linux-amd64\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "--check", "--strict", SumsName)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum --check: %v\n%s", err, out)
		}
	}
}

// A developer's GOFLAGS, cgo setting or CPU level never reach a release build.
func TestBuildEnv(t *testing.T) {
	env := buildEnv([]string{"HOME=/h", "GOFLAGS=-race", "CGO_ENABLED=1", "GOAMD64=v3", "GOOS=plan9", "GOPATH=/g"}, Platform{"darwin", "arm64"})
	want := []string{"HOME=/h", "GOPATH=/g", "CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0", "GOOS=darwin", "GOARCH=arm64"}
	if !slices.Equal(env, want) {
		t.Errorf("buildEnv = %q, want %q", env, want)
	}
	if env := buildEnv([]string{"GOOS=plan9"}, Platform{}); slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOOS=") }) {
		t.Errorf("a host build sets GOOS: %q", env)
	}
}

func TestVersionRefused(t *testing.T) {
	for _, v := range []string{"", "v1 -X main.x=y", "v1'", "-v1"} {
		if err := (Build{Version: v, Out: "x"}).Run(context.Background()); err == nil {
			t.Errorf("version %q accepted", v)
		}
	}
}

package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// In the image: the binary, on PATH, run as a user who owns nothing.
const (
	// ImageBinary is where the image holds kseg.
	ImageBinary = "/usr/local/bin/kseg"
	// ImageUser is the user the image runs as unless told otherwise: not
	// root, and no owner of any file (65532, distroless's "nonroot"). It
	// reads a broker's files, which Kafka creates readable by all (0644,
	// directories 0755); rebuild runs as the broker's user (runbook).
	ImageUser = "65532:65532"
)

// Image is a container image holding one static kseg binary: one layer
// with the binary at ImageBinary, nothing else (no shell, no C library:
// the binary needs neither).
type Image struct {
	Binary   string    // the linux binary to put in
	Platform Platform  // its platform
	Version  string    // the version stamped into it: the image's tag and label
	Created  time.Time // the image's creation time and its files' mtime
}

// Tag is the image's name in the tarball: kseg:<version> (a '+' of a
// version becomes '-', which a tag cannot hold).
func (im Image) Tag() (name.Tag, error) {
	return name.NewTag("kseg:" + strings.ReplaceAll(im.Version, "+", "-"))
}

// Build returns the image. Every input is fixed (the layer's tar has
// fixed owners, modes and times, the config fixed fields), so the same
// binary, version and time give the same digests. The layer is gzipped at
// the best level: a 7.1 MB tarball instead of 8.0 for linux/amd64, pulled
// by every node that runs it.
func (im Image) Build() (v1.Image, error) {
	if im.Platform.OS != "linux" {
		return nil, fmt.Errorf("image for %s: images are for linux only", im.Platform)
	}
	bin, err := os.ReadFile(im.Binary)
	if err != nil {
		return nil, err
	}
	layerTar, err := im.layerTar(bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression),
		tarball.WithCompressedCaching) // compressed once, for the digest and the tarball both
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: im.Created.UTC()}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg := &v1.ConfigFile{
		Architecture: im.Platform.Arch,
		OS:           im.Platform.OS,
		Created:      created,
		Config: v1.Config{
			Entrypoint: []string{ImageBinary},
			Env:        []string{"PATH=/usr/local/bin"},
			User:       ImageUser,
			WorkingDir: "/",
			Labels: map[string]string{
				"org.opencontainers.image.title":       "kseg",
				"org.opencontainers.image.version":     im.Version,
				"org.opencontainers.image.description": "Inspects and repairs Apache Kafka partition data on disk, offline",
			},
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	if im.Platform.Arch == "arm64" {
		cfg.Variant = "v8"
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   created,
			CreatedBy: "kseg " + im.Version + ": " + ImageBinary,
			Comment:   "static kseg binary for " + im.Platform.String(),
		},
	})
}

// layerTar is the layer's content: the directories down to ImageBinary
// and the binary, owned by root, with im.Created as their time.
func (im Image) layerTar(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	parts := strings.Split(strings.TrimPrefix(ImageBinary, "/"), "/")
	for i := 1; i < len(parts); i++ {
		hdr := &tar.Header{
			Typeflag: tar.TypeDir,
			Name:     strings.Join(parts[:i], "/") + "/",
			Mode:     0o755,
			ModTime:  im.Created.UTC(),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.Join(parts, "/"),
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  im.Created.UTC(),
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write builds the image and writes it to path as a tarball in the
// format of `docker save`, which `docker load`, `podman load`, `kind load
// image-archive` and `skopeo copy docker-archive:...` read.
func (im Image) Write(path string) error {
	tag, err := im.Tag()
	if err != nil {
		return err
	}
	img, err := im.Build()
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Package image builds container images without a registry or a daemon:
// one layer of files (usually one static binary), a configuration, and
// either a docker-archive tarball ([Image.WriteTarball]) or an OCI image
// layout in a tar archive ([Image.WriteOCI]); `ctr images import`
// accepts both. The node harness (package node) builds its
// pod sandbox image and its test workload this way; package
// interop/ksaimage builds the ksa command's image so.
//
// Images are reproducible: the same files and settings give the same
// bytes, and so the same digest ([Image.Digest]), on any machine at any
// time. Every file is owned by root, dated the Unix epoch, and laid out in
// path order; the configuration is dated the epoch too and carries no host
// name. The media types are OCI's.
//
//	img, err := image.Binary("ksa.local/probe:test", "/tmp/build/probe")
//	if err != nil {
//		return err
//	}
//	f, err := os.Create("probe.tar")
//	...
//	err = img.WriteOCI(f) // then: ctr -n k8s.io images import probe.tar
package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ErrInvalid is matched by every error about an [Image] that cannot be
// built: a bad name, a bad path, a file given twice.
var ErrInvalid = errors.New("image: invalid image")

// epoch is the time of every file and of the configuration.
var epoch = time.Unix(0, 0).UTC()

// File is one file of an image's layer.
type File struct {
	// Path is where the file is in the image: absolute and clean, such as
	// "/pause" or "/etc/passwd". Its parent directories are added.
	Path string
	// Mode holds the permission bits. Zero: 0o755 (an executable).
	Mode fs.FileMode
	// Data is the content.
	Data []byte
}

// Image is an image of one layer.
type Image struct {
	// Name is the reference the image is imported as, with a registry
	// host and a tag: "ksa.local/pause:1". No registry is contacted; the
	// host only keeps runtimes from reading the name as Docker Hub's.
	Name string
	// Files are the layer's files; at least one.
	Files []File
	// Entrypoint and Cmd are what the container runs, as in a Dockerfile.
	Entrypoint []string
	Cmd        []string
	// Env holds "KEY=value" entries. Zero: none (no PATH either).
	Env []string
	// User is the user (and group) the container runs as, such as
	// "65532:65532". Zero: root.
	User string
	// WorkingDir is the container's working directory. Zero: "/".
	WorkingDir string
	// Labels are the image's labels. Zero: none.
	Labels map[string]string
}

// Binary returns an image of the executable at file, as /BASENAME,
// which it runs with args: the usual image of one static program.
func Binary(ref, file string, args ...string) (Image, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Image{}, fmt.Errorf("image: %w", err)
	}
	p := "/" + filepath.Base(file)
	return Image{
		Name:       ref,
		Files:      []File{{Path: p, Mode: 0o755, Data: data}},
		Entrypoint: append([]string{p}, args...),
	}, nil
}

// Build returns the image, or an error matching [ErrInvalid].
func (im Image) Build() (v1.Image, error) {
	if _, err := im.tag(); err != nil {
		return nil, err
	}
	layerTar, err := im.layer()
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "ksa interop/node/image"},
	})
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: epoch}
	cfg.OS = "linux"
	cfg.Architecture = runtime.GOARCH
	cfg.Config = v1.Config{
		Entrypoint: im.Entrypoint,
		Cmd:        im.Cmd,
		Env:        im.Env,
		User:       im.User,
		WorkingDir: im.WorkingDir,
		Labels:     im.Labels,
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return img, nil
}

// WriteTarball writes the image to w as a docker-archive tarball (the
// format of `docker save`) tagged [Image.Name].
func (im Image) WriteTarball(w io.Writer) error {
	tag, err := im.tag()
	if err != nil {
		return err
	}
	img, err := im.Build()
	if err != nil {
		return err
	}
	if err := tarball.Write(tag, img, w); err != nil {
		return fmt.Errorf("image: writing %s: %w", im.Name, err)
	}
	return nil
}

// ID returns the image's ID: the digest of its configuration
// ("sha256:..."), which a kubelet reports as a container's imageID.
func (im Image) ID() (string, error) {
	img, err := im.Build()
	if err != nil {
		return "", err
	}
	h, err := img.ConfigName()
	if err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	return h.String(), nil
}

// tag parses Name, which must name a registry host and a tag.
func (im Image) tag() (name.Tag, error) {
	tag, err := name.NewTag(im.Name, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%w: name %q: %v", ErrInvalid, im.Name, err)
	}
	if !strings.Contains(strings.SplitN(im.Name, "/", 2)[0], ".") {
		return name.Tag{}, fmt.Errorf("%w: name %q has no registry host, such as ksa.local/NAME:TAG", ErrInvalid, im.Name)
	}
	return tag, nil
}

// layer returns the layer's uncompressed tar: every file and parent
// directory, in path order, owned by root and dated the epoch.
func (im Image) layer() ([]byte, error) {
	if len(im.Files) == 0 {
		return nil, fmt.Errorf("%w: %s has no files", ErrInvalid, im.Name)
	}
	files := map[string]File{}
	dirs := map[string]bool{}
	for _, f := range im.Files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return nil, fmt.Errorf("%w: file path %q is not absolute and clean", ErrInvalid, f.Path)
		}
		p := strings.TrimPrefix(f.Path, "/")
		if _, dup := files[p]; dup {
			return nil, fmt.Errorf("%w: file %q given twice", ErrInvalid, f.Path)
		}
		if f.Mode&^fs.ModePerm != 0 {
			return nil, fmt.Errorf("%w: file %q: mode %v is not permission bits", ErrInvalid, f.Path, f.Mode)
		}
		files[p] = f
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for p := range files {
		if dirs[p] {
			return nil, fmt.Errorf("%w: %q is both a file and a directory", ErrInvalid, "/"+p)
		}
	}
	var names []string
	for d := range dirs {
		names = append(names, d+"/")
	}
	for p := range files {
		names = append(names, p)
	}
	slices.Sort(names)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		hdr := &tar.Header{Name: n, ModTime: epoch}
		if strings.HasSuffix(n, "/") {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		} else {
			f := files[n]
			mode := f.Mode
			if mode == 0 {
				mode = 0o755
			}
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, int64(mode), int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("image: layer: %w", err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(files[n].Data); err != nil {
				return nil, fmt.Errorf("image: layer: %w", err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	return buf.Bytes(), nil
}

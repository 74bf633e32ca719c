package image

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations of the index's manifest in [Image.WriteOCI]: containerd
// names an imported image after the first, the OCI layout's readers after
// the second.
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// Digest returns the digest of the image's manifest ("sha256:..."): the
// image's digest as containerd and registries know it, and what
// `ctr images ls` shows after [Image.WriteOCI]'s archive is imported.
func (im Image) Digest() (string, error) {
	img, err := im.Build()
	if err != nil {
		return "", err
	}
	h, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("image: %w", err)
	}
	return h.String(), nil
}

// WriteOCI writes the image to w as an OCI image layout in a tar archive
// (oci-layout, index.json and blobs/sha256/...), which
// `ctr images import` reads, naming the image [Image.Name] (the index
// annotates its manifest with io.containerd.image.name, and with the tag
// as org.opencontainers.image.ref.name). Like the image, the archive is
// reproducible: its entries are in path order, owned by root and dated
// the epoch.
func (im Image) WriteOCI(w io.Writer) error {
	tag, err := im.tag()
	if err != nil {
		return err
	}
	img, err := im.Build()
	if err != nil {
		return err
	}
	blobs, desc, err := ociBlobs(img)
	if err != nil {
		return fmt.Errorf("image: %s: %w", im.Name, err)
	}
	desc.Annotations = map[string]string{
		annotationContainerdName: im.Name,
		annotationRefName:        tag.TagStr(),
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("image: %w", err)
	}
	desc.Platform = &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     []v1.Descriptor{desc},
	})
	if err != nil {
		return fmt.Errorf("image: index: %w", err)
	}
	entries := map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": index,
	}
	for h, data := range blobs {
		entries["blobs/"+h.Algorithm+"/"+h.Hex] = data
	}
	if err := writeTar(w, entries); err != nil {
		return fmt.Errorf("image: writing %s: %w", im.Name, err)
	}
	return nil
}

// ociBlobs returns the image's blobs (manifest, configuration, layers)
// by digest, and the manifest's descriptor.
func ociBlobs(img v1.Image) (map[v1.Hash][]byte, v1.Descriptor, error) {
	blobs := map[v1.Hash][]byte{}
	manifest, err := img.RawManifest()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	blobs[digest] = manifest
	config, err := img.RawConfigFile()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	blobs[configName] = config
	layers, err := img.Layers()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return nil, v1.Descriptor{}, err
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, v1.Descriptor{}, err
		}
		data, err := io.ReadAll(rc)
		if cerr := rc.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, v1.Descriptor{}, err
		}
		blobs[h] = data
	}
	return blobs, v1.Descriptor{MediaType: mt, Digest: digest, Size: int64(len(manifest))}, nil
}

// writeTar writes files (by path) as a tar archive of regular files and
// their parent directories, in path order, owned by root, dated the
// epoch, readable by all.
func writeTar(w io.Writer, files map[string][]byte) error {
	names := []string{}
	dirs := map[string]bool{}
	for p := range files {
		names = append(names, p)
		for d := parentDir(p); d != ""; d = parentDir(d) {
			if !dirs[d] {
				dirs[d] = true
				names = append(names, d+"/")
			}
		}
	}
	slices.Sort(names)
	tw := tar.NewWriter(w)
	for _, n := range names {
		hdr := &tar.Header{Name: n, ModTime: epoch, Typeflag: tar.TypeDir, Mode: 0o755}
		data, isFile := files[n]
		if isFile {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if isFile {
			if _, err := tw.Write(data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// parentDir returns the parent directory of the relative path p, "" at
// the top.
func parentDir(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return ""
}

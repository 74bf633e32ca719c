package image_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/interop/node/image"
)

func probeImage() image.Image {
	return image.Image{
		Name:       "ksa.local/probe:test",
		Files:      []image.File{{Path: "/bin/probe", Data: []byte("#!fake binary")}, {Path: "/etc/motd", Mode: 0o644, Data: []byte("hi\n")}},
		Entrypoint: []string{"/bin/probe"},
		Cmd:        []string{"-wait"},
		User:       "65532:65532",
	}
}

// TestReproducible: the same image gives the same tarball, byte for byte,
// and so the same ID; another file gives another ID.
func TestReproducible(t *testing.T) {
	var a, b bytes.Buffer
	require.NoError(t, probeImage().WriteTarball(&a))
	require.NoError(t, probeImage().WriteTarball(&b))
	assert.Equal(t, a.Bytes(), b.Bytes())
	id1, err := probeImage().ID()
	require.NoError(t, err)
	other := probeImage()
	other.Files[1].Data = []byte("ho\n")
	id2, err := other.ID()
	require.NoError(t, err)
	assert.NotEqual(t, id1, id2)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, id1)
}

// TestTarball: a docker-archive whose manifest names the image and whose
// configuration holds what the image says, for this machine's
// architecture, dated the epoch.
func TestTarball(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, probeImage().WriteTarball(&buf))
	files := map[string][]byte{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = data
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	require.NoError(t, json.Unmarshal(files["manifest.json"], &manifest))
	require.Len(t, manifest, 1)
	assert.Equal(t, []string{"ksa.local/probe:test"}, manifest[0].RepoTags)
	assert.Len(t, manifest[0].Layers, 1)
	var cfg struct {
		Architecture, OS, Created string
		Config                    struct {
			Entrypoint, Cmd []string
			User            string
		}
	}
	require.NoError(t, json.Unmarshal(files[manifest[0].Config], &cfg))
	assert.Equal(t, "linux", cfg.OS)
	assert.NotEmpty(t, cfg.Architecture)
	assert.Equal(t, "1970-01-01T00:00:00Z", cfg.Created)
	assert.Equal(t, []string{"/bin/probe"}, cfg.Config.Entrypoint)
	assert.Equal(t, []string{"-wait"}, cfg.Config.Cmd)
	assert.Equal(t, "65532:65532", cfg.Config.User)
}

// TestLayer: the layer holds the files and their parent directories, in
// path order, owned by root, dated the epoch, executable by default.
func TestLayer(t *testing.T) {
	img, err := probeImage().Build()
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	type entry struct {
		name string
		mode int64
	}
	var got []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		assert.Zero(t, h.Uid)
		assert.Zero(t, h.Gid)
		assert.Zero(t, h.ModTime.Unix())
		got = append(got, entry{h.Name, h.Mode})
	}
	assert.Equal(t, []entry{{"bin/", 0o755}, {"bin/probe", 0o755}, {"etc/", 0o755}, {"etc/motd", 0o644}}, got)
}

func TestBinary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pause")
	require.NoError(t, os.WriteFile(p, []byte("binary"), 0o755))
	img, err := image.Binary("ksa.local/pause:1", p, "-v")
	require.NoError(t, err)
	assert.Equal(t, []image.File{{Path: "/pause", Mode: 0o755, Data: []byte("binary")}}, img.Files)
	assert.Equal(t, []string{"/pause", "-v"}, img.Entrypoint)
	_, err = image.Binary("ksa.local/pause:1", filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestInvalid(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*image.Image)
	}{
		{name: "no tag", mod: func(im *image.Image) { im.Name = "ksa.local/probe" }},
		{name: "no registry host", mod: func(im *image.Image) { im.Name = "probe:test" }},
		{name: "bad name", mod: func(im *image.Image) { im.Name = "ksa.local/Probe:test" }},
		{name: "no files", mod: func(im *image.Image) { im.Files = nil }},
		{name: "relative path", mod: func(im *image.Image) { im.Files[0].Path = "bin/probe" }},
		{name: "unclean path", mod: func(im *image.Image) { im.Files[0].Path = "/bin/../probe" }},
		{name: "root", mod: func(im *image.Image) { im.Files[0].Path = "/" }},
		{name: "twice", mod: func(im *image.Image) { im.Files[1].Path = "/bin/probe" }},
		{name: "file and directory", mod: func(im *image.Image) { im.Files[1].Path = "/bin/probe/x" }},
		{name: "mode not permissions", mod: func(im *image.Image) { im.Files[0].Mode = os.ModeSetuid | 0o755 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			im := probeImage()
			tt.mod(&im)
			_, err := im.Build()
			assert.ErrorIs(t, err, image.ErrInvalid)
			assert.ErrorIs(t, im.WriteTarball(io.Discard), image.ErrInvalid)
			assert.ErrorIs(t, im.WriteOCI(io.Discard), image.ErrInvalid)
		})
	}
}

// TestOCI: an OCI image layout, byte for byte the same each time, whose
// index names the manifest of [image.Image.Digest] with the image's name
// and tag, and whose blobs are the manifest, its configuration and its
// layer, each under its digest.
func TestOCI(t *testing.T) {
	var a, b bytes.Buffer
	require.NoError(t, probeImage().WriteOCI(&a))
	require.NoError(t, probeImage().WriteOCI(&b))
	assert.Equal(t, a.Bytes(), b.Bytes())

	files := map[string][]byte{}
	var names []string
	tr := tar.NewReader(&a)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		assert.Zero(t, h.ModTime.Unix())
		assert.Zero(t, h.Uid)
		names = append(names, h.Name)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = data
	}
	assert.IsNonDecreasing(t, names)
	assert.JSONEq(t, `{"imageLayoutVersion":"1.0.0"}`, string(files["oci-layout"]))

	var index struct {
		MediaType string
		Manifests []struct {
			MediaType   string
			Digest      string
			Size        int
			Annotations map[string]string
			Platform    struct{ OS, Architecture string }
		}
	}
	require.NoError(t, json.Unmarshal(files["index.json"], &index))
	assert.Equal(t, "application/vnd.oci.image.index.v1+json", index.MediaType)
	require.Len(t, index.Manifests, 1)
	m := index.Manifests[0]
	digest, err := probeImage().Digest()
	require.NoError(t, err)
	assert.Equal(t, digest, m.Digest)
	assert.Equal(t, "application/vnd.oci.image.manifest.v1+json", m.MediaType)
	assert.Equal(t, map[string]string{
		"io.containerd.image.name":          "ksa.local/probe:test",
		"org.opencontainers.image.ref.name": "test",
	}, m.Annotations)
	assert.Equal(t, "linux", m.Platform.OS)

	blob := func(d string) []byte {
		t.Helper()
		data, ok := files["blobs/sha256/"+d[len("sha256:"):]]
		require.True(t, ok, "blob %s", d)
		sum := sha256.Sum256(data)
		assert.Equal(t, d, "sha256:"+hex.EncodeToString(sum[:]))
		return data
	}
	manifest := blob(m.Digest)
	assert.Len(t, manifest, m.Size)
	var mf struct {
		Config struct{ MediaType, Digest string }
		Layers []struct{ MediaType, Digest string }
	}
	require.NoError(t, json.Unmarshal(manifest, &mf))
	assert.Equal(t, "application/vnd.oci.image.config.v1+json", mf.Config.MediaType)
	blob(mf.Config.Digest)
	require.Len(t, mf.Layers, 1)
	assert.Equal(t, "application/vnd.oci.image.layer.v1.tar+gzip", mf.Layers[0].MediaType)
	blob(mf.Layers[0].Digest)
	assert.Len(t, names, 7, "the directories blobs/ and blobs/sha256/, three blobs, index.json, oci-layout: %v", names)
}

package ksaimage_test

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/interop/ksaimage"
)

// TestReproducible builds the image twice from this checkout: the same
// digest and the same archive, byte for byte; the binary records the
// checkout's commit, and the image is the binary and the user nonroot,
// nothing else (no shell), run as 65532.
func TestReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ksa command twice")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err, "the image records the commit: git and a checkout are needed")

	a, err := ksaimage.Build(t.Context(), ksaimage.Config{})
	require.NoError(t, err)
	b, err := ksaimage.Build(t.Context(), ksaimage.Config{})
	require.NoError(t, err)
	assert.Equal(t, a.Digest, b.Digest)
	var archiveA, archiveB bytes.Buffer
	require.NoError(t, a.Image.WriteOCI(&archiveA))
	require.NoError(t, b.Image.WriteOCI(&archiveB))
	assert.True(t, bytes.Equal(archiveA.Bytes(), archiveB.Bytes()), "the archives differ")
	t.Logf("ksa image %s: %s, binary %d bytes, archive %d bytes", a.Image.Name, a.Digest, a.BinarySize, archiveA.Len())

	assert.Equal(t, strings.TrimSpace(string(head)), a.Revision)
	assert.True(t, strings.HasPrefix(a.Image.Name, ksaimage.Repository+":"+a.Revision[:12]), a.Image.Name)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, a.Digest)
	var paths []string
	for _, f := range a.Image.Files {
		paths = append(paths, f.Path)
	}
	assert.ElementsMatch(t, []string{"/ksa", "/etc/passwd", "/etc/group"}, paths)
	assert.Equal(t, []string{"/ksa"}, a.Image.Entrypoint)
	assert.Equal(t, "65532:65532", a.Image.User)
	assert.Equal(t, a.Revision, a.Image.Labels["org.opencontainers.image.revision"])
}

// TestRefused: a binary that needs a dynamic loader, and one that records
// no commit, are refused.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(main, []byte("package main\n\nfunc main() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.test/tiny\n\ngo 1.22\n"), 0o644))
	static := filepath.Join(dir, "static")
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", static, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cases := []struct {
		name string
		bin  string
		want error
	}{
		{name: "no revision", bin: static, want: ksaimage.ErrNoRevision},
		{name: "not ELF", bin: main, want: ksaimage.ErrNotStatic},
		{name: "missing", bin: filepath.Join(dir, "missing"), want: ksaimage.ErrNotStatic},
	}
	// The machine's own programs are dynamic, as a rule: this one's shell.
	if sh, err := exec.LookPath("sh"); err == nil && hasInterpreter(sh) {
		cases = append(cases, struct {
			name string
			bin  string
			want error
		}{name: "dynamic", bin: sh, want: ksaimage.ErrNotStatic})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ksaimage.FromBinary(tt.bin, "")
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

// hasInterpreter reports whether the ELF file at path names a dynamic
// loader.
func hasInterpreter(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

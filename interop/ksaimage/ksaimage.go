// Package ksaimage builds the container image of the ksa command, without
// a Docker daemon or a registry: one layer holding the static binary
// /ksa (CGO_ENABLED=0, -trimpath, without symbol table and debug
// information) and /etc/passwd and /etc/group naming the user nonroot,
// 65532, which the image runs as. There is no shell and nothing else.
//
// The image is of a commit: [Build] clones the repository (git clone
// --shared, which copies no objects) at that commit into a temporary
// directory and builds there, so uncommitted changes are left out, and
// the binary records the commit (the Go toolchain's VCS stamp, which
// `ksa version` prints: a git worktree, whose .git is a file, gets
// none). It is reproducible: built twice from the same commit with the
// same Go toolchain, it has the same digest; the layer's files are dated
// the epoch (package interop/node/image).
//
// The command interop/ci/image writes it as an OCI image layout in a tar
// archive, which `ctr -n k8s.io images import` reads:
//
//	(cd interop && go run ./ci/image -o ../bin/ksa.oci.tar)
//
// and the node tests (package interop/node) import that archive into a
// kubelet's containerd and run the command in a pod.
package ksaimage

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ksa-go/ksa/interop/node/image"
)

// Repository is the image's name without its tag; [Build] tags it with
// the commit.
const Repository = "ksa.local/ksa"

// User is the user and group the image runs as: nonroot in its
// /etc/passwd.
const User = "65532:65532"

// Errors of [Build].
var (
	// ErrBuild is matched when git or go build fails, or the repository
	// is not found.
	ErrBuild = errors.New("ksaimage: cannot build the ksa command")
	// ErrNoRevision is matched when the binary records no VCS revision:
	// the source is no git checkout, or git is not on PATH.
	ErrNoRevision = errors.New("ksaimage: the ksa binary records no VCS revision")
	// ErrNotStatic is matched when the binary asks for a dynamic loader.
	ErrNotStatic = errors.New("ksaimage: the ksa binary is not static")
)

// Config says what to build from. The zero value builds the checkout
// this package was compiled in.
type Config struct {
	// Repository is the root of the ksa repository (holding cmd/ksa).
	// Zero: the one this package's source is in.
	Repository string
	// Revision is the commit to build, anything git rev-parse reads.
	// Zero: HEAD.
	Revision string
	// Name is the image's name, with a registry host and a tag. Zero:
	// [Repository] tagged with the commit's first 12 hex digits.
	Name string
}

// Result is a built image.
type Result struct {
	// Image is the image, ready for WriteOCI.
	Image image.Image
	// Digest is its manifest's digest, "sha256:...".
	Digest string
	// Revision is the commit the binary records.
	Revision string
	// BinarySize is the size of /ksa in bytes.
	BinarySize int
}

// Build builds the ksa command of the commit cfg names, for linux on this
// machine's architecture, and returns its image. It clones the repository
// at that commit and runs go build in its cmd/ksa (whose go.work uses the
// library of the same commit), in a temporary directory it removes.
func Build(ctx context.Context, cfg Config) (Result, error) {
	repo := cfg.Repository
	if repo == "" {
		repo = sourceRepository()
		if repo == "" {
			return Result{}, fmt.Errorf("%w: the repository's directory is unknown (a -trimpath build); set Config.Repository", ErrBuild)
		}
	}
	rev := cfg.Revision
	if rev == "" {
		rev = "HEAD"
	}
	commit, err := git(ctx, repo, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "ksaimage-*")
	if err != nil {
		return Result{}, fmt.Errorf("ksaimage: %w", err)
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "src")
	if _, err := git(ctx, repo, "clone", "--quiet", "--shared", "--no-checkout", "--", repo, src); err != nil {
		return Result{}, err
	}
	if _, err := git(ctx, src, "checkout", "--quiet", "--detach", commit); err != nil {
		return Result{}, err
	}
	bin := filepath.Join(dir, "ksa")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = filepath.Join(src, "cmd", "ksa")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return Result{}, fmt.Errorf("%w: go build in cmd/ksa of %s: %w\n%s", ErrBuild, commit, err, out)
	}
	return FromBinary(bin, cfg.Name)
}

// git runs git in dir and returns its output, trimmed.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: git %s in %s: %w: %s", ErrBuild, args[0], dir, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// FromBinary returns the image of the ksa binary at bin, named name
// (zero: as [Config.Name] says). It fails with [ErrNotStatic] when bin is
// no static ELF binary, and with [ErrNoRevision] when it records no VCS
// revision.
func FromBinary(bin, name string) (Result, error) {
	var res Result
	if err := checkStatic(bin); err != nil {
		return Result{}, err
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrNoRevision, err)
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			res.Revision = s.Value
		}
	}
	if len(res.Revision) < 12 {
		return Result{}, fmt.Errorf("%w: build it in a git clone (not a worktree), with git on PATH", ErrNoRevision)
	}
	if name == "" {
		name = Repository + ":" + res.Revision[:12]
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return Result{}, fmt.Errorf("ksaimage: %w", err)
	}
	res.BinarySize = len(data)
	res.Image = image.Image{
		Name: name,
		Files: []image.File{
			{Path: "/ksa", Mode: 0o755, Data: data},
			{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n")},
			{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		},
		Entrypoint: []string{"/ksa"},
		User:       User,
		Labels: map[string]string{
			"org.opencontainers.image.title":    "ksa",
			"org.opencontainers.image.source":   "https://github.com/ksa-go/ksa",
			"org.opencontainers.image.revision": res.Revision,
		},
	}
	if res.Digest, err = res.Image.Digest(); err != nil {
		return Result{}, err
	}
	return res, nil
}

// checkStatic fails when the ELF binary at bin has a program interpreter
// (the dynamic loader): an image without libc could not run it.
func checkStatic(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotStatic, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: %s asks for a dynamic loader; build it with CGO_ENABLED=0", ErrNotStatic, bin)
		}
	}
	return nil
}

// sourceRepository returns the repository root this file is in
// (interop/ksaimage's grandparent), or "" in a -trimpath build.
func sourceRepository() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Dir(filepath.Dir(filepath.Dir(file)))
	}
	return ""
}

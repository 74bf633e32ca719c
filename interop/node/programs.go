package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ksa-go/ksa/interop/node/image"
)

// The node's own programs, in interop/node/cmd, built by [Start] into its
// directory.
const (
	programPause = "pause"
	programCNI   = "loopback-cni"
	programProbe = "probe"
)

// The images [Start] imports: the pod sandbox's (containerd's
// sandbox_image) and the test workload's.
const (
	SandboxImage = "ksa.local/pause:node"
	ProbeImage   = "ksa.local/probe:node"
)

// buildPrograms builds the node's programs from the interop module into
// dir, static (the images hold nothing else), and returns their paths by
// name.
func buildPrograms(ctx context.Context, dir string) (map[string]string, error) {
	mod := moduleDir()
	if mod == "" {
		return nil, fmt.Errorf("%w: the interop module's directory is unknown (a -trimpath build); the node's programs are built from it", ErrInvalidConfig)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("node: the go command builds the node's programs: %w", err)
	}
	names := []string{programPause, programCNI, programProbe}
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./node/cmd/"+n)
	}
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("node: building %v: %w\n%s", names, err, out)
	}
	paths := map[string]string{}
	for _, n := range names {
		paths[n] = filepath.Join(dir, n)
	}
	return paths, nil
}

// nodeImages returns the sandbox and probe images of the programs.
func nodeImages(programs map[string]string) ([]image.Image, error) {
	pause, err := image.Binary(SandboxImage, programs[programPause])
	if err != nil {
		return nil, err
	}
	probe, err := image.Binary(ProbeImage, programs[programProbe])
	if err != nil {
		return nil, err
	}
	return []image.Image{pause, probe}, nil
}

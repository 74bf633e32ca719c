package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/ksa-go/ksa/interop/internal/proc"
	"github.com/ksa-go/ksa/interop/node/image"
)

// criNamespace is the containerd namespace of the CRI plugin: the
// kubelet's containers and images live there.
const criNamespace = "k8s.io"

// cniNetwork is the name of the harness's network configuration.
const cniNetwork = "ksa-loopback"

// containerdConfig returns containerd's configuration (version 2): every
// directory and socket under the node's, the CRI plugin running runc with
// cgroupfs, our sandbox image and our CNI directories.
func (n *Node) containerdConfig() string {
	f := &n.Files
	q := strconv.Quote
	return `version = 2
root = ` + q(f.ContainerdRoot) + `
state = ` + q(f.ContainerdState) + `
# Snapshotters this node never uses; some probe the host as they start.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = ` + q(f.ContainerdSocket) + `

[ttrpc]
  address = ` + q(f.ContainerdSocket+".ttrpc") + `

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = ` + q(filepath.Join(f.ContainerdRoot, "opt")) + `

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ` + q(SandboxImage) + `
  # Root without CAP_SYS_RESOURCE cannot lower a process's OOM score
  # adjustment: without this every sandbox fails to start.
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  # Network namespaces under the state directory, not /var/run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  tolerate_missing_hugetlb_controller = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = ` + q(n.bins.Runc) + `
        Root = ` + q(filepath.Join(f.ContainerdState, "runc")) + `
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ` + q(f.CNIBin) + `
    conf_dir = ` + q(f.CNIConf) + `
    max_conf_num = 1
`
}

// cniConfig returns the network configuration list of the harness's
// plugin.
func cniConfig() string {
	return `{
  "cniVersion": "1.0.0",
  "name": "` + cniNetwork + `",
  "plugins": [{"type": "ksa-loopback"}]
}
`
}

// containerdEnv is containerd's environment: the test binary's, with the
// shim's directory first on PATH (containerd runs the shim by name).
func (n *Node) containerdEnv() []string {
	env := []string{"PATH=" + filepath.Dir(n.bins.Shim) + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// startContainerd writes containerd's and the CNI configurations, starts
// containerd and waits until its CRI reports the runtime and the network
// ready.
func (n *Node) startContainerd(ctx context.Context) error {
	f := &n.Files
	for _, d := range []string{f.ContainerdRoot, f.ContainerdState, f.CNIBin, f.CNIConf} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	for _, name := range []string{"loopback", "ksa-loopback"} {
		if err := copyFile(n.programs[programCNI], filepath.Join(f.CNIBin, name), 0o755); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(f.CNIConf, "10-"+cniNetwork+".conflist"), []byte(cniConfig())); err != nil {
		return err
	}
	if err := writeFile(f.ContainerdConfig, []byte(n.containerdConfig())); err != nil {
		return err
	}
	p, err := proc.Start("containerd", n.bins.Containerd, []string{"--config", f.ContainerdConfig}, f.ContainerdLog,
		proc.Config{Env: n.containerdEnv(), Output: n.output})
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	n.containerd = p
	conn, err := grpc.NewClient("unix://"+f.ContainerdSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("node: CRI client: %w", err)
	}
	n.criConn = conn
	n.cri = runtimeapi.NewRuntimeServiceClient(conn)
	return waitFor(ctx, p, "containerd", func(ctx context.Context) error {
		resp, err := n.cri.Status(ctx, &runtimeapi.StatusRequest{})
		if err != nil {
			return err
		}
		for _, c := range resp.GetStatus().GetConditions() {
			if !c.GetStatus() {
				return fmt.Errorf("%s: %s %s", c.GetType(), c.GetReason(), c.GetMessage())
			}
		}
		return nil
	})
}

// importImages writes each image as an OCI archive and imports it into
// the CRI's namespace with ctr.
func (n *Node) importImages(ctx context.Context, images []image.Image) error {
	for i, im := range images {
		path := filepath.Join(n.Files.Dir, "images", strconv.Itoa(i)+".tar")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("node: %w", err)
		}
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("node: %w", err)
		}
		err = im.WriteOCI(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("node: image %s: %w", im.Name, err)
		}
		if err := n.ImportArchive(ctx, path); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	return nil
}

// ImportImage imports im into the node's containerd, for pods to run
// (with imagePullPolicy Never or IfNotPresent: nothing is pulled).
func (n *Node) ImportImage(ctx context.Context, im image.Image) error {
	return n.importImages(ctx, []image.Image{im})
}

// ImportArchive imports the image archive at path (an OCI image layout or
// a docker-archive, in a tar file) into the node's containerd as
// `ctr -n k8s.io images import` does, for pods to run.
func (n *Node) ImportArchive(ctx context.Context, path string) error {
	if _, err := n.ctr(ctx, "images", "import", path); err != nil {
		return fmt.Errorf("node: importing %s: %w", path, err)
	}
	return nil
}

// ImageDigest returns the digest of the image named ref in the node's
// containerd ("sha256:..."), as `ctr -n k8s.io images ls` shows it. It
// fails with an error matching [ErrImageNotFound] when there is no such
// image.
func (n *Node) ImageDigest(ctx context.Context, ref string) (string, error) {
	out, err := n.ctr(ctx, "images", "ls", "name=="+ref)
	if err != nil {
		return "", fmt.Errorf("node: %w", err)
	}
	// REF TYPE DIGEST SIZE PLATFORMS LABELS, after a header line.
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 3 && fields[0] == ref {
			return fields[2], nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrImageNotFound, ref)
}

// ctr runs ctr against the node's containerd, in the CRI's namespace.
// It returns what ctr printed on stdout.
func (n *Node) ctr(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	all := append([]string{"--address", n.Files.ContainerdSocket, "--namespace", criNamespace}, args...)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, n.bins.Ctr, all...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()+stdout.String()))
	}
	return stdout.String(), nil
}

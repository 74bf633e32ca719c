package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/internal/proc"
	"github.com/ksa-go/ksa/interop/node/image"
)

// DefaultStartTimeout bounds [Start] when its context has no deadline.
const DefaultStartTimeout = 3 * time.Minute

// Config configures a node. The zero value is ready to use.
type Config struct {
	// Name is the node's name (and its kubelet's --hostname-override).
	// Zero: "ksa-node-" and random hex digits.
	Name string
	// Images are imported besides [SandboxImage] and [ProbeImage], for
	// pods to run. Zero: none.
	Images []image.Image
	// APIServer is the URL the kubelet reaches the API server at, such as
	// a proxy's that stays put when the control plane's kube-apiserver
	// restarts on another port (controlplane's RestartAPIServer); it must
	// present the control plane's serving certificate. Zero: the control
	// plane's URL.
	APIServer string
	// Output, when not nil, receives containerd's and the kubelet's output
	// besides their log files; it must stay usable until [Node.Stop]
	// returns. Zero: log files only.
	Output io.Writer
}

// Node is a running containerd and kubelet, registered with a control
// plane. Its fields describe it; do not change them. Call [Node.Stop]
// when done.
type Node struct {
	// Name is the Node object's name.
	Name string
	// NodeIP is the address the kubelet records as the node's (a
	// non-loopback address of the machine; nothing is sent to it).
	NodeIP string
	// CgroupRoot is the kubelet's cgroup root, "/ksa-node-...": every pod's
	// cgroup is under it, in every cgroup hierarchy.
	CgroupRoot string
	// Files are the paths of everything the node runs with; Stop removes
	// them all.
	Files Files

	cp          *controlplane.ControlPlane
	bins        Binaries
	programs    map[string]string
	output      io.Writer
	apiServer   string
	kubeletPort int
	containerd  *proc.Process
	kubelet     *proc.Process
	criConn     *grpc.ClientConn
	cri         runtimeapi.RuntimeServiceClient
	// host is what the machine had before the node started, which Stop
	// puts back and Leftovers compares with.
	host hostState

	stopOnce sync.Once
	stopErr  error
}

// Files lists the paths of a [Node].
type Files struct {
	// Dir is the temporary directory that holds everything below.
	Dir string
	// Bin holds the node's programs, built from interop/node/cmd.
	Bin string
	// ContainerdConfig is containerd's configuration; ContainerdRoot and
	// ContainerdState its directories, ContainerdSocket its socket.
	ContainerdConfig, ContainerdRoot, ContainerdState, ContainerdSocket string
	// CNIBin and CNIConf are the CNI plugin and configuration directories.
	CNIBin, CNIConf string
	// KubeletRoot is the kubelet's --root-dir, KubeletCerts its --cert-dir.
	KubeletRoot, KubeletCerts string
	// KubeletConfig and Kubeconfig are the kubelet's configuration and
	// kubeconfig.
	KubeletConfig, Kubeconfig string
	// KubeletClientCert and KubeletClientKey are its client certificate
	// (system:node:NAME); KubeletServingCert and KubeletServingKey its
	// serving certificate; KubeletCA the control plane's CA.
	KubeletClientCert, KubeletClientKey, KubeletServingCert, KubeletServingKey, KubeletCA string
	// StaticPods is the kubelet's staticPodPath: a manifest written there
	// runs as a static pod.
	StaticPods string
	// PodLogs is the kubelet's podLogsDir, where containers' logs are.
	PodLogs string
	// VolumePlugins is the kubelet's volumePluginDir.
	VolumePlugins string
	// ContainerdLog and KubeletLog receive the processes' output.
	ContainerdLog, KubeletLog string
}

// Start starts a node on cp, which must run kube-apiserver [Version]:
// it builds the node's programs and images, starts containerd, imports
// the images, starts the kubelet, and returns once the node is Ready, or
// ctx is done ([DefaultStartTimeout] when ctx has no deadline). ctx bounds
// the start only. On any error everything started is stopped and removed.
//
// It returns an error matching [ErrBinaryMissing] before anything starts
// when a program is missing, and [ErrUnsupported] elsewhere than Linux.
func Start(ctx context.Context, cp *controlplane.ControlPlane, cfg Config) (*Node, error) {
	if proc.Supported() != nil {
		return nil, ErrUnsupported
	}
	if cfg.APIServer != "" {
		if u, err := url.Parse(cfg.APIServer); err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("%w: APIServer %q is not an https URL, such as https://127.0.0.1:6443", ErrInvalidConfig, cfg.APIServer)
		}
	}
	bins, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	if cp.Version() != Version {
		return nil, fmt.Errorf("%w: the control plane runs %s; a kubelet %s needs kube-apiserver %s", ErrInvalidConfig, cp.Version(), Version, Version)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	dir, err := os.MkdirTemp("", "ksa-node-")
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	n := &Node{Name: cfg.Name, cp: cp, bins: bins, output: cfg.Output, apiServer: cfg.APIServer}
	if n.apiServer == "" {
		n.apiServer = cp.URL
	}
	n.setFiles(dir)
	n.CgroupRoot = "/" + filepath.Base(dir)
	if n.Name == "" {
		suffix := make([]byte, 4)
		if _, err := rand.Read(suffix); err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
		n.Name = "ksa-node-" + hex.EncodeToString(suffix)
	}
	if n.output != nil {
		n.output = proc.NewLockedWriter(n.output)
	}
	started := false
	defer func() {
		if !started {
			_ = n.Stop()
		}
	}()
	if n.host, err = readHostState(); err != nil {
		return nil, err
	}
	if n.NodeIP, err = hostIP(); err != nil {
		return nil, err
	}
	if n.kubeletPort, err = freePort(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(n.Files.Bin, 0o700); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if n.programs, err = buildPrograms(ctx, n.Files.Bin); err != nil {
		return nil, err
	}
	images, err := nodeImages(n.programs)
	if err != nil {
		return nil, err
	}
	if err := n.startContainerd(ctx); err != nil {
		return nil, err
	}
	if err := n.importImages(ctx, append(images, cfg.Images...)); err != nil {
		return nil, err
	}
	if err := makeCgroupRoot(n.CgroupRoot); err != nil {
		return nil, err
	}
	if err := n.writeKubeletFiles(); err != nil {
		return nil, err
	}
	if err := n.startKubelet(ctx); err != nil {
		return nil, err
	}
	started = true
	return n, nil
}

// setFiles names every path under dir.
func (n *Node) setFiles(dir string) {
	p := func(elem ...string) string { return filepath.Join(append([]string{dir}, elem...)...) }
	n.Files = Files{
		Dir:                dir,
		Bin:                p("bin"),
		ContainerdConfig:   p("containerd.toml"),
		ContainerdRoot:     p("containerd", "root"),
		ContainerdState:    p("containerd", "state"),
		ContainerdSocket:   p("containerd.sock"),
		CNIBin:             p("cni", "bin"),
		CNIConf:            p("cni", "net.d"),
		KubeletRoot:        p("kubelet"),
		KubeletCerts:       p("kubelet-pki"),
		KubeletConfig:      p("kubelet.yaml"),
		Kubeconfig:         p("kubelet.kubeconfig"),
		KubeletClientCert:  p("kubelet-pki", "client.crt"),
		KubeletClientKey:   p("kubelet-pki", "client.key"),
		KubeletServingCert: p("kubelet-pki", "serving.crt"),
		KubeletServingKey:  p("kubelet-pki", "serving.key"),
		KubeletCA:          p("kubelet-pki", "ca.crt"),
		StaticPods:         p("manifests"),
		PodLogs:            p("pod-logs"),
		VolumePlugins:      p("volume-plugins"),
		ContainerdLog:      p("containerd.log"),
		KubeletLog:         p("kubelet.log"),
	}
}

// ControlPlane returns the control plane the node is registered with.
func (n *Node) ControlPlane() *controlplane.ControlPlane { return n.cp }

// LogTails returns the last lines of containerd's and the kubelet's logs,
// for a failing test to print. Call it before Stop, which removes them.
func (n *Node) LogTails(lines int) string {
	var s string
	for _, p := range []*proc.Process{n.containerd, n.kubelet} {
		if p != nil {
			s += p.LogTail(lines)
		}
	}
	return s
}

// PIDs returns the process IDs of containerd and the kubelet, omitting
// any not started.
func (n *Node) PIDs() []int {
	var pids []int
	for _, p := range []*proc.Process{n.containerd, n.kubelet} {
		if p != nil {
			pids = append(pids, p.PID())
		}
	}
	return pids
}

// waitFor polls check until it succeeds, p exits, or ctx is done.
func waitFor(ctx context.Context, p *proc.Process, name string, check func(context.Context) error) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("%w: %s exited: %v\n%s", ErrNotReady, name, p.Err(), p.LogTail(40))
		case <-ctx.Done():
			return fmt.Errorf("%w: %s: %v (last check: %v)\n%s", ErrNotReady, name, ctx.Err(), last, p.LogTail(40))
		case <-tick.C:
		}
	}
}

// freePort returns a TCP port free on loopback now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("node: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeFile writes data to path, readable only by its owner.
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nil
}

// copyFile copies src to dst with mode.
func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nil
}

// procSupported reports whether processes can be run here (Linux).
func procSupported() error { return proc.Supported() }

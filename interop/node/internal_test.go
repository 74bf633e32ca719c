package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/skipmark"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/interop/internal/cpmark"
)

func TestParseCRILog(t *testing.T) {
	for _, tt := range []struct{ name, log, want string }{
		{name: "lines", log: "2026-11-27T17:00:00.000000001Z stdout F one\n2026-11-27T17:00:00.000000002Z stderr F two\n", want: "one\ntwo\n"},
		{name: "partial lines joined", log: "T stdout P {\"path\":\nT stdout F \"x\"}\n", want: "{\"path\":\"x\"}\n"},
		{name: "empty line", log: "T stdout F \n", want: "\n"},
		{name: "no content field", log: "T stdout F\n", want: "\n"},
		{name: "spaces kept", log: "T stdout F a  b \n", want: "a  b \n"},
		{name: "junk skipped", log: "junk\n\nT stdout F ok\n", want: "ok\n"},
	} {
		assert.Equal(t, tt.want, parseCRILog([]byte(tt.log)), tt.name)
	}
}

func FuzzParseCRILog(f *testing.F) {
	f.Add([]byte("2026-11-27T17:00:00Z stdout F line\n"))
	f.Add([]byte("T stdout P part\nT stdout F end\n"))
	f.Add([]byte("\n\n x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := parseCRILog(b)
		if len(out) > 2*len(b)+1 {
			t.Fatalf("%d bytes of content from %d bytes of log", len(out), len(b))
		}
	})
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/plain`:             "/plain",
		`/with\040space`:     "/with space",
		`/tab\011and\134`:    "/tab\tand\\",
		`/short\04`:          `/short\04`,
		`/not\999octal`:      `/not\999octal`,
		`/trailing\`:         `/trailing\`,
		`\040\040`:           "  ",
		`/x\0401`:            "/x 1",
		`/high\777`:          `/high\777`,
		`/mixed\040a\012b`:   "/mixed a\nb",
		`/dir/kubernetes.io`: "/dir/kubernetes.io",
	} {
		assert.Equal(t, want, unescapeMount(in), in)
	}
}

func FuzzUnescapeMount(f *testing.F) {
	for _, s := range []string{`/a\040b`, `\`, `\0`, `\04`, `\777`, "/plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if out := unescapeMount(s); len(out) > len(s) {
			t.Fatalf("unescaping %q grew it to %q", s, out)
		}
	})
}

func testNode(t *testing.T) *Node {
	n := &Node{Name: "ksa-node-test", CgroupRoot: "/ksa-node-123", bins: Binaries{Runc: "/usr/sbin/runc", Shim: "/usr/bin/containerd-shim-runc-v2"}, kubeletPort: 10250}
	n.setFiles("/tmp/ksa-node-123")
	return n
}

// TestKubeletConfig: the settings these machines need (cgroup v1 with
// cgroupfs) and the harness relies on (its cgroup root, no eviction, no
// iptables, its own containerd, registration).
func TestKubeletConfig(t *testing.T) {
	b, err := testNode(t).kubeletConfig()
	require.NoError(t, err)
	y := string(b)
	for _, want := range []string{
		"apiVersion: kubelet.config.k8s.io/v1beta1",
		"kind: KubeletConfiguration",
		"cgroupDriver: cgroupfs",
		"failCgroupV1: false",
		"cgroupRoot: /ksa-node-123",
		"containerRuntimeEndpoint: unix:///tmp/ksa-node-123/containerd.sock",
		"evictionHard:\n  memory.available: 0%",
		"mergeDefaultEvictionSettings: false",
		"makeIPTablesUtilChains: false",
		"registerNode: true",
		"address: 127.0.0.1",
		"port: 10250",
		"staticPodPath: /tmp/ksa-node-123/manifests",
		"podLogsDir: /tmp/ksa-node-123/pod-logs",
		"mode: Webhook",
		"clientCAFile: /tmp/ksa-node-123/kubelet-pki/ca.crt",
	} {
		assert.Contains(t, y, want+"\n")
	}
}

// TestContainerdConfig: everything under the node's directory, and the
// settings these machines need.
func TestContainerdConfig(t *testing.T) {
	c := testNode(t).containerdConfig()
	for _, want := range []string{
		`root = "/tmp/ksa-node-123/containerd/root"`,
		`state = "/tmp/ksa-node-123/containerd/state"`,
		`address = "/tmp/ksa-node-123/containerd.sock"`,
		`path = "/tmp/ksa-node-123/containerd/root/opt"`,
		`sandbox_image = "ksa.local/pause:node"`,
		`restrict_oom_score_adj = true`,
		`netns_mounts_under_state_dir = true`,
		`SystemdCgroup = false`,
		`BinaryName = "/usr/sbin/runc"`,
		`Root = "/tmp/ksa-node-123/containerd/state/runc"`,
		`bin_dir = "/tmp/ksa-node-123/cni/bin"`,
		`conf_dir = "/tmp/ksa-node-123/cni/net.d"`,
	} {
		assert.Contains(t, c, want+"\n")
	}
	for _, line := range strings.Split(c, "\n") {
		if _, path, ok := strings.Cut(line, `= "/`); ok && !strings.HasPrefix(strings.TrimSpace(line), "BinaryName") {
			assert.True(t, strings.HasPrefix("/"+path, "/tmp/ksa-node-123/"), "outside the node's directory: %s", line)
		}
	}
}

func TestControlPlaneConfig(t *testing.T) {
	cfg := ControlPlaneConfig(controlplane.Config{Version: "v1.36.3", EnableAdmissionPlugins: []string{"AlwaysPullImages"}})
	assert.Equal(t, Version, cfg.Version)
	assert.Equal(t, []string{"AlwaysPullImages", "NodeRestriction"}, cfg.EnableAdmissionPlugins)
	assert.Equal(t, []string{"NodeRestriction"}, ControlPlaneConfig(ControlPlaneConfig(controlplane.Config{})).EnableAdmissionPlugins)
}

// TestFindBinariesMissing: variables that name nothing make every program
// missing, each error naming where it was looked for and the install
// script; the skip line names them all.
func TestFindBinariesMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvContainerd, filepath.Join(dir, "containerd"))
	t.Setenv(EnvRunc, filepath.Join(dir, "runc"))
	t.Setenv(EnvKubelet, filepath.Join(dir, "kubelet"))
	t.Setenv("PATH", dir)
	_, err := FindBinaries()
	require.ErrorIs(t, err, ErrBinaryMissing)
	var names []string
	for _, m := range missing(err) {
		names = append(names, m.Binary())
		assert.Equal(t, InstallScript, m.Install)
		assert.NotEmpty(t, m.Looked)
	}
	assert.Equal(t, []string{"containerd", "ctr", "containerd-shim-runc-v2", "runc", "kubelet v1.37.2"}, names)
	assert.Contains(t, err.Error(), "$"+EnvKubelet+"="+filepath.Join(dir, "kubelet"))

	skip := skipmark.Skip{Subject: cpmark.NodeSubject, Missing: names, Install: InstallScript}
	got, ok := skipmark.Parse("    node_test.go:1: " + skip.String())
	require.True(t, ok)
	assert.Equal(t, skip, got)
}

// TestKubeletOfAnotherRelease: a kubelet that reports another release is
// not taken, and the error says what was found.
func TestKubeletOfAnotherRelease(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kubelet")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho Kubernetes v1.36.3\n"), 0o755))
	t.Setenv(EnvKubelet, p)
	_, err := lookKubelet()
	var m *BinaryMissingError
	require.True(t, errors.As(err, &m))
	assert.Equal(t, []string{"$" + EnvKubelet + "=" + p + " (v1.36.3)"}, m.Looked)
}

// TestStartAPIServerInvalid: a Config.APIServer that is no https URL is
// refused before anything starts.
func TestStartAPIServerInvalid(t *testing.T) {
	if procSupported() != nil {
		t.Skip("Linux only")
	}
	for _, tt := range []struct{ name, url string }{
		{name: "http", url: "http://127.0.0.1:6443"},
		{name: "no host", url: "https://"},
		{name: "not a URL", url: "127.0.0.1:6443"},
		{name: "bad escape", url: "https://%zz"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(t.Context(), nil, Config{APIServer: tt.url})
			assert.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

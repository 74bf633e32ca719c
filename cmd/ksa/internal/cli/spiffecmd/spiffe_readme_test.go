package spiffecmd

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// readmePod is the part of README.md's SPIFFE pod spec the test follows.
type readmePod struct {
	InitContainers, Containers []readmeContainer
	Volumes                    []struct {
		Name      string
		EmptyDir  *struct{} `json:"emptyDir"`
		Projected *struct {
			Sources []struct {
				PodCertificate *struct {
					CredentialBundlePath string `json:"credentialBundlePath"`
				} `json:"podCertificate"`
				ClusterTrustBundle *struct{ Path string } `json:"clusterTrustBundle"`
			}
		}
	}
}

type readmeContainer struct {
	Name string
	Args []string
	Env  []struct{ Name, Value string }
	// VolumeMounts are the container's mounts.
	VolumeMounts []struct{ Name, MountPath string } `json:"volumeMounts"`
}

// hostPath maps a path of the container to the directory of the test
// standing for the volume mounted there ("" when no volume holds it).
func (c readmeContainer) hostPath(volumes map[string]string, p string) string {
	best, host := "", ""
	for _, m := range c.VolumeMounts {
		if (p == m.MountPath || strings.HasPrefix(p, m.MountPath+"/")) && len(m.MountPath) > len(best) {
			best, host = m.MountPath, volumes[m.Name]+strings.TrimPrefix(p, m.MountPath)
		}
	}
	return host
}

func (c readmeContainer) env(name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// readmeSpiffePod returns the YAML block of README.md's "Pod certificates
// for SPIFFE software".
func readmeSpiffePod(t *testing.T) readmePod {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Pod certificates for SPIFFE software\n")
	require.True(t, ok, "README.md has the section")
	_, block, ok := strings.Cut(section, "```yaml\n")
	require.True(t, ok, "the section has a YAML block")
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	var pod readmePod
	require.NoError(t, yaml.Unmarshal([]byte(block), &pod), "the pod spec parses")
	return pod
}

// TestSpiffeReadmePod runs the sidecar of README.md's pod spec as the
// kubelet would: its args, with each path inside a volume mapped to a
// directory standing for that volume (the emptyDir fresh and empty, the
// projected volume holding the pod certificate and trust bundle at the
// paths the spec names), and checks that it serves the identity on the
// socket and writes the credential folder the workload container is told
// of (SPIFFE_ENDPOINT_SOCKET, SPIFFE_CREDENTIAL_FOLDER on the same
// volume).
func TestSpiffeReadmePod(t *testing.T) {
	runSpiffePod(t, readmeSpiffePod(t), "README.md")
}

// TestSpiffeSnippetPod runs the sidecar of deploy/snippets/spiffe-sidecar.yaml,
// the pod users paste from, as TestSpiffeReadmePod runs README.md's.
func TestSpiffeSnippetPod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "deploy", "snippets", "spiffe-sidecar.yaml"))
	require.NoError(t, err)
	var pod struct {
		Kind string
		Spec readmePod
	}
	require.NoError(t, yaml.Unmarshal(b, &pod), "the snippet parses")
	require.Equal(t, "Pod", pod.Kind)
	runSpiffePod(t, pod.Spec, "deploy/snippets/spiffe-sidecar.yaml")
}

// runSpiffePod runs the sidecar of pod, from the file named what.
func runSpiffePod(t *testing.T, pod readmePod, what string) {
	t.Helper()
	require.Len(t, pod.InitContainers, 1)
	require.Len(t, pod.Containers, 1)
	sidecar, main := pod.InitContainers[0], pod.Containers[0]
	require.GreaterOrEqual(t, len(sidecar.Args), 2)
	require.Equal(t, []string{"spiffe", "serve"}, sidecar.Args[:2])

	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	bundle, err := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
	require.NoError(t, err)
	root := t.TempDir()
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		dir := filepath.Join(root, v.Name)
		require.NoError(t, os.Mkdir(dir, 0o777))
		volumes[v.Name] = dir
		switch {
		case v.EmptyDir != nil: // fresh and empty
		case v.Projected != nil:
			files := map[string][]byte{}
			for _, s := range v.Projected.Sources {
				if s.PodCertificate != nil {
					files[s.PodCertificate.CredentialBundlePath] = bundle
				}
				if s.ClusterTrustBundle != nil {
					files[s.ClusterTrustBundle.Path] = ca.TrustBundle()
				}
			}
			mount, err := podcerttest.NewMount(dir)
			require.NoError(t, err)
			require.NoError(t, mount.Write(files))
		default:
			t.Fatalf("volume %s: a kind the test does not know", v.Name)
		}
	}

	// The sidecar's args, each path in a volume mapped to the test's.
	var args []string
	var socket, folder string
	for i, arg := range sidecar.Args {
		prev := ""
		if i > 0 {
			prev = sidecar.Args[i-1]
		}
		switch {
		case prev == "--ops-addr":
			arg = "127.0.0.1:0" // the README's port may be taken here
		case prev == "--socket":
			socket = arg
			path, ok := strings.CutPrefix(arg, "unix://")
			require.True(t, ok, "--socket %s", arg)
			arg = "unix://" + sidecar.hostPath(volumes, path)
		case prev == "--credential-folder":
			folder = arg
			arg = sidecar.hostPath(volumes, arg)
		case prev == "--credential-bundle":
			arg = sidecar.hostPath(volumes, arg)
		case prev == "--trust-bundle":
			td, path, ok := strings.Cut(arg, "=")
			require.True(t, ok, "--trust-bundle %s", arg)
			arg = td + "=" + sidecar.hostPath(volumes, path)
		}
		require.NotEqual(t, "", arg, "%s %s: not in a volume of the sidecar", prev, sidecar.Args[i])
		args = append(args, arg)
	}
	require.NotEmpty(t, socket, "the sidecar names its socket")
	require.NotEmpty(t, folder, "the sidecar names its credential folder")
	assert.Equal(t, socket, main.env(workloadapi.EndpointSocketEnv), "the workload is told the sidecar's socket")
	assert.Equal(t, folder, main.env(workloadapi.CredentialFolderEnv), "the workload is told the sidecar's folder")
	socketPath := sidecar.hostPath(volumes, strings.TrimPrefix(socket, "unix://"))
	assert.Equal(t, socketPath, main.hostPath(volumes, strings.TrimPrefix(socket, "unix://")), "the workload mounts the socket's volume")
	folderPath := sidecar.hostPath(volumes, folder)
	assert.Equal(t, folderPath, main.hostPath(volumes, folder), "the workload mounts the folder's volume")

	logs, logw := io.Pipe()
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: logw}
	cmd := base.NewRoot(a, "", "", New(a))
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		logw.Close()
	}()
	var log strings.Builder
	lines := bufio.NewScanner(logs)
	for lines.Scan() && !strings.Contains(lines.Text(), "msg=listening") {
		log.WriteString(lines.Text() + "\n")
	}
	go io.Copy(io.Discard, logs) //nolint:errcheck // the rest of the log
	select {
	case err := <-done:
		require.NoError(t, err, "the sidecar of %s exits: %s", what, log.String())
		t.Fatalf("the sidecar of %s stopped: %s", what, log.String())
	default:
	}

	conn, err := grpc.NewClient("unix://"+socketPath, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := workload.NewSpiffeWorkloadAPIClient(conn).FetchX509SVID(
		metadata.AppendToOutgoingContext(ctx, workloadapi.SecurityHeader, "true"), &workload.X509SVIDRequest{}, grpc.WaitForReady(true))
	require.NoError(t, err)
	resp, err := stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", resp.Svids[0].SpiffeId)
	for _, name := range []string{workloadapi.CredentialFileName, "cluster.local" + workloadapi.TrustBundleFileSuffix} {
		_, err := os.Stat(filepath.Join(folderPath, name))
		assert.NoError(t, err, "the credential folder holds %s", name)
	}
	cancel()
	require.NoError(t, <-done)
}

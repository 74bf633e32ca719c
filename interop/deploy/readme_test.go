package deploy_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// installBlock returns the shell block of README.md between
// "<!-- install:NAME -->" and "<!-- /install -->".
func installBlock(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "<!-- install:"+name+" -->\n")
	require.True(t, ok, "README.md has no line <!-- install:%s -->", name)
	section, _, ok := strings.Cut(rest, "<!-- /install -->")
	require.True(t, ok, "README.md's install:%s has no end marker", name)
	_, block, ok := strings.Cut(section, "```sh\n")
	require.True(t, ok, "README.md's install:%s has no sh block", name)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	return block
}

// buildTool builds the command of package pkg (a module of interop's
// go.mod) into dir.
func buildTool(t *testing.T, dir, pkg string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-o", dir+string(os.PathSeparator), pkg)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building %s: %s", pkg, out)
}

// TestReadmeInstall runs README.md's install commands as written, each
// block as one bash script in a directory holding this checkout's deploy/
// and a CA (ca.crt, ca.key), with helm and kubectl built from their Go
// modules (Helm v3 and Kubernetes v1.37.2, as interop's go.mod pins them)
// first on PATH and KUBECONFIG naming a fresh control plane of each
// release: every command succeeds with no warning, and the signer's
// Deployment and its CA's Secret are stored in ksa-system. The chart's
// notes name the same Secret command as README.md.
func TestReadmeInstall(t *testing.T) {
	bin := t.TempDir()
	built := false
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		if _, _, err := controlplane.Binaries(version); err != nil {
			controlplane.StartForTest(t, controlplane.Config{Version: version})
		}
		if !built {
			buildTool(t, bin, "helm.sh/helm/v3/cmd/helm")
			buildTool(t, bin, "k8s.io/kubernetes/cmd/kubectl")
			built = true
		}
		for _, name := range []string{"helm", "kustomize"} {
			t.Run(name, func(t *testing.T) {
				block := installBlock(t, name)
				cp := controlplane.StartForTest(t, planeConfig(version))
				work := t.TempDir()
				deployDir, err := filepath.Abs(filepath.Join(root, "deploy"))
				require.NoError(t, err)
				require.NoError(t, os.Symlink(deployDir, filepath.Join(work, "deploy")))
				writeCA(t, work)
				kubeconfig := writeKubeconfig(t, cp, work)

				cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
					"HELM_CACHE_HOME="+filepath.Join(work, ".helm", "cache"), "HELM_CONFIG_HOME="+filepath.Join(work, ".helm", "config"),
					"HELM_DATA_HOME="+filepath.Join(work, ".helm", "data"), "HOME="+work)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				require.NoError(t, cmd.Run(), "README.md's install:%s\n%s\nstdout:\n%s\nstderr:\n%s", name, block, stdout.String(), stderr.String())
				assert.NotContains(t, strings.ToLower(stderr.String()), "warning", "stderr:\n%s", stderr.String())
				if name == "helm" {
					assert.Contains(t, stdout.String(), "kubectl -n ksa-system create secret tls ksa-podcert-ca --cert ca.crt --key ca.key",
						"the chart's notes name README.md's command")
				}

				cs := cp.Clientset()
				d, err := cs.AppsV1().Deployments("ksa-system").Get(t.Context(), "ksa-podcert", metav1.GetOptions{})
				require.NoError(t, err)
				assert.Equal(t, int32(2), *d.Spec.Replicas)
				_, err = cs.CoreV1().Secrets("ksa-system").Get(t.Context(), "ksa-podcert-ca", metav1.GetOptions{})
				require.NoError(t, err)
				ns, err := cs.CoreV1().Namespaces().Get(t.Context(), "ksa-system", metav1.GetOptions{})
				require.NoError(t, err)
				assert.Equal(t, "restricted", ns.Labels["pod-security.kubernetes.io/enforce"])
			})
		}
	})
}

// writeCA writes a CA's certificate and key, ca.crt and ca.key, into dir.
func writeCA(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ksa pod CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
}

// writeKubeconfig writes the admin's kubeconfig of cp into dir.
func writeKubeconfig(t *testing.T, cp *controlplane.ControlPlane, dir string) string {
	t.Helper()
	rc := cp.RESTConfig()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	cfg.CurrentContext = "admin"
	path := filepath.Join(dir, "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

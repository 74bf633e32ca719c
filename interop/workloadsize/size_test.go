// Package workloadsize builds a pod that does mutual TLS with its pod
// certificate (podcert's Source and Peers) and holds it to what the core
// promises a workload: no Kubernetes code linked in.
package workloadsize

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkloadLinksNoKubernetes: the mTLS workload imports no k8s.io
// package and its binary carries no module but ksa. Run with -v for the
// size and the modules.
func TestWorkloadLinksNoKubernetes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "./mtlsw").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var k8s []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") {
			k8s = append(k8s, pkg)
		}
	}
	assert.Empty(t, k8s, "the workload imports Kubernetes packages")

	bin := filepath.Join(t.TempDir(), "mtlsw")
	build := exec.Command(goTool, "build", "-trimpath", "-o", bin, "./mtlsw")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := build.CombinedOutput()
	require.NoError(t, err, "%s", b)
	fi, err := os.Stat(bin)
	require.NoError(t, err)
	b, err = exec.Command(goTool, "version", "-m", bin).CombinedOutput()
	require.NoError(t, err, "%s", b)
	var modules []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" {
			modules = append(modules, f[1])
		}
	}
	t.Logf("mtlsw: %d bytes, modules %v", fi.Size(), modules)
	assert.Equal(t, []string{"github.com/ksa-go/ksa"}, modules, "the workload links modules besides ksa")
}

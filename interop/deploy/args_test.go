package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa/interop/deploy"
)

// TestArgsParse runs the ksa command of this checkout with the args of
// every container the deploy files run (each Deployment of each set of
// values, the SPIFFE snippet's sidecar, the signer's static pod) and
// --help: the command parses them all, flag names and values (durations,
// numbers) alike, before it prints its help, so an exit of 0 means it
// takes them.
func TestArgsParse(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "ksa")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = filepath.Join(root, "cmd", "ksa")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building cmd/ksa: %s", out)

	containers := map[string][]string{}
	for _, set := range valueSets() {
		manifest, err := deploy.Render(chartDir, deploy.Release, deploy.Namespace, set.values)
		require.NoError(t, err)
		for _, obj := range decodeAll(t, manifest) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				for _, c := range d.Spec.Template.Spec.Containers {
					containers[set.name+": "+d.Name+"/"+c.Name] = c.Args
				}
			}
		}
	}
	for _, file := range []string{"snippets/spiffe-sidecar.yaml", "signer/ksa-signer.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "deploy", file))
		require.NoError(t, err)
		var pod corev1.Pod
		require.NoError(t, yaml.UnmarshalStrict(b, &pod))
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			if strings.HasPrefix(c.Image, "ghcr.io/ksa-go/ksa") {
				containers[file+": "+c.Name] = c.Args
			}
		}
	}
	require.Len(t, containers, 6)
	for name, args := range containers {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, append(args, "--help")...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "ksa %s --help:\n%s", strings.Join(args, " "), out)
		})
	}
}

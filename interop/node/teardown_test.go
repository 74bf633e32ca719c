package node_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa/interop/node"
)

// TestTeardownLeavesNothing: a node of its own (beside the shared one, on
// the same control plane) runs a pod with a projected volume, which gives
// it mounts (the volume's tmpfs, the container's root file system, the
// network namespace), cgroups and a shim; once Stop returns, none of it
// is left on the machine.
func TestTeardownLeavesNothing(t *testing.T) {
	cp := cluster.Get(t).ControlPlane()
	n := node.StartForTest(t, cp, node.Config{})
	ns := n.Namespace(t)

	pod := node.ProbePod("teardown", "/var/run/ksa/token")
	pod.Spec.Volumes = []corev1.Volume{{
		Name: "token",
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: tokenAudience, Path: "token",
			}}},
		}},
	}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/ksa"}}
	_, err := n.RunPod(t.Context(), ns, pod)
	require.NoError(t, err)

	// While the pod runs the checks find something: they are not vacuous.
	mounts := mountsUnder(t, n.Files.Dir)
	assert.True(t, containsAny(mounts, "kubernetes.io~projected"), "the projected volume's mount: %v", mounts)
	assert.True(t, containsAny(mounts, "/netns/"), "the pod's network namespace: %v", mounts)
	assert.True(t, containsAny(mounts, "/rootfs"), "the container's root file system: %v", mounts)
	kubepods, err := filepath.Glob(filepath.Join("/sys/fs/cgroup/*", n.CgroupRoot, "kubepods"))
	require.NoError(t, err)
	assert.NotEmpty(t, kubepods, "the pods' cgroups under the node's root")
	assert.NotEmpty(t, n.Leftovers(), "a running node is on the machine")

	require.NoError(t, n.Stop())
	assert.Empty(t, n.Leftovers())
	assert.Empty(t, mountsUnder(t, n.Files.Dir))
	for _, pid := range n.PIDs() {
		_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
		assert.True(t, os.IsNotExist(err), "process %d is gone", pid)
	}
}

// mountsUnder returns the mount points under dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}
	return points
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

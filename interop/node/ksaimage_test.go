package node_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa/interop/ksaimage"
)

// TestKsaImage: the ksa command's image (package interop/ksaimage, the
// archive `go run ./ci/image` writes) imported into the node's
// containerd with `ctr -n k8s.io images import` keeps its digest, and
// runs `ksa version` in a pod as a non-root user, which prints the commit
// the image was built from.
func TestKsaImage(t *testing.T) {
	n := cluster.Get(t)
	ns := n.Namespace(t)

	res, err := ksaimage.Build(t.Context(), ksaimage.Config{})
	require.NoError(t, err)
	archive := filepath.Join(t.TempDir(), "ksa.oci.tar")
	f, err := os.Create(archive)
	require.NoError(t, err)
	require.NoError(t, res.Image.WriteOCI(f))
	require.NoError(t, f.Close())
	require.NoError(t, n.ImportArchive(t.Context(), archive))
	digest, err := n.ImageDigest(t.Context(), res.Image.Name)
	require.NoError(t, err)
	assert.Equal(t, res.Digest, digest)

	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:  "ksa",
			Image: res.Image.Name,
			Args:  []string{"version", "-o", "json"},
			SecurityContext: &corev1.SecurityContext{
				RunAsNonRoot:             new(true),
				AllowPrivilegeEscalation: new(false),
				ReadOnlyRootFilesystem:   new(true),
			},
		}},
		AutomountServiceAccountToken: new(false),
	}}
	pod.Name = "ksa-version"
	done, err := n.RunPodToCompletion(t.Context(), ns, pod)
	require.NoError(t, err)
	logs, err := n.Logs(done, "ksa")
	require.NoError(t, err)
	var v struct {
		Module   string `json:"module"`
		Revision string `json:"vcs_revision"`
		Modified bool   `json:"vcs_modified"`
	}
	require.NoError(t, json.Unmarshal([]byte(logs), &v), "ksa version printed %q", logs)
	assert.Equal(t, "github.com/ksa-go/ksa/cmd/ksa", v.Module)
	assert.Equal(t, res.Revision, v.Revision)
	assert.False(t, v.Modified, "built from a clean clone of the commit")
}

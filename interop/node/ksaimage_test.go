package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa/interop/ksaimage"
	"github.com/ksa-go/ksa/interop/node"
)

// TestKsaImage: the ksa command's image (package interop/ksaimage, the
// archive `go run ./ci/image` writes) imported into the node's
// containerd with `ctr -n k8s.io images import` keeps its digest, and
// runs `ksa version` in a pod as a non-root user, which prints the commit
// the image was built from.
func TestKsaImage(t *testing.T) {
	n := cluster.Get(t)
	ns := n.Namespace(t)

	res := importKsaImage(t, n)
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

// ksaImage is the ksa image of this checkout's HEAD, built once for the
// package's tests, and its archive (what `go run ./ci/image` writes).
var ksaImage struct {
	once    sync.Once
	res     ksaimage.Result
	archive []byte
	err     error
}

// importKsaImage imports the ksa image's archive into n, as
// `ctr -n k8s.io images import` does, and returns the image.
func importKsaImage(t *testing.T, n *node.Node) ksaimage.Result {
	t.Helper()
	ksaImage.once.Do(func() {
		// Not t.Context(): the image outlives t.
		ksaImage.res, ksaImage.err = ksaimage.Build(context.Background(), ksaimage.Config{})
		if ksaImage.err == nil {
			var buf bytes.Buffer
			ksaImage.err = ksaImage.res.Image.WriteOCI(&buf)
			ksaImage.archive = buf.Bytes()
		}
	})
	require.NoError(t, ksaImage.err)
	archive := filepath.Join(t.TempDir(), "ksa.oci.tar")
	require.NoError(t, os.WriteFile(archive, ksaImage.archive, 0o600))
	require.NoError(t, n.ImportArchive(t.Context(), archive))
	return ksaImage.res
}

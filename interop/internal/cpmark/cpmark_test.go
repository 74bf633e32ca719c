package cpmark

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUsing(t *testing.T) {
	for line, want := range map[string]string{
		Using("v1.37.2"): "v1.37.2",
		"    controlplane_test.go:41: controlplane: using kube-apiserver v1.36.3": "v1.36.3",
		"controlplane: using kube-apiserver v1.36.3 (bin/kube-apiserver-1.36)":    "v1.36.3",
	} {
		got, ok := ParseUsing(line)
		assert.True(t, ok, line)
		assert.Equal(t, want, got, line)
	}
	for _, line := range []string{"", "controlplane: using kube-apiserver ", "using kube-apiserver v1.37.2"} {
		_, ok := ParseUsing(line)
		assert.False(t, ok, line)
	}
}

func TestSkip(t *testing.T) {
	for _, tt := range []struct {
		skip Skip
		line string
	}{
		{
			skip: Skip{Missing: []string{"etcd", "kube-apiserver v1.37.2"}, Install: ".ci/install-controlplane.sh"},
			line: "controlplane: skipped (etcd, kube-apiserver v1.37.2 not found); install them with .ci/install-controlplane.sh",
		},
		{
			skip: Skip{Missing: []string{"kube-apiserver v1.36.3"}, Install: ".ci/install-controlplane.sh"},
			line: "controlplane: skipped (kube-apiserver v1.36.3 not found); install it with .ci/install-controlplane.sh",
		},
		{
			skip: Skip{Reason: "unsupported operating system"},
			line: "controlplane: skipped (unsupported operating system)",
		},
	} {
		t.Run(tt.line, func(t *testing.T) {
			assert.Equal(t, tt.line, tt.skip.String())
			got, ok := ParseSkip("    lifecycle_test.go:12: " + tt.line)
			assert.True(t, ok)
			assert.Equal(t, tt.skip, got)
		})
	}
	for _, line := range []string{"", "controlplane: skipped (etcd not found", "skipped (etcd not found)", "SoftHSM2: skipped (softhsm2-util not found); install it with apt-get install -y softhsm2"} {
		_, ok := ParseSkip(line)
		assert.False(t, ok, line)
	}
}

func TestNodeUsing(t *testing.T) {
	for line, want := range map[string]string{
		NodeUsing("v1.37.2"): "v1.37.2",
		"    node_test.go:41: node: using kubelet v1.37.2": "v1.37.2",
	} {
		got, ok := ParseNodeUsing(line)
		assert.True(t, ok, line)
		assert.Equal(t, want, got, line)
	}
	for _, line := range []string{"", "node: using kubelet ", Using("v1.37.2")} {
		_, ok := ParseNodeUsing(line)
		assert.False(t, ok, line)
	}
	_, ok := ParseUsing(NodeUsing("v1.37.2"))
	assert.False(t, ok, "a node line is no control-plane line")
}

package credspec_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/credspec"
)

func TestLevel(t *testing.T) {
	tests := []struct {
		level    credspec.Level
		wantStr  string
		wantPath string
	}{
		{credspec.Level{Kind: credspec.LevelPod, Name: "p", Index: -1}, `pod "p"`, "/spec/securityContext/windowsOptions/gmsaCredentialSpec"},
		{credspec.Level{Kind: credspec.LevelContainer, Name: "c", Index: 2}, `container "c"`, "/spec/containers/2/securityContext/windowsOptions/gmsaCredentialSpec"},
		{credspec.Level{Kind: credspec.LevelInitContainer, Name: "i", Index: 0}, `init container "i"`, "/spec/initContainers/0/securityContext/windowsOptions/gmsaCredentialSpec"},
		{credspec.Level{Kind: credspec.LevelEphemeralContainer, Name: "e", Index: 1}, `ephemeral container "e"`, "/spec/ephemeralContainers/1/securityContext/windowsOptions/gmsaCredentialSpec"},
	}
	for _, tt := range tests {
		t.Run(tt.wantStr, func(t *testing.T) {
			assert.Equal(t, tt.wantStr, tt.level.String())
			assert.Equal(t, tt.wantPath, tt.level.ContentsPath())
		})
	}
	assert.Equal(t, "LevelKind(9)", credspec.LevelKind(9).String())
	for o, s := range map[credspec.Origin]string{credspec.OriginNone: "none", credspec.OriginPod: "pod", credspec.OriginContainer: "container",
		credspec.OriginPodAnnotation: "pod annotation", credspec.OriginContainerAnnotation: "container annotation"} {
		assert.Equal(t, s, o.String())
	}
}

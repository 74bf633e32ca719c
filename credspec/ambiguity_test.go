package credspec_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/credspec"
)

// TestAmbiguousInlineSpecDenied: a pod's inlined credential spec that
// parsers may read differently is denied with 422, even where the
// last-wins comparison would find it equal to the object's contents (the
// container runtime may read the first duplicate).
func TestAmbiguousInlineSpecDenied(t *testing.T) {
	stored := `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","MachineAccountName":"webapp01"}}`
	src, err := credspec.NewStaticSourceJSON(map[string]string{"webapp01": stored})
	require.NoError(t, err)
	allowAll := credspec.AuthorizerFunc(func(context.Context, credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{Allowed: true}, nil
	})
	v, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: allowAll})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		inline  string
		wantErr error
	}{
		{name: "same contents", inline: stored},
		{name: "same contents, reordered", inline: `{"DomainJoinConfig":{"MachineAccountName":"webapp01","DnsName":"contoso.com"},"CmsPlugins":["ActiveDirectory"]}`},
		{name: "duplicate at the top, last wins equal",
			inline:  `{"CmsPlugins":["Other"],"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "duplicate nested, last wins equal",
			inline:  `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"evil.example","DnsName":"contoso.com","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "duplicate by escape", inline: `{"CmsPlugins":["ActiveDirectory"],"\u0043msPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "lone surrogate", inline: `{"CmsPlugins":["ActiveDirectory"],"DomainJoinConfig":{"DnsName":"contoso.com\ud800","MachineAccountName":"webapp01"}}`,
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "invalid UTF-8", inline: "{\"CmsPlugins\":[\"ActiveDirectory\"],\"DomainJoinConfig\":{\"DnsName\":\"contoso.com\xff\",\"MachineAccountName\":\"webapp01\"}}",
			wantErr: credspec.ErrAmbiguousSpec},
		{name: "not JSON keeps windows-gmsa's answer", inline: `not json`, wantErr: credspec.ErrContentsMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "web"},
				Spec: corev1.PodSpec{ServiceAccountName: "frontend", SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
					GMSACredentialSpecName: new("webapp01"), GMSACredentialSpec: new(tc.inline),
				}}},
			}
			err := v.ValidateCreate(t.Context(), "web", pod, nil)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			var d *credspec.Denial
			require.True(t, errors.As(err, &d))
			assert.Equal(t, int32(http.StatusUnprocessableEntity), d.Code)
			if tc.wantErr == credspec.ErrAmbiguousSpec {
				require.ErrorIs(t, d.Err, credspec.ErrAmbiguousSpec, "the denial wraps the ambiguity check's error")
			}
		})
	}
}

package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/tokens"
)

// TestTokenInspectWebhook: ksa token inspect says what a webhook-bound
// token is for, in text (escaped, whatever the configuration's name holds)
// and in JSON.
func TestTokenInspectWebhook(t *testing.T) {
	data, err := os.ReadFile("../../testdata/keys/ec.key")
	require.NoError(t, err)
	key, err := keystore.ParseSigningKeyPEM(data)
	require.NoError(t, err)
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://k", Signer: key})
	require.NoError(t, err)
	dir := t.TempDir()
	tok, err := m.Mint(t.Context(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "sa-uid"},
		Audiences:      []string{"https://gmsa-webhook.ksa-system.svc:443/validate"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa-webhook", UID: "config-uid"},
		Attestations:   map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {"windows.k8s.io"}},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w.jwt"), []byte(tok.Raw), 0o600))
	code, out := runIn(t, dir, "token", "inspect", "w.jwt")
	require.Equal(t, base.ExitOK, code, out)
	assert.Contains(t, out, `webhook:    for calling the admission webhooks of ValidatingWebhookConfiguration "gmsa-webhook" (uid "config-uid"), whose URL is the audience, with AdmissionReviews about resources of API group "windows.k8s.io" (Kubernetes 1.37, alpha)`+"\n")
	code, out = runIn(t, dir, "token", "inspect", "w.jwt", "-o", "json")
	require.Equal(t, base.ExitOK, code, out)
	assert.Contains(t, out, `"webhook": "for calling the admission webhooks of ValidatingWebhookConfiguration \"gmsa-webhook\"`)

	for name, payload := range hostilePayloads() {
		t.Run(name, func(t *testing.T) {
			raw, err := m.Sign(t.Context(), &tokens.Claims{Issuer: "https://k", Kubernetes: &tokens.KubernetesClaims{
				Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"},
				MutatingWebhookConfiguration: &ksa.ObjectRef{Name: payload, UID: payload},
				Attestations:                 map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {payload}},
			}})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "h.jwt"), []byte(raw), 0o600))
			_, out := runIn(t, dir, "token", "inspect", "h.jwt")
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)
		})
	}
}

package credspeccmd

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/tokens"
)

// TestWebhookServeRequireToken runs ksa webhook serve with
// --require-apiserver-token: a review reaches the webhook only with a token
// of --token-issuer, bound to --webhook-configuration, for the path's URL
// under --webhook-url and issued to --token-caller; and with
// --accept-apiserver-token, which lets a review without a token through
// and checks the others alike.
func TestWebhookServeRequireToken(t *testing.T) {
	const issuer = "https://kubernetes.default.svc.cluster.local"
	const webhookURL = "https://gmsa-webhook.ksa-system.svc:443"
	pub, err := filepath.Abs("../../../testdata/keys/ec.pub")
	require.NoError(t, err)
	serve := func(mode string) (*http.Client, string, func()) {
		return serveWebhook(t, mode, "--token-issuer", issuer, "--token-key-file", pub,
			"--webhook-url", webhookURL, "--webhook-configuration", "gmsa-webhook", "--token-caller", "system:serviceaccount:kube-system:webhook-auth")
	}
	requiring, requireURL, stopRequire := serve("--require-apiserver-token")
	defer stopRequire()
	accepting, acceptURL, stopAccept := serve("--accept-apiserver-token")
	defer stopAccept()

	data, err := os.ReadFile("../../../testdata/keys/ec.key")
	require.NoError(t, err)
	key, err := keystore.ParseSigningKeyPEM(data)
	require.NoError(t, err)
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key})
	require.NoError(t, err)
	token := func(kind tokens.BoundKind, path string, sa string) string {
		tok, err := m.Mint(t.Context(), tokens.Request{
			ServiceAccount: ksa.ServiceAccount{Namespace: "kube-system", Name: sa, UID: "sa-uid"},
			Audiences:      []string{webhookURL + path},
			BoundObject:    &tokens.BoundObject{Kind: kind, Name: "gmsa-webhook", UID: "config-uid"},
			Attestations:   map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {tokens.AllAPIGroups}},
		})
		require.NoError(t, err)
		return "Bearer " + tok.Raw
	}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
	"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},
	"operation":"CREATE","namespace":"web","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller"},
	"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"frontend-0","namespace":"web"},
	"spec":{"serviceAccountName":"frontend","securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"credspec-0"}},
	"containers":[{"name":"app","image":"app"}]}}}}`
	validating, mutating := tokens.BoundValidatingWebhookConfiguration, tokens.BoundMutatingWebhookConfiguration
	tests := []struct {
		name string
		path string
		auth string
		// wantRequire and wantAccept are the answers' status codes under
		// --require-apiserver-token and --accept-apiserver-token.
		wantRequire, wantAccept int
	}{
		{name: "mutate", path: "/mutate", auth: token(mutating, "/mutate", "webhook-auth"), wantRequire: 200, wantAccept: 200},
		{name: "validate", path: "/validate", auth: token(validating, "/validate", "webhook-auth"), wantRequire: 200, wantAccept: 200},
		{name: "no token", path: "/validate", wantRequire: 401, wantAccept: 200},
		{name: "the other path's token", path: "/validate", auth: token(validating, "/mutate", "webhook-auth"), wantRequire: 401, wantAccept: 401},
		{name: "the other configuration kind", path: "/mutate", auth: token(validating, "/mutate", "webhook-auth"), wantRequire: 403, wantAccept: 403},
		{name: "another caller", path: "/mutate", auth: token(mutating, "/mutate", "intruder"), wantRequire: 403, wantAccept: 403},
	}
	post := func(t *testing.T, client *http.Client, url, auth string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(review))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantRequire, post(t, requiring, requireURL+tt.path, tt.auth), "--require-apiserver-token")
			assert.Equal(t, tt.wantAccept, post(t, accepting, acceptURL+tt.path, tt.auth), "--accept-apiserver-token")
		})
	}
}

// TestWebhookServeRequireTokenFlags: --require-apiserver-token without what
// it needs, or with a caller that is no service account, is a usage error
// naming the flags.
func TestWebhookServeRequireTokenFlags(t *testing.T) {
	specs, err := filepath.Abs("../../../../../credspec/testdata/credspec-0.yml")
	require.NoError(t, err)
	args0 := []string{"webhook", "serve", "--addr", "127.0.0.1:0", "--credspecs", specs, "--allow", "system:serviceaccount:web:frontend=credspec-0", "--require-apiserver-token"}
	full := []string{"--token-issuer", "https://k", "--token-key-file", "../../../testdata/keys/ec.pub", "--webhook-url", "https://gmsa.ksa-system.svc:443", "--webhook-configuration", "gmsa"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "nothing", wantErr: "--require-apiserver-token needs the tokens' issuer, keys, webhook and callers; fix: give --token-issuer, --token-key-file, --webhook-url, --webhook-configuration and --token-caller with it"},
		{name: "a user as caller", args: append(full, "--token-caller", "alice"), wantErr: `--token-caller "alice" is not a service account`},
		{name: "a URL with a path", args: []string{"--token-issuer", "https://k", "--token-key-file", "../../../testdata/keys/ec.pub", "--webhook-url", "https://gmsa.ksa-system.svc:443/validate",
			"--webhook-configuration", "gmsa", "--token-caller", "system:serviceaccount:kube-system:webhook-auth"}, wantErr: "--webhook-url: must be the webhook's https URL without a path"},
		{name: "require and accept", args: append(full, "--token-caller", "system:serviceaccount:kube-system:webhook-auth", "--accept-apiserver-token"),
			wantErr: "--require-apiserver-token and --accept-apiserver-token exclude each other; fix: give --require-apiserver-token to refuse callers without a token, or --accept-apiserver-token to let them through"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			a := &base.App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr}
			root := base.NewRoot(a, "", "", NewWebhook(a))
			root.SetArgs(append(append([]string{}, args0...), tt.args...))
			err := root.ExecuteContext(t.Context())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

package credprovider_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/credentialprovider/plugin"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider/providerconfig"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	issuer    = "https://oidc.example.com/cluster-1"
	namespace = "team"
)

// apiserver stands in for kube-apiserver's TokenRequest and service
// accounts: it mints the pod-bound tokens the kubelet asks for, as
// kube-apiserver does, and counts them.
type apiserver struct {
	minter   *tokens.Minter
	requests atomic.Int32
	mu       sync.Mutex
	issued   map[string]string // pod name -> last token
}

func (s *apiserver) serviceAccount(ns, name string) (*corev1.ServiceAccount, error) {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")}}, nil
}

func (s *apiserver) token(ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	s.requests.Add(1)
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.Kind != "Pod" || len(tr.Spec.Audiences) != 1 {
		return nil, fmt.Errorf("the kubelet asked for a token not bound to one pod for one audience: %+v", tr.Spec)
	}
	tok, err := s.minter.Mint(context.Background(), tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: ns, Name: name, UID: string(tr.UID)},
		Audiences:      tr.Spec.Audiences,
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: ref.Name, UID: string(ref.UID)},
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.issued[ref.Name] = tok.Raw
	s.mu.Unlock()
	return &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: tok.Raw, ExpirationTimestamp: metav1.NewTime(tok.ExpirationTimestamp)}}, nil
}

func (s *apiserver) last(pod string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued[pod]
}

// TestKubelet runs the kubelet's credential provider code over three
// providers of one CredentialProviderConfig, each the built ksa binary
// under its own name:
//
//   - pt.example: pass-through, the token verified offline, cacheType
//     Token (as "ksa credential-provider config" writes it);
//   - ex.example: exchange at a token endpoint, cacheType ServiceAccount,
//     the answer keyed by registry;
//   - bad.example: pass-through under cacheType ServiceAccount, which the
//     linter reports and the kubelet refuses;
//   - mismatch.example: a plugin verifying another audience than the
//     kubelet requests, which the linter reports and the plugin refuses.
func TestKubelet(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	buildKSA(t, filepath.Join(bin, "ksa"))
	for _, name := range []string{"ksa-exchange", "ksa-bad", "ksa-mismatch"} {
		require.NoError(t, os.Link(filepath.Join(bin, "ksa"), filepath.Join(bin, name)))
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key})
	require.NoError(t, err)
	pub, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	set, err := jwks.MarshalSet([]jwks.Key{pub})
	require.NoError(t, err)
	keysFile := filepath.Join(dir, "jwks.json")
	require.NoError(t, os.WriteFile(keysFile, set, 0o644))

	// The registry's token endpoint: one access token per exchange, naming
	// the subject it was exchanged for.
	var exchanges atomic.Int32
	endpoint := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := exchanges.Add(1)
		_ = r.ParseForm()
		claims, err := tokens.ParseUnverified(r.PostForm.Get("subject_token"))
		if err != nil {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"access_token":"registry-%d-%s","token_type":"Bearer","expires_in":3600}`, n, claims.Subject)
	}))
	t.Cleanup(endpoint.Close)
	caFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: endpoint.Certificate().Raw}), 0o644))

	pt := providerconfig.NewProvider(providerconfig.ProviderOptions{
		MatchImages: []string{"pt.example"}, Audience: "pt.example",
		Args: []string{"--username", "k8s", "--issuer", issuer, "--keys", keysFile, "--audience", "pt.example"},
	})
	ex := providerconfig.NewProvider(providerconfig.ProviderOptions{
		Name: "ksa-exchange", MatchImages: []string{"ex.example"}, Audience: "ex.example", CacheType: providerconfig.CacheServiceAccount,
		Args: []string{"--backend", "exchange", "--token-url", endpoint.URL + "/token", "--ca-file", caFile, "--username", "oauth2accesstoken", "--cache-key", "Registry"},
	})
	bad := providerconfig.NewProvider(providerconfig.ProviderOptions{
		Name: "ksa-bad", MatchImages: []string{"bad.example"}, Audience: "bad.example", CacheType: providerconfig.CacheServiceAccount,
	})
	mismatch := providerconfig.NewProvider(providerconfig.ProviderOptions{
		Name: "ksa-mismatch", MatchImages: []string{"mismatch.example"}, Audience: "mismatch.example",
		Args: []string{"--issuer", issuer, "--keys", keysFile, "--audience", "other.example"},
	})
	cfg := &providerconfig.Config{Providers: []providerconfig.Provider{pt, ex, bad, mismatch}}
	findings := providerconfig.Lint(cfg, providerconfig.LintOptions{})
	require.Len(t, findings, 2)
	assert.Equal(t, providerconfig.CodePassThroughCache, findings[0].Code)
	assert.Equal(t, "ksa-bad", findings[0].Provider)
	assert.Equal(t, providerconfig.CodeAudienceMismatch, findings[1].Code)
	data, err := cfg.Marshal()
	require.NoError(t, err)
	cfgFile := filepath.Join(dir, "credential-providers.json")
	require.NoError(t, os.WriteFile(cfgFile, data, 0o644))

	api := &apiserver{minter: minter, issued: map[string]string{}}
	require.NoError(t, plugin.RegisterCredentialProviderPlugins(cfgFile, bin, api.token, api.serviceAccount))

	lookup := func(pod, sa, image string) []string {
		t.Helper()
		keyring := plugin.NewExternalCredentialProviderDockerKeyring(namespace, pod, pod+"-uid", sa)
		found, _ := keyring.Lookup(image)
		var out []string
		for _, c := range found {
			out = append(out, c.Username+":"+c.Password)
			if c.Source != nil && c.Source.ServiceAccount != nil {
				assert.Equal(t, sa, c.Source.ServiceAccount.Name, "the credential's source")
			}
		}
		return out
	}

	t.Run("pass-through", func(t *testing.T) {
		got := lookup("web-1", "puller", "pt.example/team/app:v1")
		require.Equal(t, []string{"k8s:" + api.last("web-1")}, got, "the pod's own token is the password")
		claims, err := tokens.ParseUnverified(api.last("web-1"))
		require.NoError(t, err)
		assert.Equal(t, []string{"pt.example"}, claims.Audience)
		assert.Equal(t, "web-1", claims.Kubernetes.Pod.Name)

		// another service account's pod gets its own token, never the
		// first one's
		got = lookup("db-1", "other", "pt.example/team/app:v1")
		require.Equal(t, []string{"k8s:" + api.last("db-1")}, got)
		assert.NotEqual(t, api.last("web-1"), api.last("db-1"))
	})

	t.Run("exchange cached per service account", func(t *testing.T) {
		first := lookup("web-1", "puller", "ex.example/team/app:v1")
		require.Equal(t, []string{"oauth2accesstoken:registry-1-system:serviceaccount:team:puller"}, first)
		// a second pod of the same service account, another image of the
		// registry: the kubelet's cache answers, the plugin is not run
		again := lookup("web-2", "puller", "ex.example/team/other:v2")
		assert.Equal(t, first, again)
		assert.Equal(t, int32(1), exchanges.Load())
		// a pod of another service account: not the first one's credential
		other := lookup("db-1", "other", "ex.example/team/app:v1")
		require.Equal(t, []string{"oauth2accesstoken:registry-2-system:serviceaccount:team:other"}, other)
		assert.Equal(t, int32(2), exchanges.Load())
	})

	t.Run("pass-through cached per service account is refused by the kubelet", func(t *testing.T) {
		assert.Empty(t, lookup("web-1", "puller", "bad.example/team/app:v1"))
	})

	t.Run("a token of another audience than the plugin verifies gets no credential", func(t *testing.T) {
		assert.Empty(t, lookup("web-1", "puller", "mismatch.example/team/app:v1"))
	})

	t.Run("images outside matchImages get no token", func(t *testing.T) {
		before := api.requests.Load()
		assert.Empty(t, lookup("web-1", "puller", "docker.io/library/nginx:1"))
		assert.Equal(t, before, api.requests.Load())
	})
}

// buildKSA builds the command from this checkout into bin.
func buildKSA(t testing.TB, bin string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..", "cmd", "ksa")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building cmd/ksa: %s", out)
}

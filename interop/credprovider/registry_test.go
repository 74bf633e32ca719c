package credprovider_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kubernetes/pkg/credentialprovider/plugin"

	// distribution's token access controller and in-memory storage
	// register themselves with the registry when linked in.
	_ "github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/providerconfig"
	"github.com/ksa-go/ksa/credprovider/registrytoken"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	registryService  = "registry.test"
	registryIssuer   = "ksa-registry-token"
	registryAudience = "registry.test"
	// username is what `ksa credential-provider run --backend pass-through
	// --username k8s` answers the kubelet with, beside the pod's token.
	username = "k8s"
)

// TestDistributionTrustsServiceAccountTokens runs CNCF distribution v3 in
// this process with auth.token pointing at a registrytoken.Server (its
// realm, service, issuer, and the key set Server.JWKS writes), pushes an
// image as the builder service account (a push rule), then pulls it with
// the credential the kubelet's own credential provider code gets from the
// built ksa (pass-through: username k8s, password the pod's token): the pod
// of the service account the rules allow pulls, the others are refused, by
// the token service (403) or by the registry (401).
func TestDistributionTrustsServiceAccountTokens(t *testing.T) {
	dir := t.TempDir()
	clusterKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: clusterKey})
	require.NoError(t, err)
	pub, err := jwks.NewKey(clusterKey.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(pub)
	require.NoError(t, err)
	validator, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: []string{issuer}, Keys: keys, Audiences: []string{registryAudience}, SkipObjectCheck: true,
	})
	require.NoError(t, err)
	podToken := func(sa, pod string) string {
		t.Helper()
		tok, err := minter.Mint(context.Background(), tokens.Request{
			ServiceAccount: ksa.ServiceAccount{Namespace: namespace, Name: sa, UID: sa + "-uid"},
			Audiences:      []string{registryAudience},
			BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: pod, UID: pod + "-uid"},
		})
		require.NoError(t, err)
		return tok.Raw
	}

	registryKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tokenServer, err := registrytoken.New(registrytoken.Config{
		Issuer: registryIssuer, Service: registryService, Signer: registryKey, Username: username,
		Check: credprovider.TokenCheck{Verify: validator.ValidateFor, Audience: registryAudience},
		Rules: []registrytoken.Rule{
			{Namespace: namespace, ServiceAccount: "builder", Repositories: []string{namespace + "/*"}, Actions: []string{registrytoken.ActionPull, registrytoken.ActionPush}},
			{Namespace: namespace, ServiceAccount: "puller", Repositories: []string{namespace + "/app"}},
		},
	})
	require.NoError(t, err)
	// One host serves the registry and, under /token, its realm, as
	// go-containerregistry wants of a realm on a loopback address.
	var (
		mu            sync.Mutex
		tokenRequests []string
		app           *handlers.App
	)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			mu.Lock()
			tokenRequests = append(tokenRequests, r.URL.Query().Get("scope"))
			mu.Unlock()
			tokenServer.ServeHTTP(w, r)
			return
		}
		app.ServeHTTP(w, r)
	}))
	t.Cleanup(registry.Close)
	set, err := tokenServer.JWKS()
	require.NoError(t, err)
	jwksFile := filepath.Join(dir, "jwks.json")
	require.NoError(t, os.WriteFile(jwksFile, set, 0o644))

	// The registry, configured as its operator would: the YAML read by
	// distribution's own parser.
	config, err := configuration.Parse(strings.NewReader(fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  inmemory: {}
  maintenance:
    uploadpurging:
      enabled: false
auth:
  token:
    realm: %s/token
    service: %s
    issuer: %s
    jwks: %s
    signingalgorithms: [ES256]
`, registry.URL, registryService, registryIssuer, jwksFile)))
	require.NoError(t, err)
	app = handlers.NewApp(context.Background(), config)
	t.Cleanup(func() { _ = app.Shutdown() })
	host := strings.TrimPrefix(registry.URL, "http://")
	ref, err := name.ParseReference(host+"/"+namespace+"/app:v1", name.Insecure)
	require.NoError(t, err)

	basic := func(sa, pod string) remote.Option {
		return remote.WithAuth(&authn.Basic{Username: username, Password: podToken(sa, pod)})
	}

	// The kubelet's credential provider code runs the built ksa as
	// "ksa-registry" (pass-through, the token verified offline) for images
	// of this registry; its answer is what a pod's pull is authorized with.
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	buildKSA(t, filepath.Join(bin, "ksa-registry"))
	clusterKeys, err := jwks.MarshalSet([]jwks.Key{pub})
	require.NoError(t, err)
	keysFile := filepath.Join(dir, "cluster-jwks.json")
	require.NoError(t, os.WriteFile(keysFile, clusterKeys, 0o644))
	provider := providerconfig.NewProvider(providerconfig.ProviderOptions{
		Name: "ksa-registry", MatchImages: []string{host}, Audience: registryAudience,
		Args: []string{"--username", username, "--issuer", issuer, "--keys", keysFile, "--audience", registryAudience},
	})
	providers, err := (&providerconfig.Config{Providers: []providerconfig.Provider{provider}}).Marshal()
	require.NoError(t, err)
	providersFile := filepath.Join(dir, "credential-providers.json")
	require.NoError(t, os.WriteFile(providersFile, providers, 0o644))
	api := &apiserver{minter: minter, issued: map[string]string{}}
	require.NoError(t, plugin.RegisterCredentialProviderPlugins(providersFile, bin, api.token, api.serviceAccount))
	kubelet := func(sa, pod string) remote.Option {
		t.Helper()
		keyring := plugin.NewExternalCredentialProviderDockerKeyring(namespace, pod, pod+"-uid", sa)
		found, _ := keyring.Lookup(ref.String())
		require.Len(t, found, 1, "the kubelet's credential for %s", ref)
		require.Equal(t, username, found[0].Username)
		require.Equal(t, api.last(pod), found[0].Password, "the pod's token is the password")
		return remote.WithAuth(&authn.Basic{Username: found[0].Username, Password: found[0].Password})
	}

	t.Run("anonymous requests get the challenge", func(t *testing.T) {
		resp, err := http.Get(registry.URL + "/v2/" + namespace + "/app/manifests/v1")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		assert.Equal(t, fmt.Sprintf(`Bearer realm="%s/token",service="%s",scope="repository:%s/app:pull"`, registry.URL, registryService, namespace),
			resp.Header.Get("WWW-Authenticate"))
	})

	img, err := random.Image(1024, 1)
	require.NoError(t, err)
	t.Run("the builder pushes", func(t *testing.T) {
		require.NoError(t, remote.Write(ref, img, basic("builder", "build-1")))
	})
	want, err := img.Digest()
	require.NoError(t, err)

	t.Run("the allowed service account's pod pulls", func(t *testing.T) {
		got, err := remote.Image(ref, kubelet("puller", "web-1"))
		require.NoError(t, err)
		digest, err := got.Digest()
		require.NoError(t, err)
		assert.Equal(t, want, digest)
		layers, err := got.Layers()
		require.NoError(t, err)
		require.Len(t, layers, 1)
		rc, err := layers[0].Compressed()
		require.NoError(t, err, "the blob is fetched with the registry token too")
		rc.Close()
	})

	t.Run("another service account is refused by the token service", func(t *testing.T) {
		_, err := remote.Image(ref, kubelet("other", "db-1"))
		requireStatus(t, err, http.StatusForbidden)
	})

	t.Run("the puller cannot push: the registry refuses the pull-only token", func(t *testing.T) {
		other, err := random.Image(512, 1)
		require.NoError(t, err)
		mu.Lock()
		tokenRequests = nil
		mu.Unlock()
		err = remote.Write(ref, other, kubelet("puller", "web-2"))
		requireStatus(t, err, http.StatusUnauthorized)
		mu.Lock()
		defer mu.Unlock()
		assert.Contains(t, tokenRequests, "repository:"+namespace+"/app:push,pull", "the client asked for push")
	})

	t.Run("a token the registry did not get from the service is refused", func(t *testing.T) {
		rogueKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		rogue, err := registrytoken.New(registrytoken.Config{
			Issuer: registryIssuer, Service: registryService, Signer: rogueKey, KeyID: tokenServer.KeyID(),
			Check: credprovider.TokenCheck{Verify: validator.ValidateFor, Audience: registryAudience},
			Rules: []registrytoken.Rule{{Namespace: "*", ServiceAccount: "*", Repositories: []string{"*/*"}}},
		})
		require.NoError(t, err)
		sc, err := registrytoken.ParseScope("repository:" + namespace + "/app:pull")
		require.NoError(t, err)
		tok, err := rogue.Issue(context.Background(), registrytoken.Request{
			Service: registryService, ServiceAccountToken: podToken("other", "db-1"), Scopes: []registrytoken.Scope{sc},
		})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodGet, registry.URL+"/v2/"+namespace+"/app/manifests/v1", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok.Raw)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "signed by another key under the same kid")
	})

	t.Run("a pod token of another audience is refused", func(t *testing.T) {
		tok, err := minter.Mint(context.Background(), tokens.Request{
			ServiceAccount: ksa.ServiceAccount{Namespace: namespace, Name: "puller", UID: "puller-uid"},
			Audiences:      []string{"vault"}, ExpirationSeconds: int64(time.Hour / time.Second),
			BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "web-1", UID: "web-1-uid"},
		})
		require.NoError(t, err)
		_, err = remote.Image(ref, remote.WithAuth(&authn.Basic{Username: username, Password: tok.Raw}))
		requireStatus(t, err, http.StatusUnauthorized)
	})
}

// requireStatus requires err to be go-containerregistry's error for an
// HTTP answer of status.
func requireStatus(t *testing.T, err error, status int) {
	t.Helper()
	var terr *transport.Error
	require.True(t, errors.As(err, &terr), "want an HTTP error, got %v", err)
	assert.Equal(t, status, terr.StatusCode, terr.Error())
}

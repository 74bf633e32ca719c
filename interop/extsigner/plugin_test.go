package extsigner_test

import (
	"context"
	"crypto"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/go-jose/go-jose.v2/jwt"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/serviceaccount"
	"k8s.io/kubernetes/pkg/serviceaccount/externaljwt/plugin"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// kubeClaims are the claims kube-apiserver builds for a pod-bound
// TokenRequest (Kubernetes' own serviceaccount.Claims).
func kubeClaims(t *testing.T, audiences []string) (*jwt.Claims, any) {
	t.Helper()
	sa := core.ServiceAccount{}
	sa.Namespace, sa.Name, sa.UID = "myns", "mysvcacct", "sa-uid"
	pod := &core.Pod{}
	pod.Namespace, pod.Name, pod.UID = "myns", "mypod", "pod-uid"
	node := &core.Node{}
	node.Name, node.UID = "mynode", "node-uid"
	pub, priv, err := serviceaccount.Claims(sa, pod, nil, node, nil, nil, 3600, 0, audiences, nil)
	require.NoError(t, err)
	return pub, priv
}

// kube is Kubernetes' own client of a signer (what kube-apiserver runs)
// and its authenticator on the keys that client fetched.
type kube struct {
	plugin *plugin.Plugin
	keys   serviceaccount.PublicKeysGetter
	auth   authenticator.Token
}

func newKube(t *testing.T, sock string) *kube {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, keys, err := plugin.New(ctx, issuer, sock, 10*time.Second, false)
	require.NoError(t, err)
	return &kube{
		plugin: p, keys: keys,
		auth: serviceaccount.JWTTokenAuthenticator([]string{issuer}, keys, authenticator.Audiences{issuer}, serviceaccount.NewValidator(liveObjects{})),
	}
}

// mint signs a pod-bound token through the plugin, as TokenRequest does.
func (k *kube) mint(t *testing.T) (string, error) {
	t.Helper()
	pub, priv := kubeClaims(t, []string{issuer, "vault"})
	return k.plugin.GenerateToken(t.Context(), pub, priv)
}

// authenticate validates a token as kube-apiserver's authenticator does.
func (k *kube) authenticate(t *testing.T, token string) (string, error) {
	t.Helper()
	resp, ok, err := k.auth.AuthenticateToken(authenticator.WithAudiences(t.Context(), authenticator.Audiences{"vault"}), token)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errors.New("not authenticated")
	}
	return resp.User.GetName(), nil
}

// ksaValidate validates a token with ksa and the keys the ring publishes.
func ksaValidate(t *testing.T, ring *extsigner.Ring, token string) (string, error) {
	t.Helper()
	src, err := jwks.NewStaticSource(ring.KeySet().Keys...)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src, Audiences: []string{"vault"}, SkipObjectCheck: true})
	require.NoError(t, err)
	res, err := v.Validate(t.Context(), token)
	if err != nil {
		return "", err
	}
	return res.UserInfo().Username, nil
}

// TestKubernetesClientAcceptsOurAnswers: Kubernetes' own client of the
// API (pkg/serviceaccount/externaljwt/plugin) takes our Metadata,
// FetchKeys and Sign answers for every key type kube-apiserver supports;
// the tokens it assembles pass its authenticator and ksa's validator.
func TestKubernetesClientAcceptsOurAnswers(t *testing.T) {
	legacy := testkeys.Generated("rsa2048-legacy").Public()
	for _, tt := range []struct {
		name string
		key  crypto.Signer
	}{
		{"RS256", testkeys.Generated("rsa2048")},
		{"ES256", testkeys.Generated("p256")},
		{"ES384", testkeys.Generated("p384")},
		{"ES512", testkeys.Generated("p521")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			legacyKey, err := jwks.NewKey(legacy)
			require.NoError(t, err)
			legacyKey.ExcludeFromDiscovery = true
			ring := newRing(t, &offsetClock{}, tt.key, extsigner.RingKey{Key: legacyKey, Role: extsigner.RoleVerifyOnly})
			sock := socketPath(t)
			startSigner(t, ring, sock)
			k := newKube(t, sock)

			md, err := k.plugin.GetServiceMetadata(t.Context())
			require.NoError(t, err)
			assert.Equal(t, int64(3600), md.MaxTokenExpirationSeconds)

			got := k.keys.GetPublicKeys(t.Context(), "")
			want := ring.KeySet().Keys
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, want[i].KeyID, got[i].KeyID)
				assert.Equal(t, want[i].ExcludeFromDiscovery, got[i].ExcludeFromOIDCDiscovery)
				assert.True(t, want[i].Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(got[i].PublicKey))
			}

			token, err := k.mint(t)
			require.NoError(t, err)
			assert.Equal(t, ring.Primary().KeyID, kidOf(t, token))
			name, err := k.authenticate(t, token)
			require.NoError(t, err)
			assert.Equal(t, "system:serviceaccount:myns:mysvcacct", name)
			name, err = ksaValidate(t, ring, token)
			require.NoError(t, err)
			assert.Equal(t, "system:serviceaccount:myns:mysvcacct", name)
		})
	}
}

// TestKubernetesClientFollowsRotation: through a rotation, Kubernetes'
// client signs with each new primary at once, knows every published key
// (an unknown kid makes it fetch the keys again), and keeps validating
// every token until its key is retired.
func TestKubernetesClientFollowsRotation(t *testing.T) {
	clk := &offsetClock{}
	ring := newRing(t, clk, testkeys.Generated("p256"))
	sock := socketPath(t)
	startSigner(t, ring, sock)
	k := newKube(t, sock)
	old := ring.Primary().KeyID
	before, err := k.mint(t)
	require.NoError(t, err)

	next, err := ring.Stage(testkeys.Generated("rsa2048"), "")
	require.NoError(t, err)
	require.ErrorIs(t, ring.Promote(next.KeyID), extsigner.ErrTooEarly)
	eventually(t, 30*time.Second, "the client's periodic sync sees the staged key", func() bool {
		return len(k.keys.GetPublicKeys(t.Context(), "")) == 2
	})
	clk.Advance(ring.MinStaging())
	require.NoError(t, ring.Promote(next.KeyID))

	after, err := k.mint(t)
	require.NoError(t, err)
	assert.Equal(t, next.KeyID, kidOf(t, after))
	for _, tok := range []string{before, after} {
		_, err := k.authenticate(t, tok)
		require.NoError(t, err)
	}

	require.ErrorIs(t, ring.Retire(old), extsigner.ErrTooEarly)
	at, err := ring.RetireAt(old)
	require.NoError(t, err)
	clk.Advance(time.Until(at) + time.Second)
	require.NoError(t, ring.Retire(old))
	eventually(t, 30*time.Second, "the client's periodic sync drops the retired key", func() bool {
		return len(k.keys.GetPublicKeys(t.Context(), "")) == 1
	})
	_, err = k.authenticate(t, before)
	assert.Error(t, err, "its key is gone (on the ring's clock, the token has expired)")
	_, err = k.authenticate(t, after)
	require.NoError(t, err)
}

// TestKubernetesClientSeesKMSFailure: a failing key reaches kube-apiserver
// as Unavailable with the KMS's message, and no token.
func TestKubernetesClientSeesKMSFailure(t *testing.T) {
	pub := testkeys.Generated("p256").Public()
	kms := extsigner.SignerFunc(pub, func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) {
		return nil, errors.New("kms: key version 3 is disabled")
	})
	sock := socketPath(t)
	startSigner(t, newRing(t, &offsetClock{}, kms), sock)
	k := newKube(t, sock)
	token, err := k.mint(t)
	require.Error(t, err)
	assert.Empty(t, token)
	assert.Contains(t, err.Error(), "code = Unavailable")
	assert.Contains(t, err.Error(), "kms: key version 3 is disabled")
}

func kidOf(t *testing.T, token string) string {
	t.Helper()
	h, err := signertest.CheckHeader(strings.Split(token, ".")[0])
	require.NoError(t, err)
	return h.KeyID
}

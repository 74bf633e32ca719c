package extsigner_test

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/interop/clientgo"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

const vault = "vault"

// withSigner runs scenario on each kube-apiserver release: for each, it
// starts ksa's signer for a new ring on a new socket, then a control plane
// whose kube-apiserver signs through it (--service-account-signing-endpoint).
func withSigner(t *testing.T, newRing func(*testing.T) *extsigner.Ring, scenario func(*testing.T, *controlplane.ControlPlane, *signer)) {
	t.Helper()
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		s := startSigner(t, newRing(t), socketPath(t))
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, SigningEndpoint: s.sock})
		scenario(t, cp, s)
	})
}

func TestAPIServerSignsThroughOurSigner(t *testing.T) {
	withSigner(t, func(t *testing.T) *extsigner.Ring { return newRing(t, &offsetClock{}, testkeys.Generated("p256")) }, tokensThroughSigner)
}

func TestAPIServerThroughRotation(t *testing.T) {
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		clk := &offsetClock{}
		s := startSigner(t, newRing(t, clk, testkeys.Generated("p256")), socketPath(t))
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, SigningEndpoint: s.sock})
		rotation(t, cp, s, clk)
	})
}

func TestAPIServerSurvivesSignerRestart(t *testing.T) {
	withSigner(t, func(t *testing.T) *extsigner.Ring { return newRing(t, &offsetClock{}, testkeys.Generated("p384")) }, signerRestart)
}

// account is a namespace with a service account and a pod using it.
type account struct {
	cp  *controlplane.ControlPlane
	ns  string
	sa  *corev1.ServiceAccount
	pod *corev1.Pod
}

func newAccount(t *testing.T, cp *controlplane.ControlPlane) *account {
	t.Helper()
	a := &account{cp: cp, ns: cp.Namespace(t)}
	cs := cp.Clientset()
	var err error
	a.sa, err = cs.CoreV1().ServiceAccounts(a.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	automount := false
	a.pod, err = cs.CoreV1().Pods(a.ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "billing-0"},
		Spec: corev1.PodSpec{
			ServiceAccountName: "billing", AutomountServiceAccountToken: &automount,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return a
}

// request calls TokenRequest for a pod-bound token for vault and the API.
func (a *account) request(ctx context.Context, exp int64) (*authenticationv1.TokenRequest, error) {
	return a.cp.Clientset().CoreV1().ServiceAccounts(a.ns).CreateToken(ctx, a.sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         []string{vault, controlplane.DefaultIssuer},
			ExpirationSeconds: &exp,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: a.pod.Name, UID: a.pod.UID},
		},
	}, metav1.CreateOptions{})
}

func (a *account) mustRequest(t *testing.T) string {
	t.Helper()
	tr, err := a.request(t.Context(), 3600)
	require.NoError(t, err)
	return tr.Status.Token
}

func (a *account) username() string { return "system:serviceaccount:" + a.ns + ":" + a.sa.Name }

// review asks kube-apiserver's TokenReview about token for audiences.
// kube-apiserver caches a success for a token and audiences for ten
// seconds: a test that expects a change asks with audiences it has not
// asked with before.
func review(t *testing.T, cp *controlplane.ControlPlane, token string, audiences ...string) authenticationv1.TokenReviewStatus {
	t.Helper()
	out, err := cp.Clientset().AuthenticationV1().TokenReviews().Create(t.Context(), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return out.Status
}

// ksaValidateLive validates with ksa, the keys the ring publishes, and the
// live objects of the cluster.
func ksaValidateLive(t *testing.T, cp *controlplane.ControlPlane, ring *extsigner.Ring, token string) (*tokens.Result, error) {
	t.Helper()
	src, err := jwks.NewStaticSource(ring.KeySet().Keys...)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: cp.Issuers, Keys: src, Audiences: []string{vault}, Objects: clientgo.ObjectGetter(cp.Clientset()),
	})
	require.NoError(t, err)
	return v.Validate(t.Context(), token)
}

// rendered is ksa's rendering of the ring's keys for the control plane's
// issuer and jwks_uri (built from its address, as kube-apiserver does).
func rendered(t *testing.T, cp *controlplane.ControlPlane, ring *extsigner.Ring) *oidc.Documents {
	t.Helper()
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: cp.Issuers[0], ExternalAddress: strings.TrimPrefix(cp.URL, "https://")}, ring.KeySet().Keys)
	require.NoError(t, err)
	return docs
}

// sameDocuments checks that kube-apiserver serves exactly ksa's rendering.
func sameDocuments(t *testing.T, cp *controlplane.ControlPlane, ring *extsigner.Ring) {
	t.Helper()
	discovery, keySet := cp.Documents(t)
	want := rendered(t, cp, ring)
	assert.Equal(t, string(want.Discovery), string(discovery), "discovery document")
	assert.Equal(t, string(want.JWKS), string(keySet), "key set")
}

// servesKey reports whether kube-apiserver's key set holds kid.
func servesKey(t *testing.T, cp *controlplane.ControlPlane, kid string) bool {
	_, keySet := cp.Documents(t)
	var set struct {
		Keys []struct {
			KeyID string `json:"kid"`
		} `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(keySet, &set))
	for _, k := range set.Keys {
		if k.KeyID == kid {
			return true
		}
	}
	return false
}

func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(b, &c))
	return c
}

// tokensThroughSigner: TokenRequest tokens are signed through the signer
// (its primary's kid and algorithm), capped at the lifetime Metadata gave,
// and validate with ksa and with TokenReview as the same user; the
// discovery document and key set kube-apiserver serves are byte for byte
// ksa's rendering of the ring's keys.
func tokensThroughSigner(t *testing.T, cp *controlplane.ControlPlane, s *signer) {
	a := newAccount(t, cp)
	tr, err := a.request(t.Context(), 7200)
	require.NoError(t, err)
	token := tr.Status.Token
	h, err := signertest.CheckHeader(strings.Split(token, ".")[0])
	require.NoError(t, err)
	assert.Equal(t, signertest.Header{Algorithm: jwks.ES256, KeyID: s.ring.Primary().KeyID, Type: "JWT"}, h)
	c := claimsOf(t, token)
	assert.Equal(t, float64(3600), c["exp"].(float64)-c["iat"].(float64), "capped at the signer's maximum lifetime")

	res, err := ksaValidateLive(t, cp, s.ring, token)
	require.NoError(t, err)
	assert.Equal(t, a.username(), res.UserInfo().Username)
	assert.Equal(t, []string{a.pod.Name}, res.UserInfo().Extra[ksa.ExtraPodName])
	st := review(t, cp, token, vault)
	require.True(t, st.Authenticated, st.Error)
	assert.Equal(t, res.UserInfo().Username, st.User.Username)
	assert.Equal(t, res.UserInfo().UID, st.User.UID)

	sameDocuments(t, cp, s.ring)
}

// rotation: a full rotation with a real kube-apiserver. Every token issued
// before a step validates in TokenReview after it; every step taken too
// early is refused; kube-apiserver's documents follow the ring's keys
// byte for byte; a verify-only key (a legacy token's) verifies without
// being published. The ring's clock is moved forward for the waits; the
// kube-apiserver runs on the real clock.
func rotation(t *testing.T, cp *controlplane.ControlPlane, s *signer, clk *offsetClock) {
	ring := s.ring
	a := newAccount(t, cp)
	first := ring.Primary().KeyID
	t1 := a.mustRequest(t)
	sameDocuments(t, cp, ring)

	// A verify-only key, excluded from discovery: kube-controller-manager's
	// legacy tokens.
	legacyKey := testkeys.Generated("rsa2048-legacy")
	pub, err := jwks.NewKey(legacyKey.Public())
	require.NoError(t, err)
	pub.ExcludeFromDiscovery = true
	_, err = ring.AddVerifyOnly(pub)
	require.NoError(t, err)
	legacy := legacyToken(t, a, legacyKey)
	st := review(t, cp, legacy)
	require.True(t, st.Authenticated, "a legacy token verifies with the excluded key: %s", st.Error)
	assert.Equal(t, a.username(), st.User.Username)

	// 1. Stage.
	next, err := ring.Stage(testkeys.Generated("rsa2048"), "")
	require.NoError(t, err)
	require.ErrorIs(t, ring.Promote(next.KeyID), extsigner.ErrTooEarly)
	eventually(t, 60*time.Second, "kube-apiserver publishes the staged key", func() bool { return servesKey(t, cp, next.KeyID) })
	sameDocuments(t, cp, ring)
	assert.Equal(t, first, kidOf(t, a.mustRequest(t)), "a staged key does not sign")

	// 2. Promote.
	clk.Advance(ring.MinStaging())
	require.NoError(t, ring.Promote(next.KeyID))
	t2 := a.mustRequest(t)
	assert.Equal(t, next.KeyID, kidOf(t, t2))
	for i, tok := range []string{t1, t2} {
		st := review(t, cp, tok, vault)
		require.True(t, st.Authenticated, "token %d after promotion: %s", i+1, st.Error)
		_, err := ksaValidateLive(t, cp, ring, tok)
		require.NoError(t, err, "token %d after promotion", i+1)
	}
	sameDocuments(t, cp, ring)

	// 3. Retire too early: refused, and the first key's token still valid.
	require.ErrorIs(t, ring.Retire(first), extsigner.ErrTooEarly)
	st = review(t, cp, t1, controlplane.DefaultIssuer)
	require.True(t, st.Authenticated, st.Error)

	// 4. Retire once the first key's tokens have expired (on the ring's
	// clock): kube-apiserver drops the key at its next sync.
	at, err := ring.RetireAt(first)
	require.NoError(t, err)
	clk.Advance(time.Until(at) + time.Second)
	require.NoError(t, ring.Retire(first))
	eventually(t, 60*time.Second, "kube-apiserver drops the retired key", func() bool { return !servesKey(t, cp, first) })
	sameDocuments(t, cp, ring)
	st = review(t, cp, t2, controlplane.DefaultIssuer)
	require.True(t, st.Authenticated, st.Error)
	st = review(t, cp, t1, vault, controlplane.DefaultIssuer)
	assert.False(t, st.Authenticated, "the retired key verifies nothing (on the real clock the token is still within its hour)")
	st = review(t, cp, legacy, controlplane.DefaultIssuer) // legacy tokens are for the API audiences
	assert.True(t, st.Authenticated, st.Error)
}

// legacyToken mints a legacy Secret-based token for the account with key,
// as kube-controller-manager does, and stores its Secret.
func legacyToken(t *testing.T, a *account, key crypto.Signer) string {
	t.Helper()
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: tokens.LegacyIssuer, Signer: key})
	require.NoError(t, err)
	const secretName = "billing-token"
	tok, err := m.MintLegacy(t.Context(), ksa.ServiceAccount{Namespace: a.ns, Name: a.sa.Name, UID: string(a.sa.UID)}, secretName)
	require.NoError(t, err)
	_, err = a.cp.Clientset().CoreV1().Secrets(a.ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Annotations: map[string]string{
			corev1.ServiceAccountNameKey: a.sa.Name, corev1.ServiceAccountUIDKey: string(a.sa.UID),
		}},
		Type: corev1.SecretTypeServiceAccountToken,
		Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(tok)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tok
}

// signerRestart: with the signer gone, kube-apiserver keeps validating
// tokens with the keys it fetched, and cannot mint; once the signer is
// back on the same socket, it mints again.
func signerRestart(t *testing.T, cp *controlplane.ControlPlane, s *signer) {
	a := newAccount(t, cp)
	before := a.mustRequest(t)
	unseen := a.mustRequest(t) // not reviewed before the signer goes
	st := review(t, cp, before, vault)
	require.True(t, st.Authenticated, st.Error)

	s.stop()
	st = review(t, cp, unseen, vault)
	require.True(t, st.Authenticated, "validates while the signer is down: %s", st.Error)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	_, err := a.request(ctx, 3600)
	cancel()
	require.Error(t, err, "no signer, no token")

	s.start()
	var after string
	eventually(t, 60*time.Second, "kube-apiserver mints again through the restarted signer", func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		tr, err := a.request(ctx, 3600)
		if err != nil {
			return false
		}
		after = tr.Status.Token
		return true
	})
	for i, tok := range []string{after, before, unseen} {
		st := review(t, cp, tok, controlplane.DefaultIssuer)
		require.True(t, st.Authenticated, "token %d: %s", i, st.Error)
	}
	res, err := ksaValidateLive(t, cp, s.ring, after)
	require.NoError(t, err)
	assert.Equal(t, a.username(), res.UserInfo().Username)
}

package apiserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/interop/clientgo"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// fixture is a namespace with a service account and a pod using it.
type fixture struct {
	cp  *controlplane.ControlPlane
	ns  string
	sa  *corev1.ServiceAccount
	pod *corev1.Pod
}

func newFixture(t *testing.T, cp *controlplane.ControlPlane) *fixture {
	t.Helper()
	f := &fixture{cp: cp, ns: cp.Namespace(t)}
	cs := cp.Clientset()
	var err error
	f.sa, err = cs.CoreV1().ServiceAccounts(f.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "billing"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	f.pod, err = cs.CoreV1().Pods(f.ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "billing-0"},
		Spec: corev1.PodSpec{
			ServiceAccountName:           "billing",
			AutomountServiceAccountToken: boolPtr(false),
			Containers:                   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return f
}

func boolPtr(b bool) *bool { return &b }

// requestToken calls the real TokenRequest API for the fixture's account.
func (f *fixture) requestToken(t *testing.T, audiences []string, exp int64, pod bool) *authenticationv1.TokenRequest {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &exp}}
	if pod {
		tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: f.pod.Name, UID: f.pod.UID}
	}
	out, err := clientgo.Requester(f.cp.Clientset()).RequestToken(t.Context(), f.ns, f.sa.Name, tr)
	require.NoError(t, err)
	return out
}

func (f *fixture) validator(t *testing.T, audiences []string, now func() time.Time) *tokens.Validator {
	t.Helper()
	key, err := jwks.NewKey(f.cp.SigningKey.Public())
	require.NoError(t, err)
	keys, err := jwks.NewStaticSource(key)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: f.cp.Issuers, Keys: keys, Audiences: audiences,
		Objects: clientgo.ObjectGetter(f.cp.Clientset()), Now: now,
	})
	require.NoError(t, err)
	return v
}

// TestTokenRequestValidatesUntilPodDeleted: a real TokenRequest token (two
// audiences, an expiration, bound to a pod) validates with ksa, live objects
// checked through client-go; once the pod is deleted, the same token is
// refused as invalidated.
func TestTokenRequestValidatesUntilPodDeleted(t *testing.T) {
	shared.Each(t, testTokenRequestValidatesUntilPodDeleted)
}

func testTokenRequestValidatesUntilPodDeleted(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	tr := f.requestToken(t, []string{vaultAudience, controlplane.DefaultIssuer}, 7200, true)
	v := f.validator(t, []string{vaultAudience}, nil)

	res, err := v.Validate(t.Context(), tr.Status.Token)
	require.NoError(t, err)
	user := res.UserInfo()
	assert.Equal(t, "system:serviceaccount:"+f.ns+":billing", user.Username)
	assert.Equal(t, string(f.sa.UID), user.UID)
	assert.Equal(t, []string{f.pod.Name}, user.Extra[ksa.ExtraPodName])
	assert.Equal(t, []string{string(f.pod.UID)}, user.Extra[ksa.ExtraPodUID])
	assert.Equal(t, []string{vaultAudience}, res.Audiences)
	assert.Equal(t, tr.Status.ExpirationTimestamp.Unix(), res.Claims.Expiry.Unix())

	// The same user as kube-apiserver's own TokenReview.
	review := tokenReview(t, f.cp, tr.Status.Token, []string{vaultAudience})
	require.True(t, review.Status.Authenticated, review.Status.Error)
	assert.Equal(t, review.Status.User.Username, user.Username)
	assert.Equal(t, review.Status.User.UID, user.UID)
	assert.Subset(t, review.Status.User.Groups, user.Groups)

	// Tokens of the same pod that the apiserver has not reviewed: they show
	// when its informer has learnt of the deletion (see untilRefused).
	probes := make([]string, deletionTries)
	for i := range probes {
		probes[i] = f.requestToken(t, []string{vaultAudience}, 3600, true).Status.Token
	}
	require.NoError(t, f.cp.Clientset().CoreV1().Pods(f.ns).Delete(t.Context(), f.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	_, err = v.Validate(t.Context(), tr.Status.Token)
	require.ErrorIs(t, err, tokens.ErrInvalidated)
	require.ErrorIs(t, err, tokens.ErrBoundObjectNotFound)
	untilRefused(t, probes, func(_ context.Context, token string) error {
		if r := tokenReview(t, f.cp, token, []string{vaultAudience}); !r.Status.Authenticated {
			return errors.New(r.Status.Error)
		}
		return nil
	})
	// Another audience list: kube-apiserver caches successes for 10 s per
	// token and audiences, so ask for one it has not answered yet.
	review = tokenReview(t, f.cp, tr.Status.Token, []string{controlplane.DefaultIssuer})
	assert.False(t, review.Status.Authenticated, "kube-apiserver agrees")
	assert.Contains(t, review.Status.Error, "invalidated")
}

func tokenReview(t *testing.T, cp *controlplane.ControlPlane, token string, audiences []string) *authenticationv1.TokenReview {
	t.Helper()
	out, err := cp.Clientset().AuthenticationV1().TokenReviews().Create(t.Context(), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return out
}

// TestKSATokensPassTokenReview: the server runs with our key; tokens minted
// by ksa with it are accepted by TokenReview for the audiences asked, and a
// token for another issuer or audience is refused.
func TestKSATokensPassTokenReview(t *testing.T) {
	shared.Each(t, testKSATokensPassTokenReview)
}

func testKSATokensPassTokenReview(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	mint := func(issuer string, audiences []string) string {
		m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: f.cp.SigningKey.(*ecdsaKey)})
		require.NoError(t, err)
		tok, err := m.Mint(t.Context(), tokens.Request{
			ServiceAccount: ksa.ServiceAccount{Namespace: f.ns, Name: f.sa.Name, UID: string(f.sa.UID)},
			Audiences:      audiences,
			BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: f.pod.Name, UID: string(f.pod.UID)},
		})
		require.NoError(t, err)
		return tok.Raw
	}
	tests := []struct {
		name      string
		issuer    string
		tokenAuds []string
		reviewFor []string
		want      bool
		wantAuds  []string
	}{
		{name: "accepted for its audience", issuer: f.cp.Issuers[0], tokenAuds: []string{vaultAudience}, reviewFor: []string{vaultAudience}, want: true, wantAuds: []string{vaultAudience}},
		{name: "accepted for the API audience", issuer: f.cp.Issuers[0], tokenAuds: []string{controlplane.DefaultIssuer, vaultAudience}, reviewFor: nil, want: true, wantAuds: []string{controlplane.DefaultIssuer, vaultAudience}},
		{name: "another audience", issuer: f.cp.Issuers[0], tokenAuds: []string{"other"}, reviewFor: []string{vaultAudience}, want: false},
		{name: "another issuer", issuer: "https://issuer.elsewhere.example", tokenAuds: []string{vaultAudience}, reviewFor: []string{vaultAudience}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			review := tokenReview(t, f.cp, mint(tt.issuer, tt.tokenAuds), tt.reviewFor)
			assert.Equal(t, tt.want, review.Status.Authenticated, review.Status.Error)
			if tt.want {
				assert.Equal(t, "system:serviceaccount:"+f.ns+":billing", review.Status.User.Username)
				assert.Equal(t, []string{f.pod.Name}, []string(review.Status.User.Extra[ksa.ExtraPodName]))
				assert.Equal(t, tt.wantAuds, review.Status.Audiences)
			}
		})
	}
}

// inClusterClient reaches the API server whatever host a URL names (the
// issuer's in-cluster name, or 127.0.0.1), trusting its CA: what a pod's
// client does through the kubernetes Service.
func inClusterClient(cp *controlplane.ControlPlane) *http.Client {
	addr := strings.TrimPrefix(cp.URL, "https://")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = cp.CertPool
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// TestRelyingPartyAgainstAPIServer: ksa's verifier discovers the server's
// issuer (with a bearer token: discovery needs authentication by default)
// and verifies TokenRequest tokens; the server's documents are
// byte-identical to ksa's rendering for the same key, issuer and jwks_uri.
func TestRelyingPartyAgainstAPIServer(t *testing.T) {
	shared.Each(t, testRelyingPartyAgainstAPIServer)
}

func testRelyingPartyAgainstAPIServer(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	client := inClusterClient(f.cp)
	issuer := f.cp.Issuers[0]

	// Unauthenticated discovery is refused by default RBAC.
	_, err := oidc.Discover(t.Context(), oidc.DiscoveryConfig{Issuer: issuer, Client: client})
	var derr *oidc.DiscoveryError
	require.ErrorAs(t, err, &derr)
	assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, derr.Status)

	// A service account token as the bearer (what a pod would send; the
	// group system:serviceaccounts may read discovery).
	bearer := f.requestToken(t, []string{controlplane.DefaultIssuer}, 3600, false).Status.Token
	creds := func(context.Context) (string, error) { return bearer, nil }
	// The issuer is the in-cluster Service name, the jwks_uri the server's
	// advertise address: another host, so the key set's credentials are
	// given explicitly.
	v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
		Issuers:           []string{issuer},
		Client:            client,
		BearerToken:       creds,
		KeySetBearerToken: creds,
		Audiences:         []string{vaultAudience},
	})
	require.NoError(t, err)
	tr := f.requestToken(t, []string{vaultAudience}, 3600, true)
	res, err := v.Verify(t.Context(), tr.Status.Token)
	require.NoError(t, err)
	assert.Equal(t, "system:serviceaccount:"+f.ns+":billing", res.UserInfo().Username)

	// Byte-identical documents.
	md := v.Provider(issuer)
	key, err := jwks.NewKey(f.cp.SigningKey.Public())
	require.NoError(t, err)
	ours, err := oidc.Render(oidc.IssuerConfig{Issuer: issuer, JWKSURI: md.JWKSURI}, []jwks.Key{key})
	require.NoError(t, err)
	assert.Equal(t, string(ours.Discovery), string(get(t, client, bearer, f.cp.URL+oidc.DiscoveryPath)))
	assert.Equal(t, string(ours.JWKS), string(get(t, client, bearer, md.JWKSURI)))
	assert.Equal(t, f.cp.URL+oidc.JWKSPath, md.JWKSURI, "jwks_uri from the advertise address")
}

func get(t *testing.T, client *http.Client, bearer, url string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var buf strings.Builder
	_, err = ioCopy(&buf, resp)
	require.NoError(t, err)
	return []byte(buf.String())
}

// TestWarnAfterExtension: a 3607-second pod-bound TokenRequest for the API
// audience gets what ksa's minting rules predict (a one-year exp, warnafter
// at iat+3607, status expiration at +3607): ksa's minter, given the server's
// iat and jti, produces the identical payload; ksa's validator reports the
// token stale after warnafter (injected clock) and still accepts it.
func TestWarnAfterExtension(t *testing.T) {
	shared.Each(t, testWarnAfterExtension)
}

func testWarnAfterExtension(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	tr := f.requestToken(t, []string{controlplane.DefaultIssuer}, tokens.WarnOnlyExpirationSeconds, true)
	payload := decode(t, tr.Status.Token)
	var got struct {
		IAT int64  `json:"iat"`
		Exp int64  `json:"exp"`
		JTI string `json:"jti"`
		K8s struct {
			WarnAfter int64 `json:"warnafter"`
			Node      *struct {
				Name string `json:"name"`
			} `json:"node"`
		} `json:"kubernetes.io"`
	}
	require.NoError(t, json.Unmarshal(payload, &got))
	assert.Equal(t, got.IAT+tokens.WarnOnlyExpirationSeconds, got.K8s.WarnAfter)
	assert.Equal(t, got.IAT+int64(tokens.DefaultMaxExtendedExpiration/time.Second), got.Exp)
	assert.Equal(t, got.IAT+tokens.WarnOnlyExpirationSeconds, tr.Status.ExpirationTimestamp.Unix())

	m, err := tokens.NewMinter(tokens.MinterConfig{
		Issuer: f.cp.Issuers[0], Signer: f.cp.SigningKey.(*ecdsaKey), APIAudiences: f.cp.APIAudiences, ExtendExpiration: true,
		Now: func() time.Time { return time.Unix(got.IAT, 0) }, NewJTI: func() string { return got.JTI },
	})
	require.NoError(t, err)
	ours, err := m.Mint(t.Context(), tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: f.ns, Name: f.sa.Name, UID: string(f.sa.UID)},
		Audiences:         []string{controlplane.DefaultIssuer},
		ExpirationSeconds: tokens.WarnOnlyExpirationSeconds,
		BoundObject:       &tokens.BoundObject{Kind: tokens.BoundPod, Name: f.pod.Name, UID: string(f.pod.UID)},
	})
	require.NoError(t, err)
	assert.Equal(t, string(payload), string(decode(t, ours.Raw)), "ksa predicts the server's token byte for byte")
	assert.Equal(t, tr.Status.ExpirationTimestamp.Unix(), ours.ExpirationTimestamp.Unix())

	after := time.Unix(got.K8s.WarnAfter+90, 0)
	res, err := f.validator(t, []string{controlplane.DefaultIssuer}, func() time.Time { return after }).Validate(t.Context(), tr.Status.Token)
	require.NoError(t, err, "stale tokens are accepted")
	require.NotNil(t, res.Stale)
	assert.Equal(t, int64(90), res.Stale.SecondsAfter)

	before := time.Unix(got.K8s.WarnAfter-1, 0)
	res, err = f.validator(t, []string{controlplane.DefaultIssuer}, func() time.Time { return before }).Validate(t.Context(), tr.Status.Token)
	require.NoError(t, err)
	assert.Nil(t, res.Stale)
}

func decode(t *testing.T, token string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	require.NoError(t, err)
	return b
}

package serviceaccount_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/apis/authentication"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	issuer   = "https://kubernetes.default.svc.cluster.local"
	audience = "https://kubernetes.default.svc"
)

// scenario is one token request, expressed for both implementations.
type scenario struct {
	name      string
	audiences []string
	exp       int64
	warnafter int64
	pod       bool
	node      bool // a node for the pod, or the node binding without a pod
	secret    bool
	// validating or mutating binds the token to a webhook configuration,
	// attesting group (Kubernetes 1.37, alpha).
	validating bool
	mutating   bool
	group      string
}

// webhookAudience is a webhook's audience: its Service's URL.
const webhookAudience = "https://gmsa-webhook.ksa-system.svc:443/validate"

var scenarios = []scenario{
	{name: "no binding", audiences: []string{audience}, exp: 3600},
	{name: "pod", audiences: []string{audience, "vault"}, exp: 3600, pod: true},
	{name: "pod with node", audiences: []string{audience}, exp: 7200, pod: true, node: true},
	{name: "secret", audiences: []string{audience}, exp: 3600, secret: true},
	{name: "node", audiences: []string{audience}, exp: 3600, node: true},
	{name: "extended with warnafter", audiences: []string{audience}, exp: 365 * 24 * 3600, warnafter: 3607, pod: true, node: true},
	{name: "html in audience", audiences: []string{"https://x/?a=<b>&c"}, exp: 3600},
	{name: "validating webhook configuration, all groups", audiences: []string{webhookAudience}, exp: 600, validating: true, group: "*"},
	{name: "mutating webhook configuration, one group", audiences: []string{webhookAudience}, exp: 600, mutating: true, group: "windows.k8s.io"},
}

var signingKeys = []struct {
	name string
	key  crypto.Signer
}{
	{"RS256", testkeys.K8sRSA()},
	{"ES256", testkeys.K8sEC()},
	{"ES384", testkeys.Generated("p384")},
	{"ES512", testkeys.Generated("p521")},
}

func liveStore() *store {
	return newStore().
		addServiceAccount("myns", "mysvcacct", "sa-uid").
		addPod("myns", "mypod", "pod-uid", "mysvcacct", "mynode").
		addSecret("myns", "mysecret", "secret-uid").
		addNode("mynode", "node-uid").
		addValidating("gmsa", "vwc-uid").
		addMutating("gmsa", "mwc-uid")
}

// kubeMint mints with Kubernetes' own Claims() and JWTTokenGenerator.
func kubeMint(t *testing.T, key crypto.Signer, sc scenario) string {
	t.Helper()
	sa := core.ServiceAccount{}
	sa.Namespace, sa.Name, sa.UID = "myns", "mysvcacct", "sa-uid"
	var pod *core.Pod
	var secret *core.Secret
	var node *core.Node
	if sc.pod {
		pod = &core.Pod{}
		pod.Namespace, pod.Name, pod.UID = "myns", "mypod", "pod-uid"
	}
	if sc.secret {
		secret = &core.Secret{}
		secret.Namespace, secret.Name, secret.UID = "myns", "mysecret", "secret-uid"
	}
	if sc.node {
		node = &core.Node{}
		node.Name, node.UID = "mynode", "node-uid"
	}
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var attestations map[string]authentication.AttestationValue
	if sc.validating {
		validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
		validating.Name, validating.UID = "gmsa", "vwc-uid"
	}
	if sc.mutating {
		mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
		mutating.Name, mutating.UID = "gmsa", "mwc-uid"
	}
	if sc.group != "" {
		attestations = map[string]authentication.AttestationValue{authentication.AttestationAdmissionReviewAPIGroups: {sc.group}}
	}
	pub, priv, err := serviceaccount.Claims(sa, pod, secret, node, validating, mutating, sc.exp, sc.warnafter, sc.audiences, attestations)
	require.NoError(t, err)
	gen, err := serviceaccount.JWTTokenGenerator(issuer, key)
	require.NoError(t, err)
	raw, err := gen.GenerateToken(context.Background(), pub, priv)
	require.NoError(t, err)
	return raw
}

// ksaRequest is the same scenario as a ksa Request.
func ksaRequest(sc scenario) tokens.Request {
	req := tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "sa-uid"},
		Audiences:         sc.audiences,
		ExpirationSeconds: sc.exp,
	}
	switch {
	case sc.pod:
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod", UID: "pod-uid"}
		if sc.node {
			req.Node = &ksa.ObjectRef{Name: "mynode", UID: "node-uid"}
		}
	case sc.secret:
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundSecret, Name: "mysecret", UID: "secret-uid"}
	case sc.node:
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundNode, Name: "mynode", UID: "node-uid"}
	case sc.validating:
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa", UID: "vwc-uid"}
	case sc.mutating:
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundMutatingWebhookConfiguration, Name: "gmsa", UID: "mwc-uid"}
	}
	if sc.group != "" {
		req.Attestations = map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {sc.group}}
	}
	return req
}

func kubeAuthenticator(t *testing.T, s *store, keys ...any) authenticator.Token {
	t.Helper()
	// Kubernetes' validator refuses webhook-bound tokens unless the alpha
	// gate is on.
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, genericfeatures.APIServerWebhookAuthenticationToken, true)
	getter, err := serviceaccount.StaticPublicKeysGetter(keys)
	require.NoError(t, err)
	return serviceaccount.JWTTokenAuthenticator([]string{issuer}, getter, authenticator.Audiences{audience}, serviceaccount.NewValidator(s))
}

func ksaValidator(t *testing.T, s *store, auds []string, keys ...any) *tokens.Validator {
	t.Helper()
	var list []jwks.Key
	for _, k := range keys {
		key, err := jwks.NewKey(k)
		require.NoError(t, err)
		list = append(list, key)
	}
	src, err := jwks.NewStaticSource(list...)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers:           []string{issuer},
		Keys:              src,
		Audiences:         auds,
		Objects:           s,
		AllowedAlgorithms: []string{jwks.RS384, jwks.RS512, jwks.PS256, jwks.PS384, jwks.PS512},
	})
	require.NoError(t, err)
	return v
}

func decodeSegment(t *testing.T, token string, i int) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[i])
	require.NoError(t, err)
	return b
}

// sameUser compares Kubernetes' user with ksa's.
func sameUser(t *testing.T, want user.Info, got ksa.UserInfo) {
	t.Helper()
	assert.Equal(t, want.GetName(), got.Username)
	assert.Equal(t, want.GetUID(), got.UID)
	assert.Equal(t, want.GetGroups(), got.Groups)
	if len(want.GetExtra()) == 0 {
		assert.Empty(t, got.Extra)
	} else {
		assert.Equal(t, want.GetExtra(), got.Extra)
	}
}

// TestKubernetesTokensValidateWithKSA: tokens from Kubernetes' generator pass
// ksa's validator, which derives the user Kubernetes' authenticator derives.
func TestKubernetesTokensValidateWithKSA(t *testing.T) {
	for _, k := range signingKeys {
		for _, sc := range scenarios {
			t.Run(k.name+"/"+sc.name, func(t *testing.T) {
				s := liveStore()
				raw := kubeMint(t, k.key, sc)

				resp, ok, err := kubeAuthenticator(t, s, k.key.Public()).AuthenticateToken(authenticator.WithAudiences(t.Context(), sc.audiences), raw)
				require.NoError(t, err)
				require.True(t, ok)

				res, err := ksaValidator(t, s, sc.audiences, k.key.Public()).Validate(t.Context(), raw)
				require.NoError(t, err)
				sameUser(t, resp.User, res.UserInfo())
				assert.Equal(t, []string(resp.Audiences), res.Audiences)
			})
		}
	}
}

// TestKSATokensValidateWithKubernetes: tokens from ksa's minter pass
// Kubernetes' authenticator and bound-token validator with the same user.
func TestKSATokensValidateWithKubernetes(t *testing.T) {
	for _, k := range signingKeys {
		for _, sc := range scenarios {
			if sc.warnafter != 0 {
				continue // covered by the byte-equality test: the minter makes warnafter itself
			}
			t.Run(k.name+"/"+sc.name, func(t *testing.T) {
				s := liveStore()
				m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: k.key, APIAudiences: []string{audience}})
				require.NoError(t, err)
				tok, err := m.Mint(t.Context(), ksaRequest(sc))
				require.NoError(t, err)

				resp, ok, err := kubeAuthenticator(t, s, k.key.Public()).AuthenticateToken(authenticator.WithAudiences(t.Context(), sc.audiences), tok.Raw)
				require.NoError(t, err)
				require.True(t, ok)

				res, err := ksaValidator(t, s, sc.audiences, k.key.Public()).Validate(t.Context(), tok.Raw)
				require.NoError(t, err)
				sameUser(t, resp.User, res.UserInfo())
			})
		}
	}
}

// TestSameBytes: with Kubernetes' iat and jti, ksa mints the same payload;
// with RSA (deterministic PKCS#1 v1.5) the whole token is identical.
func TestSameBytes(t *testing.T) {
	for _, k := range signingKeys {
		for _, sc := range scenarios {
			t.Run(k.name+"/"+sc.name, func(t *testing.T) {
				raw := kubeMint(t, k.key, sc)
				var got struct {
					IAT int64  `json:"iat"`
					JTI string `json:"jti"`
				}
				require.NoError(t, json.Unmarshal(decodeSegment(t, raw, 1), &got))
				require.NotEmpty(t, got.JTI)

				cfg := tokens.MinterConfig{
					Issuer: issuer, Signer: k.key, APIAudiences: []string{audience},
					Now:    func() time.Time { return time.Unix(got.IAT, 0) },
					NewJTI: func() string { return got.JTI },
				}
				req := ksaRequest(sc)
				if sc.warnafter != 0 {
					// Kubernetes' TokenRequest reaches Claims(exp=1y,
					// warnafter=3607) from a 3607 s request.
					cfg.ExtendExpiration = true
					req.ExpirationSeconds = tokens.WarnOnlyExpirationSeconds
				}
				m, err := tokens.NewMinter(cfg)
				require.NoError(t, err)
				tok, err := m.Mint(t.Context(), req)
				require.NoError(t, err)

				assert.Equal(t, string(decodeSegment(t, raw, 0)), string(decodeSegment(t, tok.Raw, 0)), "header")
				assert.Equal(t, string(decodeSegment(t, raw, 1)), string(decodeSegment(t, tok.Raw, 1)), "payload")
				if k.name == "RS256" {
					assert.Equal(t, raw, tok.Raw, "whole token")
				}
			})
		}
	}
}

// TestKeyIDs: ksa's key IDs equal Kubernetes' for RSA and every EC curve,
// from public and private keys.
func TestKeyIDs(t *testing.T) {
	keys := []crypto.Signer{testkeys.K8sRSA(), testkeys.Generated("rsa3072"), testkeys.K8sEC(), testkeys.Generated("p384"), testkeys.Generated("p521")}
	for _, key := range keys {
		for _, form := range []any{key, key.Public()} {
			getter, err := serviceaccount.StaticPublicKeysGetter([]any{form})
			require.NoError(t, err)
			want := getter.GetPublicKeys(context.Background(), "")[0].KeyID
			got, err := jwks.KeyID(form)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		}
	}
	assert.Equal(t, testkeys.K8sRSAKeyID, mustKeyID(t, testkeys.K8sRSA()))
	assert.Equal(t, testkeys.K8sECKeyID, mustKeyID(t, testkeys.K8sEC()))
}

func mustKeyID(t *testing.T, key any) string {
	t.Helper()
	kid, err := jwks.KeyID(key)
	require.NoError(t, err)
	return kid
}

// TestRejectionsAgree: the two validators refuse the same tokens (ksa with a
// typed error): deleted pods, wrong UIDs, wrong audience, unknown issuer,
// expired tokens.
func TestRejectionsAgree(t *testing.T) {
	key := testkeys.K8sEC()
	now := time.Now()
	tests := []struct {
		name    string
		sc      scenario
		mutate  func(*store)
		auds    []string
		wantErr error
	}{
		{name: "pod deleted", sc: scenario{audiences: []string{audience}, exp: 3600, pod: true},
			mutate: func(s *store) { delete(s.pods, "myns/mypod") }, wantErr: tokens.ErrInvalidated},
		{name: "pod deleting for 2 minutes", sc: scenario{audiences: []string{audience}, exp: 3600, pod: true},
			mutate: func(s *store) { s.deletePod("myns", "mypod", now.Add(-2*time.Minute)) }, wantErr: tokens.ErrInvalidated},
		{name: "pod recreated", sc: scenario{audiences: []string{audience}, exp: 3600, pod: true},
			mutate: func(s *store) { s.addPod("myns", "mypod", "new-uid", "mysvcacct", "") }, wantErr: tokens.ErrBoundObjectUIDMismatch},
		{name: "service account recreated", sc: scenario{audiences: []string{audience}, exp: 3600},
			mutate: func(s *store) { s.addServiceAccount("myns", "mysvcacct", "new-uid") }, wantErr: tokens.ErrServiceAccountUIDMismatch},
		{name: "secret deleted", sc: scenario{audiences: []string{audience}, exp: 3600, secret: true},
			mutate: func(s *store) { delete(s.secrets, "myns/mysecret") }, wantErr: tokens.ErrInvalidated},
		{name: "node deleted", sc: scenario{audiences: []string{audience}, exp: 3600, node: true},
			mutate: func(s *store) { delete(s.nodes, "mynode") }, wantErr: tokens.ErrInvalidated},
		{name: "validating webhook configuration deleted", sc: scenarios[7],
			mutate: func(s *store) { delete(s.validating, "gmsa") }, wantErr: tokens.ErrInvalidated},
		{name: "mutating webhook configuration recreated", sc: scenarios[8],
			mutate: func(s *store) { s.addMutating("gmsa", "new-uid") }, wantErr: tokens.ErrBoundObjectUIDMismatch},
		{name: "webhook token for the API audience", sc: scenarios[7], auds: []string{audience}, wantErr: tokens.ErrAudienceMismatch},
		{name: "other audience", sc: scenario{audiences: []string{"vault"}, exp: 3600}, auds: []string{audience}, wantErr: tokens.ErrAudienceMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := liveStore()
			raw := kubeMint(t, key, tt.sc)
			if tt.mutate != nil {
				tt.mutate(s)
			}
			auds := tt.auds
			if auds == nil {
				auds = tt.sc.audiences
			}
			_, ok, err := kubeAuthenticator(t, s, key.Public()).AuthenticateToken(authenticator.WithAudiences(t.Context(), auds), raw)
			assert.False(t, ok)
			require.Error(t, err)

			_, kerr := ksaValidator(t, s, auds, key.Public()).Validate(t.Context(), raw)
			require.ErrorIs(t, kerr, tt.wantErr)
			t.Logf("kubernetes: %v\nksa:        %v", err, kerr)
		})
	}

	// A token for another issuer: Kubernetes says "not mine" (no error),
	// ksa a typed ErrUnknownIssuer.
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	gen, err := serviceaccount.JWTTokenGenerator("https://elsewhere", other)
	require.NoError(t, err)
	pub, priv, err := serviceaccount.Claims(core.ServiceAccount{}, nil, nil, nil, nil, nil, 3600, 0, []string{audience}, nil)
	require.NoError(t, err)
	raw, err := gen.GenerateToken(t.Context(), pub, priv)
	require.NoError(t, err)
	_, ok, err := kubeAuthenticator(t, liveStore(), key.Public()).AuthenticateToken(t.Context(), raw)
	assert.False(t, ok)
	assert.NoError(t, err)
	_, err = ksaValidator(t, liveStore(), []string{audience}, key.Public()).Validate(t.Context(), raw)
	require.ErrorIs(t, err, tokens.ErrUnknownIssuer)
}

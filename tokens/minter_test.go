package tokens_test

import (
	"context"
	"crypto"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// TestMintExactBytes checks a token kube-apiserver minted with Kubernetes'
// RSA test key: header and payload byte for byte, and (RSA PKCS#1 v1.5
// being deterministic) the same signature every time.
func TestMintExactBytes(t *testing.T) {
	m := mustMinter(t, testkeys.K8sRSA(), func(c *tokens.MinterConfig) {
		c.NewJTI = func() string { return "4f1d3b6e-0000-0000-0000-000000000000" }
		c.ExtendExpiration = true
	})
	tok, err := m.Mint(t.Context(), tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "sa-uid"},
		ExpirationSeconds: 3607,
		BoundObject:       &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod", UID: "pod-uid"},
		Node:              &ksa.ObjectRef{Name: "mynode", UID: "node-uid"},
	})
	require.NoError(t, err)
	assert.Equal(t, `{"alg":"RS256","kid":"JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"}`, headerOf(t, tok.Raw))
	assert.Equal(t, `{"aud":["https://kubernetes.default.svc"],"exp":1546300800,"iat":1514764800,"iss":"https://kubernetes.default.svc.cluster.local","jti":"4f1d3b6e-0000-0000-0000-000000000000","kubernetes.io":{"namespace":"myns","node":{"name":"mynode","uid":"node-uid"},"pod":{"name":"mypod","uid":"pod-uid"},"serviceaccount":{"name":"mysvcacct","uid":"sa-uid"},"warnafter":1514768407},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`, payloadOf(t, tok.Raw))
	assert.Equal(t, k8sNow.Add(3607*time.Second), tok.ExpirationTimestamp, "status reports the unextended lifetime")
	again, err := m.Mint(t.Context(), tokens.Request{
		ServiceAccount:    ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "sa-uid"},
		ExpirationSeconds: 3607,
		BoundObject:       &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod", UID: "pod-uid"},
		Node:              &ksa.ObjectRef{Name: "mynode", UID: "node-uid"},
	})
	require.NoError(t, err)
	assert.Equal(t, tok.Raw, again.Raw)
}

// TestMintLifetime covers the TokenRequest lifetime rules: default, limits,
// the cluster cap with its warning, and the warnafter extension, as
// Kubernetes' TokenRequest storage tests
// (k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage) expect them.
func TestMintLifetime(t *testing.T) {
	pod := &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod", UID: "mypod-uid"}
	secret := &tokens.BoundObject{Kind: tokens.BoundSecret, Name: "mysecret", UID: "mysecret-uid"}
	const year = 365 * 24 * time.Hour
	tests := []struct {
		name         string
		config       func(*tokens.MinterConfig)
		req          tokens.Request
		wantExp      time.Duration // exp - iat
		wantStatus   time.Duration // ExpirationTimestamp - iat
		wantWarnAftr time.Duration // 0: no warnafter
		wantWarnings []string
		wantErr      error
	}{
		{name: "default lifetime", req: tokens.Request{}, wantExp: time.Hour, wantStatus: time.Hour},
		{name: "minimum", req: tokens.Request{ExpirationSeconds: 600}, wantExp: 10 * time.Minute, wantStatus: 10 * time.Minute},
		{name: "below minimum", req: tokens.Request{ExpirationSeconds: 599}, wantErr: tokens.ErrInvalidRequest},
		{name: "negative", req: tokens.Request{ExpirationSeconds: -1}, wantErr: tokens.ErrInvalidRequest},
		{name: "maximum 2^32", req: tokens.Request{ExpirationSeconds: 1 << 32}, wantExp: (1 << 32) * time.Second, wantStatus: (1 << 32) * time.Second},
		{name: "above maximum", req: tokens.Request{ExpirationSeconds: 1<<32 + 1}, wantErr: tokens.ErrInvalidRequest},
		{
			name:   "cluster cap shortens with a warning",
			config: func(c *tokens.MinterConfig) { c.MaxExpiration = 2 * time.Hour },
			req:    tokens.Request{ExpirationSeconds: 3 * 3600}, wantExp: 2 * time.Hour, wantStatus: 2 * time.Hour,
			wantWarnings: []string{"requested expiration of 10800 seconds shortened to 7200 seconds"},
		},
		{
			name:   "item 97: no extension when disabled",
			config: func(c *tokens.MinterConfig) { c.MaxExpiration = 5 * time.Hour },
			req:    tokens.Request{ExpirationSeconds: 3607, BoundObject: pod}, wantExp: 3607 * time.Second, wantStatus: 3607 * time.Second,
		},
		{
			name: "item 98: extended to MaxExtendedExpiration",
			config: func(c *tokens.MinterConfig) {
				c.ExtendExpiration, c.MaxExpiration, c.MaxExtendedExpiration = true, 2*time.Hour, 5*time.Hour
			},
			req: tokens.Request{ExpirationSeconds: 3607, BoundObject: pod}, wantExp: 5 * time.Hour, wantStatus: 3607 * time.Second, wantWarnAftr: 3607 * time.Second,
		},
		{
			name:   "item 99: extended to the one-year default",
			config: func(c *tokens.MinterConfig) { c.ExtendExpiration, c.MaxExpiration = true, 2*year },
			req:    tokens.Request{ExpirationSeconds: 3607, BoundObject: pod}, wantExp: year, wantStatus: 3607 * time.Second, wantWarnAftr: 3607 * time.Second,
		},
		{
			name:   "item 100: extension beyond the cap",
			config: func(c *tokens.MinterConfig) { c.ExtendExpiration, c.MaxExpiration = true, 5*time.Hour },
			req:    tokens.Request{ExpirationSeconds: 3607, BoundObject: pod}, wantExp: year, wantStatus: 3607 * time.Second, wantWarnAftr: 3607 * time.Second,
		},
		{
			name:   "item 101: cap below 3607 prevents extension",
			config: func(c *tokens.MinterConfig) { c.ExtendExpiration, c.MaxExpiration = true, time.Hour },
			req:    tokens.Request{ExpirationSeconds: 3607, BoundObject: pod}, wantExp: time.Hour, wantStatus: time.Hour,
			wantWarnings: []string{"requested expiration of 3607 seconds shortened to 3600 seconds"},
		},
		{
			name:   "no extension for a non-API audience",
			config: func(c *tokens.MinterConfig) { c.ExtendExpiration = true },
			req:    tokens.Request{ExpirationSeconds: 3607, BoundObject: pod, Audiences: []string{testAudience, "vault"}}, wantExp: 3607 * time.Second, wantStatus: 3607 * time.Second,
		},
		{
			name:   "no extension without a pod binding",
			config: func(c *tokens.MinterConfig) { c.ExtendExpiration = true },
			req:    tokens.Request{ExpirationSeconds: 3607, BoundObject: secret}, wantExp: 3607 * time.Second, wantStatus: 3607 * time.Second,
		},
		{
			name:   "no extension for another lifetime",
			config: func(c *tokens.MinterConfig) { c.ExtendExpiration = true },
			req:    tokens.Request{ExpirationSeconds: 3608, BoundObject: pod}, wantExp: 3608 * time.Second, wantStatus: 3608 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := []func(*tokens.MinterConfig){}
			if tt.config != nil {
				cfg = append(cfg, tt.config)
			}
			m := mustMinter(t, testkeys.K8sEC(), cfg...)
			req := tt.req
			req.ServiceAccount = testSA
			tok, err := m.Mint(t.Context(), req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var rerr *tokens.RequestError
				require.ErrorAs(t, err, &rerr)
				assert.Equal(t, "spec.expirationSeconds", rerr.Field)
				return
			}
			require.NoError(t, err)
			c := tok.Claims
			assert.Equal(t, k8sNow, c.IssuedAt)
			assert.Equal(t, k8sNow, c.NotBefore)
			assert.Equal(t, tt.wantExp, c.Expiry.Sub(c.IssuedAt))
			assert.Equal(t, tt.wantStatus, tok.ExpirationTimestamp.Sub(c.IssuedAt))
			if tt.wantWarnAftr == 0 {
				assert.True(t, c.Kubernetes.WarnAfter.IsZero())
			} else {
				assert.Equal(t, tt.wantWarnAftr, c.Kubernetes.WarnAfter.Sub(c.IssuedAt))
			}
			assert.Equal(t, tt.wantWarnings, tok.Warnings)
		})
	}
}

// TestMintBinding covers bindings and audiences, as Kubernetes' claims
// tests (k8s.io/kubernetes/pkg/serviceaccount) expect them: one object kind
// at most (a node beside a pod), aud omitted when empty.
func TestMintBinding(t *testing.T) {
	tests := []struct {
		name       string
		req        tokens.Request
		wantK8s    string // the kubernetes.io claim as JSON, via a re-marshal
		wantAud    []string
		wantErr    error
		wantErrFld string
	}{
		{name: "defaults to API audiences", req: tokens.Request{}, wantAud: []string{testAudience}},
		{name: "audiences kept in order", req: tokens.Request{Audiences: []string{"2", "1"}}, wantAud: []string{"2", "1"}},
		{
			name:    "pod with node",
			req:     tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}, Node: &ksa.ObjectRef{Name: "n"}},
			wantK8s: `"node":{"name":"n"},"pod":{"name":"p","uid":"pu"}`, wantAud: []string{testAudience},
		},
		{
			name:    "secret",
			req:     tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundSecret, Name: "s", UID: "su"}},
			wantK8s: `"secret":{"name":"s","uid":"su"}`, wantAud: []string{testAudience},
		},
		{
			name:    "node",
			req:     tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundNode, Name: "n", UID: "nu"}},
			wantK8s: `"node":{"name":"n","uid":"nu"}`, wantAud: []string{testAudience},
		},
		{
			name:    "items 24/31: secret with a node is one object type too many",
			req:     tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundSecret, Name: "s", UID: "su"}, Node: &ksa.ObjectRef{Name: "n"}},
			wantErr: tokens.ErrInvalidRequest, wantErrFld: "spec.boundObjectRef",
		},
		{
			name:    "node binding with a node",
			req:     tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundNode, Name: "n", UID: "nu"}, Node: &ksa.ObjectRef{Name: "n"}},
			wantErr: tokens.ErrInvalidRequest, wantErrFld: "spec.boundObjectRef",
		},
		{name: "node without binding", req: tokens.Request{Node: &ksa.ObjectRef{Name: "n"}}, wantErr: tokens.ErrInvalidRequest, wantErrFld: "node"},
		{name: "node without name", req: tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}, Node: &ksa.ObjectRef{UID: "x"}}, wantErr: tokens.ErrInvalidRequest, wantErrFld: "node.name"},
		{name: "unknown kind", req: tokens.Request{BoundObject: &tokens.BoundObject{Kind: "ConfigMap", Name: "c", UID: "cu"}}, wantErr: tokens.ErrInvalidRequest, wantErrFld: "spec.boundObjectRef"},
		{name: "bound object without uid", req: tokens.Request{BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p"}}, wantErr: tokens.ErrInvalidRequest, wantErrFld: "spec.boundObjectRef"},
		{name: "empty audience", req: tokens.Request{Audiences: []string{""}}, wantErr: tokens.ErrInvalidRequest, wantErrFld: "spec.audiences"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustMinter(t, testkeys.K8sEC())
			req := tt.req
			req.ServiceAccount = testSA
			tok, err := m.Mint(t.Context(), req)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var rerr *tokens.RequestError
				require.ErrorAs(t, err, &rerr)
				assert.Equal(t, tt.wantErrFld, rerr.Field)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAud, tok.Claims.Audience)
			want := `"kubernetes.io":{"namespace":"myns",` + tt.wantK8s
			if tt.wantK8s != "" {
				want += ","
			}
			want += `"serviceaccount":{"name":"mysvcacct","uid":"mysvcacct-uid"}}`
			assert.Contains(t, payloadOf(t, tok.Raw), want)
			assert.Contains(t, payloadOf(t, tok.Raw), `"jti":"fixed"`, "item 32: jti always present")
		})
	}
}

func TestMintServiceAccountChecks(t *testing.T) {
	m := mustMinter(t, testkeys.K8sEC())
	tests := []struct {
		name string
		sa   ksa.ServiceAccount
	}{
		{name: "no uid", sa: ksa.ServiceAccount{Namespace: "ns", Name: "sa"}},
		{name: "bad namespace", sa: ksa.ServiceAccount{Namespace: "Ns", Name: "sa", UID: "u"}},
		{name: "bad name", sa: ksa.ServiceAccount{Namespace: "ns", Name: "sa:x", UID: "u"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: tt.sa})
			require.ErrorIs(t, err, tokens.ErrInvalidRequest)
			_, err = m.MintLegacy(t.Context(), tt.sa, "secret")
			require.ErrorIs(t, err, tokens.ErrInvalidRequest)
		})
	}
	_, err := m.MintLegacy(t.Context(), testSA, "")
	require.ErrorIs(t, err, tokens.ErrInvalidRequest)
}

// TestMinterKeys: every key type signs with its default algorithm, the
// header is exactly {"alg","kid"}, and the token verifies.
func TestMinterKeys(t *testing.T) {
	tests := []struct {
		name    string
		signer  crypto.Signer
		alg     string // MinterConfig.Algorithm
		kid     string // MinterConfig.KeyID
		wantAlg string
		wantErr bool
	}{
		{name: "rsa", signer: testkeys.Generated("rsa2048"), wantAlg: jwks.RS256},
		{name: "p256", signer: testkeys.Generated("p256"), wantAlg: jwks.ES256},
		{name: "p384", signer: testkeys.Generated("p384"), wantAlg: jwks.ES384},
		{name: "p521", signer: testkeys.Generated("p521"), wantAlg: jwks.ES512},
		{name: "ed25519", signer: testkeys.Generated("ed25519"), wantAlg: jwks.EdDSA},
		{name: "rsa PS256", signer: testkeys.Generated("rsa2048"), alg: jwks.PS256, wantAlg: jwks.PS256},
		{name: "rsa RS512", signer: testkeys.Generated("rsa2048"), alg: jwks.RS512, wantAlg: jwks.RS512},
		{name: "custom kid", signer: testkeys.Generated("p256"), kid: "key-1", wantAlg: jwks.ES256},
		{name: "ES384 on P-256", signer: testkeys.Generated("p256"), alg: jwks.ES384, wantErr: true},
		{name: "HS256", signer: testkeys.Generated("rsa2048"), alg: "HS256", wantErr: true},
		{name: "P-224", signer: testkeys.Generated("p224"), wantErr: true},
		{name: "RSA 1024", signer: testkeys.Generated("rsa1024"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tokens.MinterConfig{Issuer: testIssuer, Signer: tt.signer, Algorithm: tt.alg, KeyID: tt.kid, Now: fixedClock(k8sNow)}
			m, err := tokens.NewMinter(cfg)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAlg, m.Algorithm())
			kid := tt.kid
			if kid == "" {
				kid, err = jwks.KeyID(tt.signer)
				require.NoError(t, err)
			}
			assert.Equal(t, kid, m.KeyID())
			tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA})
			require.NoError(t, err)
			assert.Equal(t, `{"alg":"`+tt.wantAlg+`","kid":"`+kid+`"}`, headerOf(t, tok.Raw))

			key, err := jwks.NewKeyWithID(tt.signer, kid)
			require.NoError(t, err)
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
				c.Audiences = []string{testIssuer}
				c.AllowedAlgorithms = []string{jwks.PS256, jwks.RS512}
			})
			res, err := v.Validate(t.Context(), tok.Raw)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAlg, res.Algorithm)
			assert.Equal(t, testSA, res.Identity.ServiceAccount)
		})
	}
}

func TestNewMinterConfig(t *testing.T) {
	signer := testkeys.K8sEC()
	tests := []struct {
		name string
		cfg  tokens.MinterConfig
	}{
		{name: "no issuer", cfg: tokens.MinterConfig{Signer: signer}},
		{name: "no signer", cfg: tokens.MinterConfig{Issuer: testIssuer}},
		{name: "cap under an hour", cfg: tokens.MinterConfig{Issuer: testIssuer, Signer: signer, MaxExpiration: 59 * time.Minute}},
		{name: "cap over 2^32 s", cfg: tokens.MinterConfig{Issuer: testIssuer, Signer: signer, MaxExpiration: (1<<32 + 1) * time.Second}},
		{name: "negative extended", cfg: tokens.MinterConfig{Issuer: testIssuer, Signer: signer, MaxExtendedExpiration: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tokens.NewMinter(tt.cfg)
			require.Error(t, err)
		})
	}
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: signer, MaxExpiration: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, testIssuer, m.Issuer())
}

// TestMinterDefaults checks the documented zero values: API audiences
// default to the issuer, jti is a random UUID v4, the clock is time.Now, the
// extension is off.
func TestMinterDefaults(t *testing.T) {
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: testkeys.K8sEC()})
	require.NoError(t, err)
	before := time.Now().Truncate(time.Second)
	tok, err := m.Mint(context.Background(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: 3607,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "u"}})
	require.NoError(t, err)
	assert.Equal(t, []string{testIssuer}, tok.Claims.Audience)
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, tok.Claims.ID)
	assert.False(t, tok.Claims.IssuedAt.Before(before))
	assert.Equal(t, 3607*time.Second, tok.Claims.Expiry.Sub(tok.Claims.IssuedAt), "no extension by default")
	assert.NotEqual(t, tokens.NewJTI(), tokens.NewJTI())
}

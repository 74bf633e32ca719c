package tokens_test

import (
	"context"
	"crypto"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// TestAuthenticatorConformance follows Kubernetes' TestTokenGenerateAndValidate
// (k8s.io/kubernetes/pkg/serviceaccount): key selection by kid, several
// issuers, key rotation, a token in the JWS JSON serialization refused.
func TestAuthenticatorConformance(t *testing.T) {
	rsaKey, ecKey := testkeys.K8sRSA(), testkeys.K8sEC()
	other := testkeys.K8sOtherRSAPublic()
	mint := func(t *testing.T, signer *tokens.Minter) string {
		tok, err := signer.Mint(t.Context(), tokens.Request{ServiceAccount: testSA})
		require.NoError(t, err)
		return tok.Raw
	}
	rsaMinter := mustMinter(t, rsaKey)
	ecMinter := mustMinter(t, ecKey)
	barMinter := mustMinter(t, rsaKey, func(c *tokens.MinterConfig) { c.Issuer = "bar" })
	fooMinter := mustMinter(t, rsaKey, func(c *tokens.MinterConfig) { c.Issuer = "foo" })
	bogus := func(k any) jwks.Key {
		key, err := jwks.NewKey(k)
		require.NoError(t, err)
		key.KeyID = "bogus" + key.KeyID
		return key
	}
	tests := []struct {
		name    string
		token   string
		keys    []any
		wantErr error
	}{
		{name: "item 9: not a token", token: "invalid token", keys: []any{rsaKey}, wantErr: tokens.ErrMalformed},
		{name: "item 10: no keys", token: mint(t, rsaMinter), wantErr: tokens.ErrUnknownKeyID},
		{name: "item 11: rsa token, other keys", token: mint(t, rsaMinter), keys: []any{other, ecKey.Public()}, wantErr: tokens.ErrUnknownKeyID},
		{name: "item 12: ec token, rsa keys", token: mint(t, ecMinter), keys: []any{other, rsaKey.Public()}, wantErr: tokens.ErrUnknownKeyID},
		{name: "item 13: rsa token, rsa key", token: mint(t, rsaMinter), keys: []any{rsaKey.Public()}},
		{name: "item 14: issuer not accepted", token: mint(t, fooMinter), keys: []any{rsaKey.Public()}, wantErr: tokens.ErrUnknownIssuer},
		{name: "item 15: second accepted issuer", token: mint(t, barMinter), keys: []any{rsaKey.Public()}},
		{name: "item 16: ec token, ec key", token: mint(t, ecMinter), keys: []any{ecKey.Public()}},
		{name: "item 17: rotated keys (rsa)", token: mint(t, rsaMinter), keys: []any{other, ecKey.Public(), rsaKey.Public()}},
		{name: "item 17: rotated keys (ec)", token: mint(t, ecMinter), keys: []any{other, rsaKey.Public(), ecKey.Public()}},
		{name: "item 18: key IDs do not match", token: mint(t, rsaMinter), keys: []any{bogus(rsaKey), bogus(ecKey)}, wantErr: tokens.ErrUnknownKeyID},
		{name: "item 23: JWS JSON serialisation", token: `{"payload":"eyJpc3MiOiJiYXIifQ","signatures":[]}`, keys: []any{rsaKey}, wantErr: tokens.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustValidator(t, mustSource(t, tt.keys...), func(c *tokens.ValidatorConfig) {
				c.Issuers = []string{testIssuer, "bar"}
				c.Now = fixedClock(k8sNow.Add(time.Minute))
			})
			res, err := v.Validate(t.Context(), tt.token)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, res)
				return
			}
			require.NoError(t, err)
			info := res.UserInfo()
			assert.Equal(t, "system:serviceaccount:myns:mysvcacct", info.Username)
			assert.Equal(t, "mysvcacct-uid", info.UID)
			assert.Equal(t, []string{"system:serviceaccounts", "system:serviceaccounts:myns"}, info.Groups)
		})
	}
}

// TestNoKeysWithoutKid: a token without kid with an empty key source is
// "no keys found" (item 10's message).
func TestNoKeysWithoutKid(t *testing.T) {
	m := mustMinter(t, testkeys.K8sEC(), func(c *tokens.MinterConfig) { c.KeyID = "" })
	claims := &tokens.Claims{Issuer: testIssuer, Audience: []string{testAudience}, Expiry: k8sNow.Add(time.Hour),
		Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"}}}
	raw, err := m.Sign(t.Context(), claims)
	require.NoError(t, err)
	v := mustValidator(t, mustSource(t))
	_, err = v.Validate(t.Context(), raw)
	require.ErrorIs(t, err, tokens.ErrUnknownKeyID, "the minter still writes its derived kid")

	// A token with no kid header at all.
	noKid := b64(`{"alg":"ES256"}`) + "." + b64(`{"iss":"`+testIssuer+`"}`) + ".c2ln"
	_, err = v.Validate(t.Context(), noKid)
	require.ErrorIs(t, err, jwks.ErrNoKeys)
	assert.EqualError(t, err, "tokens: invalid signature, no keys found")
}

// TestBoundValidatorConformance follows Kubernetes' TestValidatePrivateClaims
// (k8s.io/kubernetes/pkg/serviceaccount): time with leeway, then the service
// account and bound objects with UID and deletion checks.
func TestBoundValidatorConformance(t *testing.T) {
	now := k8sNow
	sa := ksa.ServiceAccount{Namespace: "ns", Name: "saname", UID: "sauid"}
	type binding struct {
		kind tokens.BoundKind
		name string
	}
	bindings := map[tokens.ObjectKind]binding{
		tokens.KindSecret: {tokens.BoundSecret, "secretname"},
		tokens.KindPod:    {tokens.BoundPod, "podname"},
		tokens.KindNode:   {tokens.BoundNode, "nodename"},
	}
	store := func() *objectStore {
		return newObjectStore().
			add(tokens.KindServiceAccount, "ns", "saname", "sauid").
			add(tokens.KindSecret, "ns", "secretname", "secretuid").
			add(tokens.KindPod, "ns", "podname", "poduid").
			add(tokens.KindNode, "", "nodename", "nodeuid")
	}
	claims := func(mod func(*tokens.Claims)) *tokens.Claims {
		c := &tokens.Claims{Issuer: testIssuer, Audience: []string{testAudience}, Expiry: now, IssuedAt: now, NotBefore: now,
			Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: sa.Name, UID: sa.UID}}}
		if mod != nil {
			mod(c)
		}
		return c
	}
	bound := func(kind tokens.ObjectKind, uid string) func(*tokens.Claims) {
		return func(c *tokens.Claims) {
			ref := &ksa.ObjectRef{Name: bindings[kind].name, UID: uid}
			switch kind {
			case tokens.KindSecret:
				c.Kubernetes.Secret = ref
			case tokens.KindPod:
				c.Kubernetes.Pod = ref
			case tokens.KindNode:
				c.Kubernetes.Node = ref
			}
		}
	}
	type tcase struct {
		name        string
		claims      *tokens.Claims
		store       *objectStore
		wantErr     error
		wantMessage string
	}
	tests := []tcase{
		{name: "item 33: valid, exp = now", claims: claims(nil), store: store()},
		{name: "item 34: expired", claims: claims(func(c *tokens.Claims) { c.Expiry = now.Add(-1000 * time.Hour) }), store: store(), wantErr: tokens.ErrExpired},
		{name: "item 35: not yet valid", claims: claims(func(c *tokens.Claims) { c.NotBefore = now.Add(1000 * time.Hour) }), store: store(), wantErr: tokens.ErrNotYetValid},
		{name: "item 36: service account missing", claims: claims(nil), store: newObjectStore(), wantErr: tokens.ErrServiceAccountNotFound},
		{name: "item 37: secret missing", claims: claims(bound(tokens.KindSecret, "secretuid")), store: store().remove(tokens.KindSecret, "ns", "secretname"),
			wantErr: tokens.ErrInvalidated},
		{name: "item 38: pod missing", claims: claims(bound(tokens.KindPod, "poduid")), store: store().remove(tokens.KindPod, "ns", "podname"),
			wantErr: tokens.ErrInvalidated},
		{name: "item 39: node missing", claims: claims(bound(tokens.KindNode, "nodeuid")), store: store().remove(tokens.KindNode, "", "nodename"),
			wantErr: tokens.ErrInvalidated},
		{name: "item 40: service account UID", claims: claims(func(c *tokens.Claims) { c.Kubernetes.ServiceAccount.UID = "sauidold" }), store: store(),
			wantErr: tokens.ErrServiceAccountUIDMismatch, wantMessage: "service account UID (sauid) does not match claim (sauidold)"},
		{name: "item 41: secret UID", claims: claims(bound(tokens.KindSecret, "secretuidold")), store: store(),
			wantErr: tokens.ErrBoundObjectUIDMismatch, wantMessage: "secret UID (secretuid) does not match service account secret ref claim (secretuidold)"},
		{name: "item 42: pod UID", claims: claims(bound(tokens.KindPod, "poduidold")), store: store(),
			wantErr: tokens.ErrBoundObjectUIDMismatch, wantMessage: "pod UID (poduid) does not match service account pod ref claim (poduidold)"},
		{name: "node UID", claims: claims(bound(tokens.KindNode, "nodeuidold")), store: store(),
			wantErr: tokens.ErrBoundObjectUIDMismatch, wantMessage: "node UID (nodeuid) does not match service account node ref claim (nodeuidold)"},
		{name: "pod-bound token's node is not checked", claims: claims(func(c *tokens.Claims) {
			bound(tokens.KindPod, "poduid")(c)
			c.Kubernetes.Node = &ksa.ObjectRef{Name: "gone", UID: "x"}
		}), store: store()},
	}
	// Items 43-66: deletion timestamps for each object kind.
	deletions := []struct {
		label   string
		at      time.Time
		invalid bool
	}{
		{"now", now, false}, {"now-1s", now.Add(-time.Second), false}, {"now+1s", now.Add(time.Second), false},
		{"now-60s", now.Add(-60 * time.Second), false}, {"now-61s", now.Add(-61 * time.Second), true},
	}
	uids := map[tokens.ObjectKind]string{tokens.KindSecret: "secretuid", tokens.KindPod: "poduid", tokens.KindNode: "nodeuid"}
	for _, kind := range []tokens.ObjectKind{tokens.KindServiceAccount, tokens.KindSecret, tokens.KindPod, tokens.KindNode} {
		tests = append(tests, tcase{name: "items 43-66: " + string(kind) + " not deleted", claims: claims(bindingFor(kind, bound, uids)), store: store()})
		for _, d := range deletions {
			ns, name := "ns", "saname"
			if kind != tokens.KindServiceAccount {
				name = bindings[kind].name
			}
			if kind == tokens.KindNode {
				ns = ""
			}
			tc := tcase{
				name:   "items 43-66: " + string(kind) + " deleted at " + d.label,
				claims: claims(bindingFor(kind, bound, uids)),
				store:  store().deleting(kind, ns, name, d.at),
			}
			if d.invalid {
				tc.wantErr = tokens.ErrInvalidated
				if kind == tokens.KindServiceAccount {
					tc.wantMessage = "service account ns/saname has been deleted"
				}
			}
			tests = append(tests, tc)
		}
	}
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := m.Sign(t.Context(), tt.claims)
			require.NoError(t, err)
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
				c.SkipObjectCheck = false
				c.Objects = tt.store
			})
			res, err := v.Validate(t.Context(), raw)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if tt.wantMessage != "" {
					assert.EqualError(t, err, "tokens: "+tt.wantMessage)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, sa, res.Identity.ServiceAccount)
		})
	}
}

func bindingFor(kind tokens.ObjectKind, bound func(tokens.ObjectKind, string) func(*tokens.Claims), uids map[tokens.ObjectKind]string) func(*tokens.Claims) {
	if kind == tokens.KindServiceAccount {
		return nil
	}
	return bound(kind, uids[kind])
}

func (s *objectStore) remove(kind tokens.ObjectKind, ns, name string) *objectStore {
	delete(s.objects, objectKey(kind, ns, name))
	return s
}

// TestObjectErrors checks the typed liveness errors in detail.
func TestObjectErrors(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)

	store := newObjectStore().add(tokens.KindServiceAccount, "myns", "mysvcacct", "mysvcacct-uid")
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.SkipObjectCheck, c.Objects = false, store })
	_, err = v.Validate(t.Context(), tok.Raw)
	var oerr *tokens.ObjectError
	require.ErrorAs(t, err, &oerr)
	assert.Equal(t, tokens.KindPod, oerr.Kind)
	assert.Equal(t, "p", oerr.Name)
	assert.Equal(t, "pu", oerr.ClaimedUID)
	require.ErrorIs(t, err, tokens.ErrBoundObjectNotFound)
	require.ErrorIs(t, err, tokens.ErrInvalidated)
	require.ErrorIs(t, err, tokens.ErrObjectNotFound, "the getter's error is wrapped")

	// A getter failing for another reason: refused, not called invalidated.
	boom := errors.New("apiserver unavailable")
	store.err = boom
	_, err = v.Validate(t.Context(), tok.Raw)
	require.ErrorIs(t, err, tokens.ErrLookupFailed)
	require.ErrorIs(t, err, boom)
	assert.NotErrorIs(t, err, tokens.ErrInvalidated)
}

// TestTimeLeeway checks the strict boundaries of exp, nbf and iat with the
// default 60 s leeway, a custom leeway and none.
func TestTimeLeeway(t *testing.T) {
	now := k8sNow
	tests := []struct {
		name    string
		leeway  time.Duration
		mod     func(*tokens.Claims)
		wantErr error
	}{
		{name: "exp now-60s", mod: func(c *tokens.Claims) { c.Expiry = now.Add(-60 * time.Second) }},
		{name: "exp now-61s", mod: func(c *tokens.Claims) { c.Expiry = now.Add(-61 * time.Second) }, wantErr: tokens.ErrExpired},
		{name: "nbf now+60s", mod: func(c *tokens.Claims) { c.NotBefore = now.Add(60 * time.Second) }},
		{name: "nbf now+61s", mod: func(c *tokens.Claims) { c.NotBefore = now.Add(61 * time.Second) }, wantErr: tokens.ErrNotYetValid},
		{name: "iat now+60s", mod: func(c *tokens.Claims) { c.IssuedAt = now.Add(60 * time.Second) }},
		{name: "iat now+61s", mod: func(c *tokens.Claims) { c.IssuedAt = now.Add(61 * time.Second) }, wantErr: tokens.ErrIssuedInFuture},
		{name: "no nbf nor iat", mod: func(c *tokens.Claims) { c.NotBefore, c.IssuedAt = time.Time{}, time.Time{} }},
		{name: "no exp", mod: func(c *tokens.Claims) { c.Expiry = time.Time{} }, wantErr: tokens.ErrMissingClaim},
		{name: "exp at the epoch is present", mod: func(c *tokens.Claims) { c.Expiry = time.Unix(0, 0) }, wantErr: tokens.ErrExpired},
		{name: "no leeway: exp now", leeway: tokens.NoLeeway, mod: func(c *tokens.Claims) { c.Expiry = now }},
		{name: "no leeway: exp now-1s", leeway: tokens.NoLeeway, mod: func(c *tokens.Claims) { c.Expiry = now.Add(-time.Second) }, wantErr: tokens.ErrExpired},
		{name: "leeway 5m: exp now-5m", leeway: 5 * time.Minute, mod: func(c *tokens.Claims) { c.Expiry = now.Add(-5 * time.Minute) }},
		{name: "leeway 5m: exp now-5m1s", leeway: 5 * time.Minute, mod: func(c *tokens.Claims) { c.Expiry = now.Add(-5*time.Minute - time.Second) }, wantErr: tokens.ErrExpired},
		{name: "order: nbf before exp", mod: func(c *tokens.Claims) {
			c.NotBefore, c.Expiry = now.Add(time.Hour), now.Add(-time.Hour)
		}, wantErr: tokens.ErrNotYetValid},
	}
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &tokens.Claims{Issuer: testIssuer, Audience: []string{testAudience}, Expiry: now.Add(time.Hour), IssuedAt: now, NotBefore: now,
				Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"}}}
			tt.mod(c)
			raw, err := m.Sign(t.Context(), c)
			require.NoError(t, err)
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Leeway = tt.leeway })
			_, err = v.Validate(t.Context(), raw)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			var terr *tokens.TimeError
			if errors.As(err, &terr) {
				assert.Equal(t, now, terr.Now)
			}
		})
	}
}

// TestAudiences follows Kubernetes' Audiences.Intersect and the
// audience-agnostic wrapper (k8s.io/apiserver/pkg/authentication/authenticator).
func TestAudiences(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key)
	mint := func(t *testing.T, auds ...string) string {
		c := &tokens.Claims{Issuer: testIssuer, Audience: auds, Expiry: k8sNow.Add(time.Hour),
			Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"}}}
		raw, err := m.Sign(t.Context(), c)
		require.NoError(t, err)
		return raw
	}
	tests := []struct {
		name        string
		tokenAuds   []string
		validator   []string // the validator's own audiences
		requested   []string // ValidateFor; nil uses Validate
		acceptNoAud bool
		want        []string
		wantErr     bool
	}{
		{name: "match", tokenAuds: []string{"foo"}, validator: []string{"foo"}, want: []string{"foo"}},
		{name: "both match, requested order", tokenAuds: []string{"bar", "foo"}, validator: []string{"foo", "bar"}, want: []string{"foo", "bar"}},
		{name: "one of two", tokenAuds: []string{"foo", "bar"}, validator: []string{"foo", "wat"}, want: []string{"foo"}},
		{name: "none", tokenAuds: []string{"foo", "bar"}, validator: []string{"pls", "wat"}, wantErr: true},
		{name: "requested overrides own", tokenAuds: []string{"api", "other_api"}, validator: []string{"x"}, requested: []string{"api", "other_api"}, want: []string{"api", "other_api"}},
		{name: "requested not in token", tokenAuds: []string{"api"}, validator: []string{"api"}, requested: []string{"other"}, wantErr: true},
		{name: "token without aud refused by default", tokenAuds: nil, validator: []string{"api"}, wantErr: true},
		{name: "token without aud as kube-apiserver", tokenAuds: nil, validator: []string{"api"}, acceptNoAud: true, want: []string{"api"}},
		{name: "duplicates follow the requested list", tokenAuds: []string{"foo"}, validator: []string{"foo", "foo"}, want: []string{"foo", "foo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
				c.Audiences = tt.validator
				c.AcceptMissingAudience = tt.acceptNoAud
			})
			raw := mint(t, tt.tokenAuds...)
			var res *tokens.Result
			var err error
			if tt.requested != nil {
				res, err = v.ValidateFor(t.Context(), raw, tt.requested)
			} else {
				res, err = v.Validate(t.Context(), raw)
			}
			if tt.wantErr {
				require.ErrorIs(t, err, tokens.ErrAudienceMismatch)
				assert.Contains(t, err.Error(), "is invalid for the target audiences")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Audiences)
		})
	}

	// Kubernetes' message format.
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Audiences = []string{"api", testAudience} })
	_, err := v.Validate(t.Context(), mint(t, "foo"))
	assert.EqualError(t, err, `tokens: token audiences ["foo"] is invalid for the target audiences ["api" "https://kubernetes.default.svc"]`)

	// The audience is checked before time, as in kube-apiserver.
	c := &tokens.Claims{Issuer: testIssuer, Audience: []string{"foo"}, Expiry: k8sNow.Add(-time.Hour),
		Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"}}}
	raw, err := m.Sign(t.Context(), c)
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), raw)
	require.ErrorIs(t, err, tokens.ErrAudienceMismatch)

	// InsecureSkipAudienceCheck accepts any audience.
	skip := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Audiences, c.InsecureSkipAudienceCheck = nil, true })
	res, err := skip.Validate(t.Context(), mint(t, "anything"))
	require.NoError(t, err)
	assert.Empty(t, res.Audiences)
}

// TestAlgorithmPolicy: the token's alg must be its key's, unless allowed and
// fitting; Kubernetes itself accepts PS256 and RS512 on an RS256 key.
func TestAlgorithmPolicy(t *testing.T) {
	rsaKey := testkeys.Generated("rsa2048")
	ecKey := testkeys.Generated("p256")
	sign := func(t *testing.T, signer *tokens.Minter) string {
		raw, err := signer.Sign(t.Context(), &tokens.Claims{Issuer: testIssuer, Audience: []string{testAudience}, Expiry: k8sNow.Add(time.Hour),
			Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"}}})
		require.NoError(t, err)
		return raw
	}
	tests := []struct {
		name    string
		signer  string // key name
		alg     string
		allowed []string
		wantErr error
	}{
		{name: "RS256 on RSA", signer: "rsa", alg: jwks.RS256},
		{name: "PS256 refused by default", signer: "rsa", alg: jwks.PS256, wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "RS512 refused by default", signer: "rsa", alg: jwks.RS512, wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "PS256 allowed", signer: "rsa", alg: jwks.PS256, allowed: []string{jwks.PS256}},
		{name: "RS512 allowed", signer: "rsa", alg: jwks.RS512, allowed: []string{jwks.RS512}},
		{name: "ES256 on EC", signer: "ec", alg: jwks.ES256},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer := rsaKey
			if tt.signer == "ec" {
				signer = ecKey
			}
			m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: signer, Algorithm: tt.alg})
			require.NoError(t, err)
			v := mustValidator(t, mustSource(t, rsaKey, ecKey), func(c *tokens.ValidatorConfig) { c.AllowedAlgorithms = tt.allowed })
			_, err = v.Validate(t.Context(), sign(t, m))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
		})
	}
	_, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{testIssuer}, Keys: mustSource(t), Audiences: []string{"a"},
		SkipObjectCheck: true, AllowedAlgorithms: []string{"HS256"}})
	require.Error(t, err, "HMAC can never be allowed")
}

// TestStaleToken: warnafter in the past is reported, never refused.
func TestStaleToken(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key, func(c *tokens.MinterConfig) { c.ExtendExpiration = true })
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: tokens.WarnOnlyExpirationSeconds,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)
	tests := []struct {
		name      string
		at        time.Duration
		wantStale int64 // -1: not stale
	}{
		{name: "fresh", at: time.Minute, wantStale: -1},
		{name: "at warnafter", at: 3607 * time.Second, wantStale: -1},
		{name: "one second after", at: 3608 * time.Second, wantStale: 1},
		{name: "a day after", at: 3607*time.Second + 24*time.Hour, wantStale: 86400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Now = fixedClock(k8sNow.Add(tt.at)) })
			res, err := v.Validate(t.Context(), tok.Raw)
			require.NoError(t, err)
			if tt.wantStale < 0 {
				assert.Nil(t, res.Stale)
				return
			}
			require.NotNil(t, res.Stale)
			assert.Equal(t, k8sNow.Add(3607*time.Second), res.Stale.WarnAfter)
			assert.Equal(t, tt.wantStale, res.Stale.SecondsAfter)
		})
	}
}

func TestNewValidatorConfig(t *testing.T) {
	keys := mustSource(t, testkeys.K8sEC())
	valid := tokens.ValidatorConfig{Issuers: []string{testIssuer}, Keys: keys, Audiences: []string{"a"}, SkipObjectCheck: true}
	tests := []struct {
		name string
		mod  func(*tokens.ValidatorConfig)
	}{
		{name: "no issuers", mod: func(c *tokens.ValidatorConfig) { c.Issuers = nil }},
		{name: "empty issuer", mod: func(c *tokens.ValidatorConfig) { c.Issuers = []string{""} }},
		{name: "duplicate issuer", mod: func(c *tokens.ValidatorConfig) { c.Issuers = []string{"a", "a"} }},
		{name: "no keys", mod: func(c *tokens.ValidatorConfig) { c.Keys = nil }},
		{name: "no audiences", mod: func(c *tokens.ValidatorConfig) { c.Audiences = nil }},
		{name: "no object getter", mod: func(c *tokens.ValidatorConfig) { c.SkipObjectCheck = false }},
		{name: "getter and skip", mod: func(c *tokens.ValidatorConfig) { c.Objects = newObjectStore() }},
		{name: "negative leeway", mod: func(c *tokens.ValidatorConfig) { c.Leeway = -2 * time.Second }},
		{name: "none allowed", mod: func(c *tokens.ValidatorConfig) { c.AllowedAlgorithms = []string{"none"} }},
		{name: "legacy tokens with a getter that cannot get secrets", mod: func(c *tokens.ValidatorConfig) {
			c.Legacy = tokens.LegacyConfig{Accept: true}
			c.SkipObjectCheck = false
			c.Objects = tokens.ObjectGetterFunc(func(context.Context, tokens.ObjectKind, string, string) (tokens.LiveObject, error) {
				return tokens.LiveObject{}, nil
			})
		}},
		{name: "empty audience", mod: func(c *tokens.ValidatorConfig) { c.Audiences = []string{"api", ""} }},
		{name: "negative MaxKeysPerToken", mod: func(c *tokens.ValidatorConfig) { c.MaxKeysPerToken = -1 }},
		{name: "negative MaxTokenBytes", mod: func(c *tokens.ValidatorConfig) { c.MaxTokenBytes = -1 }},
		{name: "negative cache TTL", mod: func(c *tokens.ValidatorConfig) { c.Cache = &tokens.CacheConfig{TTL: -1} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.mod(&cfg)
			_, err := tokens.NewValidator(cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
		})
	}
	v, err := tokens.NewValidator(valid)
	require.NoError(t, err)
	assert.Equal(t, []string{testIssuer}, v.Issuers())
	assert.Equal(t, []string{"a"}, v.Audiences())
}

// TestValidatorDefaults checks the documented zero values: 60 s leeway,
// 16 KiB size limit, time.Now clock.
func TestValidatorDefaults(t *testing.T) {
	assert.Equal(t, time.Minute, tokens.DefaultLeeway)
	assert.Equal(t, 16<<10, tokens.DefaultMaxTokenBytes)
	key := testkeys.K8sEC()
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{testIssuer}, Keys: mustSource(t, key), Audiences: []string{testAudience}, SkipObjectCheck: true})
	require.NoError(t, err)

	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: key})
	require.NoError(t, err)
	// The real clock: a fresh token passes; one expired 59 s ago passes
	// within the default leeway, one expired 2 min ago does not.
	sign := func(exp time.Time) string {
		raw, err := m.Sign(t.Context(), &tokens.Claims{Issuer: testIssuer, Audience: []string{testAudience}, Expiry: exp,
			Kubernetes: &tokens.KubernetesClaims{Namespace: "ns", ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "u"}}})
		require.NoError(t, err)
		return raw
	}
	_, err = v.Validate(t.Context(), sign(time.Now().Add(time.Hour)))
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), sign(time.Now().Add(-30*time.Second)))
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), sign(time.Now().Add(-2*time.Minute)))
	require.ErrorIs(t, err, tokens.ErrExpired)

	big := make([]byte, tokens.DefaultMaxTokenBytes+1)
	_, err = v.Validate(t.Context(), string(big))
	require.ErrorIs(t, err, tokens.ErrTooLarge)
	_, err = v.Validate(t.Context(), string(big[:tokens.DefaultMaxTokenBytes]))
	require.ErrorIs(t, err, tokens.ErrMalformed, "at the limit the token is parsed")
}

// TestIssuerKeys: with keys bound to issuers, a key of issuer A never
// verifies a token claiming issuer B, even with A's kid.
func TestIssuerKeys(t *testing.T) {
	keyA, keyB := testkeys.Generated("p256"), testkeys.Generated("p256-b")
	const issA, issB = "https://a.example.com", "https://b.example.com"
	v := mustValidator(t, nil, func(c *tokens.ValidatorConfig) {
		c.Keys = nil
		c.Issuers = []string{issA, issB}
		c.IssuerKeys = map[string]jwks.KeySource{issA: mustSource(t, keyA), issB: mustSource(t, keyB)}
	})
	sign := func(key crypto.Signer, iss string) string {
		m := mustMinter(t, key, func(c *tokens.MinterConfig) { c.Issuer = iss })
		tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, Audiences: []string{testAudience}})
		require.NoError(t, err)
		return tok.Raw
	}
	res, err := v.Validate(t.Context(), sign(keyA, issA))
	require.NoError(t, err)
	assert.Equal(t, issA, res.Issuer)
	_, err = v.Validate(t.Context(), sign(keyB, issB))
	require.NoError(t, err)
	_, err = v.Validate(t.Context(), sign(keyA, issB))
	require.ErrorIs(t, err, tokens.ErrUnknownKeyID, "A's key must not verify B's tokens")

	for name, cfg := range map[string]tokens.ValidatorConfig{
		"issuer without keys": {Issuers: []string{issA, issB}, IssuerKeys: map[string]jwks.KeySource{issA: mustSource(t, keyA)}},
		"keys without issuer": {Issuers: []string{issA}, IssuerKeys: map[string]jwks.KeySource{issA: mustSource(t, keyA), issB: mustSource(t, keyB)}},
		"both key settings":   {Issuers: []string{issA}, Keys: mustSource(t, keyA), IssuerKeys: map[string]jwks.KeySource{issA: mustSource(t, keyA)}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Audiences, cfg.SkipObjectCheck = []string{"a"}, true
			_, err := tokens.NewValidator(cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
		})
	}
}

// TestKeySourceKeysChecked: RSA keys outside jwks' size bounds are refused
// whatever source hands them out.
func TestKeySourceKeysChecked(t *testing.T) {
	small := testkeys.Generated("rsa1024")
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: testIssuer, Signer: testkeys.K8sRSA(), KeyID: "k"})
	require.NoError(t, err)
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, Audiences: []string{testAudience}})
	require.NoError(t, err)
	src := keySourceFunc(func(context.Context, string) ([]jwks.Key, error) {
		return []jwks.Key{{KeyID: "k", Public: small.Public(), Algorithm: jwks.RS256}}, nil
	})
	v := mustValidator(t, src)
	_, err = v.Validate(t.Context(), tok.Raw)
	require.ErrorIs(t, err, tokens.ErrBadSignature)
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
}

type keySourceFunc func(ctx context.Context, kid string) ([]jwks.Key, error)

func (f keySourceFunc) Keys(ctx context.Context, kid string) ([]jwks.Key, error) { return f(ctx, kid) }

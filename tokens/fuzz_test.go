package tokens_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// rejectionSentinels are the errors a validator may answer with.
var rejectionSentinels = []error{
	tokens.ErrTooLarge, tokens.ErrMalformed, tokens.ErrUnknownIssuer, tokens.ErrUnknownKeyID, jwks.ErrNoKeys,
	tokens.ErrKeySource, tokens.ErrBadSignature, tokens.ErrAlgorithmNotAllowed, tokens.ErrAudienceMismatch,
	tokens.ErrExpired, tokens.ErrNotYetValid, tokens.ErrIssuedInFuture, tokens.ErrMissingClaim, tokens.ErrInvalidated,
	tokens.ErrBoundObjectUIDMismatch, tokens.ErrServiceAccountNotFound, tokens.ErrServiceAccountUIDMismatch,
	tokens.ErrLookupFailed, tokens.ErrLegacyToken, tokens.ErrTooManyKeys,
}

func typedRejection(err error) bool {
	for _, s := range rejectionSentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzValidate: arbitrary input never panics, is never accepted unless it is
// a token the key really signed, and every rejection is typed.
func FuzzValidate(f *testing.F) {
	// RSA PKCS#1 v1.5 signatures are deterministic: every fuzz worker
	// process mints the same token.
	key := testkeys.K8sRSA()
	m := mustMinter(f, key)
	tok, err := m.Mint(f.Context(), tokens.Request{ServiceAccount: testSA,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}, Node: &ksa.ObjectRef{Name: "n"}})
	require.NoError(f, err)
	parts := strings.Split(tok.Raw, ".")
	f.Add(tok.Raw)
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add(b64(`{"alg":"none"}`) + "." + parts[1] + ".")
	f.Add(b64(`{"alg":"HS256","kid":"x"}`) + "." + parts[1] + "." + parts[2])
	f.Add(b64(`{"alg":"RS256","crit":["b64"],"b64":false}`) + "." + parts[1] + "." + parts[2])
	f.Add(b64(`{"alg":"PS256","kid":"`+testkeys.K8sRSAKeyID+`"}`) + "." + parts[1] + "." + parts[2])
	f.Add(parts[0] + "." + b64(`{"iss":"`+testIssuer+`","exp":1e999}`) + "." + parts[2])
	f.Add(parts[0] + "." + b64(`{"iss":"`+testIssuer+`","kubernetes.io":{"pod":{"name":"a","name":"b"}}}`) + "." + parts[2])
	f.Add(`{"payload":"x","signatures":[]}`)
	f.Add("a.b.c.d.e")
	f.Add(strings.Repeat(".", 100))
	v := mustValidator(f, mustSource(f, key), func(c *tokens.ValidatorConfig) {
		c.Legacy.Accept = true
		c.AllowedAlgorithms = []string{"PS256"}
	})
	f.Fuzz(func(t *testing.T, token string) {
		res, err := v.Validate(t.Context(), token)
		if err != nil {
			assert.Nil(t, res)
			assert.True(t, typedRejection(err), "untyped rejection: %v", err)
			return
		}
		// Only tokens carrying the minted signature can pass.
		i := strings.LastIndexByte(token, '.')
		require.Equal(t, parts[2], token[i+1:], "accepted a token the key did not sign: %q", token)
		require.NotNil(t, res.Claims)
	})
}

// FuzzParseClaims: whatever ParseClaims accepts is valid JSON, and what it
// parsed writes and parses back to the same bytes.
func FuzzParseClaims(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"aud":["a","b"],"exp":1546300800,"iat":1514764800,"iss":"https://k","jti":"x","kubernetes.io":{"namespace":"n","node":{"name":"a","uid":"b"},"pod":{"name":"p","uid":"q"},"serviceaccount":{"name":"s","uid":"u"},"warnafter":1514768407},"nbf":1514764800,"sub":"system:serviceaccount:n:s"}`,
		`{"aud":"single","exp":1.5}`,
		`{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"ns","kubernetes.io/serviceaccount/secret.name":"s","kubernetes.io/serviceaccount/service-account.name":"n","kubernetes.io/serviceaccount/service-account.uid":"u","sub":"x"}`,
		`{"iss":"\u00e9\ud83d\ude00<&>"}`,
		`{"x":[[[[{}]]]],"y":null,"z":-0.5e-3}`,
		`{"ISS":"a"}`,
		`{"iss":"a","iss":"a"}`,
		`{"aud":["https://gmsa.ksa-system.svc:443/validate"],"exp":1514765400,"kubernetes.io":{"attestations":{"admissionReviewAPIGroups":["*"]},"namespace":"kube-system","serviceaccount":{"name":"webhook-auth","uid":"u"},"validatingwebhookconfiguration":{"name":"gmsa","uid":"v"}}}`,
		`{"kubernetes.io":{"attestations":{"admissionReviewAPIGroups":null,"other":[]},"mutatingwebhookconfiguration":{"name":"m","uid":"u"}}}`,
		`{"kubernetes.io":{"attestations":{"a":["x"],"a":["y"]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		c, err := tokens.ParseClaims(payload)
		if err != nil {
			require.ErrorIs(t, err, tokens.ErrMalformed)
			return
		}
		require.True(t, json.Valid(payload), "accepted invalid JSON %q", payload)
		out, err := c.MarshalJSON()
		require.NoError(t, err)
		back, err := tokens.ParseClaims(out)
		require.NoError(t, err, "cannot read back %q", out)
		again, err := back.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}

// FuzzMintValidate: any request the minter accepts yields a token the
// validator accepts with the same identity, whatever the strings hold.
func FuzzMintValidate(f *testing.F) {
	f.Add("myns", "mysvcacct", "uid-1", "https://aud?a=<b>&c", "pod", "pod-uid", "node", int64(3600))
	f.Add("a", "b.c", "\u2028", "\x00\xff", "p", "u", "", int64(600))
	key := testkeys.K8sEC()
	m := mustMinter(f, key)
	f.Fuzz(func(t *testing.T, ns, name, uid, aud, pod, podUID, node string, exp int64) {
		req := tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: ns, Name: name, UID: uid}, Audiences: []string{aud}, ExpirationSeconds: exp}
		if pod != "" {
			req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundPod, Name: pod, UID: podUID}
			if node != "" {
				req.Node = &ksa.ObjectRef{Name: node}
			}
		}
		tok, err := m.Mint(t.Context(), req)
		if err != nil {
			require.ErrorIs(t, err, tokens.ErrInvalidRequest)
			return
		}
		v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
			c.Audiences = tok.Claims.Audience
			c.Now = fixedClock(k8sNow.Add(time.Second))
		})
		res, err := v.Validate(t.Context(), tok.Raw)
		require.NoError(t, err)
		require.Equal(t, tok.Claims.Identity(), res.Identity)
	})
}

package tokens_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// TestParseClaimsStrict: payloads that encoding/json-based validators read
// leniently are refused.
func TestParseClaimsStrict(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantErr bool
	}{
		{name: "minimal", payload: `{}`},
		{name: "aud as a string", payload: `{"aud":"a"}`},
		{name: "unknown claims skipped", payload: `{"x":{"y":[1,2,{"z":null}]},"w":true}`},
		{name: "fractional exp truncated", payload: `{"exp":1514764800.9}`},
		{name: "exponent exp", payload: `{"exp":1.5e9}`},
		{name: "escaped claim name is the claim", payload: `{"\u0069ss":"a","iss":"b"}`, wantErr: true},
		{name: "duplicate iss", payload: `{"iss":"a","iss":"b"}`, wantErr: true},
		{name: "duplicate unknown", payload: `{"x":1,"x":2}`, wantErr: true},
		{name: "duplicate in kubernetes.io", payload: `{"kubernetes.io":{"namespace":"a","namespace":"b"}}`, wantErr: true},
		{name: "duplicate in a ref", payload: `{"kubernetes.io":{"pod":{"uid":"a","uid":"b"}}}`, wantErr: true},
		{name: "case variant of iss", payload: `{"ISS":"a"}`, wantErr: true},
		{name: "case variant of exp", payload: `{"Exp":1}`, wantErr: true},
		{name: "case variant in kubernetes.io", payload: `{"kubernetes.io":{"Namespace":"a"}}`, wantErr: true},
		{name: "case variant of kubernetes.io", payload: `{"Kubernetes.io":{}}`, wantErr: true},
		{name: "aud a number", payload: `{"aud":1}`, wantErr: true},
		{name: "aud an object", payload: `{"aud":{"a":1}}`, wantErr: true},
		{name: "aud with a number", payload: `{"aud":["a",1]}`, wantErr: true},
		{name: "aud null", payload: `{"aud":null}`, wantErr: true},
		{name: "exp a string", payload: `{"exp":"1514764800"}`, wantErr: true},
		{name: "exp negative", payload: `{"exp":-1}`, wantErr: true},
		{name: "exp beyond 2^33", payload: `{"exp":8589934593}`, wantErr: true},
		{name: "exp huge", payload: `{"exp":1e300}`, wantErr: true},
		{name: "iss a number", payload: `{"iss":1}`, wantErr: true},
		{name: "kubernetes.io a string", payload: `{"kubernetes.io":"x"}`, wantErr: true},
		{name: "pod a string", payload: `{"kubernetes.io":{"pod":"x"}}`, wantErr: true},
		{name: "warnafter a string", payload: `{"kubernetes.io":{"warnafter":"x"}}`, wantErr: true},
		{name: "trailing data", payload: `{}{}`, wantErr: true},
		{name: "trailing comma", payload: `{"iss":"a",}`, wantErr: true},
		{name: "not an object", payload: `[]`, wantErr: true},
		{name: "invalid utf-8", payload: "{\"iss\":\"\xff\"}", wantErr: true},
		{name: "lone surrogate", payload: `{"iss":"\ud800"}`, wantErr: true},
		{name: "depth bomb", payload: `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tokens.ParseClaims([]byte(tt.payload))
			if tt.wantErr {
				require.ErrorIs(t, err, tokens.ErrMalformed)
				assert.Contains(t, err.Error(), "tokens: malformed token claims: ", "the part at fault")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, c)
		})
	}
	c, err := tokens.ParseClaims([]byte(`{"exp":1514764800.9,"aud":"a"}`))
	require.NoError(t, err)
	assert.Equal(t, int64(1514764800), c.Expiry.Unix())
	assert.Equal(t, []string{"a"}, c.Audience)
}

// TestMalformedTokens: token shapes and headers that are refused before any
// key is looked at.
func TestMalformedTokens(t *testing.T) {
	key := testkeys.K8sEC()
	v := mustValidator(t, mustSource(t, key))
	m := mustMinter(t, key)
	good, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA})
	require.NoError(t, err)
	parts := strings.Split(good.Raw, ".")
	payload := parts[1]
	sig := parts[2]
	hdr := func(h string) string { return b64(h) + "." + payload + "." + sig }
	tests := []struct {
		name    string
		token   string
		wantErr error
		part    string
	}{
		{name: "empty", token: "", wantErr: tokens.ErrMalformed, part: "token"},
		{name: "two parts", token: parts[0] + "." + payload, wantErr: tokens.ErrMalformed, part: "signature"},
		{name: "JWE-shaped five parts", token: good.Raw + ".a.b", wantErr: tokens.ErrMalformed, part: "token"},
		{name: "empty signature", token: parts[0] + "." + payload + ".", wantErr: tokens.ErrMalformed, part: "signature"},
		{name: "padded payload", token: parts[0] + "." + payload + "==." + sig, wantErr: tokens.ErrMalformed, part: "claims"},
		{name: "standard alphabet", token: parts[0] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(payload) + "+." + sig, wantErr: tokens.ErrMalformed, part: "claims"},
		{name: "leading space JSON serialisation", token: ` {"protected":"x"}`, wantErr: tokens.ErrMalformed, part: "token"},
		{name: "no alg", token: hdr(`{"kid":"x"}`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "crit", token: hdr(`{"alg":"ES256","crit":["exp"],"exp":1}`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "JWE header", token: hdr(`{"alg":"RSA-OAEP","enc":"A256GCM"}`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "typ not JWT", token: hdr(`{"alg":"ES256","typ":"at+jwt"}`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "duplicate alg", token: hdr(`{"alg":"ES256","alg":"none"}`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "alg a number", token: hdr(`{"alg":256}`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "header not JSON", token: hdr(`alg`), wantErr: tokens.ErrMalformed, part: "header"},
		{name: "alg none", token: hdr(`{"alg":"none"}`), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg NONE", token: hdr(`{"alg":"NONE"}`), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg HS256", token: hdr(`{"alg":"HS256"}`), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "bad signature encoding", token: parts[0] + "." + payload + ".!!", wantErr: tokens.ErrMalformed, part: "signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := v.Validate(t.Context(), tt.token)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Nil(t, res)
			if tt.part != "" {
				assert.True(t, strings.HasPrefix(err.Error(), partPrefix[tt.part]), "the part at fault: %v", err)
			}
		})
	}
	_, err = v.Validate(t.Context(), good.Raw)
	require.NoError(t, err)
}

// TestNumericDateBoundary: 2^33 s is the latest time accepted.
func TestNumericDateBoundary(t *testing.T) {
	c, err := tokens.ParseClaims([]byte(`{"exp":8589934592}`))
	require.NoError(t, err)
	assert.Equal(t, int64(tokens.MaxNumericDate), c.Expiry.Unix())
	_, err = tokens.ParseClaims([]byte(`{"exp":8589934593}`))
	require.ErrorIs(t, err, tokens.ErrMalformed)
	c, err = tokens.ParseClaims([]byte(`{"exp":8589934591.5}`))
	require.NoError(t, err)
	assert.Equal(t, int64(tokens.MaxNumericDate-1), c.Expiry.Unix(), "fractions are truncated")
	_, err = tokens.ParseClaims([]byte(`{"exp":8589934592.5}`))
	require.ErrorIs(t, err, tokens.ErrMalformed)
	_, err = tokens.ParseClaims([]byte(`{"exp":0}`))
	require.NoError(t, err, "the epoch is a time like any other")
}

// partPrefix is how a refusal of each part of a token starts.
var partPrefix = map[string]string{
	"token":     "tokens: malformed token: ",
	"header":    "tokens: malformed token header: ",
	"claims":    "tokens: malformed token claims: ",
	"signature": "tokens: malformed token signature: ",
}

package tokens_test

import (
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// attackPayload is a valid payload for the victim validator.
func attackPayload(mod string) string {
	if mod != "" {
		return mod
	}
	return `{"aud":["` + testAudience + `"],"exp":1514768400,"iat":1514764800,"iss":"` + testIssuer + `","kubernetes.io":{"namespace":"ns","serviceaccount":{"name":"sa","uid":"u"}},"nbf":1514764800,"sub":"system:serviceaccount:ns:sa"}`
}

// forge signs header and payload with the given algorithm and key, exactly
// as an attacker holding that key would.
func forge(t *testing.T, header, payload string, alg string, key crypto.Signer) string {
	t.Helper()
	input := b64(header) + "." + b64(payload)
	sig, err := jws.Sign(alg, key, []byte(input))
	require.NoError(t, err)
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func hs256(input string, secret []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(input))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestAttackCorpus: named forged and malformed tokens, each refused with a
// specific typed error. The victim trusts one RSA key (RS256), one P-256
// key (ES256) and one P-384 key (ES384), for one issuer and audience.
func TestAttackCorpus(t *testing.T) {
	rsaKey := testkeys.K8sRSA()
	ecKey := testkeys.K8sEC()
	p384 := testkeys.Generated("p384")
	attacker := testkeys.Generated("p256-attacker")
	otherIssuerKey := testkeys.Generated("p256-other-issuer")
	rsaKid, ecKid := testkeys.K8sRSAKeyID, testkeys.K8sECKeyID
	p384Kid, err := jwks.KeyID(p384)
	require.NoError(t, err)
	attackerKid, err := jwks.KeyID(attacker)
	require.NoError(t, err)
	otherKid, err := jwks.KeyID(otherIssuerKey)
	require.NoError(t, err)

	// A jku / x5u server that must never be contacted.
	var fetched atomic.Int64
	trap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched.Add(1) }))
	t.Cleanup(trap.Close)

	pubDER, err := x509.MarshalPKIXPublicKey(rsaKey.Public())
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})

	good := forge(t, `{"alg":"RS256","kid":"`+rsaKid+`"}`, attackPayload(""), jwks.RS256, rsaKey)
	gp := strings.Split(good, ".")
	goodSig, err := base64.RawURLEncoding.DecodeString(gp[2])
	require.NoError(t, err)
	attackerJWK, err := jwks.MarshalJWK(jwks.Key{KeyID: rsaKid, Public: attacker.Public(), Algorithm: jwks.ES256})
	require.NoError(t, err)

	withPayload := func(p string) string { return gp[0] + "." + b64(p) + "." + gp[2] }
	noneToken := func(alg string) string { return b64(`{"alg":"`+alg+`"}`) + "." + gp[1] + "." }

	tests := []struct {
		name    string
		token   string
		wantErr error
	}{
		{name: "control: the genuine token", token: good},

		// Algorithms.
		{name: "alg none", token: noneToken("none") + "x", wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg None", token: noneToken("None") + "x", wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg NONE", token: noneToken("NONE") + "x", wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg nOnE", token: noneToken("nOnE") + "x", wantErr: tokens.ErrAlgorithmNotAllowed},
		// alg none is refused as the algorithm it is, whatever follows it.
		{name: "alg none without signature", token: noneToken("none"), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg NONE without signature", token: noneToken("NONE"), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg none without signature segment", token: strings.TrimSuffix(noneToken("none"), "."), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "alg none with an empty key ID", token: b64(`{"alg":"none","kid":""}`) + "." + gp[1] + ".", wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "HS256 keyed with the RSA public key PEM", token: func() string {
			in := b64(`{"alg":"HS256","kid":"`+rsaKid+`"}`) + "." + gp[1]
			return in + "." + hs256(in, pubPEM)
		}(), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "HS256 keyed with the RSA public key DER", token: func() string {
			in := b64(`{"alg":"HS256","kid":"`+rsaKid+`"}`) + "." + gp[1]
			return in + "." + hs256(in, pubDER)
		}(), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "RS256 claimed on the EC key", token: b64(`{"alg":"RS256","kid":"`+ecKid+`"}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "ES256 claimed on the RSA key", token: forge(t, `{"alg":"ES256","kid":"`+rsaKid+`"}`, attackPayload(""), jwks.ES256, ecKey), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "ES256 claimed for a P-384 key", token: forge(t, `{"alg":"ES256","kid":"`+p384Kid+`"}`, attackPayload(""), jwks.ES384, p384), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "PS256 on the RSA key, not allowed", token: forge(t, `{"alg":"PS256","kid":"`+rsaKid+`"}`, attackPayload(""), jwks.PS256, rsaKey), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "RS512 on the RSA key, not allowed", token: forge(t, `{"alg":"RS512","kid":"`+rsaKid+`"}`, attackPayload(""), jwks.RS512, rsaKey), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "unknown alg", token: b64(`{"alg":"XS256","kid":"`+rsaKid+`"}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrAlgorithmNotAllowed},

		// Keys.
		{name: "kid of another issuer's key", token: forge(t, `{"alg":"ES256","kid":"`+otherKid+`"}`, attackPayload(""), jwks.ES256, otherIssuerKey), wantErr: tokens.ErrUnknownKeyID},
		{name: "attacker's own key and kid", token: forge(t, `{"alg":"ES256","kid":"`+attackerKid+`"}`, attackPayload(""), jwks.ES256, attacker), wantErr: tokens.ErrUnknownKeyID},
		{name: "attacker key embedded as jwk header", token: forge(t, `{"alg":"ES256","kid":"`+rsaKid+`","jwk":`+string(attackerJWK)+`}`, attackPayload(""), jwks.ES256, attacker), wantErr: tokens.ErrAlgorithmNotAllowed},
		{name: "jku pointing at the attacker", token: forge(t, `{"alg":"ES256","kid":"`+ecKid+`","jku":"`+trap.URL+`/jwks"}`, attackPayload(""), jwks.ES256, attacker), wantErr: tokens.ErrBadSignature},
		{name: "x5u pointing at the attacker", token: forge(t, `{"alg":"ES256","kid":"`+ecKid+`","x5u":"`+trap.URL+`/cert"}`, attackPayload(""), jwks.ES256, attacker), wantErr: tokens.ErrBadSignature},
		{name: "unknown crit", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`","crit":["exp"],"exp":1}`, attackPayload(""), jwks.RS256, rsaKey), wantErr: tokens.ErrMalformed},
		// RFC 7797's b64 changes what the signature covers: refused whatever
		// its value, with or without crit.
		{name: "b64 false", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`","b64":false}`, attackPayload(""), jwks.RS256, rsaKey), wantErr: tokens.ErrMalformed},
		{name: "b64 true", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`","b64":true}`, attackPayload(""), jwks.RS256, rsaKey), wantErr: tokens.ErrMalformed},
		{name: "b64 null", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`","b64":null}`, attackPayload(""), jwks.RS256, rsaKey), wantErr: tokens.ErrMalformed},
		{name: "b64 false under crit", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`","crit":["b64"],"b64":false}`, attackPayload(""), jwks.RS256, rsaKey), wantErr: tokens.ErrMalformed},

		// Signatures.
		{name: "truncated signature", token: gp[0] + "." + gp[1] + "." + base64.RawURLEncoding.EncodeToString(goodSig[:len(goodSig)-1]), wantErr: tokens.ErrBadSignature},
		{name: "signature with a byte appended", token: gp[0] + "." + gp[1] + "." + base64.RawURLEncoding.EncodeToString(append(append([]byte{}, goodSig...), 0)), wantErr: tokens.ErrBadSignature},
		{name: "padded signature", token: good + "==", wantErr: tokens.ErrMalformed},
		{name: "signature in the standard alphabet", token: gp[0] + "." + gp[1] + "." + base64.StdEncoding.EncodeToString(goodSig), wantErr: tokens.ErrMalformed},
		{name: "signature of another payload", token: gp[0] + "." + b64(strings.Replace(attackPayload(""), `"sa"`, `"admin"`, 1)) + "." + gp[2], wantErr: tokens.ErrBadSignature},

		// Encodings.
		{name: "padded header", token: b64(`{"alg":"RS256","kid":"`+rsaKid+`"}`) + "=." + gp[1] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "non-canonical trailing bits", token: gp[0][:len(gp[0])-1] + string(gp[0][len(gp[0])-1]+1) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "payload in the standard alphabet", token: gp[0] + "." + base64.StdEncoding.EncodeToString([]byte(attackPayload(`{"iss":"`+testIssuer+`","x":"???>>>"}`))) + "." + gp[2], wantErr: tokens.ErrMalformed},

		{name: "CR LF inside the signature", token: gp[0] + "." + gp[1] + "." + gp[2][:10] + "\r\n" + gp[2][10:], wantErr: tokens.ErrMalformed},
		{name: "LF inside the payload", token: gp[0] + "." + gp[1][:10] + "\n" + gp[1][10:] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "trailing LF", token: good + "\n", wantErr: tokens.ErrMalformed},

		// Claims.
		{name: "claim ſub (U+017F folds to s)", token: withPayload(`{"iss":"` + testIssuer + `","ſub":"system:serviceaccount:kube-system:admin"}`), wantErr: tokens.ErrMalformed},
		{name: "claim with a Kelvin sign for k", token: withPayload(`{"iss":"` + testIssuer + `","\u212aubernetes.io":{}}`), wantErr: tokens.ErrMalformed},
		{name: "header ALG beside alg", token: b64(`{"alg":"RS256","ALG":"none","kid":"`+rsaKid+`"}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "header CRIT", token: b64(`{"alg":"RS256","kid":"`+rsaKid+`","CRIT":["exp"]}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "duplicate iss", token: withPayload(`{"iss":"` + testIssuer + `","iss":"` + testIssuer + `"}`), wantErr: tokens.ErrMalformed},
		{name: "duplicate exp", token: withPayload(`{"iss":"` + testIssuer + `","exp":1,"exp":99999999999}`), wantErr: tokens.ErrMalformed},
		{name: "aud a number", token: withPayload(`{"iss":"` + testIssuer + `","aud":1}`), wantErr: tokens.ErrMalformed},
		{name: "aud an object", token: withPayload(`{"iss":"` + testIssuer + `","aud":{"x":"` + testAudience + `"}}`), wantErr: tokens.ErrMalformed},
		{name: "exp a string", token: withPayload(`{"iss":"` + testIssuer + `","exp":"1514768400"}`), wantErr: tokens.ErrMalformed},
		{name: "exp far beyond 2^32 s", token: withPayload(`{"iss":"` + testIssuer + `","exp":1e20}`), wantErr: tokens.ErrMalformed},
		{name: "exp as an overflowing integer", token: withPayload(`{"iss":"` + testIssuer + `","exp":99999999999999999999999}`), wantErr: tokens.ErrMalformed},
		{name: "claim Iss", token: withPayload(`{"Iss":"` + testIssuer + `"}`), wantErr: tokens.ErrMalformed},
		{name: "claim EXP", token: withPayload(`{"iss":"` + testIssuer + `","EXP":1}`), wantErr: tokens.ErrMalformed},
		{name: "claim Kubernetes.IO", token: withPayload(`{"iss":"` + testIssuer + `","Kubernetes.IO":{}}`), wantErr: tokens.ErrMalformed},
		{name: "claim name escaped into iss twice", token: withPayload(`{"iss":"` + testIssuer + `","\u0069ss":"https://evil"}`), wantErr: tokens.ErrMalformed},
		{name: "payload depth bomb", token: withPayload(`{"iss":"` + testIssuer + `","x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`), wantErr: tokens.ErrMalformed},
		{name: "header depth bomb", token: b64(`{"alg":"RS256","x":`+strings.Repeat("{\"a\":", 500)+"1"+strings.Repeat("}", 500)+`}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "invalid service account name", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`"}`, attackPayload(strings.Replace(attackPayload(""), `"namespace":"ns"`, `"namespace":"ns:kube-system"`, 1)), jwks.RS256, rsaKey), wantErr: tokens.ErrMissingClaim},

		// Shapes and sizes.
		{name: "megabyte header", token: b64(`{"alg":"RS256","x":"`+strings.Repeat("a", 1<<20)+`"}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrTooLarge},
		{name: "megabyte payload", token: gp[0] + "." + b64(`{"x":"`+strings.Repeat("a", 1<<20)+`"}`) + "." + gp[2], wantErr: tokens.ErrTooLarge},
		{name: "JWS JSON serialisation", token: `{"payload":"` + gp[1] + `","signatures":[{"protected":"` + gp[0] + `","signature":"` + gp[2] + `"}]}`, wantErr: tokens.ErrMalformed},
		{name: "JWE-shaped, five segments", token: good + ".AAAA.BBBB", wantErr: tokens.ErrMalformed},
		{name: "JWE header", token: b64(`{"alg":"RSA-OAEP","enc":"A256GCM"}`) + "." + gp[1] + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "nested JWT as payload", token: gp[0] + "." + b64(good) + "." + gp[2], wantErr: tokens.ErrMalformed},
		{name: "whitespace around", token: " " + good + " ", wantErr: tokens.ErrMalformed},
		{name: "issuer of another cluster", token: forge(t, `{"alg":"RS256","kid":"`+rsaKid+`"}`, strings.Replace(attackPayload(""), testIssuer, "https://other.example.com", 1), jwks.RS256, rsaKey), wantErr: tokens.ErrUnknownIssuer},
	}
	v := mustValidator(t, mustSource(t, rsaKey.Public(), ecKey.Public(), p384.Public()), func(c *tokens.ValidatorConfig) {
		c.Now = fixedClock(k8sNow.Add(time.Minute))
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := v.Validate(t.Context(), tt.token)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.Nil(t, res)
			assert.True(t, typedRejection(err))
		})
	}
	assert.Zero(t, fetched.Load(), "jku/x5u must never be fetched")
}

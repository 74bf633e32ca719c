package ksa_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/lestrrat-go/jwx/v3/jwk"
	jwxjws "github.com/lestrrat-go/jwx/v3/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/providerconfig"
	"github.com/ksa-go/ksa/credprovider/tokenexchange"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/awskms"
	"github.com/ksa-go/ksa/keystore/azurekms"
	"github.com/ksa-go/ksa/keystore/cloudkms"
	"github.com/ksa-go/ksa/keystore/keystoretest"
	"github.com/ksa-go/ksa/keystore/pkcs11"
	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokenreview"
	"github.com/ksa-go/ksa/tokens"
	"github.com/ksa-go/ksa/x509sa"
)

// packagePrefixes are the message prefixes of the module's packages: the
// names of the library's package directories (the root is "ksa").
var packagePrefixes = libraryPackageNames()

// libraryPackageNames lists the names of the module's packages from its
// directories: every directory holding Go files, outside internal/,
// testdata/, examples/ and the other modules (interop/, cmd/).
func libraryPackageNames() []string {
	names := []string{"ksa"}
	_ = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		switch d.Name() {
		case "internal", "testdata", "examples", "interop", "cmd", "api":
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			names = append(names, d.Name())
		}
		return nil
	})
	return names
}

var word = regexp.MustCompile(`[\p{L}\p{N}]+`)

// messageProblems holds a message to the module's convention: the package
// prefix once, at the start, and no phrase said twice (no word repeated
// back to back, no three words repeated in order). Phrases are compared
// within each item of a list ("a; b; c"), and values (quoted text, URLs,
// paths, label names, numbers) are not phrases.
func messageProblems(msg string) []string {
	var problems []string
	if len(packagePrefixes) < 10 {
		problems = append(problems, fmt.Sprintf("only %d package names found: %v", len(packagePrefixes), packagePrefixes))
	}
	for _, p := range packagePrefixes {
		n := 0
		for _, m := range regexp.MustCompile(`(^|[^\w/.-])`+p+`: `).FindAllStringIndex(msg, -1) {
			n++
			if m[0] != 0 {
				problems = append(problems, fmt.Sprintf("prefix %q inside the message", p+":"))
			}
		}
		if n > 1 {
			problems = append(problems, fmt.Sprintf("prefix %q %d times", p+":", n))
		}
	}
	for _, item := range strings.Split(msg, "; ") {
		var kept []string
		for _, f := range strings.Fields(quoted.ReplaceAllString(item, " ")) {
			if strings.ContainsAny(strings.TrimRight(f, ".,:;)"), "/=.:@") {
				continue
			}
			kept = append(kept, f)
		}
		numbers := map[string]int{}
		for _, f := range kept {
			if n := strings.Trim(f, "()[],:;"); len(n) >= 3 && isNumber(n) {
				numbers[n]++
				if numbers[n] == 2 {
					problems = append(problems, fmt.Sprintf("number %s said twice", n))
				}
			}
		}
		words := word.FindAllString(strings.ToLower(strings.Join(kept, " ")), -1)
		seen := map[string]bool{}
		for i := range words {
			if i > 0 && words[i] == words[i-1] && !isNumber(words[i]) {
				problems = append(problems, fmt.Sprintf("word %q repeated", words[i]))
			}
			if i+3 <= len(words) {
				tri := strings.Join(words[i:i+3], " ")
				if seen[tri] {
					problems = append(problems, fmt.Sprintf("phrase %q said twice", tri))
				}
				seen[tri] = true
			}
		}
	}
	return problems
}

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// TestMessageProblemsCatches: the checker finds the faults this module's
// messages once had.
func TestMessageProblemsCatches(t *testing.T) {
	for _, msg := range []string{
		`tokens: malformed token token: empty part`,
		`jwks: key #0: jwks: unsupported key *rsa.PublicKey`,
		`oidc: could not marshal issuer keys JSON, error: jwks: key #0: jwks: unsupported key`,
		`tokens: malformed token claims: malformed token claims: claim "sub"`,
		`jwks: fetching https://x/jwks (HTTP 404): unexpected status 404 Not Found`,
		`jwks: fetching https://x: body over the size limit: jwks: document over the 262144-byte limit`,
		`tokens: token file /t: the token has expired (the kubelet has not rotated it): service account token has expired`,
		`ksa: username "x" must be of the form system:serviceaccount:namespace:name: ksa: invalid namespace "X"`,
	} {
		assert.NotEmpty(t, messageProblems(msg), msg)
	}
	assert.Empty(t, messageProblems(`jwks: the key set fails the audit (2 problems): key #0 member "d": private or symmetric key member; key #1 member "d": private or symmetric key member`))
}

func isNumber(s string) bool { return strings.Trim(s, "0123456789") == "" }

// TestErrorMessages builds every error type of the module, most through
// the failure that produces it (so causes nest as they do in use), and
// holds each message to the convention.
func TestErrorMessages(t *testing.T) {
	ctx := context.Background()
	msgs := map[string]error{}
	add := func(name string, err error) {
		t.Helper()
		require.Error(t, err, name)
		msgs[name] = err
	}

	// ksa
	_, err := ksa.ParseUsername("system:serviceaccount:Bad:x")
	add("ksa username with a bad namespace", err)
	_, err = ksa.ParseUsername("user")
	add("ksa username without prefix", err)
	add("ksa name", ksa.CheckObjectName("pod name", "a..b"))

	// jwks
	_, err = jwks.NewKey("not a key")
	add("jwks key type", err)
	_, err = jwks.NewStaticSource(jwks.Key{Public: &rsa.PublicKey{N: big.NewInt(7), E: 3}})
	add("jwks static source", err)
	_, err = jwks.MarshalSet([]jwks.Key{{KeyID: "k", Public: "x"}})
	add("jwks marshal set", err)
	_, err = jwks.ParseSet([]byte(`{"keys":`), jwks.ParseOptions{})
	add("jwks parse set", err)
	_, err = jwks.ParseSet([]byte(`{"keys":[]}`+strings.Repeat(" ", 100)), jwks.ParseOptions{MaxBytes: 20})
	add("jwks set too large", err)
	add("jwks audit", jwks.Audit([]byte(`{"keys":[{"kty":"oct","k":"AQ"},{"kty":"EC","d":"AQ"}],"meta":{"p":1}}`)))
	_, err = keystore.LoadPublicKeysFile(filepath.Join(t.TempDir(), "missing.pem"))
	add("keystore key file", err)
	_, err = keystore.LoadSigningKeyFile(writeTemp(t, "sa.key", "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END EC PRIVATE KEY-----\n"))
	add("keystore signing key", err)
	_, err = keystore.ParseRef("pkcs11:token=ksa;id=01?pin-value=1234")
	add("keystore reference with a PIN", err)
	_, err = keystore.ParseRef("pkcs12:token=ksa")
	add("keystore reference with an unknown scheme", err)
	_, err = keystore.ParseRef("awskms:key-id=alias/sa")
	add("keystore reference to an alias", err)
	_, err = keystore.Files{}.Open(ctx, "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1")
	add("keystore store not supported", err)
	pinRef, err := keystore.ParseRef("pkcs11:token=ksa;id=01?pin-source=" + filepath.Join(t.TempDir(), "missing-pin"))
	require.NoError(t, err)
	_, err = pinRef.ReadPIN()
	add("keystore PIN file", err)
	// Installed or not, SoftHSM2 cannot put a token under a file.
	_, err = keystoretest.NewSoftHSM(filepath.Join(writeTemp(t, "not-a-dir", ""), "hsm"))
	add("keystoretest", err)
	_, err = keystore.Openers{}.Open(ctx, "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1")
	add("keystore openers without the store", err)
	_, err = keystore.Openers{}.Create(ctx, "sa.key", keystore.KeySpec{})
	add("keystore openers create a file", err)
	_, err = (&pkcs11.Store{}).Open(ctx, "pkcs11:token=ksa;id=01?pin-source="+filepath.Join(t.TempDir(), "missing-pin"))
	add("pkcs11 PIN file", err)
	_, err = (&pkcs11.Store{}).Open(ctx, "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
	add("pkcs11 another store's reference", err)
	_, err = (&awskms.Store{}).Create(ctx, "awskms:name=sa", keystore.KeySpec{RSA: true, Bits: 1024})
	add("awskms key spec", err)
	_, err = (&cloudkms.Store{}).Create(ctx, "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k", keystore.KeySpec{Curve: elliptic.P521()})
	add("cloudkms key spec", err)
	_, err = azurekms.NewStore(azurekms.Config{MaxCalls: -1})
	add("azurekms config", err)
	_, err = jwks.ParsePublicKeysPEM([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	add("jwks PEM", err)
	_, err = jwks.NewRemote(jwks.RemoteConfig{URL: "http://x"})
	add("jwks config", err)
	add("jwks fetch 404", remoteErr(t, http.StatusNotFound, ""))
	add("jwks fetch too large", remoteErr(t, http.StatusOK, `{"keys":[]}`+strings.Repeat(" ", 300<<10)))
	add("jwks fetch bad document", remoteErr(t, http.StatusOK, `{"keys":`))
	add("jwks fetch no usable key", remoteErr(t, http.StatusOK, `{"keys":[{"kty":"oct","k":"AQ"}]}`))
	rateLimited := &jwks.RateLimitError{URL: "https://x/jwks", KeyID: "k", Next: time.Unix(1700000010, 0),
		Last: &jwks.FetchError{URL: "https://x/jwks", Status: 503, Reason: "unexpected status 503 Service Unavailable"}}
	add("jwks rate limited", rateLimited)
	add("jwks rate limited, no keys held", &jwks.FetchError{URL: "https://x/jwks", Err: &jwks.RateLimitError{URL: "https://x/jwks", Next: time.Unix(1700000010, 0)}})

	// tokens: validation failures as a relying party meets them.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Unix(1700000000, 0)
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://iss", Signer: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	sa := ksa.ServiceAccount{Namespace: "ns", Name: "sa", UID: "u"}
	tok, err := m.Mint(ctx, tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"}, BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)
	pub, _ := jwks.NewKey(key.Public())
	src, _ := jwks.NewStaticSource(pub)
	validator := func(mod func(*tokens.ValidatorConfig)) *tokens.Validator {
		cfg := tokens.ValidatorConfig{Issuers: []string{"https://iss"}, Keys: src, Audiences: []string{"vault"}, SkipObjectCheck: true, Now: func() time.Time { return now }}
		if mod != nil {
			mod(&cfg)
		}
		v, err := tokens.NewValidator(cfg)
		require.NoError(t, err)
		return v
	}
	v := validator(nil)
	parts := strings.Split(tok.Raw, ".")
	for name, raw := range map[string]string{
		"tokens malformed":        "abc",
		"tokens malformed header": "e30." + parts[1] + "." + parts[2],
		"tokens malformed claims": parts[0] + ".eyJzdWIiOjEsInN1YiI6Mn0." + parts[2],
		"tokens case variant":     parts[0] + "." + "eyJpc3MiOiJodHRwczovL2lzcyIsIklTUyI6MX0" + "." + parts[2],
		"tokens bearer":           "Bearer " + tok.Raw,
		"tokens bad signature":    parts[0] + "." + parts[1] + "." + parts[2][:10] + "AAAA" + parts[2][14:],
		"tokens too large":        strings.Repeat("a", tokens.DefaultMaxTokenBytes+1),
		"tokens alg none":         "eyJhbGciOiJub25lIn0." + parts[1] + ".",
	} {
		_, err := v.Validate(ctx, raw)
		add(name, err)
	}
	_, err = v.ValidateFor(ctx, tok.Raw, []string{"other"})
	add("tokens audience", err)
	_, err = validator(func(c *tokens.ValidatorConfig) { c.Issuers = []string{"https://other"} }).Validate(ctx, tok.Raw)
	add("tokens issuer", err)
	_, err = validator(func(c *tokens.ValidatorConfig) { c.Now = func() time.Time { return now.Add(2 * time.Hour) } }).Validate(ctx, tok.Raw)
	add("tokens expired", err)
	for name, getter := range map[string]tokens.ObjectGetterFunc{
		"tokens pod gone": func(_ context.Context, kind tokens.ObjectKind, _, _ string) (tokens.LiveObject, error) {
			if kind == tokens.KindPod {
				return tokens.LiveObject{}, fmt.Errorf("pods %q: %w", "p", tokens.ErrObjectNotFound)
			}
			return tokens.LiveObject{UID: "u"}, nil
		},
		"tokens lookup failed": func(context.Context, tokens.ObjectKind, string, string) (tokens.LiveObject, error) {
			return tokens.LiveObject{}, errors.New("connection refused")
		},
		"tokens service account not found": func(context.Context, tokens.ObjectKind, string, string) (tokens.LiveObject, error) {
			return tokens.LiveObject{}, tokens.ErrObjectNotFound
		},
	} {
		_, err := validator(func(c *tokens.ValidatorConfig) { c.SkipObjectCheck, c.Objects = false, getter }).Validate(ctx, tok.Raw)
		add(name, err)
	}
	_, err = validator(func(c *tokens.ValidatorConfig) { c.Keys = failingSource{} }).Validate(ctx, tok.Raw)
	add("tokens key source", err)
	_, err = tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{"a"}, Keys: src})
	add("tokens config", err)
	_, err = m.Mint(ctx, tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "NS", Name: "sa", UID: "u"}})
	add("tokens request", err)
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(path, []byte(tok.Raw), 0o600))
	fs, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: path, Now: func() time.Time { return now.Add(2 * time.Hour) }})
	require.NoError(t, err)
	_, err = fs.Current(ctx)
	add("tokens file expired", err)
	noExp := writeTemp(t, "token", parts[0]+".e30."+parts[2])
	fs, err = tokens.NewFileSource(tokens.FileSourceConfig{Path: noExp, Now: func() time.Time { return now }})
	require.NoError(t, err)
	_, err = fs.Current(ctx)
	add("tokens file without exp", err)
	_, err = validator(func(c *tokens.ValidatorConfig) {
		c.Keys = keysFunc(func(context.Context, string) ([]jwks.Key, error) {
			return nil, &jwks.RateLimitError{URL: "https://x/jwks", KeyID: pub.KeyID, Next: time.Unix(1700000010, 0), Last: rateLimited.Last}
		})
	}).Validate(ctx, tok.Raw)
	add("tokens unknown kid, rate limited", err)
	var others []jwks.Key
	for range 2 {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		other, err := jwks.NewKeyWithID(k.Public(), pub.KeyID)
		require.NoError(t, err)
		others = append(others, other)
	}
	_, err = validator(func(c *tokens.ValidatorConfig) {
		c.Keys, c.MaxKeysPerToken = keysFunc(func(context.Context, string) ([]jwks.Key, error) { return others, nil }), 1
	}).Validate(ctx, tok.Raw)
	add("tokens too many keys", err)
	failing, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://iss", Signer: failingSigner{key}})
	require.NoError(t, err)
	_, err = failing.Mint(ctx, tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"}})
	add("tokens sign", err)

	// oidc
	_, err = oidc.Render(oidc.IssuerConfig{Issuer: "http://x", ExternalAddress: "a"}, []jwks.Key{pub})
	add("oidc issuer", err)
	_, err = oidc.Render(oidc.IssuerConfig{Issuer: "https://x", ExternalAddress: "a"}, []jwks.Key{{KeyID: "k", Public: "x"}})
	add("oidc render key", err)
	_, err = oidc.Render(oidc.IssuerConfig{Issuer: "https://x", ExternalAddress: "a"}, nil)
	add("oidc no keys", err)
	_, err = oidc.ParseMetadata([]byte(`{"issuer":1}`))
	add("oidc document", err)
	srv, err := oidctest.NewServer(oidctest.Config{Path: "/c"})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	_, err = oidc.Discover(ctx, oidc.DiscoveryConfig{Issuer: srv.Issuer() + "/", Client: srv.Client()})
	add("oidc issuer mismatch", err)
	_, err = oidc.Discover(ctx, oidc.DiscoveryConfig{Issuer: srv.URL() + "/none", Client: srv.Client()})
	add("oidc discovery 404", err)
	_, err = oidc.NewVerifier(ctx, oidc.VerifierConfig{Issuers: []string{srv.Issuer()}})
	add("oidc config", err)
	staticDir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(staticDir, "openid", "v1", "jwks"), 0o755))
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: "https://x", ExternalAddress: "a"}, []jwks.Key{pub})
	require.NoError(t, err)
	add("oidc static file not replaced", oidc.WriteStatic(staticDir, docs))

	// kubeapi
	_, err = kubeapi.NewManager(kubeapi.ManagerConfig{})
	add("kubeapi config", err)

	// golangjwt
	_, err = golangjwt.NewKeys(golangjwt.Config{})
	add("golangjwt config", err)
	add("golangjwt claim", (&golangjwt.Claims{}).Validate())
	gjKeys, err := golangjwt.NewKeys(golangjwt.Config{Keys: src})
	require.NoError(t, err)
	_, err = gjKeys.Keyfunc(&jwt.Token{Method: jwt.SigningMethodES256, Header: map[string]any{"alg": "HS256", "kid": "k"}})
	add("golangjwt key", err)
	gjFailing, err := golangjwt.NewKeys(golangjwt.Config{Keys: failingSource{}})
	require.NoError(t, err)
	_, err = gjFailing.Keyfunc(&jwt.Token{Method: jwt.SigningMethodES256, Header: map[string]any{"alg": "ES256", "kid": "k"}})
	add("golangjwt key source", err)
	_, err = gjKeys.Keyfunc(&jwt.Token{Method: jwt.SigningMethodES256, Header: map[string]any{"alg": "ES256", "kid": "k", "crit": []any{"exp"}}})
	add("golangjwt crit", err)

	// jwxkeys
	_, err = jwxkeys.NewKeyProvider(jwxkeys.Config{})
	add("jwxkeys config", err)
	jwxProvider, err := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: failingSource{}})
	require.NoError(t, err)
	_, err = jwxjws.Verify([]byte(tok.Raw), jwxjws.WithKeyProvider(jwxProvider))
	add("jwxkeys key source", ours(err, "jwxkeys: "))
	_, err = jwxkeys.FromSet(unmarshalable{jwk.NewSet()}, jwks.ParseOptions{})
	add("jwxkeys convert", err)

	// ksaprom
	_, err = ksaprom.NewMetrics(ksaprom.Config{})
	add("ksaprom config", err)

	// tokenreview
	_, err = tokenreview.NewValidator(tokenreview.ValidatorConfig{})
	add("tokenreview config", err)
	refuse := func(name string, st *tokenreview.Status, rerr error) {
		rv, err := tokenreview.NewValidator(tokenreview.ValidatorConfig{Mode: tokenreview.ReviewOnly, Audiences: []string{"vault"},
			Reviewer: tokenreview.ReviewerFunc(func(context.Context, tokenreview.Request) (*tokenreview.Status, error) { return st, rerr })})
		require.NoError(t, err)
		_, err = rv.Validate(ctx, "token")
		add(name, err)
	}
	refuse("tokenreview failed", nil, errors.New("dial tcp: connection refused"))
	refuse("tokenreview refused", &tokenreview.Status{Error: "service account token has been invalidated"}, nil)
	refuse("tokenreview username", &tokenreview.Status{Authenticated: true, User: ksa.UserInfo{Username: "system:serviceaccount:x"}}, nil)
	refuse("tokenreview audiences", &tokenreview.Status{Authenticated: true, User: ksa.UserInfo{Username: "system:serviceaccount:a:b"}, Audiences: []string{"x"}}, nil)

	// credprovider
	_, err = credprovider.ParseRequest([]byte(`{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"a","auth":{}}`))
	add("credprovider request", err)
	_, err = credprovider.ParseRequest([]byte(`{"apiVersion":"v1"`))
	add("credprovider request JSON", err)
	_, err = credprovider.Respond(&credprovider.Request{Image: "a", ServiceAccountToken: "opaque"}, credprovider.Credential{Password: "p"}, credprovider.Cache{}, nil)
	add("credprovider response token", err)
	_, err = credprovider.CheckToken(ctx, &credprovider.Request{Image: "a", ServiceAccountToken: "x.y.z"}, credprovider.TokenCheck{Audience: "r",
		Verify: func(ctx context.Context, tok string, auds []string) (*tokens.Result, error) {
			_, err := tokens.ParseUnverified(tok)
			return nil, err
		}})
	add("credprovider token refused", err)
	add("credprovider no token", credprovider.Run(ctx, strings.NewReader(`{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"a"}`), io.Discard,
		credprovider.ProviderFunc(func(_ context.Context, req *credprovider.Request) (*credprovider.Response, error) {
			return credprovider.PassThrough(req, "u", credprovider.Cache{}, nil)
		})))

	_, err = providerconfig.Parse([]byte(`{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"Name":"a"}]}`))
	add("providerconfig parse", err)
	for i, f := range providerconfig.Lint(&providerconfig.Config{Providers: []providerconfig.Provider{{Name: "a/b", MatchImages: []string{"*"}}}}, providerconfig.LintOptions{}) {
		add(fmt.Sprintf("providerconfig finding %d", i), f)
	}
	_, err = tokenexchange.New(tokenexchange.Config{TokenURL: "http://registry.example/token"})
	add("tokenexchange config", err)
	add("tokenexchange refused", &tokenexchange.RefusedError{StatusCode: 400, Code: "invalid_grant", Description: "audience"})

	// clusterapi
	_, err = clusterapi.NewSecret("Cluster-1", key, clusterapi.SecretOptions{})
	add("clusterapi cluster name", err)
	_, err = clusterapi.NewSecret("c1", struct{ crypto.Signer }{key}, clusterapi.SecretOptions{})
	add("clusterapi key in a key store", err)
	hsmRef, err := keystore.ParseRef("pkcs11:token=ksa;id=01;object=sa?pin-source=/run/pin")
	require.NoError(t, err)
	_, err = clusterapi.NewSecretFromRef("c1", hsmRef, clusterapi.SecretOptions{})
	add("clusterapi key-store reference", err)
	missingRef, err := keystore.ParseRef(filepath.Join(t.TempDir(), "missing.key"))
	require.NoError(t, err)
	_, err = clusterapi.NewSecretFromRef("c1", missingRef, clusterapi.SecretOptions{})
	add("clusterapi key file", err)
	_, err = clusterapi.NewSecret("c1", key, clusterapi.SecretOptions{VerifyKeys: []crypto.PublicKey{key.Public()}})
	add("clusterapi verify key twice", err)
	capiSecret, err := clusterapi.NewSecret("c1", key, clusterapi.SecretOptions{Namespace: "fleet"})
	require.NoError(t, err)
	capiSecret.Data["tls.crt"] = []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
	_, err = clusterapi.ReadSecret(capiSecret)
	add("clusterapi bad tls.crt", err)
	capiSecret.Name = "c1-ca"
	_, err = clusterapi.ReadSecret(capiSecret)
	add("clusterapi not the sa Secret", err)

	// credspec
	_, err = credspec.Equal(`{"a":`, `{}`)
	add("credspec parse", err)
	_, err = credspec.Canonical(strings.Repeat(" ", credspec.MaxSize+1))
	add("credspec size", err)
	_, err = credspec.NewHandler(credspec.HandlerConfig{})
	add("credspec config", err)
	_, err = credspec.Decode([]byte("apiVersion: windows.k8s.io/v1\nkind: GMSACredentialSpec\nmetadata:\n  name: x\ncredspec:\n  Extra: 1\n"))
	add("credspec schema", err)
	_, err = credspec.Decode([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n"))
	add("credspec manifest", err)
	specs, err := credspec.NewStaticSourceJSON(map[string]string{"webapp01": `{"CmsPlugins":["ActiveDirectory"]}`})
	require.NoError(t, err)
	_, err = specs.Contents(ctx, "missing")
	add("credspec not found", err)
	_, err = credspec.NewStaticSourceJSON(map[string]string{"webapp01": `[]`})
	add("credspec static source", err)
	allowAll := func(context.Context, credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{Allowed: true}, nil
	}
	gmsaVal, err := credspec.NewValidator(credspec.ValidatorConfig{Source: specs, Authorizer: credspec.AuthorizerFunc(allowAll)})
	require.NoError(t, err)
	gmsaPod := func(contents string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: "web", SecurityContext: &corev1.PodSecurityContext{
			WindowsOptions: &corev1.WindowsSecurityContextOptions{GMSACredentialSpecName: new("webapp01"), GMSACredentialSpec: new(contents)}}}}
	}
	err = gmsaVal.ValidateCreate(ctx, "ns", gmsaPod(`{"CmsPlugins":[],"CmsPlugins":["ActiveDirectory"]}`), nil)
	add("credspec denial, ambiguous", err)
	var denial *credspec.Denial
	require.ErrorAs(t, err, &denial)
	add("credspec ambiguous", denial.Err)
	add("credspec denial, not JSON", gmsaVal.ValidateCreate(ctx, "ns", gmsaPod(`not JSON`), nil))

	// x509sa
	_, err = x509sa.NewSPIFFEID("cluster.local", ksa.ServiceAccount{Namespace: "Bad", Name: "x"})
	add("x509sa SPIFFE ID", err)
	_, err = x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "ns", Name: "sa"}, PodName: "a..b"}.Name()
	add("x509sa subject", err)
	_, err = x509sa.DecodeName(pkix.Name{Names: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "alice"}}})
	add("x509sa subject not a service account", err)
	add("x509sa reserved extension", x509sa.Subject{ServiceAccount: sa, Extensions: map[string]string{"system:pod-name": "x"}}.Check())
	add("x509sa extension", x509sa.Subject{ServiceAccount: sa, Extensions: map[string]string{"k": "a b"}}.Check())
	_, err = x509sa.ParseCSR([]byte("not DER"))
	add("x509sa CSR", err)
	weak, _ := rsa.GenerateKey(rand.Reader, 1024)
	_, err = x509sa.CreateCSR(nil, weak, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}})
	add("x509sa key", err)
	_, err = x509sa.NewVerifier(x509sa.VerifierConfig{})
	add("x509sa config", err)
	_, _, err = x509sa.SplitHosts([]string{"a b"})
	add("x509sa host", err)
	_, _, err = x509sa.SplitHosts(make([]string, x509sa.MaxHosts+1))
	add("x509sa limit", err)
	add("x509sa signer name", x509sa.CheckSignerName("x"))
	_, err = x509sa.CreateCSR(nil, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}, Usage: x509sa.ServerAuth, TrustDomain: "td"})
	add("x509sa usage", err)
	csrDER, err := x509sa.CreateCSR(nil, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}, Usage: x509sa.ServerAuth, Hosts: []string{"h"}})
	require.NoError(t, err)
	csr, err := x509sa.ParseCSR(csrDER)
	require.NoError(t, err)
	add("x509sa mismatch", x509sa.MatchRequester(csr, ksa.UserInfo{Username: "alice"}, x509sa.MatchOptions{}))
	add("x509sa policy", x509sa.MatchRequester(csr, ksa.UserInfo{Username: sa.Username(), UID: sa.UID, Groups: sa.Groups()}, x509sa.MatchOptions{}))
	issuer, err := x509sa.NewIssuer(x509sa.IssuerConfig{CA: caCertFor(t, key, now), Key: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	clientDER, err := x509sa.CreateCSR(nil, leafKey, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}})
	require.NoError(t, err)
	_, err = issuer.Issue(x509sa.IssueRequest{CSR: clientDER, MaxLifetime: time.Minute})
	add("x509sa lifetime", err)
	issued, err := issuer.Issue(x509sa.IssueRequest{CSR: clientDER})
	require.NoError(t, err)
	untrusting, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: x509.NewCertPool(), Now: func() time.Time { return now }})
	require.NoError(t, err)
	_, err = untrusting.Verify([]*x509.Certificate{issued.Leaf})
	add("x509sa untrusted", err)
	_, err = x509sa.DecodeCertificate(caCertFor(t, key, now))
	add("x509sa certificate", err)

	// kubeapi, on certificates
	_, err = kubeapi.UsageFromKeyUsages([]certificatesv1.KeyUsage{"code signing"})
	add("kubeapi CSR usage", err)
	_, err = kubeapi.NewCertificateSigningRequest(csrDER, kubeapi.CertificateSigningRequestOptions{SignerName: "example.com/s", Lifetime: time.Second})
	add("kubeapi CSR options", err)

	// podcert
	_, err = podcert.NewSigner(podcert.SignerConfig{SignerName: "example.com/x"})
	add("podcert config", err)
	_, err = podcert.NewSigner(podcert.SignerConfig{SignerName: "nope"})
	add("podcert signer name", err)
	bad := podcert.Request{Namespace: "ns", Name: "req", SignerName: "example.com/x", PodName: "p", PodUID: "u", ServiceAccountName: "sa",
		ServiceAccountUID: "u", NodeName: "n", NodeUID: "u", MaxExpirationSeconds: 60}
	add("podcert request", bad.Check())
	bad.MaxExpirationSeconds, bad.PodName = 0, "Bad!"
	add("podcert request pod name", bad.Check())
	bad.PodName, bad.SignerName = "p", "example.com/a/b"
	add("podcert request signer name", bad.Check())
	bad.SignerName, bad.UnverifiedUserAnnotations = "example.com/x", map[string]string{"serve-hosts": "a"}
	add("podcert request annotation key", bad.Check())
	bad.UnverifiedUserAnnotations = map[string]string{"a.b/c": strings.Repeat("a", podcert.MaxUnverifiedUserAnnotationsSize)}
	add("podcert request annotations size", bad.Check())
	bad.UnverifiedUserAnnotations = nil
	_, err = bad.PublicKey()
	add("podcert no proof", err)
	bad.StubPKCS10Request = []byte("not DER")
	_, err = bad.PublicKey()
	add("podcert stub CSR", err)
	bad.StubPKCS10Request = make([]byte, podcert.MaxStubPKCS10RequestSize+1)
	_, err = bad.PublicKey()
	add("podcert stub CSR size", err)
	bad.StubPKCS10Request, bad.PKIXPublicKey, bad.ProofOfPossession = nil, mustPKIX(t, key.Public()), []byte{1}
	_, err = bad.PublicKey()
	add("podcert proof", err)
	add("podcert key", podcert.CheckKey(&weak.PublicKey))
	add("podcert status", podcert.CheckStatus(&bad, podcert.Status{}, podcert.Status{CertificateChain: "x"}, now))
	refusing := func(policyErr error, random io.Reader) *podcert.Signer {
		s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: "example.com/x", Key: key, Chain: []*x509.Certificate{caCertFor(t, key, now)},
			Now: func() time.Time { return now }, Rand: random,
			Policy: podcert.PolicyFunc(func(*podcert.Request, podcert.Asked) error { return policyErr })})
		require.NoError(t, err)
		return s
	}
	good := podcert.Request{Namespace: "shop", Name: "req", SignerName: "example.com/x", PodName: "cart-0", PodUID: "u", ServiceAccountName: "cart",
		ServiceAccountUID: "u", NodeName: "n", NodeUID: "u", StubPKCS10Request: stubCSR(t, leafKey),
		UnverifiedUserAnnotations: map[string]string{podcert.DefaultServeHostsKey: "a.b"}}
	d, err := refusing(errors.New("host a.b is outside the namespace"), nil).Decide(&good)
	require.NoError(t, err)
	add("podcert annotation", d.Err)
	good.UnverifiedUserAnnotations = nil
	_, err = refusing(nil, failingReader{}).Decide(&good)
	add("podcert signing", err)
	_, err = podcert.ParseBundle([]byte("junk"))
	add("podcert bundle", err)
	_, err = podcert.NewSource(podcert.SourceConfig{BundlePath: filepath.Join(t.TempDir(), "missing.pem")})
	add("podcert bundle file", err)
	big := filepath.Join(t.TempDir(), "big.pem")
	require.NoError(t, os.WriteFile(big, make([]byte, podcert.MaxBundleSize+1), 0o600))
	_, err = podcert.NewSource(podcert.SourceConfig{BundlePath: big})
	add("podcert bundle file too large", err)
	_, err = podcert.NewPeers(podcert.PeerConfig{TrustBundle: []byte("junk")})
	add("podcert peers config", err)
	_, err = podcert.NewPeers(podcert.PeerConfig{TrustBundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})})
	add("podcert peers trust bundle certificate", err)
	_, err = podcert.ParseTrustBundle(make([]byte, podcert.MaxTrustBundleSize+1))
	add("podcert trust bundle too large", err)
	_, err = podcert.NewTrustFile(podcert.TrustFileConfig{})
	add("podcert trust file config", err)
	_, err = podcert.NewTrustFile(podcert.TrustFileConfig{Path: filepath.Join(t.TempDir(), "missing.pem")})
	add("podcert trust file missing", err)
	_, err = podcert.NewTrustFile(podcert.TrustFileConfig{Path: writeTemp(t, "ca.pem", "junk")})
	add("podcert trust file junk", err)
	bigTrust := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(bigTrust, make([]byte, podcert.MaxTrustBundleSize+1), 0o600))
	_, err = podcert.NewTrustFile(podcert.TrustFileConfig{Path: bigTrust})
	add("podcert trust file too large", err)
	_, err = podcert.NewHostPolicy(podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}-{namespace}.svc"}})
	add("podcert host pattern", err)
	_, err = podcert.NewHostPolicy(podcert.HostPolicyConfig{IPRanges: []string{"10.0.0.0/8", "10.0.0.1"}})
	add("podcert IP range", err)

	// podcertctl
	_, err = podcertctl.New(podcertctl.Config{})
	add("podcertctl config", err)
	pcSigner := func(caKey *ecdsa.PrivateKey) *podcert.Signer {
		s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: "example.com/x", Key: caKey, Chain: []*x509.Certificate{caCertFor(t, caKey, now)},
			MaxLifetime: time.Hour, Now: func() time.Time { return now }})
		require.NoError(t, err)
		return s
	}
	nextKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pcClient, err := clientgo.New(fake.NewClientset())
	require.NoError(t, err)
	_, err = podcertctl.New(podcertctl.Config{Client: pcClient, Signer: pcSigner(key),
		Next: &podcertctl.Rotation{Signer: pcSigner(nextKey), SignsAt: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)}})
	add("podcertctl rotation before 1970", err)
	ctl, err := podcertctl.New(podcertctl.Config{Client: pcClient, Signer: pcSigner(key), APIVersion: podcertctl.V1, Now: func() time.Time { return now },
		Next: &podcertctl.Rotation{Signer: pcSigner(nextKey), SignsAt: now.Add(time.Minute)}})
	require.NoError(t, err)
	add("podcertctl next CA not published", ctl.Run(ctx))
	add("podcertctl not ready", ctl.Ready(ctx))
	_, err = podcertctl.Manifests(podcertctl.RBACConfig{SignerName: "kubernetes.io/x", Namespace: "ns", ServiceAccount: "sa"})
	add("podcertctl reserved signer name", err)
	_, err = podcertctl.NewRESTClient(&rest.Config{Host: "https://127.0.0.1:6443", QPS: 5})
	add("podcertctl client burst", err)
	_, err = clientgo.New(nil)
	add("clientgo nil clientset", err)
	_, err = podcerttest.NewSigner(podcerttest.Config{Lifetime: time.Minute})
	add("podcerttest config", err)
	testCA, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	_, err = testCA.Issue(podcerttest.Pod{Name: "cart-0", ServiceAccount: "cart"})
	add("podcerttest not issued", err)
	_, err = podcerttest.NewMount(filepath.Join(t.TempDir(), "missing"))
	add("podcerttest mount", err)
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	add("podcerttest write", mount.Write(map[string][]byte{".hidden": nil}))
	_, err = workloadapi.NewServer(workloadapi.Config{Credential: podcert.SourceConfig{BundlePath: "b"}})
	add("workloadapi config", err)
	_, err = workloadapi.SocketPath("tcp://127.0.0.1:1")
	add("workloadapi address", err)
	_, err = workloadapi.Listen(workloadapi.ListenConfig{Address: writeTemp(t, "api.sock", "")})
	add("workloadapi listen not a socket", err)
	var wlErrs []error
	emptyDir := t.TempDir()
	wl, err := workloadapi.NewServer(workloadapi.Config{Credential: podcert.SourceConfig{BundlePath: filepath.Join(emptyDir, "credentialbundle.pem")},
		TrustBundles: []workloadapi.TrustBundle{{TrustDomain: "cluster.local", Path: filepath.Join(emptyDir, "ca.pem")}},
		OnError:      func(err error) { wlErrs = append(wlErrs, err) }})
	require.NoError(t, err)
	add("workloadapi not ready", wl.Ready())
	add("workloadapi update", wl.Update())
	for i, err := range wlErrs {
		add(fmt.Sprintf("workloadapi reported %d", i), err)
	}
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caCertFor(t, key, now).Raw})})
	require.NoError(t, err)
	_, err = peers.Identity(&tls.ConnectionState{})
	add("podcert identity unverified", err)
	_, err = peers.Identity(&tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{caCertFor(t, key, now)}}})
	add("podcert identity other root", err)
	_, _, err = podcert.SelfSigned(podcert.SelfSignedConfig{Hosts: []string{"*.x"}})
	add("podcert self-signed config", err)

	// federation
	_, err = federation.NewAzureCredential(federation.AzureConfig{Getenv: func(string) string { return "" }})
	add("federation config", err)
	_, err = entratest.NewServer(entratest.Config{})
	add("entratest config", err)
	add("federation preflight", &federation.PreflightError{Check: "audience", Want: "api://AzureADTokenExchange", Got: "vault", Sentinel: federation.ErrAssertionAudience})
	_, perr := tokens.ParseUnverified("x")
	add("federation malformed", &federation.PreflightError{Check: "format", Sentinel: federation.ErrAssertionMalformed, Err: perr})
	add("federation entra", &federation.EntraError{Code: 700213, Description: "AADSTS700213: No matching federated identity record found.", Fix: "set the subject", Sentinel: federation.ErrAssertionSubject})

	// extsigner
	_, err = extsigner.NewRing(extsigner.RingConfig{RefreshHint: 5})
	add("extsigner config", err)
	_, err = extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: (*ecdsa.PrivateKey)(nil), Role: extsigner.RolePrimary}}})
	add("extsigner key refused", err)
	_, err = extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: key, Role: extsigner.RolePrimary}, {Signer: key, Role: extsigner.RoleStaged}}})
	add("extsigner key twice", err)
	ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: key, Role: extsigner.RolePrimary}}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	staged, err := ring.Stage(other, "")
	require.NoError(t, err)
	add("extsigner too early", ring.Promote(staged.KeyID))
	add("extsigner retire the primary", ring.Retire(pub.KeyID))
	add("extsigner unknown key", ring.Retire("nope"))
	for name, claims := range map[string]string{
		"extsigner claims empty":      "",
		"extsigner claims base64":     "e30=",
		"extsigner claims not object": "W10",
		"extsigner claims no exp":     "e30",
		"extsigner claims late exp":   "eyJleHAiOjE5MDAwMDAwMDB9",
	} {
		_, err := ring.Sign(ctx, claims)
		add(name, err)
	}
	goodClaims := strings.Split(tok.Raw, ".")[1]
	kmsRing, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Role: extsigner.RolePrimary,
		Signer: extsigner.SignerFunc(key.Public(), func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) {
			return nil, errors.New("kms: key version disabled")
		})}}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	_, err = kmsRing.Sign(ctx, goodClaims)
	add("extsigner signer failed", err)
	wrongRing, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Role: extsigner.RolePrimary,
		Signer: extsigner.SignerFunc(key.Public(), func(_ context.Context, d []byte, o crypto.SignerOpts) ([]byte, error) {
			return other.Sign(rand.Reader, d, o)
		})}}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	_, err = wrongRing.Sign(ctx, goodClaims)
	add("extsigner self-check", err)
	_, err = extsigner.ParseRingFile([]byte(`{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z","retired":"2027-01-02T00:00:00Z"},{"key":"/j","published":"2026-12-31T00:00:00Z","primary":"2027-01-01T12:00:00Z"}]}`))
	add("extsigner ring file retired early", err)
	_, err = extsigner.ParseRingFile([]byte(`{"keys":[{"key":"/k","pin":"1234"}]}`))
	add("extsigner ring file unknown member", err)
	_, err = extsigner.ParseRingFile([]byte(`{"keys":[{"key":"/k","primary":"yesterday"}]}`))
	add("extsigner ring file time", err)
	ringFile, err := extsigner.ParseRingFile([]byte(`{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z"}]}`))
	require.NoError(t, err)
	_, err = ringFile.Open(ctx, keystore.Files{})
	add("extsigner ring file key", err)
	_, err = extsigner.NewRing(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{{Signer: key, Primary: now.Add(time.Hour)}}, Now: func() time.Time { return now }})
	add("extsigner schedule without primary now", err)
	schedRing, err := extsigner.NewRing(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{{Signer: key, Primary: time.Unix(0, 0)}}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	add("extsigner update withdraws the primary", schedRing.Update(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{{Signer: other, Primary: time.Unix(0, 0)}}}))
	add("extsigner update lifetime", schedRing.Update(extsigner.RingConfig{Schedule: []extsigner.ScheduledKey{{Signer: key, Primary: time.Unix(0, 0)}}, MaxTokenLifetime: time.Hour}))
	add("extsigner scheduled ring stage", schedRing.Promote(pub.KeyID))
	_, err = extsigner.Listen(extsigner.ListenConfig{})
	add("extsigner listen config", err)
	_, err = extsigner.Listen(extsigner.ListenConfig{Address: "@ksa-errors-test"})
	add("extsigner listen abstract without peer check", err)
	_, err = extsigner.Listen(extsigner.ListenConfig{Address: filepath.Join(t.TempDir(), "missing", "signer.sock")})
	add("extsigner listen failed", err)

	// rotation
	rotPolicy := rotation.Policy{Propagation: time.Hour, MaxLifetime: 24 * time.Hour, Skew: 5 * time.Minute}
	epoch := time.Unix(0, 0)
	for name, keys := range map[string][]rotation.Key{
		"rotation too many keys":  make([]rotation.Key, rotation.MaxKeys+1),
		"rotation no signer":      {{ID: "a"}},
		"rotation key ID":         {{ID: "a", Signs: epoch}, {ID: "a"}},
		"rotation order":          {{ID: "a", Published: now, Signs: now.Add(-time.Hour)}},
		"rotation verify-only":    {{ID: "a", Signs: epoch}, {ID: "b", VerifyOnly: true, Signs: now}},
		"rotation unlisted":       {{ID: "a", Signs: epoch}, {ID: "b", Unlisted: true}},
		"rotation two signers":    {{ID: "a", Signs: epoch}, {ID: "b", Signs: epoch}},
		"rotation staging":        {{ID: "a", Signs: epoch}, {ID: "b", Published: now, Signs: now.Add(time.Minute)}},
		"rotation retired early":  {{ID: "a", Signs: epoch, Retired: now}, {ID: "b", Signs: now}},
		"rotation last signer":    {{ID: "a", Signs: epoch, Retired: now}},
		"rotation retired before": {{ID: "a", Signs: epoch}, {ID: "b", Published: now, Retired: now}},
	} {
		_, err = rotation.New(rotPolicy, keys)
		add(name, err)
	}
	_, err = rotation.New(rotation.Policy{}, nil)
	add("rotation policy", err)
	rotA, err := rotation.New(rotPolicy, []rotation.Key{{ID: "a", Signs: epoch}})
	require.NoError(t, err)
	rotB, err := rotation.New(rotPolicy, []rotation.Key{{ID: "a", Signs: epoch}, {ID: "b", Published: now.Add(-48 * time.Hour), Signs: now.Add(time.Minute)}})
	require.NoError(t, err)
	rotC, err := rotation.New(rotPolicy, []rotation.Key{{ID: "c", Signs: epoch}})
	require.NoError(t, err)
	add("rotation replace withdraws", rotA.CheckReplace(rotC, now, nil))
	add("rotation replace staging", rotA.CheckReplace(rotB, now, nil))
	_, err = rotB.Next(nil, now, rotation.Cadence{Every: time.Hour})
	add("rotation cadence", err)
	_, err = rotB.Next([][]string{{"a", "b"}}, now, rotation.Cadence{Propagation: 72 * time.Hour})
	add("rotation next staging", err)
	rotTwo, err := rotation.New(rotPolicy, []rotation.Key{{ID: "a", Signs: epoch}, {ID: "b", Published: now}, {ID: "c", Published: now}})
	require.NoError(t, err)
	_, err = rotTwo.Next(nil, now, rotation.Cadence{})
	add("rotation one at a time", err)
	_, err = rotTwo.Postpone("x", now)
	add("rotation postpone unknown key", err)

	// publish
	_, err = publish.ParseLocation("s3://bucket/a//b")
	add("publish location", err)
	_, err = publish.Open(ctx, publish.Location{Kind: publish.S3, Raw: "s3://b"}, publish.Config{})
	add("publish no opener", err)
	_, err = publish.NewRotation(publish.RotationConfig{})
	add("publish rotation config", err)
	add("publish cadence", &publish.CadenceError{Every: time.Hour, Whole: 2 * time.Hour, Propagation: time.Hour, Delay: time.Minute, RetireWait: time.Hour})
	add("publish rotation refused", &publish.RotationError{Kind: publish.ErrUnknownKey, What: "s3://b publishes key k in openid/v1/jwks, which the ring file never had"})
	add("publish partial", &publish.PartialError{Written: []string{"openid/v1/jwks"}, Left: []string{".well-known/openid-configuration"},
		Err: &publish.Error{Kind: publish.ErrStore, What: "writing .well-known/openid-configuration", Err: errors.New("503 SlowDown")}})
	lockDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(lockDir, "ring.json"), []byte("{}"), 0o600))
	unlock, err := publish.NewFileRing(filepath.Join(lockDir, "ring.json"), publish.FileRingConfig{}).Lock("pid 1")
	require.NoError(t, err)
	_, err = publish.NewFileRing(filepath.Join(lockDir, "ring.json"), publish.FileRingConfig{}).Lock("pid 2")
	add("publish locked", err)
	require.NoError(t, unlock())

	// grpcserver
	_, err = grpcserver.NewServer(grpcserver.Config{})
	add("grpcserver config", err)

	// signertest
	_, err = signertest.Run(ctx, signertest.Config{})
	add("signertest config", err)
	_, err = signertest.CheckHeader("eyJhbGciOiJub25lIn0")
	add("signertest header", err)
	_, err = signertest.CheckHeader("e30=")
	add("signertest header base64", err)
	kubeReport, strictReport := signerReports(t, key.Public())
	for _, r := range []*signertest.Report{kubeReport, strictReport} {
		for _, res := range r.Results {
			if res.Err != nil {
				add("signertest "+res.Level.String()+" "+res.Check, res.Err)
			}
		}
	}
	add("signertest failures", kubeReport.Err())

	for name, err := range msgs {
		t.Run(name, func(t *testing.T) {
			assert.Empty(t, messageProblems(err.Error()), err.Error())
		})
	}
}

// mustPKIX marshals a public key.
func mustPKIX(t *testing.T, pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return der
}

// caCertFor is a self-signed CA certificate for key, valid a day around
// now.
func caCertFor(t *testing.T, key *ecdsa.PrivateKey, now time.Time) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "errors test CA"}, NotBefore: now.Add(-24 * time.Hour),
		NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert
}

// stubCSR is the kubelet's empty request, signed by key.
func stubCSR(t *testing.T, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	require.NoError(t, err)
	return der
}

// failingReader is a random source that fails.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy source unavailable") }

// remoteErr fetches a key set from a server answering status and body.
func remoteErr(t *testing.T, status int, body string) error {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	r, err := jwks.NewRemote(jwks.RemoteConfig{URL: srv.URL, Client: srv.Client()})
	require.NoError(t, err)
	_, err = r.Keys(t.Context(), "kid")
	return err
}

// failingSource is a key source that cannot reach its keys.
type failingSource struct{}

func (failingSource) Keys(context.Context, string) ([]jwks.Key, error) {
	return nil, &jwks.FetchError{URL: "https://issuer/keys", Reason: "request failed", Err: errors.New("dial tcp: connection refused")}
}

// writeTemp writes data to a file of a temporary directory and returns its
// path.
func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	return path
}

// keysFunc is a key source answering as the function does.
type keysFunc func(ctx context.Context, kid string) ([]jwks.Key, error)

func (f keysFunc) Keys(ctx context.Context, kid string) ([]jwks.Key, error) { return f(ctx, kid) }

// failingSigner is a signer whose signing call fails, as a KMS that is
// down.
type failingSigner struct{ crypto.Signer }

func (failingSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("kms: key version disabled")
}

// unmarshalable is a jwx set that cannot be written as JSON.
type unmarshalable struct{ jwkSet }

// jwkSet names the embedded set apart from its own Set method.
type jwkSet = jwk.Set

func (unmarshalable) MarshalJSON() ([]byte, error) { return nil, errors.New("jwk: cannot marshal") }

// ours returns the error of err's tree whose message starts with prefix:
// the module's error inside another library's.
func ours(err error, prefix string) error {
	if err == nil || strings.HasPrefix(err.Error(), prefix) {
		return err
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return ours(u.Unwrap(), prefix)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if found := ours(e, prefix); found != nil {
				return found
			}
		}
	}
	return nil
}

package controlplane

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestConfigDefaults checks every default that Config documents.
func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Issuers, []string{DefaultIssuer}) || !slices.Equal(c.APIAudiences, c.Issuers) {
		t.Errorf("issuers %q, API audiences %q; want [%s] for both", c.Issuers, c.APIAudiences, DefaultIssuer)
	}
	if !slices.Equal(c.AuthorizationModes, []string{"Node", "RBAC"}) {
		t.Errorf("authorization modes %q, want Node,RBAC", c.AuthorizationModes)
	}
	if k, ok := c.SigningKey.(*rsa.PrivateKey); !ok || k.N.BitLen() != 2048 {
		t.Errorf("signing key %T, want a 2048-bit *rsa.PrivateKey", c.SigningKey)
	}
	if len(c.VerificationKeys) != 0 || len(c.ExtraArgs) != 0 {
		t.Errorf("verification keys %v, extra args %q; want none", c.VerificationKeys, c.ExtraArgs)
	}

	c, err = Config{SigningEndpoint: "@signer"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.SigningKey != nil || c.VerificationKeys != nil {
		t.Errorf("with a signing endpoint: signing key %T, verification keys %v; want none", c.SigningKey, c.VerificationKeys)
	}

	c, err = Config{Issuers: []string{"https://a.example", "https://b.example"}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.APIAudiences, c.Issuers) {
		t.Errorf("API audiences %q, want the issuers %q", c.APIAudiences, c.Issuers)
	}
}

// TestConfigInvalid checks that Start's validation names what is wrong.
func TestConfigInvalid(t *testing.T) {
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"ed25519 signing key":                   {SigningKey: edKey},
		"ed25519 verification key":              {SigningKey: rsaKey, VerificationKeys: []crypto.PublicKey{edKey.Public()}},
		"extra arg without dashes":              {SigningKey: rsaKey, ExtraArgs: []string{"v=4"}},
		"empty issuer":                          {SigningKey: rsaKey, Issuers: []string{""}},
		"comma in audience":                     {SigningKey: rsaKey, APIAudiences: []string{"a,b"}},
		"signing endpoint and key":              {SigningKey: rsaKey, SigningEndpoint: "/run/signer.sock"},
		"signing endpoint and verification key": {SigningEndpoint: "/run/signer.sock", VerificationKeys: []crypto.PublicKey{rsaKey.Public()}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := c.withDefaults(); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestNamespacePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"TestFoo":                          "testfoo-",
		"TestFoo/sub_case#01":              "testfoo-sub-case-01-",
		"__":                               "test-",
		strings.Repeat("Ab/", 30):          strings.TrimRight(strings.Repeat("ab-", 17)[:49], "-") + "-",
		"TestX/" + strings.Repeat("-", 60): "testx-",
	} {
		if got := namespacePrefix(in); got != want {
			t.Errorf("namespacePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionsMatchModules checks that Versions names the k8s.io/kubernetes
// releases of the modules the kube-apiservers are built from: the interop
// module's first, then those of interop/apiservers/*, newest first.
func TestVersionsMatchModules(t *testing.T) {
	require := regexp.MustCompile(`(?m)^\s*(?:require\s+)?k8s\.io/kubernetes (v\S+)\s*$`)
	version := func(gomod string) string {
		b, err := os.ReadFile(gomod)
		if err != nil {
			t.Fatal(err)
		}
		m := require.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s requires no k8s.io/kubernetes", gomod)
		}
		return string(m[1])
	}
	want := []string{version(filepath.Join("..", "go.mod"))}
	others, err := filepath.Glob(filepath.Join("..", "apiservers", "*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var older []string
	for _, gomod := range others {
		v := version(gomod)
		if dir := filepath.Base(filepath.Dir(gomod)); dir != "v"+minor(v) {
			t.Errorf("the module in apiservers/%s requires %s", dir, v)
		}
		older = append(older, v)
	}
	slices.Sort(older)
	slices.Reverse(older)
	want = append(want, older...)
	if got := Versions(); !slices.Equal(got, want) {
		t.Errorf("Versions() = %q; the modules require %q", got, want)
	}
}

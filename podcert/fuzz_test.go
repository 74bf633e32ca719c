package podcert_test

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/podcert"
)

// FuzzRequest feeds arbitrary stub CSRs, PKIX keys, proofs and
// annotations to the signer. Every request is decided (or refused as not
// for the signer) with a status the API rules accept; nothing panics.
func FuzzRequest(f *testing.F) {
	ca := newCA(f, false)
	s := newSigner(f, ca, func(c *podcert.SignerConfig) {
		c.Policy = podcert.PolicyFunc(func(*podcert.Request, podcert.Asked) error { return nil })
	})
	good := stubCSR(f, testkeys.Generated("p256"))
	pkix, err := x509.MarshalPKIXPublicKey(testkeys.Generated("ed25519").Public())
	require.NoError(f, err)
	f.Add(good, []byte(nil), []byte(nil), "", "")
	f.Add(stubCSR(f, testkeys.Generated("rsa2048")), []byte(nil), []byte(nil), "", "")
	f.Add(stubCSR(f, testkeys.Generated("p224")), []byte(nil), []byte(nil), "", "")
	f.Add(good[:len(good)-4], []byte(nil), []byte(nil), "", "")
	f.Add([]byte(nil), pkix, proof(f, testkeys.Generated("ed25519"), "0f4d7c2a-1111-4c1e-9a7f-1b2c3d4e5f60"), "", "")
	f.Add(good, []byte(nil), []byte(nil), "a.svc,10.0.0.1,::1", "k=v,example.com/x=y")
	f.Add(good, []byte(nil), []byte(nil), "*.x,a..b,0.0.0.0", "system:x=y,k")
	f.Fuzz(func(t *testing.T, stub, pkixKey, pop []byte, hosts, exts string) {
		req := newRequest(t, testkeys.Generated("p256"))
		req.StubPKCS10Request, req.PKIXPublicKey, req.ProofOfPossession = stub, pkixKey, pop
		req.UnverifiedUserAnnotations = map[string]string{}
		if hosts != "" {
			req.UnverifiedUserAnnotations[podcert.DefaultServeHostsKey] = hosts
		}
		if exts != "" {
			req.UnverifiedUserAnnotations[podcert.DefaultExtensionsKey] = exts
		}
		d, err := s.Decide(&req)
		if err != nil {
			t.Fatalf("decide: %v", err)
		}
		if d.Outcome == podcert.Issued {
			_, err := req.PublicKey()
			require.NoError(t, err)
		}
		require.NoError(t, podcert.CheckStatus(&req, podcert.Status{}, d.Status(), t0))
	})
}

// FuzzParseBundle feeds arbitrary bundles to the parser: whatever it
// accepts has a key matching its leaf and an identity.
func FuzzParseBundle(f *testing.F) {
	ca := newCA(f, true)
	s := newSigner(f, ca, nil)
	keyPEM, chainPEM := issue(f, s, testkeys.Generated("p256"), nil)
	f.Add(append(append([]byte{}, keyPEM...), chainPEM...))
	f.Add(append(append([]byte{}, chainPEM...), keyPEM...))
	f.Add(keyPEM)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 0x03, 1, 2, 3}}))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := podcert.ParseBundle(data)
		if err != nil {
			if !errors.Is(err, podcert.ErrInvalidBundle) && !errors.Is(err, podcert.ErrLimit) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		if c.Identity.ServiceAccount.Name == "" || c.Certificate.Leaf == nil {
			t.Fatalf("accepted a bundle without an identity")
		}
	})
}

// FuzzSourceAnyCertificate feeds arbitrary key and certificate files to a
// Source that accepts any certificate: whatever it serves has a key
// matching its leaf, of a type jwks accepts; every refusal matches
// ErrInvalidBundle.
func FuzzSourceAnyCertificate(f *testing.F) {
	ca := newCA(f, true)
	for _, seed := range []struct{ key, blockType string }{
		{"rsa2048", "RSA PRIVATE KEY"}, {"p256", "EC PRIVATE KEY"}, {"ed25519", "PRIVATE KEY"}, {"rsa1024", "RSA PRIVATE KEY"},
	} {
		keyPEM, certPEM := servingPair(f, ca, testkeys.Generated(seed.key), seed.blockType)
		f.Add(keyPEM, certPEM)
		f.Add(certPEM, keyPEM)
	}
	f.Add([]byte("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"), []byte(nil))
	f.Add([]byte("-----BEGIN RSA PRIVATE KEY-----\nMAA=\n-----END RSA PRIVATE KEY-----\n"), []byte("junk"))
	f.Fuzz(func(t *testing.T, keyPEM, certPEM []byte) {
		dir := t.TempDir()
		keyPath, certPath := filepath.Join(dir, "tls.key"), filepath.Join(dir, "tls.crt")
		require.NoError(t, os.WriteFile(keyPath, keyPEM, 0o600))
		require.NoError(t, os.WriteFile(certPath, certPEM, 0o600))
		src, err := podcert.NewSource(podcert.SourceConfig{KeyPath: keyPath, ChainPath: certPath, AnyCertificate: true, Now: fixedClock(t0)})
		if err != nil {
			if !errors.Is(err, podcert.ErrInvalidBundle) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		c, err := src.Current()
		if err != nil {
			require.ErrorIs(t, err, podcert.ErrInvalidBundle) // expired
			return
		}
		key, ok := c.Certificate.PrivateKey.(crypto.Signer)
		require.True(t, ok)
		require.True(t, key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(c.Certificate.Leaf.PublicKey))
		require.NoError(t, jwks.CheckPublicKey(key.Public()))
	})
}

// FuzzRequestCheck feeds arbitrary names, UIDs, lifetimes and annotation
// keys to Request.Check: nothing panics, every refusal matches
// ErrInvalidRequest, and whatever it accepts x509sa can encode as a
// subject.
func FuzzRequestCheck(f *testing.F) {
	f.Add("shop", "req-1", "example.com/workload", "cart-0", "pod-uid", "cart", "sa-uid", "node-1", int32(0), "example.com/x")
	f.Add("", "", "", "", "", "", "", "", int32(-1), "")
	f.Add("Shop", "a..b", "example.com/a/b", "Cart", "a b", "a/b", "a\x00", "node 1", int32(3599), "x")
	f.Add("shop", "r", "kubernetes.io/x", "p", "u", "s", "u", "n", int32(86401), "A.B/C_d.e")
	f.Fuzz(func(t *testing.T, ns, name, signerName, pod, podUID, sa, saUID, node string, maxSeconds int32, annotationKey string) {
		req := podcert.Request{
			Namespace: ns, Name: name, SignerName: signerName, PodName: pod, PodUID: podUID,
			ServiceAccountName: sa, ServiceAccountUID: saUID, NodeName: node, NodeUID: podUID,
			MaxExpirationSeconds: maxSeconds, UnverifiedUserAnnotations: map[string]string{annotationKey: "v"},
		}
		err := req.Check()
		if err != nil {
			require.ErrorIs(t, err, podcert.ErrInvalidRequest)
			return
		}
		_, err = req.Subject().Name()
		require.NoError(t, err)
	})
}

// FuzzParseTrustBundle feeds arbitrary trust bundles to the parser:
// whatever it accepts holds 1 to MaxTrustBundleCertificates certificates,
// each of which it contains; every refusal matches ErrInvalidTrustBundle
// or ErrLimit.
func FuzzParseTrustBundle(f *testing.F) {
	ca := newCA(f, true)
	root := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.root.Raw})
	f.Add(root)
	f.Add(append(append([]byte("# roots\n"), root...), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})...))
	f.Add(append(root, "junk"...))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 0x03, 1, 2, 3}}))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := podcert.ParseTrustBundle(data)
		if err != nil {
			if !errors.Is(err, podcert.ErrInvalidTrustBundle) && !errors.Is(err, podcert.ErrLimit) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		require.NotEmpty(t, b.Certificates)
		require.LessOrEqual(t, len(b.Certificates), podcert.MaxTrustBundleCertificates)
		for _, c := range b.Certificates {
			require.True(t, b.Contains(c))
		}
	})
}

// FuzzAllowHost feeds arbitrary host patterns and request names to the
// host policy: it never panics, a pattern it accepts has each placeholder
// as a whole label, and a request never gets a name through a placeholder
// that would stand for an empty or dotted value.
func FuzzAllowHost(f *testing.F) {
	f.Add("{serviceaccount}.{namespace}.svc", "checkout", "shop", "checkout-0", "checkout.shop.svc")
	f.Add(".{namespace}.svc", "a", "shop", "", "cart.shop.svc")
	f.Add("{pod}.{namespace}.svc", "a", "shop", "", "cart.shop.svc")
	f.Add("{serviceaccount}-{namespace}.svc", "a-b", "c", "p", "a-b-c.svc")
	f.Add("{pod.example.com", "a", "b", "c", "x")
	f.Add("{serviceaccount}.svc.cluster.local", "checkout.shop", "evil", "p", "checkout.shop.svc.cluster.local")
	f.Add("{POD}.Example.COM", "a", "b", "Cart-0", "cart-0.EXAMPLE.com")
	places := []string{podcert.PlaceholderNamespace, podcert.PlaceholderServiceAccount, podcert.PlaceholderPod}
	f.Fuzz(func(t *testing.T, pattern, sa, ns, pod, name string) {
		p, err := podcert.NewHostPolicy(podcert.HostPolicyConfig{Hosts: []string{pattern}})
		if err != nil {
			return
		}
		for _, label := range strings.Split(strings.ToLower(pattern), ".") {
			if strings.ContainsAny(label, "{}") && !slices.Contains(places, label) {
				t.Fatalf("%q accepted with the label %q", pattern, label)
			}
		}
		req := &podcert.Request{Namespace: ns, ServiceAccountName: sa, PodName: pod}
		if !p.AllowHost(req, name) {
			return
		}
		lower := strings.ToLower(pattern)
		for _, v := range []struct{ place, value string }{{places[0], ns}, {places[1], sa}, {places[2], pod}} {
			if strings.Contains(lower, v.place) && !isLabel(v.value) {
				t.Fatalf("%q admitted %q for %s %q, not one DNS label", pattern, name, v.place, v.value)
			}
		}
	})
}

// isLabel reports whether s is one RFC 1123 label.
func isLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	return strings.Trim(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// FuzzAllowIPHosts feeds arbitrary IP ranges and addresses: an accepted
// range is a CIDR, and an address is admitted only inside it.
func FuzzAllowIPHosts(f *testing.F) {
	f.Add("10.0.0.0/8", "10.1.2.3")
	f.Add("10.0.0.1/8", "10.0.0.1")
	f.Add("fd00::/8", "::ffff:10.0.0.1")
	f.Add("10.0.0.5", "10.0.0.5")
	f.Fuzz(func(t *testing.T, cidr, addr string) {
		p, err := podcert.NewHostPolicy(podcert.HostPolicyConfig{IPRanges: []string{cidr}})
		if err != nil {
			return
		}
		prefix := netip.MustParsePrefix(cidr)
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return
		}
		admitted := p.Admit(&podcert.Request{}, podcert.Asked{IPAddresses: []netip.Addr{ip}}) == nil
		if admitted != prefix.Contains(ip) || p.AllowHost(&podcert.Request{}, addr) != admitted {
			t.Fatalf("%s in %s: admitted %t", ip, prefix, admitted)
		}
	})
}

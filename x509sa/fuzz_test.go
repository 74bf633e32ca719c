package x509sa_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// subjectSeeds are DER subjects: ours and hostile ones.
func subjectSeeds(t testing.TB) [][]byte {
	var out [][]byte
	add := func(n pkix.Name) {
		der, err := asn1.Marshal(n.ToRDNSequence())
		require.NoError(t, err)
		out = append(out, der)
	}
	for _, s := range []x509sa.Subject{
		{ServiceAccount: ksa.ServiceAccount{Namespace: "ns1", Name: "sa1"}},
		{ServiceAccount: testSA, PodName: "cart-0", Extensions: map[string]string{"example.com/team": "a", "zone": "eu-1"}},
	} {
		n, err := s.Name()
		require.NoError(t, err)
		add(n)
	}
	add(pkix.Name{CommonName: "alice", Organization: []string{"system:masters"}})
	add(pkix.Name{CommonName: "system:serviceaccount:a:b", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:a", "system:masters"},
		OrganizationalUnit: []string{"system:pod-name=x", "SYSTEM:pod-namespace=a", "k=v=w"}})
	add(pkix.Name{CommonName: "system:serviceaccount:a:b", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:a"},
		ExtraNames: []pkix.AttributeTypeAndValue{{Type: x509sa.UIDAttribute(), Value: ""}, {Type: x509sa.UIDAttribute(), Value: 7}}})
	// A multi-valued RDN mixing CN and O (Kubernetes reads both).
	der, err := asn1.Marshal(pkix.RDNSequence{{
		{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "system:serviceaccounts"},
		{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "system:serviceaccount:a:b"},
		{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "system:serviceaccounts:a"},
	}})
	require.NoError(t, err)
	return append(out, der)
}

// FuzzDecodeName feeds arbitrary DER subjects to the decoder. Whatever it
// accepts must re-encode to a subject that decodes the same.
func FuzzDecodeName(f *testing.F) {
	for _, s := range subjectSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		var seq pkix.RDNSequence
		if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) > 0 {
			return
		}
		var name pkix.Name
		name.FillFromRDNSequence(&seq)
		got, err := x509sa.DecodeName(name)
		if err != nil {
			require.Equal(t, x509sa.Subject{}, got)
			assertTyped(t, err)
			return
		}
		require.NoError(t, got.Check())
		n, err := got.Name()
		require.NoError(t, err)
		reDER, err := asn1.Marshal(n.ToRDNSequence())
		require.NoError(t, err)
		var seq2 pkix.RDNSequence
		_, err = asn1.Unmarshal(reDER, &seq2)
		require.NoError(t, err)
		var name2 pkix.Name
		name2.FillFromRDNSequence(&seq2)
		again, err := x509sa.DecodeName(name2)
		require.NoError(t, err)
		require.True(t, got.Equal(again), "%+v != %+v", got, again)
	})
}

// FuzzDecodeStrings builds subjects from arbitrary attribute strings.
func FuzzDecodeStrings(f *testing.F) {
	f.Add("system:serviceaccount:shop:cart", "system:serviceaccounts", "system:serviceaccounts:shop", "system:pod-namespace=shop", "system:pod-name=p", "uid-1")
	f.Add("system:serviceaccount:shop:cart", "system:serviceaccounts:shop", "system:serviceaccounts", "team=a", "SYSTEM:x=y", "")
	f.Add("system:serviceaccount:a:b\x00", "system:serviceaccounts", "system:serviceaccounts:a", "k=v", "k=w", "u u")
	f.Fuzz(func(t *testing.T, cn, o1, o2, ou1, ou2, uid string) {
		names := []pkix.AttributeTypeAndValue{
			atv(oidCN, cn), atv(oidO, o1), atv(oidO, o2), atv(oidOU, ou1), atv(oidOU, ou2), atv(oidUID, uid),
		}
		got, err := x509sa.DecodeName(pkix.Name{Names: names})
		if err != nil {
			assertTyped(t, err)
			return
		}
		require.NoError(t, got.Check())
		// Only service-account identities come out, in their own namespace.
		require.True(t, ksa.MatchesUsername(got.ServiceAccount.Namespace, got.ServiceAccount.Name, cn))
		require.ElementsMatch(t, got.ServiceAccount.Groups(), []string{o1, o2})
		for k := range got.Extensions {
			require.False(t, strings.HasPrefix(strings.ToLower(k), "system:"))
		}
	})
}

// FuzzParseCSR feeds arbitrary DER to the request parser, twice: as given
// (signatures rarely survive mutation), and re-signed with a test key so
// the subject, SAN and extension checks see the fuzzed content. Accepted
// requests must issue or fail with a typed error.
func FuzzParseCSR(f *testing.F) {
	key := testkeys.Generated("p256")
	ca := newCA(f, "p256-ca")
	is := ca.issuer(f, x509sa.IssuerConfig{Usages: x509sa.ClientAndServerAuth})
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0", Extensions: map[string]string{"team": "a"}}
	for _, opts := range []x509sa.CSROptions{
		{Subject: sub},
		{Subject: sub, Usage: x509sa.ClientAndServerAuth, TrustDomain: "cluster.local", Hosts: []string{"cart.shop.svc", "10.0.0.1", "::1"}},
	} {
		f.Add(mustCSR(f, key, opts))
	}
	spiffe, _ := url.Parse("spiffe://td/ns/shop/sa/cart")
	f.Add(rawCSR(f, key, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}, EmailAddresses: []string{"a@b"}, URIs: []*url.URL{spiffe, spiffe}}))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		check := func(der []byte) {
			csr, err := x509sa.ParseCSR(der)
			if err != nil {
				require.Nil(t, csr)
				assertTyped(t, err)
				return
			}
			require.NoError(t, csr.Subject.Check())
			require.LessOrEqual(t, len(csr.DNSNames)+len(csr.IPAddresses), x509sa.MaxSANs)
			usage := csr.Usage
			if usage == 0 {
				usage = x509sa.ClientAndServerAuth
			}
			issued, err := is.Issue(x509sa.IssueRequest{CSR: der, Usage: usage})
			if err != nil {
				assertTyped(t, err)
				return
			}
			require.True(t, issued.Subject.Equal(csr.Subject))
		}
		check(der)
		req, err := x509.ParseCertificateRequest(der)
		if err != nil || len(der) > x509sa.MaxCSRSize {
			return
		}
		resigned, err := x509.CreateCertificateRequest(nil, &x509.CertificateRequest{
			RawSubject: req.RawSubject, ExtraExtensions: req.Extensions,
		}, key)
		if err != nil {
			return
		}
		check(resigned)
	})
}

// FuzzParseCSRPEM feeds arbitrary text to the PEM request reader.
func FuzzParseCSRPEM(f *testing.F) {
	key := testkeys.Generated("p256")
	good := x509sa.EncodeCSRPEM(mustCSR(f, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}}))
	f.Add(good)
	f.Add(append([]byte("x\n"), good...))
	f.Add([]byte("-----BEGIN CERTIFICATE REQUEST-----\na: b\n\nMAA=\n-----END CERTIFICATE REQUEST-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		csr, err := x509sa.ParseCSRPEM(data)
		if err != nil {
			require.Nil(t, csr)
			assertTyped(t, err)
		}
	})
}

// FuzzSplitHosts: whatever is accepted is a canonical DNS name or IP, and
// splitting the result again is the identity.
func FuzzSplitHosts(f *testing.F) {
	for _, s := range []string{"cart.shop.svc,10.0.0.1", "::ffff:1.2.3.4,Cart.svc", "010.0.0.1", "fe80::1%eth0", "*.svc", "a..b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts := strings.Split(s, ",")
		dns, ips, err := x509sa.SplitHosts(hosts)
		if err != nil {
			assertTyped(t, err)
			return
		}
		var again []string
		again = append(again, dns...)
		for _, ip := range ips {
			require.False(t, ip.Is4In6())
			require.Empty(t, ip.Zone())
			again = append(again, ip.String())
		}
		dns2, ips2, err := x509sa.SplitHosts(again)
		require.NoError(t, err)
		require.Equal(t, dns, dns2)
		require.Equal(t, ips, ips2)
	})
}

// FuzzParseSPIFFEID: accepted IDs print back as given and survive the URL
// round trip a certificate puts them through.
func FuzzParseSPIFFEID(f *testing.F) {
	for _, s := range []string{"spiffe://cluster.local/ns/a/sa/b", "spiffe://td", "spiffe://td/", "spiffe://td/./x", "spiffe://TD/x", "spiffe://td/a%2fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := x509sa.ParseSPIFFEID(s)
		if err != nil {
			require.ErrorIs(t, err, x509sa.ErrInvalidSPIFFEID)
			return
		}
		require.Equal(t, s, id.String())
		u, err := url.Parse(id.URL().String())
		require.NoError(t, err)
		back, err := x509sa.ParseSPIFFEID(u.String())
		require.NoError(t, err)
		require.Equal(t, id, back)
		if sa, err := id.ServiceAccount(); err == nil {
			require.NoError(t, sa.Check())
		}
	})
}

// assertTyped requires err to match one of the package's sentinels.
func assertTyped(t *testing.T, err error) {
	t.Helper()
	for _, s := range []error{
		x509sa.ErrInvalidSubject, x509sa.ErrLimit, x509sa.ErrInvalidHost,
		jwks.ErrUnsupportedKey, x509sa.ErrMalformedCSR, x509sa.ErrInvalidUsage,
		x509sa.ErrInvalidSPIFFEID, x509sa.ErrLifetime, x509sa.ErrInvalidCertificate, ksa.ErrInvalidConfig,
	} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("untyped error: %v", err)
}

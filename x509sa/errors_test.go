package x509sa_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// TestErrors makes every kind of error through the failure that produces
// it, and holds it to its sentinel, its message to the data it names, and
// Unwrap to its cause.
func TestErrors(t *testing.T) {
	ca := newCA(t, "p256-ca")
	okName := func(extra ...pkix.AttributeTypeAndValue) pkix.Name {
		return pkix.Name{Names: append(saNames("shop", "cart"), extra...)}
	}
	decode := func(n pkix.Name) error { _, err := x509sa.DecodeName(n); return err }
	weakLeaf := ca.sign(t, leafTemplate(t, x509sa.Subject{ServiceAccount: testSA}), testkeys.Generated("rsa1024").Public())
	caAsLeaf := func() error { _, err := x509sa.DecodeCertificate(ca.cert); return err }
	_, _, sansErr := x509sa.SplitHosts(make([]string, x509sa.MaxSANs+1))
	_, _, hostErr := x509sa.SplitHosts([]string{"a b"})
	_, keyErr := x509sa.CreateCSR(nil, testkeys.Generated("rsa1024"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})
	codeSigning := mustTemplate(t, x509sa.Subject{ServiceAccount: testSA})
	codeSigning.ExtraExtensions = []pkix.Extension{ext(t, asn1.ObjectIdentifier{2, 5, 29, 37}, []asn1.ObjectIdentifier{{1, 3, 6, 1, 5, 5, 7, 3, 3}})}
	_, usageValueErr := x509sa.ParseCSR(rawCSR(t, testkeys.Generated("p256"), codeSigning))
	_, usageErr := x509sa.CreateCSR(nil, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}, Usage: x509sa.ServerAuth, TrustDomain: "td"})
	csr, err := x509sa.ParseCSR(mustCSR(t, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}, Usage: x509sa.ServerAuth, Hosts: []string{"h"}}))
	require.NoError(t, err)
	_, spiffeErr := x509sa.ParseSPIFFEID("spiffe://x/")
	_, lifetimeErr := ca.issuer(t, x509sa.IssuerConfig{}).Issue(x509sa.IssueRequest{CSR: mustCSR(t, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}}), MaxLifetime: time.Minute})
	_, weakLeafErr := x509sa.DecodeCertificate(weakLeaf)
	_, configErr := x509sa.NewVerifier(x509sa.VerifierConfig{})
	tests := []struct {
		name     string
		err      error
		sentinel error
		contains []string
		cause    error
	}{
		{name: "subject with a group too many", err: decode(okName(atv(oidO, "system:masters"))), sentinel: x509sa.ErrInvalidSubject, contains: []string{"O", `"system:masters"`, "group is not"}},
		{name: "subject with a bad pod name", err: x509sa.Subject{ServiceAccount: testSA, PodName: "a..b"}.Check(), sentinel: x509sa.ErrInvalidSubject, contains: []string{"pod", `"a..b"`}, cause: ksa.ErrInvalidName},
		{name: "subject without CN", err: decode(pkix.Name{Names: saNames("shop", "cart")[1:]}), sentinel: x509sa.ErrInvalidSubject, contains: []string{"subject CN: missing"}, cause: x509sa.ErrNotServiceAccount},
		{name: "reserved extension", err: decode(okName(atv(oidOU, "system:pod-uid=x"))), sentinel: x509sa.ErrReservedExtension, contains: []string{`"system:pod-uid=x"`}, cause: x509sa.ErrInvalidSubject},
		{name: "invalid extension", err: x509sa.Subject{ServiceAccount: testSA, Extensions: map[string]string{"k": "a b"}}.Check(), sentinel: x509sa.ErrInvalidSubject, contains: []string{`"k=a b"`}},
		{name: "limit", err: sansErr, sentinel: x509sa.ErrLimit, contains: []string{"65 hosts", "64"}},
		{name: "host", err: hostErr, sentinel: x509sa.ErrInvalidHost, contains: []string{`"a b"`}},
		{name: "key", err: keyErr, sentinel: jwks.ErrUnsupportedKey, contains: []string{"RSA 1024", "2048-bit minimum"}},
		{name: "usage value", err: usageValueErr, sentinel: x509sa.ErrInvalidUsage, contains: []string{`"1.3.6.1.5.5.7.3.3"`}},
		{name: "usage", err: usageErr, sentinel: x509sa.ErrInvalidUsage, contains: []string{"usage server: an X509-SVID"}},
		{name: "signer name", err: x509sa.CheckSignerName("x"), sentinel: x509sa.ErrInvalidSignerName, contains: []string{`"x"`}},
		{name: "mismatch", err: &x509sa.MismatchError{Field: "uid", Want: "a", Got: "b"}, sentinel: x509sa.ErrRequesterMismatch, contains: []string{"uid", `"a"`, `"b"`}},
		{name: "policy", err: x509sa.MatchRequester(csr, ksa.UserInfo{Username: testSA.Username(), UID: testSA.UID, Groups: testSA.Groups()}, x509sa.MatchOptions{}), sentinel: x509sa.ErrNotAllowed, contains: []string{`host "h"`}},
		{name: "SPIFFE ID", err: spiffeErr, sentinel: x509sa.ErrInvalidSPIFFEID, contains: []string{`"spiffe://x/"`}},
		{name: "lifetime", err: lifetimeErr, sentinel: x509sa.ErrLifetime, contains: []string{"1m0s", "[1h0m0s, 24h0m0s]"}},
		{name: "certificate", err: caAsLeaf(), sentinel: x509sa.ErrInvalidCertificate, contains: []string{"CA flag"}},
		{name: "certificate with a cause", err: weakLeafErr, sentinel: x509sa.ErrInvalidCertificate, contains: []string{"leaf key: key RSA 1024"}, cause: jwks.ErrUnsupportedKey},
		{name: "config", err: configErr, sentinel: ksa.ErrInvalidConfig, contains: []string{"x509sa: VerifierConfig.Roots is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			assert.ErrorIs(t, tt.err, tt.sentinel)
			assert.NotErrorIs(t, tt.err, x509sa.ErrUntrusted)
			for _, s := range tt.contains {
				assert.Contains(t, tt.err.Error(), s)
			}
			if tt.cause != nil {
				assert.ErrorIs(t, tt.err, tt.cause)
			}
		})
	}
	var lt *x509sa.LifetimeError
	require.ErrorAs(t, lifetimeErr, &lt)
	assert.Equal(t, time.Minute, lt.Lifetime)
	assert.Equal(t, time.Hour, lt.Min)
	assert.NotErrorIs(t, decode(okName(atv(oidOU, "k=a b"))), x509sa.ErrReservedExtension)

	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: x509.NewCertPool(), Now: fixedClock(t0)})
	require.NoError(t, err)
	_, err = v.Verify([]*x509.Certificate{weakLeaf})
	require.ErrorIs(t, err, x509sa.ErrUntrusted)
	var unknown x509.UnknownAuthorityError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, "x509sa: certificate not trusted: "+unknown.Error(), err.Error())
}

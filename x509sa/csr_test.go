package x509sa_test

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

func TestCreateCSRKeys(t *testing.T) {
	tests := []struct {
		key     string
		sigAlg  x509.SignatureAlgorithm
		wantErr error
	}{
		{key: "rsa2048", sigAlg: x509.SHA256WithRSA},
		{key: "rsa3072", sigAlg: x509.SHA384WithRSA},
		{key: "p256", sigAlg: x509.ECDSAWithSHA256},
		{key: "p384", sigAlg: x509.ECDSAWithSHA384},
		{key: "p521", sigAlg: x509.ECDSAWithSHA512},
		{key: "ed25519", sigAlg: x509.PureEd25519},
		{key: "rsa1024", wantErr: jwks.ErrUnsupportedKey},
		{key: "p224", wantErr: jwks.ErrUnsupportedKey},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			key := testkeys.Generated(tt.key)
			der, err := x509sa.CreateCSR(nil, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Regexp(t, `key [^ ]+ [^ ]+ is not supported`, err.Error(), "names the key")

				// A request someone else signed with such a key is refused too.
				raw := rawCSR(t, key, &x509.CertificateRequest{Subject: pkix.Name{CommonName: testSA.Username()}})
				_, err = x509sa.ParseCSR(raw)
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			csr, err := x509sa.ParseCSR(der)
			require.NoError(t, err)
			assert.Equal(t, x509sa.ClientAuth, csr.Usage, "zero Usage means ClientAuth")
			assert.True(t, csr.Subject.Equal(x509sa.Subject{ServiceAccount: testSA}))
			assert.True(t, key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(csr.PublicKey))
			assert.Equal(t, der, csr.Raw())
			req, err := x509.ParseCertificateRequest(der)
			require.NoError(t, err)
			assert.Equal(t, tt.sigAlg, req.SignatureAlgorithm)
		})
	}
}

func TestCreateCSR(t *testing.T) {
	key := testkeys.Generated("p256")
	sub := x509sa.Subject{ServiceAccount: testSA}
	tests := []struct {
		name    string
		key     crypto.Signer
		opts    x509sa.CSROptions
		check   func(t *testing.T, csr *x509sa.CSR)
		wantErr error
	}{
		{name: "server with hosts and SPIFFE ID", key: key, opts: x509sa.CSROptions{
			Subject: sub, Usage: x509sa.ClientAndServerAuth, TrustDomain: "cluster.local",
			Hosts: []string{"cart.shop.svc", "10.0.0.7", "CART.shop.svc"},
		}, check: func(t *testing.T, csr *x509sa.CSR) {
			assert.Equal(t, x509sa.ClientAndServerAuth, csr.Usage)
			assert.Equal(t, []string{"cart.shop.svc"}, csr.DNSNames)
			assert.Equal(t, []netip.Addr{netip.MustParseAddr("10.0.0.7")}, csr.IPAddresses)
			assert.Equal(t, []string{"cart.shop.svc", "10.0.0.7"}, csr.Hosts())
			assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", csr.SPIFFEID.String())
		}},
		{name: "server only", key: key, opts: x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"cart"}},
			check: func(t *testing.T, csr *x509sa.CSR) { assert.Equal(t, x509sa.ServerAuth, csr.Usage) }},

		{name: "nil key", opts: x509sa.CSROptions{Subject: sub}, wantErr: ksa.ErrInvalidConfig},
		{name: "zero subject", key: key, opts: x509sa.CSROptions{}, wantErr: x509sa.ErrInvalidSubject},
		{name: "forged extension", key: key, opts: x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA, Extensions: map[string]string{"system:pod-name": "x"}}}, wantErr: x509sa.ErrReservedExtension},
		{name: "unknown usage bits", key: key, opts: x509sa.CSROptions{Subject: sub, Usage: 4}, wantErr: x509sa.ErrInvalidUsage},
		{name: "hosts on a client certificate", key: key, opts: x509sa.CSROptions{Subject: sub, Hosts: []string{"cart"}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "SPIFFE ID without server auth", key: key, opts: x509sa.CSROptions{Subject: sub, TrustDomain: "td"}, wantErr: x509sa.ErrInvalidUsage},
		{name: "bad trust domain", key: key, opts: x509sa.CSROptions{Subject: sub, Usage: x509sa.ClientAndServerAuth, TrustDomain: "TD"}, wantErr: x509sa.ErrInvalidSPIFFEID},
		{name: "bad host", key: key, opts: x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"a b"}}, wantErr: x509sa.ErrInvalidHost},
		{name: "too many hosts", key: key, opts: x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: make([]string, x509sa.MaxHosts+1)}, wantErr: x509sa.ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			der, err := x509sa.CreateCSR(nil, tt.key, tt.opts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, der)
				return
			}
			require.NoError(t, err)
			csr, err := x509sa.ParseCSR(der)
			require.NoError(t, err)
			tt.check(t, csr)
		})
	}
}

// ext builds a requested extension from a value asn1 can marshal.
func ext(t *testing.T, oid asn1.ObjectIdentifier, v any) pkix.Extension {
	t.Helper()
	b, err := asn1.Marshal(v)
	require.NoError(t, err)
	return pkix.Extension{Id: oid, Value: b}
}

func TestParseCSRRejects(t *testing.T) {
	key := testkeys.Generated("p256")
	name, err := x509sa.Subject{ServiceAccount: testSA}.Name()
	require.NoError(t, err)
	var (
		oidSKID   = asn1.ObjectIdentifier{2, 5, 29, 14}
		oidKU     = asn1.ObjectIdentifier{2, 5, 29, 15}
		oidEKU    = asn1.ObjectIdentifier{2, 5, 29, 37}
		oidBC     = asn1.ObjectIdentifier{2, 5, 29, 19}
		oidClient = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 2}
		oidServer = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 1}
		oidCode   = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 3}
	)
	uri := func(s string) *url.URL {
		u, err := url.Parse(s)
		require.NoError(t, err)
		return u
	}
	both := ext(t, oidEKU, []asn1.ObjectIdentifier{oidClient, oidServer})
	client := ext(t, oidEKU, []asn1.ObjectIdentifier{oidClient})
	// A SAN extension with one dNSName [2] "cart".
	san := pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 17}, Value: []byte{0x30, 0x06, 0x82, 0x04, 'c', 'a', 'r', 't'}}
	manyDNS := make([]string, x509sa.MaxSANs+1)
	for i := range manyDNS {
		manyDNS[i] = fmt.Sprintf("h%d.svc", i)
	}
	tests := []struct {
		name    string
		tmpl    x509.CertificateRequest
		wantErr error
		want    func(t *testing.T, csr *x509sa.CSR)
	}{
		{name: "no usage requested is fine", tmpl: x509.CertificateRequest{Subject: name},
			want: func(t *testing.T, csr *x509sa.CSR) { assert.Zero(t, csr.Usage) }},
		{name: "64 SANs", tmpl: x509.CertificateRequest{Subject: name, DNSNames: manyDNS[:64]},
			want: func(t *testing.T, csr *x509sa.CSR) { assert.Len(t, csr.DNSNames, 64) }},
		{name: "basic constraints without CA", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidBC, struct{}{})}},
			want: func(t *testing.T, csr *x509sa.CSR) { assert.Zero(t, csr.Usage) }},

		{name: "user subject", tmpl: x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, wantErr: x509sa.ErrNotServiceAccount},
		{name: "system:masters", tmpl: x509.CertificateRequest{Subject: pkix.Name{CommonName: testSA.Username(), Organization: []string{"system:masters", "system:serviceaccounts", "system:serviceaccounts:shop"}}}, wantErr: x509sa.ErrInvalidSubject},
		{name: "e-mail SAN", tmpl: x509.CertificateRequest{Subject: name, EmailAddresses: []string{"a@b.c"}}, wantErr: x509sa.ErrInvalidHost},
		{name: "upper-case DNS SAN", tmpl: x509.CertificateRequest{Subject: name, DNSNames: []string{"Cart.svc"}}, wantErr: x509sa.ErrInvalidHost},
		{name: "duplicate DNS SAN", tmpl: x509.CertificateRequest{Subject: name, DNSNames: []string{"cart", "cart"}}, wantErr: x509sa.ErrInvalidHost},
		{name: "wildcard DNS SAN", tmpl: x509.CertificateRequest{Subject: name, DNSNames: []string{"*.svc"}}, wantErr: x509sa.ErrInvalidHost},
		{name: "unspecified IP SAN", tmpl: x509.CertificateRequest{Subject: name, IPAddresses: []net.IP{net.IPv4zero}}, wantErr: x509sa.ErrInvalidHost},
		{name: "duplicate IP SAN", tmpl: x509.CertificateRequest{Subject: name, IPAddresses: []net.IP{net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 1).To4()}}, wantErr: x509sa.ErrInvalidHost},
		{name: "65 SANs", tmpl: x509.CertificateRequest{Subject: name, DNSNames: manyDNS}, wantErr: x509sa.ErrLimit},
		{name: "two URIs", tmpl: x509.CertificateRequest{Subject: name, URIs: []*url.URL{uri("spiffe://td/ns/shop/sa/cart"), uri("spiffe://td/ns/shop/sa/cart")}}, wantErr: x509sa.ErrInvalidSPIFFEID},
		{name: "non-SPIFFE URI", tmpl: x509.CertificateRequest{Subject: name, URIs: []*url.URL{uri("https://td/ns/shop/sa/cart")}}, wantErr: x509sa.ErrInvalidSPIFFEID},
		{name: "SPIFFE ID of another account", tmpl: x509.CertificateRequest{Subject: name, URIs: []*url.URL{uri("spiffe://td/ns/shop/sa/admin")}}, wantErr: x509sa.ErrInvalidSPIFFEID},
		{name: "SPIFFE ID of the trust domain", tmpl: x509.CertificateRequest{Subject: name, URIs: []*url.URL{uri("spiffe://td")}}, wantErr: x509sa.ErrInvalidSPIFFEID},
		{name: "hosts with client-only request", tmpl: x509.CertificateRequest{Subject: name, DNSNames: []string{"cart"}, ExtraExtensions: []pkix.Extension{client}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "SPIFFE ID with client-only request", tmpl: x509.CertificateRequest{Subject: name, URIs: []*url.URL{uri("spiffe://td/ns/shop/sa/cart")}, ExtraExtensions: []pkix.Extension{client}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "unknown extension", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidSKID, []byte{1, 2})}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "CA requested", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidBC, struct{ IsCA bool }{true})}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "code signing", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidEKU, []asn1.ObjectIdentifier{oidClient, oidCode})}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "duplicate EKU", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidEKU, []asn1.ObjectIdentifier{oidClient, oidClient})}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "empty EKU", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidEKU, []asn1.ObjectIdentifier{})}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "EKU twice", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{both, both}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "malformed EKU", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{{Id: oidEKU, Value: []byte{0x30, 0x03, 0x06}}}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "malformed KU", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{{Id: oidKU, Value: []byte{0x04, 0x00}}}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "KU cert sign", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidKU, asn1.BitString{Bytes: []byte{0x84}, BitLength: 6})}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "KU without digital signature", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidKU, asn1.BitString{Bytes: []byte{0x20}, BitLength: 3})}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "KU high bit", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidKU, asn1.BitString{Bytes: []byte{0x80, 0x00, 0x01}, BitLength: 24})}}, wantErr: x509sa.ErrInvalidUsage},
		{name: "malformed basic constraints", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{{Id: oidBC, Value: []byte{0x04, 0x00}}}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "basic constraints twice", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidBC, struct{}{}), ext(t, oidBC, struct{}{})}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "SAN twice", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{san, san}}, wantErr: x509sa.ErrMalformedCSR},
		{name: "KU twice", tmpl: x509.CertificateRequest{Subject: name, ExtraExtensions: []pkix.Extension{ext(t, oidKU, asn1.BitString{Bytes: []byte{0x80}, BitLength: 1}), ext(t, oidKU, asn1.BitString{Bytes: []byte{0x80}, BitLength: 1})}}, wantErr: x509sa.ErrMalformedCSR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := tt.tmpl
			csr, err := x509sa.ParseCSR(rawCSR(t, key, &tmpl))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, csr)
				return
			}
			require.NoError(t, err)
			tt.want(t, csr)
		})
	}
}

func TestParseCSRMalformed(t *testing.T) {
	key := testkeys.Generated("p256")
	good := mustCSR(t, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})

	_, err := x509sa.ParseCSR(make([]byte, x509sa.MaxCSRSize+1))
	require.ErrorIs(t, err, x509sa.ErrLimit)
	_, err = x509sa.ParseCSR(make([]byte, x509sa.MaxCSRSize))
	require.ErrorIs(t, err, x509sa.ErrMalformedCSR, "at the limit: parsed, and refused as malformed")
	_, err = x509sa.ParseCSR(nil)
	require.ErrorIs(t, err, x509sa.ErrMalformedCSR)
	_, err = x509sa.ParseCSR(good[:len(good)-1])
	require.ErrorIs(t, err, x509sa.ErrMalformedCSR)

	bad := append([]byte(nil), good...)
	bad[len(bad)-5] ^= 0x01 // inside the signature
	_, err = x509sa.ParseCSR(bad)
	require.ErrorIs(t, err, x509sa.ErrMalformedCSR)
	assert.ErrorContains(t, err, "self-signature does not verify")
}

func TestDecodeCSRPEM(t *testing.T) {
	key := testkeys.Generated("p256")
	der := mustCSR(t, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})
	good := x509sa.EncodeCSRPEM(der)
	block := func(typ string, headers map[string]string) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: typ, Headers: headers, Bytes: der})
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr error
	}{
		{name: "good", data: good},
		{name: "surrounding white space", data: append(append([]byte("\n\t\n"), good...), "\n\n"...)},
		{name: "empty", data: nil, wantErr: x509sa.ErrMalformedCSR},
		{name: "DER", data: der, wantErr: x509sa.ErrMalformedCSR},
		{name: "wrong type", data: block("CERTIFICATE", nil), wantErr: x509sa.ErrMalformedCSR},
		{name: "NEW CERTIFICATE REQUEST", data: block("NEW CERTIFICATE REQUEST", nil), wantErr: x509sa.ErrMalformedCSR},
		{name: "headers", data: block(x509sa.CSRPEMType, map[string]string{"a": "b"}), wantErr: x509sa.ErrMalformedCSR},
		{name: "two blocks", data: append(append([]byte{}, good...), good...), wantErr: x509sa.ErrMalformedCSR},
		{name: "leading text", data: append([]byte("junk\n"), good...), wantErr: x509sa.ErrMalformedCSR},
		{name: "trailing text", data: append(append([]byte{}, good...), "junk"...), wantErr: x509sa.ErrMalformedCSR},
		{name: "over the limit", data: append(append([]byte{}, good...), strings.Repeat(" ", x509sa.MaxCSRPEMSize)...), wantErr: x509sa.ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x509sa.DecodeCSRPEM(tt.data)
			csr, perr := x509sa.ParseCSRPEM(tt.data)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.ErrorIs(t, perr, tt.wantErr)
				assert.Nil(t, csr)
				return
			}
			require.NoError(t, err)
			require.NoError(t, perr)
			assert.Equal(t, der, got)
			assert.Equal(t, testSA, csr.Subject.ServiceAccount)
		})
	}
}

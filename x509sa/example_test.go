package x509sa_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

func ExampleSubject_Name() {
	s := x509sa.Subject{
		ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60"},
		PodName:        "cart-7d9f",
		Extensions:     map[string]string{"example.com/team": "payments"},
	}
	name, err := s.Name()
	if err != nil {
		panic(err)
	}
	fmt.Println("CN:", name.CommonName)
	fmt.Println("O: ", name.Organization)
	fmt.Println("OU:", name.OrganizationalUnit)
	fmt.Println(name.ExtraNames[0].Type, name.ExtraNames[0].Value)

	// A requester cannot forge the reserved entries.
	s.Extensions = map[string]string{"system:pod-name": "other"}
	_, err = s.Name()
	fmt.Println(errors.Is(err, x509sa.ErrReservedExtension))
	// Output:
	// CN: system:serviceaccount:shop:cart
	// O:  [system:serviceaccounts system:serviceaccounts:shop]
	// OU: [system:pod-namespace=shop system:pod-name=cart-7d9f example.com/team=payments]
	// 1.3.6.1.4.1.57683.2 8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60
	// true
}

// The whole flow: a workload requests, a signer issues, a server verifies.
func ExampleIssuer() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// A CA: any crypto.Signer with its certificate (a KMS key works).
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		panic(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		panic(err)
	}

	// The workload: a key and a request for its own identity.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sa := ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "8f1c2a9e"}
	der, err := x509sa.CreateCSR(nil, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}})
	if err != nil {
		panic(err)
	}

	// The signer.
	issuer, err := x509sa.NewIssuer(x509sa.IssuerConfig{
		CA:     caCert,
		Key:    caKey,
		Now:    func() time.Time { return now },
		Jitter: func(time.Duration) time.Duration { return 0 },
	})
	if err != nil {
		panic(err)
	}
	issued, err := issuer.Issue(x509sa.IssueRequest{CSR: der, MaxLifetime: 8 * time.Hour})
	if err != nil {
		panic(err)
	}
	fmt.Println("valid:", issued.NotBefore.Format(time.Kitchen), "to", issued.NotAfter.Format(time.Kitchen))
	fmt.Println("refresh at:", issued.BeginRefreshAt.Format(time.Kitchen))

	// A server that trusts the CA.
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	v, err := x509sa.NewVerifier(x509sa.VerifierConfig{Roots: pool, Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	cert, err := v.Verify([]*x509.Certificate{issued.Leaf})
	if err != nil {
		panic(err)
	}
	user := cert.UserInfo()
	fmt.Println(user.Username, user.UID, user.Groups)
	fmt.Println(len(user.Extra[ksa.ExtraCredentialID][0]) == len("X509SHA256=")+64)
	// Output:
	// valid: 11:58AM to 7:58PM
	// refresh at: 3:58PM
	// system:serviceaccount:shop:cart 8f1c2a9e [system:serviceaccounts system:serviceaccounts:shop]
	// true
}

// An approver checks that a request asks only for its requester's
// identity.
func ExampleMatchRequester() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sa := ksa.ServiceAccount{Namespace: "shop", Name: "cart"}
	der, _ := x509sa.CreateCSR(nil, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}})
	csr, err := x509sa.ParseCSR(der)
	if err != nil {
		panic(err)
	}

	// The requester kube-apiserver authenticated: here the service account
	// itself.
	requester := ksa.UserInfo{Username: sa.Username(), Groups: append(sa.Groups(), "system:authenticated")}
	fmt.Println("own identity:", x509sa.MatchRequester(csr, requester, x509sa.MatchOptions{}))

	// Someone else asking for the account's certificate.
	requester.Username = "system:serviceaccount:shop:intruder"
	err = x509sa.MatchRequester(csr, requester, x509sa.MatchOptions{})
	var mismatch *x509sa.MismatchError
	fmt.Println("other requester:", errors.As(err, &mismatch), mismatch.Field)
	// Output:
	// own identity: <nil>
	// other requester: true username
}

func ExampleSplitHosts() {
	dns, ips, err := x509sa.SplitHosts([]string{"cart.shop.svc", "10.0.0.7", "Cart.Shop.svc", "::ffff:10.0.0.7", "fd00::1"})
	fmt.Println(dns, ips, err)
	_, _, err = x509sa.SplitHosts([]string{"010.0.0.7"})
	fmt.Println(err)
	// Output:
	// [cart.shop.svc] [10.0.0.7 fd00::1] <nil>
	// x509sa: host "010.0.0.7": looks like an IP address but does not parse as one
}

func ExampleParseSPIFFEID() {
	id, err := x509sa.ParseSPIFFEID("spiffe://cluster.local/ns/shop/sa/cart")
	if err != nil {
		panic(err)
	}
	sa, err := id.ServiceAccount()
	fmt.Println(id.TrustDomain, sa, err)
	_, err = x509sa.ParseSPIFFEID("spiffe://cluster.local/ns/shop/sa/")
	fmt.Println(err)
	// Output:
	// cluster.local system:serviceaccount:shop:cart <nil>
	// x509sa: SPIFFE ID "spiffe://cluster.local/ns/shop/sa/": path cannot have a trailing slash
}

func ExampleCredentialID() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// Any certificate: the credential ID is the SHA-256 of its DER bytes.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: now, NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		panic(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	id := x509sa.CredentialID(cert)
	fmt.Println(id[:len(x509sa.CredentialIDPrefix)], len(id))
	// Output:
	// X509SHA256= 75
}

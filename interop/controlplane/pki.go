package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// certValidity is how long the certificates made by this package are valid.
const certValidity = 24 * time.Hour

// servingHosts are the names and addresses in kube-apiserver's serving
// certificate: loopback, and the in-cluster names a real cluster's has.
var servingHosts = []string{
	"127.0.0.1", "::1", "localhost", "10.96.0.1",
	"kubernetes", "kubernetes.default", "kubernetes.default.svc",
	"kubernetes.default.svc.cluster.local",
}

// authority is the control plane's own CA: it signs kube-apiserver's serving
// certificate and is trusted for client certificates.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newAuthority generates a self-signed ECDSA P-256 CA.
func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("controlplane: CA key: %w", err)
	}
	tmpl, err := certTemplate("ksa-controlplane-ca")
	if err != nil {
		return nil, err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("controlplane: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("controlplane: CA certificate: %w", err)
	}
	return &authority{cert: cert, key: key}, nil
}

// issue signs tmpl (completed with a new ECDSA P-256 key) and returns the
// certificate and key for a TLS server or client.
func (a *authority) issue(tmpl *x509.Certificate) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("controlplane: certificate key: %w", err)
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("controlplane: certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("controlplane: certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// serving issues a TLS server certificate for hosts (IP addresses or DNS names).
func (a *authority) serving(hosts ...string) (tls.Certificate, error) {
	tmpl, err := certTemplate(hosts[0])
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return a.issue(tmpl)
}

// client issues a TLS client certificate that kube-apiserver maps to user
// (the common name) in groups (the organizations).
func (a *authority) client(user string, groups ...string) (tls.Certificate, error) {
	tmpl, err := certTemplate(user)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl.Subject.Organization = groups
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return a.issue(tmpl)
}

// certTemplate returns a template with a random serial number, the common
// name cn, and a validity of certValidity starting a minute ago.
func certTemplate(cn string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("controlplane: serial number: %w", err)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
	}, nil
}

// checkSigningKey returns an error matching [ErrInvalidConfig] unless k is a
// key type kube-apiserver signs service-account tokens with.
func checkSigningKey(k crypto.Signer) error {
	switch k.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey:
		return nil
	}
	return fmt.Errorf("%w: SigningKey is %T; kube-apiserver signs with *rsa.PrivateKey or *ecdsa.PrivateKey", ErrInvalidConfig, k)
}

// checkPublicKey returns an error matching [ErrInvalidConfig] unless k is a
// key type kube-apiserver verifies service-account tokens with.
func checkPublicKey(k crypto.PublicKey) error {
	switch k.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return nil
	}
	return fmt.Errorf("%w: verification key is %T; kube-apiserver verifies with *rsa.PublicKey or *ecdsa.PublicKey", ErrInvalidConfig, k)
}

// privateKeyPEM encodes k as a PKCS #8 "PRIVATE KEY" block.
func privateKeyPEM(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("controlplane: encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// publicKeyPEM encodes k as a PKIX "PUBLIC KEY" block.
func publicKeyPEM(k crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return nil, fmt.Errorf("controlplane: encoding public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// certsPEM encodes certs as "CERTIFICATE" blocks, in order.
func certsPEM(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

// writeFile writes data to path, readable only by its owner.
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	return nil
}

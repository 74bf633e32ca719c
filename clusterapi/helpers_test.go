package clusterapi_test

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/clusterapi"
)

// storeKey stands for a key in an HSM or KMS: a crypto.Signer that signs
// and gives its public key, never its private key.
type storeKey struct{ key crypto.Signer }

func (s storeKey) Public() crypto.PublicKey { return s.key.Public() }

func (s storeKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return s.key.Sign(r, digest, opts)
}

// pemOf encodes one PEM block.
func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// publicPEM is the PKIX "PUBLIC KEY" PEM of a key's public half.
func publicPEM(t testing.TB, key crypto.PublicKey) []byte {
	t.Helper()
	if s, ok := key.(crypto.Signer); ok {
		key = s.Public()
	}
	der, err := x509.MarshalPKIXPublicKey(key)
	require.NoError(t, err)
	return pemOf("PUBLIC KEY", der)
}

// pkcs8PEM is the PKCS #8 "PRIVATE KEY" PEM of a key.
func pkcs8PEM(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pemOf("PRIVATE KEY", der)
}

// certPEM is a self-signed certificate of key, as PEM.
func certPEM(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sa"},
		NotBefore: time.Unix(1700000000, 0), NotAfter: time.Unix(1800000000, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return pemOf("CERTIFICATE", der)
}

// secretOf is a Secret of cluster "c1" in namespace "ns" as Cluster API
// generates it, with the given data.
func secretOf(key, crt []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1-sa",
			Labels: map[string]string{clusterapi.ClusterNameLabel: "c1"}},
		Type: clusterapi.SecretType,
		Data: map[string][]byte{corev1.TLSPrivateKeyKey: key, corev1.TLSCertKey: crt},
	}
}

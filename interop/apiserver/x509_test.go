package apiserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/x509sa"
)

// clientFor returns a clientset that authenticates with the certificate
// alone (no token).
func clientFor(t *testing.T, cp *controlplane.ControlPlane, leaf *x509.Certificate, key *ecdsa.PrivateKey) kubernetes.Interface {
	t.Helper()
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	cfg := &rest.Config{
		Host: cp.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   cp.CAPEM,
			CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}),
			KeyData:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

func whoAmI(t *testing.T, cs kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return r.Status.UserInfo
}

// TestX509ClientCertificate: a client certificate built by x509sa (CSR,
// then issued by our CA) authenticates to the real kube-apiserver as the
// service account; SelfSubjectReview shows the username, groups, UID and
// credential ID x509sa decodes.
func TestX509ClientCertificate(t *testing.T) {
	shared.Each(t, testX509ClientCertificate)
}

func testX509ClientCertificate(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	sa := ksa.ServiceAccount{Namespace: f.ns, Name: f.sa.Name, UID: string(f.sa.UID)}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	csr, err := x509sa.CreateCSR(rand.Reader, key, x509sa.CSROptions{
		Subject: x509sa.Subject{ServiceAccount: sa, PodName: f.pod.Name},
		Usage:   x509sa.ClientAuth,
	})
	require.NoError(t, err)
	issuer, err := x509sa.NewIssuer(x509sa.IssuerConfig{CA: clientCA, Key: clientCAKey})
	require.NoError(t, err)
	issued, err := issuer.Issue(x509sa.IssueRequest{CSR: csr, Usage: x509sa.ClientAuth})
	require.NoError(t, err)

	decoded, err := x509sa.DecodeCertificate(issued.Leaf)
	require.NoError(t, err)
	want := decoded.UserInfo()

	got := whoAmI(t, clientFor(t, f.cp, issued.Leaf, key))
	assert.Equal(t, want.Username, got.Username)
	assert.Equal(t, "system:serviceaccount:"+f.ns+":billing", got.Username)
	assert.Equal(t, sa.UID, got.UID, "the UID attribute is read (AllowParsingUserUIDFromCertAuth)")
	assert.ElementsMatch(t, append(want.Groups, "system:authenticated"), got.Groups)
	assert.Equal(t, []string{x509sa.CredentialID(issued.Leaf)}, []string(got.Extra[ksa.ExtraCredentialID]))
}

// TestX509ForgedExtension: kube-apiserver only reads CN, O and the UID, so
// a certificate whose OU claims a reserved entry still authenticates there;
// x509sa's decoder refuses it with a typed error.
func TestX509ForgedExtension(t *testing.T) {
	shared.Each(t, testX509ForgedExtension)
}

func testX509ForgedExtension(t *testing.T, cp *controlplane.ControlPlane) {
	f := newFixture(t, cp)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(42),
		Subject: pkix.Name{
			CommonName:         "system:serviceaccount:" + f.ns + ":billing",
			Organization:       []string{"system:serviceaccounts", "system:serviceaccounts:" + f.ns},
			OrganizationalUnit: []string{"system:pod-namespace=" + f.ns, "system:pod-name=" + f.pod.Name, "system:node-name=control-plane-1"},
		},
		NotBefore:   time.Now().Add(-time.Minute),
		NotAfter:    time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, clientCA, key.Public(), clientCAKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)

	got := whoAmI(t, clientFor(t, f.cp, leaf, key))
	assert.Equal(t, "system:serviceaccount:"+f.ns+":billing", got.Username, "kube-apiserver ignores the OU")

	_, err = x509sa.DecodeCertificate(leaf)
	require.ErrorIs(t, err, x509sa.ErrReservedExtension)
}

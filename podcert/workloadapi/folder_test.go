package workloadapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
	"github.com/ksa-go/ksa/x509sa"
)

// TestCredentialFolder: the folder holds what the Workload API serves, in
// the filesystem delivery's layout, replaced at once on each change; a
// trust domain no longer served loses its file.
func TestCredentialFolder(t *testing.T) {
	folder := t.TempDir()
	other, err := podcerttest.NewSigner(podcerttest.Config{TrustDomain: "partner.example"})
	require.NoError(t, err)
	partner := filepath.Join(t.TempDir(), "partner.pem")
	require.NoError(t, os.WriteFile(partner, other.TrustBundle(), 0o600))
	var updates []workloadapi.Status
	e := newEnv(t, true, func(c *workloadapi.Config) {
		c.CredentialFolder = folder
		c.CredentialFileMode = 0o640
		c.TrustBundles = append(c.TrustBundles, workloadapi.TrustBundle{TrustDomain: "partner.example", Path: partner})
		c.OnUpdate = func(s workloadapi.Status) { updates = append(updates, s) }
	})
	read := func(name string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(folder, name))
		require.NoError(t, err)
		return data
	}
	check := func(bundle []byte) {
		t.Helper()
		data := read(workloadapi.CredentialFileName)
		cred, err := podcert.ParseBundle(data)
		require.NoError(t, err, "key, then chain")
		assert.Equal(t, leafOf(t, bundle).Raw, cred.Certificate.Leaf.Raw)
		blk, _ := pem.Decode(data)
		assert.Equal(t, "PRIVATE KEY", blk.Type, "the key comes first")
		st, err := os.Stat(filepath.Join(folder, workloadapi.CredentialFileName))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())
		own, err := podcert.ParseTrustBundle(read("cluster.local" + workloadapi.TrustBundleFileSuffix))
		require.NoError(t, err)
		mounted, err := podcert.ParseTrustBundle(e.ca.TrustBundle())
		require.NoError(t, err)
		assert.Equal(t, len(mounted.Certificates), len(own.Certificates), "never merged with another trust domain's")
	}
	first, err := os.ReadFile(e.mount.Path("credentialbundle.pem"))
	require.NoError(t, err)
	check(first)
	_, err = podcert.ParseTrustBundle(read("partner.example" + workloadapi.TrustBundleFileSuffix))
	require.NoError(t, err)
	require.Len(t, updates, 1)
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", updates[0].SPIFFEID.String())

	next := e.publish()
	require.NoError(t, e.srv.Update())
	check(next)
	assert.Len(t, updates, 2)

	// A folder file in the way of the layout: the folder is not written,
	// the Workload API still serves.
	require.NoError(t, os.Remove(filepath.Join(folder, workloadapi.CredentialFileName)))
	require.NoError(t, os.WriteFile(filepath.Join(folder, workloadapi.CredentialFileName), []byte("mine"), 0o600))
	e.publish()
	require.ErrorIs(t, e.srv.Update(), workloadapi.ErrFolder)
	assert.Equal(t, []byte("mine"), read(workloadapi.CredentialFileName))
}

// TestWriteFolderDefederates: a trust domain left out of a write loses its
// file; the chain is written without the self-signed root a signer may
// append.
func TestWriteFolderDefederates(t *testing.T) {
	ca := newTestCA(t)
	cred := ca.issue(t, true)
	require.Len(t, cred.Certificate.Certificate, 2, "the mounted chain holds the root")
	roots, err := podcert.ParseTrustBundle(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
	require.NoError(t, err)
	dir := t.TempDir()
	both := map[string]*podcert.TrustBundle{"cluster.local": roots, "partner.example": roots}
	require.NoError(t, workloadapi.WriteFolder(dir, 0o600, cred, both))
	_, err = os.Stat(filepath.Join(dir, "partner.example"+workloadapi.TrustBundleFileSuffix))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, workloadapi.CredentialFileName))
	require.NoError(t, err)
	written, err := podcert.ParseBundle(data)
	require.NoError(t, err)
	assert.Len(t, written.Certificate.Certificate, 1, "no root in the chain")

	require.NoError(t, workloadapi.WriteFolder(dir, 0o600, cred, map[string]*podcert.TrustBundle{"cluster.local": roots}))
	_, err = os.Lstat(filepath.Join(dir, "partner.example"+workloadapi.TrustBundleFileSuffix))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestRefusedCredentials: a pod certificate without a SPIFFE ID, or of a
// trust domain without a bundle, is never served; an expired one makes
// the server not ready.
func TestRefusedCredentials(t *testing.T) {
	ca := newTestCA(t)
	trust := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	now := time.Now()
	start := func(cred *podcert.Credential, td string) *workloadapi.Server {
		t.Helper()
		require.NoError(t, mount.Write(map[string][]byte{"credentialbundle.pem": bundlePEM(t, cred), "ca.pem": trust}))
		srv, err := workloadapi.NewServer(workloadapi.Config{
			Credential:   podcert.SourceConfig{BundlePath: mount.Path("credentialbundle.pem")},
			TrustBundles: []workloadapi.TrustBundle{{TrustDomain: td, Path: mount.Path("ca.pem")}},
			Now:          func() time.Time { return now },
		})
		require.NoError(t, err)
		return srv
	}
	srv := start(ca.issue(t, false), "cluster.local")
	require.ErrorIs(t, srv.Ready(), workloadapi.ErrNoIdentity)
	require.ErrorIs(t, srv.Update(), workloadapi.ErrRefused)
	assert.ErrorContains(t, srv.Update(), "no SPIFFE ID")

	srv = start(ca.issue(t, true), "partner.example")
	require.ErrorIs(t, srv.Ready(), workloadapi.ErrNoIdentity)
	assert.ErrorContains(t, srv.Update(), "no trust bundle of trust domain cluster.local")

	srv = start(ca.issue(t, true), "cluster.local")
	require.NoError(t, srv.Ready())
	now = now.Add(2 * time.Hour)
	require.ErrorIs(t, srv.Ready(), workloadapi.ErrNoIdentity)
	require.ErrorIs(t, srv.Update(), podcert.ErrInvalidBundle, "expired")
}

// testCA is a CA of the test's own, for certificates podcert's signer
// would not issue.
type testCA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test root"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &testCA{key: key, cert: cert}
}

// issue makes a pod certificate valid an hour, with the SPIFFE ID or
// without, whose chain holds the root.
func (ca *testCA) issue(t *testing.T, withID bool) *podcert.Credential {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	sa := ksa.ServiceAccount{Namespace: "shop", Name: "cart", UID: "sa-uid"}
	name, err := x509sa.Subject{ServiceAccount: sa, PodName: "cart-0"}.Name()
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: name, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}
	if withID {
		id, err := x509sa.NewSPIFFEID("cluster.local", sa)
		require.NoError(t, err)
		tmpl.URIs = append(tmpl.URIs, id.URL())
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})...)
	cred, err := podcert.ParseBundle(data)
	require.NoError(t, err)
	return cred
}

// bundlePEM writes a credential as the kubelet does.
func bundlePEM(t *testing.T, cred *podcert.Credential) []byte {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(cred.Certificate.PrivateKey)
	require.NoError(t, err)
	out := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	for _, der := range cred.Certificate.Certificate {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

// TestCredentialFolderCreated: a folder that does not exist yet (a new
// subdirectory of the pod's emptyDir) is created by the first write, mode
// FolderMode, and receives the identity.
func TestCredentialFolderCreated(t *testing.T) {
	folder := filepath.Join(t.TempDir(), "creds")
	newEnv(t, true, func(c *workloadapi.Config) {
		c.CredentialFolder = folder
	})
	fi, err := os.Lstat(folder)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, workloadapi.FolderMode, fi.Mode().Perm())
	assert.Equal(t, os.FileMode(0o755), workloadapi.FolderMode)
	data, err := os.ReadFile(filepath.Join(folder, workloadapi.CredentialFileName))
	require.NoError(t, err)
	_, err = podcert.ParseBundle(data)
	require.NoError(t, err)
}

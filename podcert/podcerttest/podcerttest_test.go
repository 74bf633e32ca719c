package podcerttest_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
)

// TestDefaults: the documented defaults are those issued with.
func TestDefaults(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ca, err := podcerttest.NewSigner(podcerttest.Config{Now: func() time.Time { return now }})
	require.NoError(t, err)
	assert.Equal(t, podcerttest.DefaultSignerName, ca.SignerName())
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	bundle, err := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart", Key: key})
	require.NoError(t, err)
	cred, err := podcert.ParseBundle(bundle)
	require.NoError(t, err)
	assert.Equal(t, "spiffe://"+podcert.DefaultTrustDomain+"/ns/shop/sa/cart", cred.SPIFFEID.String())
	assert.Equal(t, "cart-0", cred.Identity.Pod.Name)
	assert.True(t, key.PublicKey.Equal(cred.Certificate.Leaf.PublicKey))
	leaf := cred.Certificate.Leaf
	assert.Equal(t, podcerttest.DefaultLifetime, leaf.NotAfter.Sub(leaf.NotBefore))

	roots, err := podcert.ParseTrustBundle(ca.TrustBundle())
	require.NoError(t, err)
	require.Len(t, roots.Certificates, 1)
	assert.Equal(t, now.Add(podcerttest.CALifetime), roots.Certificates[0].NotAfter)

	m, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, m.Write(map[string][]byte{"credentialbundle.pem": bundle}))
	st, err := os.Stat(m.Path("credentialbundle.pem"))
	require.NoError(t, err)
	assert.Equal(t, podcerttest.FileMode, st.Mode().Perm())
}

func TestRefusals(t *testing.T) {
	_, err := podcerttest.NewSigner(podcerttest.Config{TrustDomain: "Not A Domain"})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.ErrorContains(t, err, "Config.TrustDomain")
	_, err = podcerttest.NewSigner(podcerttest.Config{Lifetime: time.Minute})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.ErrorContains(t, err, "Config.Lifetime")

	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	_, err = ca.Issue(podcerttest.Pod{Name: "cart-0", ServiceAccount: "cart"})
	require.ErrorIs(t, err, podcerttest.ErrNotIssued, "no namespace")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = podcerttest.NewMount(file)
	require.Error(t, err)
	_, err = podcerttest.NewMount(filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	m, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	require.Error(t, m.Write(map[string][]byte{"../escape": nil}))
}

package clusterapi_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// wantPrivatePEM is the PEM Cluster API writes for a private key: PKCS #1
// for RSA, SEC 1 for ECDSA.
func wantPrivatePEM(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k))
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		require.NoError(t, err)
		return pemOf("EC PRIVATE KEY", der)
	}
	t.Fatalf("no PEM for %T", key)
	return nil
}

func TestNewSecret(t *testing.T) {
	tests := []struct {
		name      string
		cluster   string
		key       crypto.Signer
		namespace string
		verify    []crypto.PublicKey
	}{
		{name: "RSA 2048, Kubernetes' test key", cluster: "c1", key: testkeys.K8sRSA(), namespace: "fleet"},
		{name: "RSA 3072", cluster: "c1", key: testkeys.Generated("rsa3072")},
		{name: "ECDSA P-256", cluster: "c1", key: testkeys.K8sEC(), namespace: "fleet"},
		{name: "ECDSA P-384", cluster: "prod.eu-1", key: testkeys.Generated("p384")},
		{name: "ECDSA P-521", cluster: "c1", key: testkeys.Generated("p521")},
		{name: "cluster name of 63 characters", cluster: strings.Repeat("a", 63), key: testkeys.K8sEC()},
		{name: "verify keys after the signing key", cluster: "c1", key: testkeys.K8sRSA(), namespace: "fleet",
			verify: []crypto.PublicKey{testkeys.K8sOtherRSAPublic(), testkeys.K8sEC().Public()}},
		{name: "a private key as verify key gives its public half", cluster: "c1", key: testkeys.K8sEC(),
			verify: []crypto.PublicKey{testkeys.Generated("rsa2048")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := clusterapi.NewSecret(tt.cluster, tt.key, clusterapi.SecretOptions{Namespace: tt.namespace, VerifyKeys: tt.verify})
			require.NoError(t, err)

			assert.Equal(t, "v1", s.APIVersion)
			assert.Equal(t, "Secret", s.Kind)
			assert.Equal(t, tt.cluster+"-sa", s.Name)
			assert.Equal(t, tt.namespace, s.Namespace)
			assert.Equal(t, map[string]string{"cluster.x-k8s.io/cluster-name": tt.cluster}, s.Labels)
			assert.Equal(t, corev1.SecretType("cluster.x-k8s.io/secret"), s.Type)
			assert.Empty(t, s.OwnerReferences)
			assert.Empty(t, s.Annotations)
			assert.Empty(t, s.StringData)
			require.Len(t, s.Data, 2)

			assert.Equal(t, string(wantPrivatePEM(t, tt.key)), string(s.Data["tls.key"]))
			wantCrt := publicPEM(t, tt.key.Public())
			for _, v := range tt.verify {
				wantCrt = append(wantCrt, publicPEM(t, v)...)
			}
			assert.Equal(t, string(wantCrt), string(s.Data["tls.crt"]))

			pair, err := clusterapi.ReadSecret(s)
			require.NoError(t, err)
			kid, err := jwks.KeyID(tt.key)
			require.NoError(t, err)
			assert.Equal(t, kid, pair.KeyID)
			assert.Len(t, pair.Keys, 1+len(tt.verify))
		})
	}
}

func TestNewSecretRefuses(t *testing.T) {
	tests := []struct {
		name      string
		cluster   string
		key       crypto.Signer
		namespace string
		verify    []crypto.PublicKey
		want      []error
	}{
		{name: "empty cluster name", cluster: "", key: testkeys.K8sEC(), want: []error{ksa.ErrInvalidName}},
		{name: "cluster name of 64 characters", cluster: strings.Repeat("a", 64), key: testkeys.K8sEC(), want: []error{ksa.ErrInvalidName}},
		{name: "upper-case cluster name", cluster: "Cluster1", key: testkeys.K8sEC(), want: []error{ksa.ErrInvalidName}},
		{name: "cluster name with a slash", cluster: "ns/c1", key: testkeys.K8sEC(), want: []error{ksa.ErrInvalidName}},
		{name: "namespace with a dot", cluster: "c1", namespace: "a.b", key: testkeys.K8sEC(), want: []error{ksa.ErrInvalidName}},
		{name: "no key", cluster: "c1", key: nil, want: []error{jwks.ErrUnsupportedKey}},
		{name: "nil RSA key", cluster: "c1", key: (*rsa.PrivateKey)(nil), want: []error{jwks.ErrUnsupportedKey}},
		{name: "RSA 1024", cluster: "c1", key: testkeys.Generated("rsa1024"), want: []error{jwks.ErrUnsupportedKey}},
		{name: "ECDSA P-224", cluster: "c1", key: testkeys.Generated("p224"), want: []error{jwks.ErrUnsupportedKey}},
		{name: "Ed25519, which kubeadm does not load", cluster: "c1", key: testkeys.Generated("ed25519"), want: []error{jwks.ErrUnsupportedKey}},
		{name: "a key in a key store", cluster: "c1", key: storeKey{testkeys.K8sEC()}, want: []error{clusterapi.ErrKeyNotExportable}},
		{name: "RSA key whose halves disagree", cluster: "c1", key: mismatchedRSA(), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "ECDSA key whose halves disagree", cluster: "c1", key: mismatchedEC(), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "verify key that is the signing key", cluster: "c1", key: testkeys.K8sEC(),
			verify: []crypto.PublicKey{testkeys.K8sEC().Public()}, want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "verify key twice", cluster: "c1", key: testkeys.K8sEC(),
			verify: []crypto.PublicKey{testkeys.K8sOtherRSAPublic(), testkeys.K8sOtherRSAPublic()}, want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "Ed25519 verify key", cluster: "c1", key: testkeys.K8sEC(),
			verify: []crypto.PublicKey{testkeys.Generated("ed25519").Public()}, want: []error{jwks.ErrUnsupportedKey}},
		{name: "nil verify key", cluster: "c1", key: testkeys.K8sEC(), verify: []crypto.PublicKey{nil}, want: []error{jwks.ErrUnsupportedKey}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := clusterapi.NewSecret(tt.cluster, tt.key, clusterapi.SecretOptions{Namespace: tt.namespace, VerifyKeys: tt.verify})
			require.Error(t, err)
			assert.Nil(t, s)
			assert.True(t, strings.HasPrefix(err.Error(), "clusterapi: "), err.Error())
			for _, w := range tt.want {
				assert.ErrorIs(t, err, w)
			}
		})
	}
}

// mismatchedRSA is an RSA key whose public half is another key's.
func mismatchedRSA() *rsa.PrivateKey {
	k := *testkeys.K8sRSA()
	k.PublicKey = *testkeys.K8sOtherRSAPublic()
	return &k
}

// mismatchedEC is an ECDSA key whose public half is another key's.
func mismatchedEC() *ecdsa.PrivateKey {
	k := *testkeys.K8sEC()
	k.PublicKey = testkeys.Generated("p256").(*ecdsa.PrivateKey).PublicKey
	return &k
}

func TestNewSecretKeyStoreErrorExplains(t *testing.T) {
	_, err := clusterapi.NewSecret("c1", storeKey{testkeys.K8sEC()}, clusterapi.SecretOptions{})
	require.ErrorIs(t, err, clusterapi.ErrKeyNotExportable)
	assert.Contains(t, err.Error(), "ECDSA P-256")
	assert.Contains(t, err.Error(), "--service-account-signing-endpoint")
}

func TestNewSecretFromRef(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sa.key")
	require.NoError(t, os.WriteFile(file, pkcs8PEM(t, testkeys.K8sRSA()), 0o600))
	ref, err := keystore.ParseRef(file)
	require.NoError(t, err)

	s, err := clusterapi.NewSecretFromRef("c1", ref, clusterapi.SecretOptions{Namespace: "fleet"})
	require.NoError(t, err)
	// The PKCS #8 file is written as Cluster API writes keys: PKCS #1.
	assert.Equal(t, string(wantPrivatePEM(t, testkeys.K8sRSA())), string(s.Data["tls.key"]))
	want, err := clusterapi.NewSecret("c1", testkeys.K8sRSA(), clusterapi.SecretOptions{Namespace: "fleet"})
	require.NoError(t, err)
	assert.Equal(t, want, s)

	tests := []struct {
		name string
		ref  string
		want error
	}{
		{name: "a PKCS #11 key", ref: "pkcs11:token=ksa;id=01;object=sa?pin-source=/run/pin", want: clusterapi.ErrKeyNotExportable},
		{name: "an AWS KMS key", ref: "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab;region=eu-west-1", want: clusterapi.ErrKeyNotExportable},
		{name: "a missing file", ref: filepath.Join(dir, "missing.key"), want: keystore.ErrKeyFile},
		{name: "a public key file", ref: writeFile(t, dir, "sa.pub", publicPEM(t, testkeys.K8sRSA())), want: jwks.ErrNoKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := keystore.ParseRef(tt.ref)
			require.NoError(t, err)
			_, err = clusterapi.NewSecretFromRef("c1", r, clusterapi.SecretOptions{})
			require.ErrorIs(t, err, tt.want)
			assert.Equal(t, 1, strings.Count(err.Error(), "clusterapi: "), err.Error())
			assert.NotContains(t, err.Error(), "keystore: ")
		})
	}
}

func TestSecretName(t *testing.T) {
	assert.Equal(t, "cluster-1-sa", clusterapi.SecretName("cluster-1"))
}

func TestEd25519PrivateKeyRefused(t *testing.T) {
	// crypto/ed25519's key, not only a public key, is refused by type.
	_, err := clusterapi.NewSecret("c1", testkeys.Generated("ed25519").(ed25519.PrivateKey), clusterapi.SecretOptions{})
	require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	assert.Contains(t, err.Error(), "RSA and ECDSA")
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func TestCheckClusterName(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		ok      bool
	}{
		{name: "a label", cluster: "cluster-1", ok: true},
		{name: "a subdomain", cluster: "prod.eu-1", ok: true},
		{name: "63 characters", cluster: strings.Repeat("a", 63), ok: true},
		{name: "64 characters", cluster: strings.Repeat("a", 64)},
		{name: "empty", cluster: ""},
		{name: "upper case", cluster: "Cluster-1"},
		{name: "underscore, a label value but no object name", cluster: "cluster_1"},
		{name: "leading dash", cluster: "-c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := clusterapi.CheckClusterName(tt.cluster)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ksa.ErrInvalidName)
			var ne *ksa.NameError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, "cluster name", ne.Field)
			assert.True(t, strings.HasPrefix(err.Error(), "clusterapi: cluster name "), err.Error())
		})
	}
}

package clusterapi_test

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

func TestReadSecret(t *testing.T) {
	rsaKey, ecKey := testkeys.K8sRSA(), testkeys.K8sEC()
	capiRSA := wantPrivatePEM(t, rsaKey)
	capiEC := wantPrivatePEM(t, ecKey)
	other := testkeys.K8sOtherRSAPublic()
	tests := []struct {
		name     string
		secret   func() *corev1.Secret
		signer   crypto.Signer
		keys     []crypto.PublicKey
		cluster  string
		noNSWant bool
	}{
		{name: "RSA, as Cluster API generates it", secret: func() *corev1.Secret { return secretOf(capiRSA, publicPEM(t, rsaKey)) },
			signer: rsaKey, keys: []crypto.PublicKey{rsaKey.Public()}},
		{name: "ECDSA, as Cluster API generates it", secret: func() *corev1.Secret { return secretOf(capiEC, publicPEM(t, ecKey)) },
			signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "verify keys after the signing key", secret: func() *corev1.Secret {
			return secretOf(capiRSA, bytes.Join([][]byte{publicPEM(t, rsaKey), publicPEM(t, other), publicPEM(t, ecKey)}, nil))
		}, signer: rsaKey, keys: []crypto.PublicKey{rsaKey.Public(), other, ecKey.Public()}},
		{name: "openssl genrsa and rsa -pubout: PKCS #8 key", secret: func() *corev1.Secret { return secretOf(pkcs8PEM(t, rsaKey), publicPEM(t, rsaKey)) },
			signer: rsaKey, keys: []crypto.PublicKey{rsaKey.Public()}},
		{name: "openssl ecparam -genkey: EC PARAMETERS before the key", secret: func() *corev1.Secret {
			return secretOf(append([]byte("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"), capiEC...), publicPEM(t, ecKey))
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "a certificate of the key in tls.crt", secret: func() *corev1.Secret { return secretOf(capiEC, certPEM(t, ecKey)) },
			signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "type kubernetes.io/tls, as Cluster API's documentation shows", secret: func() *corev1.Secret {
			s := secretOf(capiEC, publicPEM(t, ecKey))
			s.Type = corev1.SecretTypeTLS
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "type Opaque", secret: func() *corev1.Secret {
			s := secretOf(capiEC, publicPEM(t, ecKey))
			s.Type = corev1.SecretTypeOpaque
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "no type: Opaque once created", secret: func() *corev1.Secret {
			s := secretOf(capiEC, publicPEM(t, ecKey))
			s.Type = ""
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "no namespace", secret: func() *corev1.Secret {
			s := secretOf(capiEC, publicPEM(t, ecKey))
			s.Namespace = ""
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}, noNSWant: true},
		{name: "stringData replaces data", secret: func() *corev1.Secret {
			s := secretOf([]byte("stale"), publicPEM(t, ecKey))
			s.StringData = map[string]string{"tls.key": string(capiEC)}
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "other data, annotations and owners are ignored", secret: func() *corev1.Secret {
			s := secretOf(capiEC, publicPEM(t, ecKey))
			s.Data["ca.crt"] = []byte("x")
			s.Annotations = map[string]string{"a": "b"}
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "controlplane.cluster.x-k8s.io/v1beta2", Kind: "KubeadmControlPlane", Name: "c1", UID: "u"}}
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "cluster name with dots and dashes", secret: func() *corev1.Secret {
			s := secretOf(capiEC, publicPEM(t, ecKey))
			s.Name, s.Labels[clusterapi.ClusterNameLabel] = "prod.eu-1-sa-sa", "prod.eu-1-sa"
			return s
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}, cluster: "prod.eu-1-sa"},
		{name: "tls.crt of MaxDataBytes", secret: func() *corev1.Secret {
			crt := publicPEM(t, ecKey)
			return secretOf(capiEC, append(crt, bytes.Repeat([]byte("\n"), clusterapi.MaxDataBytes-len(crt))...))
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
		{name: "tls.key of MaxDataBytes", secret: func() *corev1.Secret {
			return secretOf(append(capiEC, bytes.Repeat([]byte("\n"), clusterapi.MaxDataBytes-len(capiEC))...), publicPEM(t, ecKey))
		}, signer: ecKey, keys: []crypto.PublicKey{ecKey.Public()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pair, err := clusterapi.ReadSecret(tt.secret())
			require.NoError(t, err)
			cluster := tt.cluster
			if cluster == "" {
				cluster = "c1"
			}
			assert.Equal(t, cluster, pair.Cluster)
			if tt.noNSWant {
				assert.Empty(t, pair.Namespace)
			} else {
				assert.Equal(t, "ns", pair.Namespace)
			}
			assert.True(t, tt.signer.(interface{ Equal(crypto.PrivateKey) bool }).Equal(pair.Signer), "signer")
			kid, err := jwks.KeyID(tt.signer)
			require.NoError(t, err)
			assert.Equal(t, kid, pair.KeyID)
			require.Len(t, pair.Keys, len(tt.keys))
			for i, k := range tt.keys {
				want, err := jwks.NewKey(k)
				require.NoError(t, err)
				assert.Equal(t, want, pair.Keys[i], "key #%d", i)
			}
		})
	}
}

func TestReadSecretRefuses(t *testing.T) {
	rsaKey, ecKey := testkeys.K8sRSA(), testkeys.K8sEC()
	capiEC := wantPrivatePEM(t, ecKey)
	ecPub := publicPEM(t, ecKey)
	weak := testkeys.Generated("rsa1024").(*rsa.PrivateKey)
	edKey := testkeys.Generated("ed25519")
	with := func(mod func(s *corev1.Secret)) func() *corev1.Secret {
		return func() *corev1.Secret {
			s := secretOf(capiEC, ecPub)
			mod(s)
			return s
		}
	}
	data := func(key, crt []byte) func() *corev1.Secret {
		return func() *corev1.Secret { return secretOf(key, crt) }
	}
	encrypted := "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00000000000000000000000000000000\n\nAAAA\n-----END EC PRIVATE KEY-----\n"
	tests := []struct {
		name   string
		secret func() *corev1.Secret
		want   []error
	}{
		{name: "no Secret", secret: func() *corev1.Secret { return nil }, want: []error{clusterapi.ErrNotClusterSecret}},
		{name: "another purpose's Secret", secret: with(func(s *corev1.Secret) { s.Name = "c1-ca" }), want: []error{clusterapi.ErrNotClusterSecret}},
		{name: "no cluster name before -sa", secret: with(func(s *corev1.Secret) { s.Name = "-sa" }), want: []error{clusterapi.ErrNotClusterSecret, ksa.ErrInvalidName}},
		{name: "cluster name of 64 characters", secret: with(func(s *corev1.Secret) {
			s.Name, s.Labels[clusterapi.ClusterNameLabel] = strings.Repeat("a", 64)+"-sa", strings.Repeat("a", 64)
		}), want: []error{clusterapi.ErrNotClusterSecret, ksa.ErrInvalidName}},
		{name: "no cluster-name label", secret: with(func(s *corev1.Secret) { s.Labels = nil }), want: []error{clusterapi.ErrNotClusterSecret}},
		{name: "label of another cluster", secret: with(func(s *corev1.Secret) { s.Labels[clusterapi.ClusterNameLabel] = "c2" }), want: []error{clusterapi.ErrNotClusterSecret}},
		{name: "a service-account token Secret", secret: with(func(s *corev1.Secret) { s.Type = corev1.SecretTypeServiceAccountToken }), want: []error{clusterapi.ErrNotClusterSecret}},
		{name: "no tls.key", secret: with(func(s *corev1.Secret) { delete(s.Data, "tls.key") }), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "empty tls.key", secret: data([]byte{}, ecPub), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "no tls.crt: a key-store key's Secret", secret: with(func(s *corev1.Secret) { delete(s.Data, "tls.crt") }), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "stringData empties tls.crt", secret: with(func(s *corev1.Secret) { s.StringData = map[string]string{"tls.crt": ""} }), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.key over MaxDataBytes", secret: data(append(capiEC, bytes.Repeat([]byte("\n"), clusterapi.MaxDataBytes+1-len(capiEC))...), ecPub), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.crt over MaxDataBytes", secret: data(capiEC, append(ecPub, bytes.Repeat([]byte("\n"), clusterapi.MaxDataBytes+1-len(ecPub))...)), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.key not PEM", secret: data([]byte("not a key"), ecPub), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrNoKeys}},
		{name: "tls.key a public key", secret: data(ecPub, ecPub), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrNoKeys}},
		{name: "tls.key damaged", secret: data([]byte("-----BEGIN EC PRIVATE KEY-----\n!!!\n-----END EC PRIVATE KEY-----\n"), ecPub), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrMalformedPEM}},
		{name: "tls.key encrypted", secret: data([]byte(encrypted), ecPub), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrMalformedPEM}},
		{name: "tls.key RSA 1024", secret: data(pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(weak)), publicPEM(t, weak)), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrUnsupportedKey}},
		{name: "tls.key Ed25519", secret: data(pkcs8PEM(t, edKey), publicPEM(t, edKey)), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrUnsupportedKey}},
		{name: "tls.crt of another key", secret: data(capiEC, publicPEM(t, rsaKey)), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.crt with the signing key second", secret: data(capiEC, append(publicPEM(t, rsaKey), ecPub...)), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.crt with the signing key twice", secret: data(capiEC, append(ecPub, ecPub...)), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.crt holding the private key too", secret: data(capiEC, append(ecPub, capiEC...)), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.crt the private key itself", secret: data(capiEC, capiEC), want: []error{clusterapi.ErrInvalidKeyPair}},
		{name: "tls.crt with an Ed25519 key", secret: data(capiEC, append(ecPub, publicPEM(t, edKey)...)), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrUnsupportedKey}},
		{name: "tls.crt not PEM", secret: data(capiEC, []byte("AAAA")), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrNoKeys}},
		{name: "tls.crt damaged", secret: data(capiEC, []byte("-----BEGIN PUBLIC KEY-----\nAAAA")), want: []error{clusterapi.ErrInvalidKeyPair, jwks.ErrMalformedPEM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pair, err := clusterapi.ReadSecret(tt.secret())
			require.Error(t, err)
			assert.Nil(t, pair)
			for _, w := range tt.want {
				assert.ErrorIs(t, err, w)
			}
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "clusterapi: "), msg)
			for _, p := range []string{"clusterapi: ", "jwks: ", "keystore: ", "ksa: "} {
				assert.LessOrEqual(t, strings.Count(msg, p), 1, msg)
			}
			assert.NotContains(t, msg, "PRIVATE KEY-----", "no key material in messages")
		})
	}
}

// TestReadSecretNamesTheFault: each refusal says what is wrong, in a line.
func TestReadSecretNamesTheFault(t *testing.T) {
	ecKey := testkeys.K8sEC()
	s := secretOf(wantPrivatePEM(t, ecKey), publicPEM(t, testkeys.K8sRSA()))
	_, err := clusterapi.ReadSecret(s)
	require.Error(t, err)
	assert.Equal(t, `clusterapi: Secret "ns/c1-sa": tls.crt: the first key (kid JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU) is not the public key of tls.key`, err.Error())

	s = secretOf(wantPrivatePEM(t, ecKey), publicPEM(t, ecKey))
	s.Labels[clusterapi.ClusterNameLabel] = "c2"
	_, err = clusterapi.ReadSecret(s)
	require.Error(t, err)
	assert.Equal(t, `clusterapi: Secret "ns/c1-sa": label cluster.x-k8s.io/cluster-name is "c2", not "c1"`, err.Error())
}

// TestReadSecretKeepsNoAlias: the key pair does not share the Secret's
// memory, so a caller may change the Secret afterwards.
func TestReadSecretKeepsNoAlias(t *testing.T) {
	ecKey := testkeys.K8sEC()
	s := secretOf(wantPrivatePEM(t, ecKey), publicPEM(t, ecKey))
	pair, err := clusterapi.ReadSecret(s)
	require.NoError(t, err)
	for _, v := range s.Data {
		for i := range v {
			v[i] = 0
		}
	}
	kid, err := jwks.KeyID(pair.Signer)
	require.NoError(t, err)
	assert.Equal(t, testkeys.K8sECKeyID, kid)
	block, _ := pem.Decode(wantPrivatePEM(t, pair.Signer))
	require.NotNil(t, block)
}

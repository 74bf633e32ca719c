package clusterapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// KeyPair is what a cluster's service-account key Secret gives its
// control-plane nodes, read and checked by [ReadSecret].
type KeyPair struct {
	// Cluster is the cluster's name, from the Secret's name.
	Cluster string
	// Namespace is the Secret's namespace (the Cluster's); empty when the
	// object has none.
	Namespace string
	// Signer is the private key of tls.key (sa.key): an *rsa.PrivateKey
	// or *ecdsa.PrivateKey, which kube-apiserver signs tokens with.
	Signer crypto.Signer
	// KeyID is the signing key's Kubernetes key ID (jwks.KeyID): the kid
	// of the tokens the cluster signs, to find in the published key set.
	KeyID string
	// Keys are the public keys of tls.crt (sa.pub), which kube-apiserver
	// verifies tokens with, in order: the signing key's first, then any
	// others (SecretOptions.VerifyKeys). Each has its Kubernetes key ID and
	// default algorithm, as a published key set lists it.
	Keys []jwks.Key
}

// ReadSecret reads a cluster's service-account key Secret, as Cluster
// API's controllers and kubeadm will use it, and checks it more strictly
// than they do:
//
//   - the name is a cluster name (a DNS-1123 subdomain of at most
//     [MaxClusterNameLength] characters) followed by "-sa";
//   - the [ClusterNameLabel] label names that cluster;
//   - the type is [SecretType], kubernetes.io/tls (as Cluster API's
//     documentation shows for Secrets users provide) or Opaque;
//   - tls.key holds an RSA or ECDSA private key (PKCS #1, SEC 1 or PKCS
//     #8 PEM; its first), which jwks.CheckPublicKey accepts;
//   - tls.crt holds that key's public key first, then any other RSA or
//     ECDSA public keys (PKIX public keys or certificates, as
//     kube-apiserver reads --service-account-key-file), each once, and no
//     private key: Cluster API writes it to a file other users may read.
//
// Each of tls.key and tls.crt is at most [MaxDataBytes]. Data are read as
// the API server stores them: a stringData entry replaces the data entry
// of its key. Other data keys, annotations and owner references are
// ignored, as Cluster API ignores them.
//
// An object that is not such a Secret is an error matching
// [ErrNotClusterSecret]; data that do not make the key pair, one matching
// [ErrInvalidKeyPair] and, when a key is at fault, jwks.ErrMalformedPEM,
// jwks.ErrNoKeys or jwks.ErrUnsupportedKey.
func ReadSecret(s *corev1.Secret) (*KeyPair, error) {
	if s == nil {
		return nil, errs.Wrap(prefix, ErrNotClusterSecret, "no Secret", nil)
	}
	where := "Secret " + strconv.Quote(s.Name)
	if s.Namespace != "" {
		where = "Secret " + strconv.Quote(s.Namespace+"/"+s.Name)
	}
	cluster, ok := strings.CutSuffix(s.Name, nameSuffix)
	if !ok {
		return nil, errs.Wrap(prefix, ErrNotClusterSecret, where+": the name does not end in "+strconv.Quote(nameSuffix), nil)
	}
	if err := checkClusterName(cluster); err != nil {
		return nil, errs.Wrap(prefix, ErrNotClusterSecret, where, err)
	}
	switch label, ok := s.Labels[ClusterNameLabel]; {
	case !ok:
		return nil, errs.Wrap(prefix, ErrNotClusterSecret, fmt.Sprintf("%s: no %s label (it must be %q)", where, ClusterNameLabel, cluster), nil)
	case label != cluster:
		return nil, errs.Wrap(prefix, ErrNotClusterSecret, fmt.Sprintf("%s: label %s is %q, not %q", where, ClusterNameLabel, label, cluster), nil)
	}
	switch s.Type {
	case SecretType, corev1.SecretTypeTLS, corev1.SecretTypeOpaque, "":
	default:
		return nil, errs.Wrap(prefix, ErrNotClusterSecret, fmt.Sprintf("%s: type %q is not %s, %s or %s", where, s.Type, SecretType, corev1.SecretTypeTLS, corev1.SecretTypeOpaque), nil)
	}
	signer, err := readPrivateKey(dataOf(s, corev1.TLSPrivateKeyKey))
	if err != nil {
		return nil, errs.Wrap(prefix, ErrInvalidKeyPair, where+": "+corev1.TLSPrivateKeyKey, err)
	}
	keys, err := readPublicKeys(dataOf(s, corev1.TLSCertKey), signer.Public())
	if err != nil {
		return nil, errs.Wrap(prefix, ErrInvalidKeyPair, where+": "+corev1.TLSCertKey, err)
	}
	return &KeyPair{Cluster: cluster, Namespace: s.Namespace, Signer: signer, KeyID: keys[0].KeyID, Keys: keys}, nil
}

// dataOf returns the value of a data key as the API server stores it:
// stringData over data.
func dataOf(s *corev1.Secret, key string) []byte {
	if v, ok := s.StringData[key]; ok {
		return []byte(v)
	}
	return s.Data[key]
}

// checkSize refuses an empty value, or one over MaxDataBytes.
func checkSize(data []byte) error {
	switch {
	case len(data) == 0:
		return errs.Wrap(prefix, nil, "missing or empty", nil)
	case len(data) > MaxDataBytes:
		return errs.Wrap(prefix, nil, fmt.Sprintf("%d bytes, over the %d-byte limit", len(data), MaxDataBytes), nil)
	}
	return nil
}

// readPrivateKey reads tls.key as kubeadm reads sa.key: the first private
// key of the PEM data, RSA or ECDSA.
func readPrivateKey(data []byte) (crypto.Signer, error) {
	if err := checkSize(data); err != nil {
		return nil, err
	}
	signer, err := keystore.ParseSigningKeyPEM(data)
	if err != nil {
		return nil, err
	}
	switch signer.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey:
		return signer, nil
	}
	return nil, unsupportedByKubeadm(signer.Public())
}

// readPublicKeys reads tls.crt as kube-apiserver reads sa.pub, and checks
// that it starts with the signing key's public key, holds every key once,
// RSA or ECDSA, and no private key.
func readPublicKeys(data []byte, signing crypto.PublicKey) ([]jwks.Key, error) {
	if err := checkSize(data); err != nil {
		return nil, err
	}
	pubs, err := jwks.ParsePublicKeysPEM(data)
	if err != nil {
		return nil, err
	}
	if _, err := keystore.ParseSigningKeyPEM(data); !errors.Is(err, jwks.ErrNoKeys) {
		// Parsed above, so the private key parses here too.
		return nil, errs.Wrap(prefix, nil, "holds a private key, which would be written to the public key file sa.pub", nil)
	}
	keys := make([]jwks.Key, 0, len(pubs))
	seen := make(map[string]int, len(pubs))
	for i, pub := range pubs {
		if err := kubeadmKey(pub); err != nil {
			return nil, errs.Wrap(prefix, nil, "key #"+strconv.Itoa(i), err)
		}
		k, err := jwks.NewKey(pub)
		if err != nil {
			return nil, errs.Wrap(prefix, nil, "key #"+strconv.Itoa(i), err)
		}
		if j, ok := seen[k.KeyID]; ok {
			return nil, errs.Wrap(prefix, nil, fmt.Sprintf("key #%d is key #%d again (kid %s)", i, j, k.KeyID), nil)
		}
		seen[k.KeyID] = i
		keys = append(keys, k)
	}
	if !keys[0].Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(signing) {
		return nil, errs.Wrap(prefix, nil, fmt.Sprintf("the first key (kid %s) is not the public key of %s", keys[0].KeyID, corev1.TLSPrivateKeyKey), nil)
	}
	return keys, nil
}

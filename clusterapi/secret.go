package clusterapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/keyname"
	"github.com/ksa-go/ksa/internal/ownkey"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// What Cluster API names, labels and types its Secrets with.
const (
	// ClusterNameLabel is the label every Secret of a cluster carries,
	// with the cluster's name as its value. Cluster API's controllers
	// cache only the Secrets that carry it (others are read from the API
	// server on each look-up), and its documentation requires it of the
	// Secrets a user provides.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"
	// SecretType is the type of the Secrets Cluster API generates. A
	// KubeadmControlPlane makes itself the controller owner of a cluster
	// Secret of this type, so the Secret is deleted with it.
	SecretType corev1.SecretType = "cluster.x-k8s.io/secret"
	// MaxClusterNameLength is the longest cluster name: Cluster API uses
	// the name as a label value, 63 characters at most.
	MaxClusterNameLength = 63
	// MaxDataBytes bounds each of tls.key and tls.crt that ReadSecret
	// reads: 64 KiB, ten times an RSA 8192 private key, or a hundred RSA
	// 2048 public keys. A larger value is refused unparsed.
	MaxDataBytes = 64 << 10
)

// nameSuffix ends the Secret's name: Cluster API's "sa" purpose.
const nameSuffix = "-sa"

// SecretName returns the name of the Secret holding a cluster's
// service-account keys: the cluster's name followed by "-sa".
func SecretName(cluster string) string { return cluster + nameSuffix }

// SecretOptions are the settings of [NewSecret] beyond the cluster and
// its key. The zero value renders the Secret Cluster API would generate
// for the key.
type SecretOptions struct {
	// Namespace is the Cluster's namespace, where the Secret must be
	// created. Empty leaves it unset, for the client (or kubectl) to
	// fill in.
	Namespace string
	// VerifyKeys are public keys kube-apiserver also accepts tokens
	// from, written to tls.crt after the signing key's own: the next
	// key while it is being distributed, the previous key while tokens
	// it signed live. A private key or crypto.Signer gives its public
	// half. They must be RSA or ECDSA keys, and none the signing key or
	// another of them. None by default.
	VerifyKeys []crypto.PublicKey
}

// NewSecret renders the Secret that gives a cluster's control-plane
// machines key as their service-account signing key, byte for byte as
// Cluster API renders the one it generates: named [SecretName], in
// opts.Namespace, labelled [ClusterNameLabel] with the cluster's name, of
// type [SecretType], with tls.key holding the private key as PEM (PKCS #1
// "RSA PRIVATE KEY" or SEC 1 "EC PRIVATE KEY") and tls.crt its public key
// as PEM (PKIX "PUBLIC KEY": a public key, not a certificate), followed by
// opts.VerifyKeys. It sets no owner reference, as Cluster API sets none on
// a Secret it finds; apiVersion and kind are set, so the object can be
// written out as a manifest.
//
// key must be an *rsa.PrivateKey or *ecdsa.PrivateKey that
// jwks.CheckPublicKey accepts (RSA 2048 to 8192 bits, ECDSA P-256, P-384
// or P-521): kubeadm and kube-apiserver load no other. Any other signer
// (a key in an HSM or KMS) is an error matching [ErrKeyNotExportable]; an
// Ed25519 or refused key matches jwks.ErrUnsupportedKey. An invalid cluster
// name or namespace is a *ksa.NameError. The Secret is read back with
// [ReadSecret] before it is returned.
func NewSecret(cluster string, key crypto.Signer, opts SecretOptions) (*corev1.Secret, error) {
	if err := CheckClusterName(cluster); err != nil {
		return nil, err
	}
	if opts.Namespace != "" {
		if err := ksa.CheckNamespace("namespace", opts.Namespace); err != nil {
			return nil, errs.Wrap(prefix, nil, "", err)
		}
	}
	private, err := encodePrivateKey(key)
	if err != nil {
		return nil, err
	}
	public, err := encodePublicKeys(key.Public(), opts.VerifyKeys)
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: opts.Namespace,
			Name:      SecretName(cluster),
			Labels:    map[string]string{ClusterNameLabel: cluster},
		},
		Type: SecretType,
		Data: map[string][]byte{
			corev1.TLSPrivateKeyKey: private,
			corev1.TLSCertKey:       public,
		},
	}
	if _, err := ReadSecret(s); err != nil {
		return nil, err
	}
	return s, nil
}

// NewSecretFromRef is [NewSecret] with the key a reference names: a PEM
// key file, read with keystore.LoadSigningKeyFile. A reference to a key
// in a key store is an error matching [ErrKeyNotExportable]: such a key
// cannot be written into a Secret.
func NewSecretFromRef(cluster string, ref keystore.Ref, opts SecretOptions) (*corev1.Secret, error) {
	if ref.Scheme() != keystore.SchemeFile {
		return nil, notExportable(ref.String() + " is in a key store")
	}
	key, err := keystore.LoadSigningKeyFile(ref.Path())
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "", err)
	}
	return NewSecret(cluster, key, opts)
}

// CheckClusterName returns nil when cluster is a name Cluster API accepts
// for a Cluster: an object name (a DNS-1123 subdomain) that is also a
// label value, so at most [MaxClusterNameLength] characters. Otherwise the
// error wraps a *ksa.NameError (Field "cluster name") saying why.
func CheckClusterName(cluster string) error {
	if err := checkClusterName(cluster); err != nil {
		return errs.Wrap(prefix, nil, "", err)
	}
	return nil
}

// checkClusterName is CheckClusterName's *ksa.NameError.
func checkClusterName(cluster string) error {
	if err := ksa.CheckObjectName("cluster name", cluster); err != nil {
		return err
	}
	if len(cluster) > MaxClusterNameLength {
		return &ksa.NameError{Field: "cluster name", Value: cluster,
			Reason: "must be at most " + strconv.Itoa(MaxClusterNameLength) + " characters (Cluster API uses it as a label value)"}
	}
	return nil
}

// encodePrivateKey writes key as Cluster API writes a service-account
// private key: PKCS #1 for RSA, SEC 1 for ECDSA.
func encodePrivateKey(key crypto.Signer) ([]byte, error) {
	pub, err := jwks.PublicKey(key)
	if err != nil {
		return nil, keyError("the signing key", err)
	}
	if _, ok := key.(ed25519.PrivateKey); ok {
		return nil, keyError("the signing key", unsupportedByKubeadm(pub))
	}
	own, ok, err := ownkey.Copy(key)
	if err != nil {
		return nil, errs.Wrap(prefix, ErrInvalidKeyPair, "the signing key's public half is not its private key's", err)
	}
	if !ok {
		return nil, notExportable(fmt.Sprintf("a %T signer (%s) does not give its private key", key, keyname.Of(pub)))
	}
	if !own.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(pub) {
		return nil, errs.Wrap(prefix, ErrInvalidKeyPair, "the signing key's public half is not its private key's", nil)
	}
	var block *pem.Block
	switch k := own.(type) {
	case *rsa.PrivateKey:
		block = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, keyError("the signing key", err)
		}
		block = &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
	}
	return pem.EncodeToMemory(block), nil
}

// encodePublicKeys writes the signing key's public key and each verify
// key as PKIX "PUBLIC KEY" blocks, in order.
func encodePublicKeys(signing crypto.PublicKey, verify []crypto.PublicKey) ([]byte, error) {
	var out []byte
	seen := map[string]string{}
	for i, k := range append([]crypto.PublicKey{signing}, verify...) {
		what := "the signing key"
		if i > 0 {
			what = "VerifyKeys[" + strconv.Itoa(i-1) + "]"
		}
		pub, err := jwks.PublicKey(k)
		if err != nil {
			return nil, keyError(what, err)
		}
		if err := kubeadmKey(pub); err != nil {
			return nil, keyError(what, err)
		}
		kid, err := jwks.KeyID(pub)
		if err != nil {
			return nil, keyError(what, err)
		}
		if first, ok := seen[kid]; ok {
			return nil, errs.Wrap(prefix, ErrInvalidKeyPair, what+" is "+first+" again (kid "+kid+")", nil)
		}
		seen[kid] = what
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, keyError(what, err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	return out, nil
}

// kubeadmKey refuses a public key kubeadm and kube-apiserver do not sign
// or verify service-account tokens with: all but RSA and ECDSA.
func kubeadmKey(pub crypto.PublicKey) error {
	switch pub.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey:
		return nil
	}
	return unsupportedByKubeadm(pub)
}

// unsupportedByKubeadm is the error for a key of another type than RSA
// and ECDSA; it matches jwks.ErrUnsupportedKey.
func unsupportedByKubeadm(pub crypto.PublicKey) error {
	return errs.Wrap(prefix, jwks.ErrUnsupportedKey, "an "+keyname.Of(pub)+" key: kubeadm and kube-apiserver load RSA and ECDSA service-account keys only", nil)
}

// keyError reports a key of NewSecret's input that cannot be written,
// matching the cause (jwks.ErrUnsupportedKey for a refused key).
func keyError(what string, err error) error {
	return errs.Wrap(prefix, nil, what, err)
}

// notExportable reports a key that cannot be written into the Secret.
func notExportable(what string) error {
	return errs.Wrap(prefix, ErrKeyNotExportable, what+": Cluster API copies the private key to every control-plane node; "+
		"keep such a key for an external signer (kube-apiserver --service-account-signing-endpoint, which kubeadm does not configure), or give a PEM key", nil)
}

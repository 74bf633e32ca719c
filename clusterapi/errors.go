package clusterapi

import "github.com/ksa-go/ksa/internal/errs"

// prefix starts the messages of the package's errors.
const prefix = "clusterapi"

// Sentinel errors. Every refusal of the package matches one of them with
// errors.Is, or a cluster name or namespace that Kubernetes would refuse,
// a *ksa.NameError (ksa.ErrInvalidName); a key that does not parse or that
// ksa does not use also matches jwks.ErrMalformedPEM, jwks.ErrNoKeys or
// jwks.ErrUnsupportedKey.
var (
	// ErrNotClusterSecret: an object that is not Cluster API's
	// service-account key Secret: no Secret, a name that is not a cluster
	// name followed by "-sa", a cluster-name label missing or naming
	// another cluster, or a type none of Cluster API's Secrets has.
	ErrNotClusterSecret = errs.New(prefix, "not a Cluster API service-account key Secret")
	// ErrInvalidKeyPair: keys that do not make the key pair kubeadm and
	// kube-apiserver load from sa.key and sa.pub: in a Secret, tls.key or
	// tls.crt missing, empty or over MaxDataBytes, a key that is not RSA
	// or ECDSA, tls.crt holding a private key, its first key not tls.key's
	// public key; given to NewSecret, a private key whose halves disagree;
	// in either, one key twice.
	ErrInvalidKeyPair = errs.New(prefix, "invalid service-account key pair")
	// ErrKeyNotExportable: a key that cannot be written into the Secret:
	// a key in a key store (an HSM, a KMS), or any crypto.Signer that is
	// not an *rsa.PrivateKey or *ecdsa.PrivateKey. Cluster API copies the
	// private key to every control-plane node, and a Secret without it
	// does not work (see the package documentation).
	ErrKeyNotExportable = errs.New(prefix, "key cannot leave its key store")
)

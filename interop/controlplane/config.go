package controlplane

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"io"
	"strings"
	"time"
)

// DefaultIssuer is the service-account issuer used when [Config.Issuers] is
// empty: the one kubeadm and kind clusters use.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// DefaultStartTimeout bounds [Start] when its context has no deadline, and
// bounds [StartForTest] and [Shared.Get].
const DefaultStartTimeout = 60 * time.Second

// defaultAuthorizationModes is used when [Config.AuthorizationModes] is empty.
var defaultAuthorizationModes = []string{"Node", "RBAC"}

// Config configures a control plane. The zero value is ready to use: it gives
// a cluster like kubeadm's, with a new RSA signing key, on the newest
// kube-apiserver of [Versions].
type Config struct {
	// Version is the kube-apiserver release to run, such as "v1.36.3":
	// usually one of [Versions]. [Binaries] says where its binary is looked
	// for. Zero: the newest of [Versions].
	Version string

	// Issuers are the service-account issuers (--service-account-issuer, in
	// order): tokens are issued with the first and accepted from all. Each
	// must be an https URL for the discovery endpoints to be served.
	// Zero: [DefaultIssuer] alone.
	Issuers []string

	// APIAudiences are the audiences kube-apiserver accepts in tokens and
	// reports in TokenReview when none are asked for (--api-audiences).
	// Zero: the issuers, as kube-apiserver does.
	APIAudiences []string

	// SigningKey signs service-account tokens
	// (--service-account-signing-key-file); it must be an *rsa.PrivateKey
	// (RS256) or an *ecdsa.PrivateKey (ES256/384/512).
	// Zero: a new 2048-bit RSA key, as kubeadm makes.
	SigningKey crypto.Signer

	// VerificationKeys are public keys (*rsa.PublicKey or *ecdsa.PublicKey)
	// that kube-apiserver accepts tokens from in addition to SigningKey's,
	// each written to a PEM file of its own and passed with
	// --service-account-key-file. Zero: only SigningKey's public key.
	VerificationKeys []crypto.PublicKey

	// SigningEndpoint, when set, is --service-account-signing-endpoint: the
	// Unix socket path (or "@name" abstract socket) of an external JWT
	// signer that signs the service-account tokens and supplies the keys
	// they verify with, in place of SigningKey and VerificationKeys, which
	// must then be empty (no key file is written or passed). kube-apiserver
	// waits up to 60 s for the signer's first FetchKeys, so start the
	// signer first. Zero: kube-apiserver signs with SigningKey.
	SigningEndpoint string

	// ClientCAs are trusted for X.509 client certificates (--client-ca-file),
	// besides the control plane's own CA (see [ControlPlane.ClientCert]),
	// which is always trusted. Zero: only the control plane's CA.
	ClientCAs []*x509.Certificate

	// AuthorizationModes is --authorization-mode. Zero: Node,RBAC.
	AuthorizationModes []string

	// EnableAdmissionPlugins is --enable-admission-plugins: plugins added to
	// kube-apiserver's defaults. Zero: the defaults (which include the
	// ServiceAccount plugin and the validating and mutating webhooks).
	EnableAdmissionPlugins []string

	// DisableAdmissionPlugins is --disable-admission-plugins. Zero: none.
	DisableAdmissionPlugins []string

	// FeatureGates is --feature-gates. Zero: the release's defaults.
	FeatureGates map[string]bool

	// RuntimeConfig is --runtime-config, such as
	// {"certificates.k8s.io/v1beta1/clustertrustbundles": "true"}.
	// Zero: the release's default API groups.
	RuntimeConfig map[string]string

	// ExtraArgs are appended to kube-apiserver's arguments, each as
	// "--flag=value". They come last, so for a flag that takes one value they
	// override what this package sets. Zero: none.
	ExtraArgs []string

	// Output, when not nil, receives the output of etcd and kube-apiserver
	// (interleaved, one write at a time), besides the log files in [Files].
	// It must stay usable until [ControlPlane.Stop] returns (so not t.Log's
	// writer of a test that ends sooner). Zero: log files only.
	Output io.Writer
}

// withDefaults returns a copy of c with its zero fields defaulted, or an
// error matching [ErrInvalidConfig].
func (c Config) withDefaults() (Config, error) {
	if c.Version == "" {
		c.Version = versions[0]
	}
	if !strings.HasPrefix(c.Version, "v") || strings.Count(c.Version, ".") != 2 {
		return c, fmt.Errorf("%w: Version %q is not a release such as %s", ErrInvalidConfig, c.Version, versions[0])
	}
	if len(c.Issuers) == 0 {
		c.Issuers = []string{DefaultIssuer}
	}
	if len(c.APIAudiences) == 0 {
		c.APIAudiences = c.Issuers
	}
	if len(c.AuthorizationModes) == 0 {
		c.AuthorizationModes = defaultAuthorizationModes
	}
	for _, list := range [][]string{c.Issuers, c.APIAudiences, c.AuthorizationModes} {
		for _, s := range list {
			if s == "" || strings.Contains(s, ",") {
				return c, fmt.Errorf("%w: %q in Issuers, APIAudiences or AuthorizationModes", ErrInvalidConfig, s)
			}
		}
	}
	for _, a := range c.ExtraArgs {
		if !strings.HasPrefix(a, "--") {
			return c, fmt.Errorf("%w: ExtraArgs entry %q does not start with --", ErrInvalidConfig, a)
		}
	}
	if c.SigningEndpoint != "" {
		if c.SigningKey != nil || len(c.VerificationKeys) > 0 {
			return c, fmt.Errorf("%w: SigningEndpoint excludes SigningKey and VerificationKeys", ErrInvalidConfig)
		}
		return c, nil
	}
	if c.SigningKey == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return c, fmt.Errorf("controlplane: generating signing key: %w", err)
		}
		c.SigningKey = k
	}
	if err := checkSigningKey(c.SigningKey); err != nil {
		return c, err
	}
	for _, k := range c.VerificationKeys {
		if err := checkPublicKey(k); err != nil {
			return c, err
		}
	}
	return c, nil
}

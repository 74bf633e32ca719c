package oidc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// Where a pod finds its cluster, as Kubernetes sets it up.
const (
	// DefaultCAFile is the cluster CA bundle mounted into every pod.
	DefaultCAFile = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
	// DefaultTokenFile is the pod's projected service-account token,
	// rotated by the kubelet.
	DefaultTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	// MaxCABytes bounds the CA bundle file: 1 MiB.
	MaxCABytes = 1 << 20
)

// InClusterConfig says where a relying party running in a pod reaches its
// own cluster's API server. Its zero value is what Kubernetes gives every
// pod.
type InClusterConfig struct {
	// APIServer is the API server's https URL. Empty means
	// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the
	// kubernetes Service every pod is told about.
	APIServer string
	// CAFile is the PEM bundle the API server's certificate is verified
	// with; empty means DefaultCAFile. It is read once, at construction.
	CAFile string
	// TokenFile is the pod's projected token, sent as the bearer
	// credential of discovery and key-set requests (the group
	// system:serviceaccounts may read them through the
	// system:service-account-issuer-discovery role); empty means
	// DefaultTokenFile. It is read through a tokens.FileSource, so the
	// kubelet's rotation is followed.
	TokenFile string
	// Verifier sets the audiences and validation as for NewVerifier (its
	// Audiences are required). Its Issuers, when set, are the issuers
	// accepted (kube-apiserver accepts tokens of every
	// --service-account-issuer, and discovery names the first only); the
	// discovered one must be among them. Its Client, BearerToken,
	// KeySetBearerToken and InsecureAllowHTTP must be unset: the in-cluster
	// settings replace them.
	Verifier VerifierConfig
}

// NewInClusterVerifier builds a verifier for the cluster the program runs
// in, without knowing its issuer: the discovery document and the key set
// are fetched from the API server itself (authenticated by the cluster CA,
// with the pod's token as credential), and the issuer is the one that
// document names. Endpoints never come from a token's unverified iss, nor
// from the document's jwks_uri, which names the API server's external
// address: the keys are read at the API server's JWKSPath. A config it
// refuses is a *ksa.ConfigError.
func NewInClusterVerifier(ctx context.Context, in InClusterConfig) (*Verifier, error) {
	cfg := in.Verifier
	config := func(field, reason string) (*Verifier, error) {
		return nil, configError(field, reason, nil)
	}
	switch {
	case cfg.Client != nil:
		return config("VerifierConfig.Client", "is set: the in-cluster client trusts the cluster CA alone")
	case cfg.BearerToken != nil || cfg.KeySetBearerToken != nil:
		return config("VerifierConfig.BearerToken", "is set: the pod's token file is the in-cluster credential")
	case cfg.InsecureAllowHTTP:
		return config("VerifierConfig.InsecureAllowHTTP", "is set: the API server is reached over https only")
	}
	if err := cfg.checkAudiences(); err != nil {
		return nil, err
	}
	server, err := in.apiServer()
	if err != nil {
		return nil, err
	}
	client, err := in.client()
	if err != nil {
		return nil, err
	}
	tokenFile := in.TokenFile
	if tokenFile == "" {
		tokenFile = DefaultTokenFile
	}
	creds, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: tokenFile, Now: cfg.Now})
	if err != nil {
		return nil, configError("InClusterConfig.TokenFile", "cannot be read", err)
	}
	cfg.Client = client
	md, err := discover(ctx, DiscoveryConfig{Client: client, BearerToken: creds.Token, Timeout: cfg.Timeout}, server+DiscoveryPath)
	if err != nil {
		return nil, err
	}
	issuers := cfg.Issuers
	switch {
	case md.Issuer == "":
		return nil, &DiscoveryError{URL: server + DiscoveryPath, Status: http.StatusOK, Reason: "document has no issuer"}
	case len(issuers) == 0:
		issuers = []string{md.Issuer}
	case !slices.Contains(issuers, md.Issuer):
		return nil, &IssuerMismatchError{Expected: strings.Join(issuers, `", "`), Discovered: md.Issuer}
	}
	remote, err := cfg.remote(server+JWKSPath, creds.Token)
	if err != nil {
		return nil, err
	}
	v := &Verifier{providers: map[string]*ProviderMetadata{}, keySets: map[string]*jwks.Remote{}}
	issuerKeys := make(map[string]jwks.KeySource, len(issuers))
	for _, iss := range issuers {
		if _, dup := v.providers[iss]; dup {
			return config("VerifierConfig.Issuers", fmt.Sprintf("names %q twice", iss))
		}
		v.providers[iss] = md
		v.keySets[iss] = remote
		issuerKeys[iss] = remote
	}
	cfg.Issuers = issuers
	if err := v.build(cfg, issuerKeys); err != nil {
		return nil, err
	}
	return v, nil
}

// apiServer returns the API server's URL, without a trailing slash.
func (in InClusterConfig) apiServer() (string, error) {
	server := in.APIServer
	if server == "" {
		host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			return "", configError("InClusterConfig.APIServer", "is empty and KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset: not running in a pod?", nil)
		}
		server = "https://" + net.JoinHostPort(host, port)
	}
	if !hasScheme(server, "https") {
		return "", configError("InClusterConfig.APIServer", fmt.Sprintf("%q is not an https URL", server), nil)
	}
	return strings.TrimSuffix(server, "/"), nil
}

// client returns an http.Client that trusts the cluster CA alone.
func (in InClusterConfig) client() (*http.Client, error) {
	caFile := in.CAFile
	if caFile == "" {
		caFile = DefaultCAFile
	}
	fail := func(reason string, err error) (*http.Client, error) {
		return nil, configError("InClusterConfig.CAFile", fmt.Sprintf("%q %s", caFile, reason), err)
	}
	f, err := os.Open(caFile)
	if err != nil {
		return fail("cannot be read", err)
	}
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, MaxCABytes+1))
	if err != nil {
		return fail("cannot be read", err)
	}
	if len(pem) > MaxCABytes {
		return fail(fmt.Sprintf("is over the %d-byte limit", MaxCABytes), nil)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fail("holds no PEM certificate", nil)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}, nil
}

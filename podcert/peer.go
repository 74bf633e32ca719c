package podcert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

// PeerConfig configures [Peers]. TrustBundle is required.
type PeerConfig struct {
	// TrustBundle is the PEM roots of the signer (a ClusterTrustBundle's
	// spec.trustBundle, or [Signer.TrustBundle]): only CERTIFICATE blocks,
	// at most [MaxTrustBundleSize] bytes and [MaxTrustBundleCertificates]
	// certificates.
	TrustBundle []byte
	// TrustDomain, when set, requires the peer's SPIFFE ID to be in it.
	// Empty accepts any valid SPIFFE ID naming the subject's service
	// account, or none.
	TrustDomain string
	// Now returns the verification time. Nil means time.Now.
	Now func() time.Time
}

// Peers verifies the pod certificates peers present in mutual TLS and
// returns their identity, with x509sa's verifier: the chain to the trust
// bundle, the usage, the identity subject and SPIFFE ID. It is safe for
// concurrent use if its Now is.
type Peers struct {
	client, server *x509sa.Verifier
	roots          *x509.CertPool
}

// NewPeers validates the configuration. Errors are a *ksa.ConfigError.
func NewPeers(cfg PeerConfig) (*Peers, error) {
	roots, err := parseTrustBundle(cfg.TrustBundle)
	if err != nil {
		return nil, err
	}
	if cfg.TrustDomain != "" {
		if err := x509sa.CheckTrustDomain(cfg.TrustDomain); err != nil {
			return nil, peerConfigError("TrustDomain", "is invalid", err)
		}
	}
	mk := func(u x509sa.Usage) (*x509sa.Verifier, error) {
		return x509sa.NewVerifier(x509sa.VerifierConfig{Roots: roots, Usage: u, TrustDomain: cfg.TrustDomain, Now: cfg.Now})
	}
	p := &Peers{roots: roots}
	if p.client, err = mk(x509sa.ClientAuth); err != nil {
		return nil, err
	}
	if p.server, err = mk(x509sa.ServerAuth); err != nil {
		return nil, err
	}
	return p, nil
}

// peerConfigError reports a PeerConfig field NewPeers refuses.
func peerConfigError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: "podcert.PeerConfig." + field, Reason: reason, Err: cause}
}

func parseTrustBundle(data []byte) (*x509.CertPool, error) {
	if len(data) > MaxTrustBundleSize {
		return nil, peerConfigError("TrustBundle", "is too large", limit("trust bundle bytes", len(data), MaxTrustBundleSize))
	}
	pool := x509.NewCertPool()
	n := 0
	rest := data
	for len(bytes.TrimSpace(rest)) > 0 {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil || block.Type != "CERTIFICATE" {
			return nil, peerConfigError("TrustBundle", "must hold only CERTIFICATE PEM blocks", nil)
		}
		if n++; n > MaxTrustBundleCertificates {
			return nil, peerConfigError("TrustBundle", "holds more than "+strconv.Itoa(MaxTrustBundleCertificates)+" certificates", nil)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, peerConfigError("TrustBundle", "holds certificate "+strconv.Itoa(n-1)+", which does not parse", err)
		}
		pool.AddCert(cert)
	}
	if n == 0 {
		return nil, peerConfigError("TrustBundle", "is required (no certificate)", nil)
	}
	return pool, nil
}

// VerifyClient verifies a chain a client presented (leaf first) and
// returns its identity. Errors are x509sa's (matching x509sa.ErrUntrusted,
// x509sa.ErrInvalidCertificate, ...).
func (p *Peers) VerifyClient(chain []*x509.Certificate) (ksa.Identity, error) {
	c, err := p.client.Verify(chain)
	if err != nil {
		return ksa.Identity{}, err
	}
	return c.Identity(), nil
}

// VerifyServer verifies a chain a server presented and returns its
// identity.
func (p *Peers) VerifyServer(chain []*x509.Certificate) (ksa.Identity, error) {
	c, err := p.server.Verify(chain)
	if err != nil {
		return ksa.Identity{}, err
	}
	return c.Identity(), nil
}

// ServerConfig returns a TLS server configuration serving src's
// credential and requiring a client certificate that [Peers.VerifyClient]
// accepts; handlers read the client's identity with
// [Peers.VerifyClient](r.TLS.PeerCertificates), or the caller sets
// allow to admit identities during the handshake (nil admits any
// verified one).
func (p *Peers) ServerConfig(src *Source, allow func(ksa.Identity) error) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: src.GetCertificate,
		ClientAuth:     tls.RequireAnyClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			id, err := p.VerifyClient(cs.PeerCertificates)
			if err == nil && allow != nil {
				err = allow(id)
			}
			return err
		},
	}
}

// ClientConfig returns a TLS client configuration presenting src's
// credential and accepting only a server chain [Peers.VerifyServer]
// accepts, whose identity allow admits (nil admits any verified one).
// crypto/tls's own verification is replaced by that check (it cannot check
// the identity): the server is authenticated by its service account, not
// by a host name.
func (p *Peers) ClientConfig(src *Source, allow func(ksa.Identity) error) *tls.Config {
	return &tls.Config{
		MinVersion:           tls.VersionTLS12,
		GetClientCertificate: src.GetClientCertificate,
		// Verification happens in VerifyConnection, which always runs.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			id, err := p.VerifyServer(cs.PeerCertificates)
			if err == nil && allow != nil {
				err = allow(id)
			}
			return err
		},
	}
}

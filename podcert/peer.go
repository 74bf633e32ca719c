package podcert

import (
	"crypto/tls"
	"crypto/x509"
	"sync/atomic"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

// PeerConfig configures [Peers]: TrustBundle or TrustFile, one of them.
type PeerConfig struct {
	// TrustBundle is the PEM roots of the signer (a ClusterTrustBundle's
	// spec.trustBundle, or [Signer.TrustBundle]), read once with
	// [ParseTrustBundle]'s rules.
	TrustBundle []byte
	// TrustFile is the roots' file, followed as it is replaced: a
	// clusterTrustBundle projection, which the kubelet rewrites when the
	// signer publishes a new CA. Every handshake uses the bundle the file
	// holds then.
	TrustFile *TrustFile
	// TrustDomain, when set, requires the peer's SPIFFE ID to be in it.
	// Empty accepts any valid SPIFFE ID naming the subject's service
	// account, or none.
	TrustDomain string
	// Now returns the verification time. Nil means time.Now.
	Now func() time.Time
}

// Peers verifies the pod certificates peers present in mutual TLS and
// returns their identity, with x509sa's verifier: the chain to the trust
// bundle, the usage, the identity subject and SPIFFE ID. With a
// PeerConfig.TrustFile, it follows the file's replacements: a handshake
// uses the roots the file holds when it starts. It is safe for concurrent
// use if its Now is.
type Peers struct {
	cfg   PeerConfig
	state atomic.Pointer[peerState]
}

// peerState is what Peers verifies with for one trust bundle.
type peerState struct {
	bundle         *TrustBundle
	client, server *x509sa.Verifier
}

// NewPeers validates the configuration. Errors are a *ksa.ConfigError.
func NewPeers(cfg PeerConfig) (*Peers, error) {
	if cfg.TrustDomain != "" {
		if err := x509sa.CheckTrustDomain(cfg.TrustDomain); err != nil {
			return nil, peerConfigError("TrustDomain", "is invalid", err)
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Peers{cfg: cfg}
	var bundle *TrustBundle
	switch {
	case cfg.TrustFile != nil && cfg.TrustBundle != nil:
		return nil, peerConfigError("TrustFile", "is set with TrustBundle: set one or the other", nil)
	case cfg.TrustFile != nil:
		bundle = cfg.TrustFile.Current()
	case len(cfg.TrustBundle) == 0:
		return nil, peerConfigError("TrustBundle", "is required (no certificate), or TrustFile", nil)
	default:
		var err error
		if bundle, err = ParseTrustBundle(cfg.TrustBundle); err != nil {
			return nil, peerConfigError("TrustBundle", "cannot be used", err)
		}
	}
	st, err := p.newState(bundle)
	if err != nil {
		return nil, err
	}
	p.state.Store(st)
	return p, nil
}

// peerConfigError reports a PeerConfig field NewPeers refuses.
func peerConfigError(field, reason string, cause error) error {
	return &ksa.ConfigError{Field: "podcert.PeerConfig." + field, Reason: reason, Err: cause}
}

// newState builds the verifiers of a bundle.
func (p *Peers) newState(b *TrustBundle) (*peerState, error) {
	mk := func(u x509sa.Usage) (*x509sa.Verifier, error) {
		return x509sa.NewVerifier(x509sa.VerifierConfig{Roots: b.pool, Usage: u, TrustDomain: p.cfg.TrustDomain, Now: p.cfg.Now})
	}
	st := &peerState{bundle: b}
	var err error
	if st.client, err = mk(x509sa.ClientAuth); err != nil {
		return nil, err
	}
	if st.server, err = mk(x509sa.ServerAuth); err != nil {
		return nil, err
	}
	return st, nil
}

// current returns the state of the bundle in use now: with a TrustFile,
// the one the file holds.
func (p *Peers) current() *peerState {
	st := p.state.Load()
	if p.cfg.TrustFile == nil {
		return st
	}
	b := p.cfg.TrustFile.Current()
	if b == st.bundle {
		return st
	}
	next, err := p.newState(b)
	if err != nil {
		return st // unreachable: NewPeers built one with the same settings
	}
	p.state.CompareAndSwap(st, next)
	return next
}

// VerifyClient verifies a chain a client presented (leaf first) and
// returns its identity. Errors are x509sa's (matching x509sa.ErrUntrusted,
// x509sa.ErrInvalidCertificate, ...).
func (p *Peers) VerifyClient(chain []*x509.Certificate) (ksa.Identity, error) {
	c, err := p.current().client.Verify(chain)
	if err != nil {
		return ksa.Identity{}, err
	}
	return c.Identity(), nil
}

// VerifyServer verifies a chain a server presented and returns its
// identity.
func (p *Peers) VerifyServer(chain []*x509.Certificate) (ksa.Identity, error) {
	c, err := p.current().server.Verify(chain)
	if err != nil {
		return ksa.Identity{}, err
	}
	return c.Identity(), nil
}

// Identity returns the identity of the client of a connection served with
// [Peers.ServerConfig] (in a handler, r.TLS), from the chain crypto/tls
// verified during the handshake: no signature is verified again, so a
// handler may call it on every request. The verified chain must end in a
// root of the trust bundle in use now, every certificate of it must be
// valid at the clock's time (a connection outlives its certificates), and
// the leaf must be an identity certificate for client auth (in
// PeerConfig.TrustDomain, if set). A connection whose chain crypto/tls did
// not verify (no VerifiedChains: a configuration that did not come from
// ServerConfig) is refused. Errors match x509sa.ErrUntrusted or are
// x509sa's leaf errors (x509sa.ErrInvalidCertificate, ...).
func (p *Peers) Identity(cs *tls.ConnectionState) (ksa.Identity, error) {
	if cs == nil || len(cs.VerifiedChains) == 0 {
		return ksa.Identity{}, wrap(x509sa.ErrUntrusted, "the connection has no chain crypto/tls verified (serve it with Peers.ServerConfig)", nil)
	}
	st := p.current()
	now := p.cfg.Now()
	for _, chain := range cs.VerifiedChains {
		if len(chain) == 0 || !st.bundle.Contains(chain[len(chain)-1]) {
			continue
		}
		for _, c := range chain {
			if now.Before(c.NotBefore) || now.After(c.NotAfter) {
				return ksa.Identity{}, wrap(x509sa.ErrUntrusted, "the verified chain holds a certificate not valid now (until "+c.NotAfter.UTC().Format(time.RFC3339)+")", nil)
			}
		}
		cert, err := st.client.CheckLeaf(chain[0])
		if err != nil {
			return ksa.Identity{}, err
		}
		return cert.Identity(), nil
	}
	return ksa.Identity{}, wrap(x509sa.ErrUntrusted, "the verified chain ends in no root of the trust bundle", nil)
}

// ServerConfig returns a TLS server configuration serving src's
// credential and requiring a client certificate that chains to the trust
// bundle in use at the handshake: crypto/tls verifies the chain once,
// with that bundle's roots and the clock, then the leaf is checked as
// [Peers.Identity] checks it and, when allow is set, its identity is
// admitted by allow (nil admits any verified one). Handlers read the
// client's identity with [Peers.Identity](r.TLS), which verifies nothing
// again.
func (p *Peers) ServerConfig(src *Source, allow func(ksa.Identity) error) *tls.Config {
	verify := func(cs tls.ConnectionState) error {
		id, err := p.Identity(&cs)
		if err == nil && allow != nil {
			err = allow(id)
		}
		return err
	}
	var cache atomic.Pointer[serverConfig]
	base := &tls.Config{
		MinVersion:       tls.VersionTLS12,
		GetCertificate:   src.GetCertificate,
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        p.current().bundle.pool,
		Time:             p.cfg.Now,
		VerifyConnection: verify,
	}
	// The roots of each handshake are those in use when it starts.
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		st := p.current()
		if c := cache.Load(); c != nil && c.st == st {
			return c.cfg, nil
		}
		cfg := base.Clone()
		cfg.GetConfigForClient = nil
		cfg.ClientCAs = st.bundle.pool
		cache.Store(&serverConfig{st: st, cfg: cfg})
		return cfg, nil
	}
	return base
}

// serverConfig is ServerConfig's configuration for one trust bundle.
type serverConfig struct {
	st  *peerState
	cfg *tls.Config
}

// ClientConfig returns a TLS client configuration presenting src's
// credential and accepting only a server chain [Peers.VerifyServer]
// accepts, with the trust bundle in use at the handshake, whose identity
// allow admits (nil admits any verified one). crypto/tls's own
// verification is replaced by that check (it cannot check the identity):
// the server is authenticated by its service account, not by a host
// name.
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

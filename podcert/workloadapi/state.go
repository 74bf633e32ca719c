package workloadapi

import (
	"bytes"
	"crypto/x509"
	"slices"
	"strconv"
	"time"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"google.golang.org/protobuf/proto"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// state is what the server serves at one moment. It is immutable; next
// is closed when a newer state replaces it.
type state struct {
	// cred is the identity served; nil before one is loaded.
	cred *podcert.Credential
	// bundles are the trust bundles served, by trust domain.
	bundles map[string]*podcert.TrustBundle
	// svid answers FetchX509SVID; nil without an identity.
	svid *workload.X509SVIDResponse
	// x509Bundles answers FetchX509Bundles; nil without a bundle.
	x509Bundles *workload.X509BundlesResponse
	next        chan struct{}
}

// Update reads the mounted files again where they changed and, when the
// identity or a bundle changed, publishes the new state: every open
// stream sends it, and the credential folder is written. The watcher
// ([Server.Watch]) calls it on every file event; a caller without one
// calls it when it knows the files changed. Files that fail to load, and
// a credential that cannot be served, leave what was served in service;
// the error returned (joining every failure, each reported to
// Config.OnError) says why.
func (s *Server) Update() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = s.problems[:0]
	report := func(err error) {
		if err != nil {
			s.problems = append(s.problems, err)
			s.report(err)
		}
	}
	// A file not loaded yet is tried on every update; the same failure
	// is reported once.
	first := func(key string, err error) {
		if err == nil {
			delete(s.firstLoad, key)
			return
		}
		s.problems = append(s.problems, err)
		if s.firstLoad[key] != err.Error() {
			s.firstLoad[key] = err.Error()
			s.report(err)
		}
	}
	old := s.state.Load()

	bundles := map[string]*podcert.TrustBundle{}
	for _, tb := range s.cfg.TrustBundles {
		f := s.trust[tb.TrustDomain]
		if f == nil {
			var err error
			f, err = podcert.NewTrustFile(podcert.TrustFileConfig{Path: tb.Path, OnReload: s.reportReload})
			first(tb.TrustDomain, err)
			if err != nil {
				continue
			}
			s.trust[tb.TrustDomain] = f
		}
		bundles[tb.TrustDomain] = f.Current()
	}

	cred := old.cred
	if s.src == nil {
		src, err := podcert.NewSource(s.cfg.Credential)
		first("", err)
		s.src = src
	}
	if s.src != nil {
		next, err := s.src.Current()
		switch {
		case err != nil:
			report(err) // expired, and nothing newer loads
		case next != old.cred:
			if err := s.servable(next, bundles); err != nil {
				report(err)
			} else {
				cred = next
			}
		}
	}

	if cred == old.cred && sameBundles(bundles, old.bundles) {
		return s.failures()
	}
	st, err := newState(cred, bundles, old)
	if err != nil {
		report(err)
		return s.failures()
	}
	if s.cfg.CredentialFolder != "" && st.cred != nil {
		report(WriteFolder(s.cfg.CredentialFolder, s.cfg.CredentialFileMode, st.cred, st.bundles))
	}
	s.state.Store(st)
	close(old.next)
	s.updates.Add(1)
	if s.cfg.OnUpdate != nil {
		s.cfg.OnUpdate(s.Status())
	}
	return s.failures()
}

// failures returns the failures of the update under way, joined; the
// caller holds mu.
func (s *Server) failures() error {
	return errs.Join(prefix, "update", slices.Clone(s.problems))
}

// reportReload is the OnReload hook of the server's files, which load
// only inside Update (mu held): a failed load is a failure of the update.
func (s *Server) reportReload(err error) {
	if err != nil {
		s.problems = append(s.problems, err)
		s.report(err)
	}
}

// report counts a failure and passes it to Config.OnError.
func (s *Server) report(err error) {
	s.errors.Add(1)
	if s.cfg.OnError != nil {
		s.cfg.OnError(err)
	}
}

// servable checks a newly loaded credential before it is served: a SPIFFE
// ID, a trust bundle for its trust domain, and a chain that bundle
// verifies now, so that peers trusting the bundle accept it.
func (s *Server) servable(cred *podcert.Credential, bundles map[string]*podcert.TrustBundle) error {
	id := cred.SPIFFEID
	if id.IsZero() {
		return wrap(ErrRefused, "the pod certificate of "+cred.Identity.ServiceAccount.Username()+" carries no SPIFFE ID", nil)
	}
	b := bundles[id.TrustDomain]
	if b == nil {
		return wrap(ErrRefused, id.String()+": no trust bundle of trust domain "+id.TrustDomain+" is loaded", nil)
	}
	inter := x509.NewCertPool()
	for _, der := range cred.Certificate.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return wrap(ErrRefused, id.String()+": a certificate of the chain does not parse", err)
		}
		inter.AddCert(c)
	}
	_, err := cred.Certificate.Leaf.Verify(x509.VerifyOptions{Roots: b.CertPool(), Intermediates: inter,
		CurrentTime: s.cfg.Now(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return wrap(ErrRefused, id.String()+": the trust bundle of "+id.TrustDomain+" does not verify the chain", err)
	}
	return nil
}

// sameBundles reports whether two sets hold the same certificates for
// the same trust domains. The kubelet rewrites every file of a projected
// volume when one changes: a bundle read again is often the same.
func sameBundles(a, b map[string]*podcert.TrustBundle) bool {
	if len(a) != len(b) {
		return false
	}
	for td, x := range a {
		y := b[td]
		if y == nil || len(x.Certificates) != len(y.Certificates) {
			return false
		}
		for i, c := range x.Certificates {
			if !bytes.Equal(c.Raw, y.Certificates[i].Raw) {
				return false
			}
		}
	}
	return true
}

// newState builds the answers of an identity (nil: none yet) and bundles;
// an answer the same as old's is old's, so that streams do not send it
// again.
func newState(cred *podcert.Credential, bundles map[string]*podcert.TrustBundle, old *state) (*state, error) {
	st := &state{cred: cred, bundles: bundles, next: make(chan struct{})}
	same := sameBundles(bundles, old.bundles)
	if same {
		st.bundles, st.x509Bundles = old.bundles, old.x509Bundles
	}
	if len(bundles) > 0 && !same {
		st.x509Bundles = &workload.X509BundlesResponse{Bundles: map[string][]byte{}}
		for td, b := range bundles {
			st.x509Bundles.Bundles[x509sa.SPIFFEID{TrustDomain: td}.String()] = concatDER(b.Certificates)
		}
		if n := proto.Size(st.x509Bundles); n > MaxResponseBytes {
			return nil, wrap(ErrRefused, "the trust bundles make an answer of "+itoa(n)+" bytes, over the limit of "+itoa(MaxResponseBytes), nil)
		}
	}
	if cred == nil {
		return st, nil
	}
	key, err := x509.MarshalPKCS8PrivateKey(cred.Certificate.PrivateKey)
	if err != nil {
		return nil, wrap(ErrRefused, cred.SPIFFEID.String()+": the key cannot be encoded", err)
	}
	td := cred.SPIFFEID.TrustDomain
	own := bundles[td]
	if own == nil {
		return nil, wrap(ErrRefused, cred.SPIFFEID.String()+": no trust bundle of trust domain "+td+" is loaded", nil)
	}
	svid := &workload.X509SVIDResponse{
		Svids: []*workload.X509SVID{{
			SpiffeId:    cred.SPIFFEID.String(),
			X509Svid:    bytes.Join(SVIDChain(cred), nil),
			X509SvidKey: key,
			Bundle:      concatDER(own.Certificates),
		}},
	}
	for other, b := range bundles {
		if other == td {
			continue
		}
		if svid.FederatedBundles == nil {
			svid.FederatedBundles = map[string][]byte{}
		}
		svid.FederatedBundles[x509sa.SPIFFEID{TrustDomain: other}.String()] = concatDER(b.Certificates)
	}
	if n := proto.Size(svid); n > MaxResponseBytes {
		return nil, wrap(ErrRefused, cred.SPIFFEID.String()+": the answer would be "+itoa(n)+" bytes, over the limit of "+itoa(MaxResponseBytes), nil)
	}
	st.svid = svid
	return st, nil
}

// SVIDChain returns the chain served for a credential, DER, leaf first:
// the mounted chain without the self-signed roots a signer may have
// appended (a root belongs in the trust bundle; the X509-SVID standard
// and SPIFFE's filesystem delivery leave it out).
func SVIDChain(cred *podcert.Credential) [][]byte {
	chain := cred.Certificate.Certificate
	out := [][]byte{chain[0]}
	for _, der := range chain[1:] {
		c, err := x509.ParseCertificate(der)
		if err == nil && bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignatureFrom(c) == nil {
			continue
		}
		out = append(out, der)
	}
	return out
}

// concatDER joins certificates' DER, as the Workload API carries bundles.
func concatDER(certs []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		b.Write(c.Raw)
	}
	return b.Bytes()
}

// Status is what the server serves and has done.
type Status struct {
	// SPIFFEID is the identity served; zero before one is loaded.
	SPIFFEID x509sa.SPIFFEID
	// Identity is the service account and pod of the certificate served.
	Identity ksa.Identity
	// NotAfter is the served certificate's expiry.
	NotAfter time.Time
	// TrustDomains are the trust domains of the bundles served, sorted.
	TrustDomains []string
	// Clients is the number of streams open.
	Clients int
	// Updates counts the states published (a new identity or bundle).
	Updates uint64
	// Pushed counts the answers sent on streams.
	Pushed uint64
	// Errors counts the failures reported to Config.OnError.
	Errors uint64
}

// Status returns the server's status now.
func (s *Server) Status() Status {
	st := s.state.Load()
	out := Status{Clients: int(s.clients.Load()), Updates: s.updates.Load(), Pushed: s.pushed.Load(), Errors: s.errors.Load()}
	for td := range st.bundles {
		out.TrustDomains = append(out.TrustDomains, td)
	}
	slices.Sort(out.TrustDomains)
	if st.cred != nil {
		out.SPIFFEID, out.Identity, out.NotAfter = st.cred.SPIFFEID, st.cred.Identity, st.cred.NotAfter
	}
	return out
}

// Ready reports whether an identity valid now is served (nil), or why
// not (matching [ErrNoIdentity]).
func (s *Server) Ready() error {
	st := s.state.Load()
	switch {
	case st.cred == nil:
		return wrap(ErrNoIdentity, "no pod certificate loaded yet", nil)
	case !s.cfg.Now().Before(st.cred.NotAfter):
		return wrap(ErrNoIdentity, st.cred.SPIFFEID.String()+" expired at "+st.cred.NotAfter.UTC().Format(time.RFC3339), nil)
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

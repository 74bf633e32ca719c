package podcerttest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"sync"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/podcert"
)

// prefix starts the messages of the package's errors.
const prefix = "podcerttest"

// Defaults of [Config].
const (
	// DefaultSignerName is the signer name when Config.SignerName is
	// empty.
	DefaultSignerName = "podcerttest.ksa.example/signer"
	// DefaultLifetime is the certificates' lifetime when Config.Lifetime is
	// zero: the API's default maxExpirationSeconds.
	DefaultLifetime = podcert.DefaultMaxLifetime
	// CALifetime is every test CA's lifetime, from an hour before the
	// clock's time when the CA is made.
	CALifetime = 365 * 24 * time.Hour
)

// ErrNotIssued: the signer did not issue a certificate for a pod (the
// request was refused, or the key cannot be used); the error names why.
var ErrNotIssued = errs.New(prefix, "certificate not issued")

// Config configures a [Signer]. Every zero value is a documented default.
type Config struct {
	// SignerName is the requests' signer name. Empty means
	// [DefaultSignerName].
	SignerName string
	// TrustDomain is the SPIFFE trust domain of the certificates. Empty
	// means podcert.DefaultTrustDomain.
	TrustDomain string
	// Lifetime is the certificates' lifetime, from an hour to 91 days.
	// Zero means [DefaultLifetime].
	Lifetime time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Signer is a test CA issuing pod certificates with a podcert.Signer, as
// a PodCertificateRequest signer does, that can rotate its CA. It is safe
// for concurrent use.
type Signer struct {
	cfg Config
	mu  sync.Mutex
	// cas are the CAs of the trust bundle, oldest first; issuing is the
	// one that issues.
	cas     []*testCA
	issuing *testCA
}

// testCA is one CA and its podcert.Signer.
type testCA struct {
	cert   *x509.Certificate
	signer *podcert.Signer
}

// NewSigner makes a signer with one CA. Errors are a *ksa.ConfigError.
func NewSigner(cfg Config) (*Signer, error) {
	if cfg.SignerName == "" {
		cfg.SignerName = DefaultSignerName
	}
	if cfg.TrustDomain == "" {
		cfg.TrustDomain = podcert.DefaultTrustDomain
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Signer{cfg: cfg}
	ca, err := s.newCA()
	if err != nil {
		return nil, err
	}
	s.cas, s.issuing = []*testCA{ca}, ca
	return s, nil
}

// newCA makes a self-signed CA and its signer.
func (s *Signer) newCA() (*testCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "making a CA key", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "drawing a serial number", err)
	}
	name := serial.Text(16)
	name = name[:min(len(name), 8)]
	now := s.cfg.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)),
		Subject:      pkix.Name{CommonName: "podcerttest CA " + name},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(CALifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "making a CA certificate", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, errs.Wrap(prefix, nil, "making a CA certificate", err)
	}
	signer, err := podcert.NewSigner(podcert.SignerConfig{SignerName: s.cfg.SignerName, Key: key, Chain: []*x509.Certificate{cert},
		TrustDomain: s.cfg.TrustDomain, MaxLifetime: s.cfg.Lifetime, Now: s.cfg.Now})
	if err != nil {
		return nil, configError(err)
	}
	return &testCA{cert: cert, signer: signer}, nil
}

// configError names the Config field behind a podcert.SignerConfig field
// NewSigner refused.
func configError(err error) error {
	ce, ok := err.(*ksa.ConfigError)
	if !ok {
		return err
	}
	field := map[string]string{
		"podcert.SignerConfig.SignerName":  "SignerName",
		"podcert.SignerConfig.TrustDomain": "TrustDomain",
		"podcert.SignerConfig.MaxLifetime": "Lifetime",
	}[ce.Field]
	if field == "" {
		return err
	}
	return &ksa.ConfigError{Field: "podcerttest.Config." + field, Reason: ce.Reason, Err: ce.Err}
}

// SignerName returns the signer name the requests carry.
func (s *Signer) SignerName() string { return s.cfg.SignerName }

// Pod is the pod a certificate is issued to, as the kubelet describes it
// in its PodCertificateRequest. Namespace, Name and ServiceAccount are
// required.
type Pod struct {
	Namespace, Name, ServiceAccount string
	// Key is the pod's key. Nil means a new ECDSA P-256 key.
	Key crypto.Signer
	// Node is the pod's node. Empty means "node-1".
	Node string
}

// Issue has the signer decide a request for the pod as the kubelet makes
// it (a key, an empty CSR signed with it) and returns the credential
// bundle the kubelet writes: the PKCS#8 key, then the certificate chain.
// Errors match [ErrNotIssued].
func (s *Signer) Issue(pod Pod) ([]byte, error) {
	key := pod.Key
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, errs.Wrap(prefix, ErrNotIssued, "making the pod's key", err)
		}
		key = k
	}
	if pod.Node == "" {
		pod.Node = "node-1"
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, errs.Wrap(prefix, ErrNotIssued, "signing the pod's request", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, errs.Wrap(prefix, ErrNotIssued, "encoding the pod's key", err)
	}
	uid := func(kind string) string { return kind + "-uid-" + pod.Namespace + "-" + pod.Name }
	req := podcert.Request{
		Namespace: pod.Namespace, Name: "req-" + pod.Name, Generation: 1,
		SignerName: s.cfg.SignerName,
		PodName:    pod.Name, PodUID: uid("pod"),
		ServiceAccountName: pod.ServiceAccount, ServiceAccountUID: uid("sa"),
		NodeName: pod.Node, NodeUID: uid("node"),
		MaxExpirationSeconds: int32(min(max(s.cfg.Lifetime, time.Hour), podcert.MaxMaxExpirationSeconds*time.Second) / time.Second),
		StubPKCS10Request:    stub,
	}
	s.mu.Lock()
	signer := s.issuing.signer
	s.mu.Unlock()
	d, err := signer.Decide(&req)
	if err != nil {
		return nil, errs.Wrap(prefix, ErrNotIssued, "", err)
	}
	if d.Outcome != podcert.Issued {
		return nil, errs.Wrap(prefix, ErrNotIssued, d.Outcome.String()+" ("+d.Reason+"): "+d.Message, nil)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return append(out, d.CertificateChain...), nil
}

// TrustBundle returns the PEM certificates of every CA of the signer,
// oldest first: what its ClusterTrustBundle carries, and what a
// clusterTrustBundle projection of it holds.
func (s *Signer) TrustBundle() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	for _, ca := range s.cas {
		b.Write(ca.signer.TrustBundle())
	}
	return b.Bytes()
}

// StageCA makes the next CA and adds it to the trust bundle; the current
// CA keeps issuing. It is a rotation's first step: peers learn to trust
// the next CA before any certificate of it exists.
func (s *Signer) StageCA() error {
	ca, err := s.newCA()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cas = append(s.cas, ca)
	return nil
}

// PromoteCA has the newest CA of the trust bundle issue from now on: a
// rotation's second step. Without a staged CA it changes nothing.
func (s *Signer) PromoteCA() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issuing = s.cas[len(s.cas)-1]
}

// RetireCA removes from the trust bundle every CA but the issuing one: a
// rotation's last step, once the certificates of the old CA expired.
func (s *Signer) RetireCA() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cas = []*testCA{s.issuing}
}

package podcert

import (
	"crypto/tls"
	"time"

	"github.com/ksa-go/ksa"
)

// SourceConfig configures a [Source]: BundlePath, or KeyPath and ChainPath.
type SourceConfig struct {
	// BundlePath is one file holding the key and the chain: a
	// podCertificate projection's credentialBundlePath.
	BundlePath string
	// KeyPath and ChainPath are a key file and a chain file (leaf first),
	// used when BundlePath is empty: a podCertificate projection's keyPath
	// and certificateChainPath, or, with AnyCertificate, a kubernetes.io/tls
	// Secret's tls.key and tls.crt mounted in a volume (as cert-manager
	// writes them).
	KeyPath, ChainPath string
	// AnyCertificate serves any certificate and key pair crypto/tls's
	// X509KeyPair would read: a key in a PKCS#8, PKCS#1 ("RSA PRIVATE
	// KEY") or SEC1 ("EC PRIVATE KEY") block, of any type and size
	// jwks.CheckPublicKey accepts (RSA from 2048 bits), and a leaf that
	// carries no service-account identity (a webhook's serving
	// certificate); Credential.Identity is then zero. False (the default)
	// requires a pod certificate: the rules of [ParseKeyAndChain].
	AnyCertificate bool
	// Now returns the current time, to refuse an expired credential. Nil
	// means time.Now.
	Now func() time.Time
	// OnReload, when set, is called after every load that changed files
	// trigger, once per change (not after [Source.Reload], which returns
	// its error), with
	// nil on success or the error that kept the previous credential in
	// service: a hook for logs and metrics. It is called with the source's
	// lock held and must not call the source.
	OnReload func(err error)
}

// Source serves a TLS credential from files and follows their
// replacements: the module's one source of TLS credentials from files. By
// default it serves a pod's mounted pod certificate (the kubelet's
// credential bundle, or its key and chain files); with
// SourceConfig.AnyCertificate, any key and certificate, such as a
// cert-manager Secret's tls.key and tls.crt for a webhook. Give
// [Source.GetCertificate] to tls.Config.GetCertificate (serving) or
// [Source.GetClientCertificate] to tls.Config.GetClientCertificate, or
// the Source to [Peers.ServerConfig] and [Peers.ClientConfig].
//
// It runs no goroutine and no timer: on every use it compares the files'
// identity, size and modification time with those it last read and, when
// they changed, loads them again. The kubelet and Secret volumes replace
// files by renaming (a new file each time), which this always sees. A new
// credential replaces the old one atomically, and only when it parses in
// full (key and chain agree); until then the old one keeps serving while
// it is valid, and files that failed to load are not read again until
// they change. It is safe for concurrent use.
type Source struct {
	cfg   SourceConfig
	files reloader[*Credential]
}

// credentialBundle names credential files in errors.
const credentialBundle = "credential bundle"

// NewSource validates the configuration and loads the credential once.
// Errors are a *ksa.ConfigError, or the load's error.
func NewSource(cfg SourceConfig) (*Source, error) {
	s := &Source{cfg: cfg}
	r := rules{anyCertificate: cfg.AnyCertificate}
	s.files = reloader[*Credential]{what: credentialBundle, max: MaxBundleSize, onReload: cfg.OnReload}
	switch {
	case cfg.BundlePath != "" && (cfg.KeyPath != "" || cfg.ChainPath != ""):
		return nil, &ksa.ConfigError{Field: "podcert.SourceConfig.BundlePath", Reason: "is set with KeyPath or ChainPath: set one or the other"}
	case cfg.BundlePath != "":
		s.files.paths = []string{cfg.BundlePath}
		s.files.parse = func(data [][]byte) (*Credential, error) { return parseBlocks(data[0], r) }
	case cfg.KeyPath != "" && cfg.ChainPath != "":
		s.files.paths = []string{cfg.KeyPath, cfg.ChainPath}
		s.files.parse = func(data [][]byte) (*Credential, error) { return parseKeyAndChain(data[0], data[1], r) }
	default:
		return nil, &ksa.ConfigError{Field: "podcert.SourceConfig.BundlePath", Reason: "is empty: set it, or KeyPath and ChainPath"}
	}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload reads the files now and, if they hold a valid credential, serves
// it from then on. On error the previous credential stays.
func (s *Source) Reload() error { return s.files.reload(ErrInvalidBundle) }

// Current returns the credential to use now, loading the files again if
// they changed. A failed load keeps the previous credential (and is
// reported to SourceConfig.OnReload); an error is returned only when no
// credential valid at the clock's time is left (matching
// [ErrInvalidBundle]). The credential returned is the same pointer until
// a load replaces it, so a caller learns of a replacement by comparing
// pointers.
func (s *Source) Current() (*Credential, error) {
	cred, loadErr := s.files.current(ErrInvalidBundle)
	if now := s.cfg.Now(); !now.Before(cred.NotAfter) {
		return nil, fileError(ErrInvalidBundle, credentialBundle, s.files.paths[0], "the credential expired at "+cred.NotAfter.UTC().Format(time.RFC3339), loadErr)
	}
	return cred, nil
}

// GetCertificate is for tls.Config.GetCertificate (serving).
func (s *Source) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c, err := s.Current()
	if err != nil {
		return nil, err
	}
	return &c.Certificate, nil
}

// GetClientCertificate is for tls.Config.GetClientCertificate.
func (s *Source) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	c, err := s.Current()
	if err != nil {
		return nil, err
	}
	return &c.Certificate, nil
}

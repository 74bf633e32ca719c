package controlplane

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa/interop/internal/proc"
)

// The identity of [ControlPlane.AdminToken], from kube-apiserver's
// --token-auth-file. The group system:masters bypasses authorization.
const (
	AdminUser = "ksa-admin"
	AdminUID  = "ksa-admin-uid"
)

// AdminGroups are the groups of [ControlPlane.AdminToken].
var AdminGroups = []string{"system:masters"}

// ControlPlane is a running etcd and kube-apiserver, listening on loopback
// only. Its fields describe what it runs with; do not change them. Call
// [ControlPlane.Stop] when done.
type ControlPlane struct {
	// URL is kube-apiserver's base URL, "https://127.0.0.1:PORT".
	URL string
	// CACert is the CA that signed kube-apiserver's serving certificate; it
	// is also trusted for client certificates. CAPEM is it PEM-encoded (for
	// a kubeconfig or a webhook's caBundle), CertPool a pool holding it.
	CACert   *x509.Certificate
	CAPEM    []byte
	CertPool *x509.CertPool
	// AdminToken is a bearer token for [AdminUser] in [AdminGroups].
	AdminToken string
	// Issuers and APIAudiences are those kube-apiserver runs with: the
	// [Config] values or their defaults. Tokens are issued by Issuers[0].
	Issuers      []string
	APIAudiences []string
	// SigningKey signs the service-account tokens kube-apiserver issues;
	// nil with [Config.SigningEndpoint], where the external signer does.
	SigningKey crypto.Signer
	// VerificationKeys are the public keys kube-apiserver accepts tokens
	// from: SigningKey's first, then [Config.VerificationKeys]; nil with
	// [Config.SigningEndpoint], where the external signer supplies them.
	VerificationKeys []crypto.PublicKey
	// EtcdURL is etcd's client URL, "http://127.0.0.1:PORT".
	EtcdURL string
	// APIServerArgs are the arguments kube-apiserver was started with.
	APIServerArgs []string
	// Files are the paths of the files the processes were given; Stop
	// removes them all.
	Files Files

	version   string
	ca        *authority
	clientset kubernetes.Interface
	etcd      *process
	apiserver *process
	// cfg is the configuration Start ran with (defaults filled in) and
	// apiserverPath its kube-apiserver, for the kube-apiservers started
	// later (AddAPIServer, RestartAPIServer).
	cfg           Config
	apiserverPath string
	// mu guards apiserver, the fields RestartAPIServer changes, and more.
	mu       sync.Mutex
	more     []*APIServer
	restarts int
	stopOnce sync.Once
	stopErr  error
}

// Files lists the files a [ControlPlane] wrote for its processes.
type Files struct {
	// Dir is the temporary directory that holds everything below.
	Dir string
	// CACert is the PEM file of [ControlPlane.CACert].
	CACert string
	// ServingCert and ServingKey are kube-apiserver's TLS certificate and key
	// (--tls-cert-file, --tls-private-key-file); CertDir is --cert-dir.
	ServingCert, ServingKey, CertDir string
	// ClientCA is --client-ca-file: the control plane's CA and [Config.ClientCAs].
	ClientCA string
	// TokenAuth is --token-auth-file, holding the admin token.
	TokenAuth string
	// SigningKey is --service-account-signing-key-file (PKCS #8 PEM); empty
	// with [Config.SigningEndpoint].
	SigningKey string
	// VerificationKeys are the --service-account-key-file files (PKIX PEM),
	// one per key of [ControlPlane.VerificationKeys], in the same order.
	VerificationKeys []string
	// EtcdData is etcd's --data-dir: a directory of its own on /dev/shm
	// (memory) where that exists, which makes the start several times faster
	// than on a disk; else under Dir.
	EtcdData string
	// EtcdLog and APIServerLog receive the processes' output.
	EtcdLog, APIServerLog string
}

// Start starts etcd and then kube-apiserver, each on free loopback ports,
// and returns once kube-apiserver's /readyz answers 200, or ctx is done. If
// ctx has no deadline, [DefaultStartTimeout] applies. ctx bounds the start
// only: the processes run until [ControlPlane.Stop].
//
// Start looks for etcd and for the kube-apiserver of [Config.Version] as
// [Binaries] says; if one is missing it returns an error matching
// [ErrBinaryMissing] before starting anything. If a process fails to become
// ready, the error is a [*StartError] carrying the tail of the logs. Once
// kube-apiserver is ready, Start reads its /version, which must be
// [Config.Version]. On any error, everything started is stopped and removed.
func Start(ctx context.Context, cfg Config) (*ControlPlane, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	version := cfg.Version
	if version == "" {
		version = versions[0]
	}
	etcdPath, apiserverPath, err := Binaries(version)
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	dir, err := os.MkdirTemp("", "ksa-controlplane-")
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	cp := &ControlPlane{Files: Files{Dir: dir}}
	started := false
	defer func() {
		if !started {
			_ = cp.Stop()
		}
	}()
	if err := cp.writeFiles(cfg); err != nil {
		return nil, err
	}
	if cfg.Output != nil {
		cfg.Output = proc.NewLockedWriter(cfg.Output) // shared by both processes
	}
	if err := cp.startEtcd(ctx, etcdPath, cfg.Output); err != nil {
		return nil, err
	}
	cp.cfg, cp.apiserverPath = cfg, apiserverPath
	if err := cp.startAPIServer(ctx, apiserverPath, cfg); err != nil {
		return nil, err
	}
	if cp.clientset, err = kubernetes.NewForConfig(cp.RESTConfig()); err != nil {
		return nil, fmt.Errorf("controlplane: clientset: %w", err)
	}
	if cp.version, err = cp.serverVersion(ctx); err != nil {
		return nil, err
	}
	if cp.version != cfg.Version {
		return nil, fmt.Errorf("controlplane: %s reports %s on /version, want %s", apiserverPath, cp.version, cfg.Version)
	}
	started = true
	return cp, nil
}

// serverVersion reads kube-apiserver's /version.
func (cp *ControlPlane) serverVersion(ctx context.Context) (string, error) {
	b, err := cp.clientset.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("controlplane: GET /version: %w", err)
	}
	var info struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.GitVersion == "" {
		return "", fmt.Errorf("controlplane: GET /version: no gitVersion in %q", b)
	}
	return info.GitVersion, nil
}

// Version returns the release kube-apiserver reports on /version, such as
// "v1.37.2": [Config.Version]. Tests branch on it where releases
// legitimately differ.
func (cp *ControlPlane) Version() string { return cp.version }

// writeFiles makes the CA and the admin token, and writes every file the
// processes read, filling in cp's fields and cp.Files.
func (cp *ControlPlane) writeFiles(cfg Config) error {
	var err error
	if cp.ca, err = newAuthority(); err != nil {
		return err
	}
	cp.CACert = cp.ca.cert
	cp.CAPEM = certsPEM(cp.ca.cert)
	cp.CertPool = x509.NewCertPool()
	cp.CertPool.AddCert(cp.ca.cert)
	cp.Issuers = cfg.Issuers
	cp.APIAudiences = cfg.APIAudiences
	if cfg.SigningEndpoint == "" {
		cp.SigningKey = cfg.SigningKey
		cp.VerificationKeys = append([]crypto.PublicKey{cfg.SigningKey.Public()}, cfg.VerificationKeys...)
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return fmt.Errorf("controlplane: admin token: %w", err)
	}
	cp.AdminToken = hex.EncodeToString(token)

	f := &cp.Files
	path := func(name string) string { return filepath.Join(f.Dir, name) }
	f.CACert, f.ServingCert, f.ServingKey = path("ca.crt"), path("apiserver.crt"), path("apiserver.key")
	f.CertDir, f.ClientCA, f.TokenAuth = path("apiserver-certs"), path("client-ca.crt"), path("tokens.csv")
	f.EtcdData = memoryDir()
	if f.EtcdData == "" {
		f.EtcdData = path("etcd-data")
	}
	f.EtcdLog, f.APIServerLog = path("etcd.log"), path("kube-apiserver.log")

	serving, err := cp.ca.serving(servingHosts...)
	if err != nil {
		return err
	}
	servingKey, err := privateKeyPEM(serving.PrivateKey.(crypto.Signer))
	if err != nil {
		return err
	}
	files := map[string][]byte{
		f.CACert:      cp.CAPEM,
		f.ServingCert: certsPEM(serving.Leaf),
		f.ServingKey:  servingKey,
		f.ClientCA:    certsPEM(append([]*x509.Certificate{cp.ca.cert}, cfg.ClientCAs...)...),
		f.TokenAuth:   []byte(tokenAuthLine(cp.AdminToken)),
	}
	if cp.SigningKey != nil {
		signingKey, err := privateKeyPEM(cp.SigningKey)
		if err != nil {
			return err
		}
		f.SigningKey = path("sa-signing.key")
		files[f.SigningKey] = signingKey
	}
	for i, k := range cp.VerificationKeys {
		data, err := publicKeyPEM(k)
		if err != nil {
			return err
		}
		name := path("sa-verification-" + strconv.Itoa(i) + ".pub")
		f.VerificationKeys = append(f.VerificationKeys, name)
		files[name] = data
	}
	for name, data := range files {
		if err := writeFile(name, data); err != nil {
			return err
		}
	}
	for _, d := range []string{f.CertDir, f.EtcdData} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("controlplane: %w", err)
		}
	}
	return nil
}

// memoryDir makes a directory for etcd's data on /dev/shm, a memory file
// system on Linux, and returns its path, or "" if that fails. etcd fsyncs
// every write, and etcd 3.4 (Debian's) cannot be told not to: on a disk,
// kube-apiserver's first writes then take seconds, and vary widely.
func memoryDir() string {
	const shm = "/dev/shm"
	if fi, err := os.Stat(shm); err != nil || !fi.IsDir() {
		return ""
	}
	d, err := os.MkdirTemp(shm, "ksa-controlplane-etcd-")
	if err != nil {
		return ""
	}
	return d
}

// RESTConfig returns a new client-go configuration for the admin, trusting
// only [ControlPlane.CACert], with client-side rate limiting off. Callers may
// change the copy, such as replacing BearerToken with a service account's
// token or setting TLSClientConfig.CertData and KeyData from
// [ControlPlane.ClientCert] (clearing BearerToken).
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            cp.URL,
		BearerToken:     cp.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAPEM},
		QPS:             -1,
		UserAgent:       "ksa-controlplane",
	}
}

// Clientset returns a clientset for the admin, made from
// [ControlPlane.RESTConfig].
func (cp *ControlPlane) Clientset() kubernetes.Interface { return cp.clientset }

// ServingCert returns a TLS server certificate for hosts (IP addresses or
// DNS names; at least one), signed by [ControlPlane.CACert]: a webhook server
// with it is trusted by kube-apiserver when its configuration's caBundle is
// [ControlPlane.CAPEM].
func (cp *ControlPlane) ServingCert(hosts ...string) (tls.Certificate, error) {
	if len(hosts) == 0 {
		return tls.Certificate{}, fmt.Errorf("%w: ServingCert needs a host", ErrInvalidConfig)
	}
	return cp.ca.serving(hosts...)
}

// ClientCert returns a TLS client certificate, signed by
// [ControlPlane.CACert], that kube-apiserver authenticates as user in groups.
func (cp *ControlPlane) ClientCert(user string, groups ...string) (tls.Certificate, error) {
	return cp.ca.client(user, groups...)
}

// processes returns etcd, kube-apiserver and the kube-apiservers
// AddAPIServer started, in that order (nil for those not started).
func (cp *ControlPlane) processes() []*process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	procs := []*process{cp.etcd, cp.apiserver}
	for _, a := range cp.more {
		procs = append(procs, a.process)
	}
	return procs
}

// PIDs returns the process IDs of etcd and kube-apiserver (each also the ID
// of its process group), in that order, then those of the kube-apiservers
// [ControlPlane.AddAPIServer] started, omitting any not started.
func (cp *ControlPlane) PIDs() []int {
	var pids []int
	for _, p := range cp.processes() {
		if p != nil {
			pids = append(pids, p.PID())
		}
	}
	return pids
}

// LogTails returns the last n lines of etcd's and kube-apiserver's logs, for
// a failing test to print. Call it before Stop, which removes the logs.
func (cp *ControlPlane) LogTails(n int) string {
	var s string
	for _, p := range cp.processes() {
		if p != nil {
			s += p.LogTail(n)
		}
	}
	return s
}

// Stop kills the kube-apiservers and then etcd (each with its process group),
// waits for them to exit, and removes [Files.Dir] and [Files.EtcdData]. Only
// the first call does anything; later calls return its result. It is safe to
// call from several goroutines.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		procs := cp.processes()
		for i := len(procs) - 1; i >= 0; i-- { // the kube-apiservers, then etcd
			if procs[i] != nil {
				procs[i].Kill()
			}
		}
		var errs []error
		for _, d := range []string{cp.Files.EtcdData, cp.Files.Dir} {
			if d != "" {
				errs = append(errs, os.RemoveAll(d))
			}
		}
		if err := errors.Join(errs...); err != nil {
			cp.stopErr = fmt.Errorf("controlplane: %w", err)
		}
	})
	return cp.stopErr
}

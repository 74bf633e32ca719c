package podcertcmd

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/cmd/ksa/internal/ops"
	"github.com/ksa-go/ksa/ksaprom"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
)

// New returns the podcert commands; client makes "ksa podcert
// serve"'s client (nil: podcertctl.NewRESTClient; tests hand a fake).
func New(a *base.App, client podcertClientFunc) *cobra.Command {
	return base.Group("podcert", "Sign pod certificates (PodCertificateRequests) for a signer name",
		newPodcertServeCmd(a, client), newPodcertRBACCmd(a))
}

// podcertFlags are the signer's settings.
type podcertFlags struct {
	signerName, caKey, caCert, trustDomain string
	maxLifetime                            time.Duration
	hosts, ipRanges                        []string
	allowExtensions                        bool
}

// podcertServeFlags are the settings of "ksa podcert serve": the signer's
// and the controller's.
type podcertServeFlags struct {
	podcertFlags
	kubeconfig, apiVersion, bundle string
	noBundle                       bool
	rotationFlags
	workers, burst int
	qps            float32
	opsAddr        string
	lease          leaseFlags
	// newClient makes the controller's client; nil means
	// podcertctl.NewRESTClient.
	newClient podcertClientFunc
}

// podcertClientFunc makes the controller's client of a rest.Config:
// podcertctl.NewRESTClient, or a test's fake.
type podcertClientFunc func(*rest.Config) (podcertctl.Client, error)

// signer builds the podcert.Signer of the flags, and returns the CA key
// it signs with.
func (f *podcertFlags) signer(a *base.App) (*podcert.Signer, crypto.Signer, error) {
	return f.signerOf(a, f.caKey, f.caCert, "--ca-key", "--ca-cert")
}

// signerOf builds the podcert.Signer of the flags with the CA of keyRef
// and certPath, given by keyFlag and certFlag.
func (f *podcertFlags) signerOf(a *base.App, keyRef, certPath, keyFlag, certFlag string) (*podcert.Signer, crypto.Signer, error) {
	policy, err := f.policy()
	if err != nil {
		return nil, nil, err
	}
	key, err := keyflags.LoadSigner(a, context.Background(), keyRef, keyFlag)
	if err != nil {
		return nil, nil, err
	}
	chain, err := readChain(certPath)
	if err != nil {
		return nil, nil, err
	}
	cfg := podcert.SignerConfig{SignerName: f.signerName, Key: key, Chain: chain, TrustDomain: f.trustDomain,
		MaxLifetime: f.maxLifetime, Policy: policy}
	if a.NowFlag != "" {
		cfg.Now = a.Now
	}
	s, err := podcert.NewSigner(cfg)
	var ce *ksa.ConfigError
	if errors.As(err, &ce) && ce.Field == "podcert.SignerConfig.Key" {
		if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(chain[0].PublicKey) {
			return nil, nil, base.Usage("give "+keyFlag+" and "+certFlag+" of one CA: its private key, and its certificate first in the file",
				"%s is not the key of the CA certificate in %s (the file's first certificate)", keyFlag, certFlag)
		}
		// Said in the flags' words: the chain is what certFlag holds.
		named := *ce
		named.Reason = strings.ReplaceAll(named.Reason, "the first certificate of Chain", "the CA certificate in "+certFlag)
		err = &named
	}
	if err != nil {
		return nil, nil, base.ConfigError(err, base.FlagFor{"SignerConfig.SignerName": "--signer-name", "SignerConfig.Key": keyFlag, "SignerConfig.Chain": certFlag,
			"SignerConfig.TrustDomain": "--trust-domain", "SignerConfig.MaxLifetime": "--max-lifetime", "SignerConfig.Policy": "--allow-host"}, "ksa podcert serve")
	}
	return s, key, nil
}

// readChain reads the CA's certificate, then its issuers, from a PEM
// file.
func readChain(certPath string) ([]*x509.Certificate, error) {
	data, err := base.ReadInput(certPath, nil, base.MaxCertFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, base.Fail(nil, "check the path", "CA certificate file %s does not exist", certPath)
	case err != nil:
		return nil, base.Fail(err, "pass a readable PEM certificate file", "reading %s", certPath)
	}
	var chain []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, base.Fail(err, "pass the CA's PEM certificate, then its issuers", "%s holds a damaged certificate", certPath)
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, base.Fail(nil, "pass the CA's PEM certificate, then its issuers", "%s holds no certificate", certPath)
	}
	return chain, nil
}

func newPodcertServeCmd(a *base.App, client podcertClientFunc) *cobra.Command {
	f := &podcertServeFlags{newClient: client}
	cmd := &cobra.Command{
		Use:   "serve --signer-name NAME --ca-key FILE --ca-cert FILE",
		Short: "Issue, deny or fail the PodCertificateRequests of a signer name",
		Long: `Watch the PodCertificateRequests naming --signer-name and decide each:
check the request (its stub CSR or proof of possession, the key type), then
issue a certificate from the CA of --ca-key and --ca-cert (the CA first,
then its issuers) carrying the pod's service-account identity and SPIFFE
ID; refused requests are Denied or Failed with the API's reasons. Every
status is checked as kube-apiserver checks it before it is written. The
CA's root is published as a ClusterTrustBundle.

Serving hosts and subject extensions are asked for by the pod's author in
the podCertificate projection's userAnnotations, which the kubelet copies
into the request's spec.unverifiedUserAnnotations; nothing there is
verified by Kubernetes. Two keys are read (any other denies the request):

  ` + podcert.DefaultServeHostsKey + `   DNS names and IP addresses, comma-separated,
                                 issued when an --allow-host pattern (names)
                                 or an --allow-ip-hosts range (addresses)
                                 admits every one
  ` + podcert.DefaultExtensionsKey + `    key=value subject extensions, comma-separated,
                                 issued with --allow-extensions

Once kube-apiserver trusts the CA (--client-ca-file), an issued certificate
authenticates as its service account for its whole lifetime, after the pod
is deleted too: x509 client authentication carries no pod binding that
kube-apiserver could check, unlike a bound token. Keep --max-lifetime short,
the default 24h or less.

The ClusterTrustBundle is labelled ` + podcertctl.CanaryingLabel + `=live and
` + podcertctl.TrustDomainLabel + `=<--trust-domain>, for pods that select
bundles by label.

Rotating the CA with no failed handshake: give the next CA with
--next-ca-key and --next-ca-cert (same forms as --ca-key and --ca-cert) and
--next-ca-signs-at. From the start both CAs are published (the current one
first), so every pod trusts the next CA before any certificate of it
exists; the next CA signs from --next-ca-signs-at, which must be at least
--ca-propagation (default ` + podcertctl.DefaultPropagation.String() + `) after the first start: the kubelet
rewrites projected trust bundles on its sync period. Once every certificate
of the current CA has expired, at --next-ca-signs-at + --max-lifetime +
` + podcertctl.DefaultRotationSkew.String() + ` (for clock skew), the current CA leaves the trust bundle. Each
change happens at its time, logged; started again with the same flags, at
any time, the command does what it would have done then (a start nearer
--next-ca-signs-at than --ca-propagation, or after it, even past the
retirement, needs the next CA published already). Until the retirement
the bundle is read again at the switch and every ` + podcertctl.DefaultResync.String() + `: one that
another writer reverted (a replica without these flags, a rollback) is
published again, and a next CA missing before the switch postpones the
switch, and the retirement, to --ca-propagation after that when later (logged,
counted). Run every replica with the same flags; do not change
--max-lifetime mid-rotation (it moves the retirement). The bundle records
the switch (annotations ` + podcertctl.SwitchAtAnnotation + ` and
` + podcertctl.NextCAAnnotation + `), so the command remembers a postponement:
started again, it keeps the later of --next-ca-signs-at and the recorded
switch, and its retirement; the record goes at the retirement. A
recorded switch is kept no later than the current CA's expiry less
--max-lifetime, nor the next CA's expiry less --max-lifetime and
` + podcertctl.DefaultRotationSkew.String() + `: a later one (another writer's) is capped there, warning
and counting.
A replica without the --next-ca-* flags keeps the bundle's other valid
CAs, warning, rather than drop a CA whose certificates are alive (delete
the ClusterTrustBundle to drop one at once). After the retirement,
restart with --ca-key and --ca-cert of the former next CA, without the
--next-ca-* flags.

` + leaseHelp + `

The identity needs the RBAC that "ksa podcert rbac" prints. Connects with
--kubeconfig, $KUBECONFIG or the pod's in-cluster configuration.
Stops on SIGINT or SIGTERM.

A status that cannot be written is tried again, up to ` + strconv.Itoa(podcertctl.DefaultMaxRetries) + ` times. A CA key
that fails to sign (a key store down) is not the request's fault: the
request is tried again, at most ` + podcertctl.MaxRetryDelay.String() + ` apart, until the key signs. Every log
line about a request names its namespace, name and uid.

--ops-addr serves, over plain HTTP (bind it to loopback or the pod's IP):

  /healthz   200 while the process runs
  /readyz    200 when the requests are listed, kube-apiserver answered
             the last list of them (sent at most once per ` + podcertctl.DefaultAPICheckInterval.String() + `, however
             often /readyz is asked), and the CA key signed within the
             last ` + podcertctl.DefaultCAProbeInterval.String() + ` (a certificate, or a probe digest it signs when
             asked); else 503 and the reason
  /metrics   the Go runtime's and the process's metrics, and these:

  ksa_podcert_requests_total{outcome,reason}        counter: requests
      decided; outcome issued, denied or failed; reason the condition's
      (Issued, UnsupportedKeyType, InvalidUnverifiedUserAnnotations,
      InvalidRequest, CAUnavailable)
  ksa_podcert_decision_duration_seconds{outcome}    histogram: deciding,
      signing and writing the status
  ksa_podcert_oldest_undecided_request_seconds      gauge: age of the
      oldest request seen and not yet decided (0: none)
  ksa_podcert_ca_key_errors_total                   counter: signatures
      the CA key failed to make (certificates and probes)
  ksa_podcert_status_update_conflicts_total         counter: status
      writes refused because the request had changed
  ksa_podcert_status_update_errors_total            counter: statuses
      not written for another reason
  ksa_podcert_trust_bundle_updates_total            counter: the
      ClusterTrustBundle created or updated
  ksa_podcert_leader                                gauge: 1 while this
      replica publishes the trust bundle (holds the Lease), else 0
  ksa_podcert_ca_info{fingerprint,subject,state}    gauge: 1 per CA
      signing or published; fingerprint the SHA-256 of its certificate;
      state signing, next (published, signs at --next-ca-signs-at) or
      retiring (signs no more, published until its certificates expire)
  ksa_podcert_ca_switch_postponements_total         counter: switches
      to the next CA postponed because the published bundle lacked it
  ksa_podcert_ca_switch_records_capped_total        counter: switch
      records of the published bundle later than the rotation allows,
      capped`,
		Example: `  ksa podcert serve --signer-name example.com/pods --ca-key ca.key --ca-cert ca.crt
  ksa podcert serve --signer-name example.com/pods --ca-key ca.key --ca-cert ca.crt --allow-host '{serviceaccount}.{namespace}.svc'
  ksa podcert serve --signer-name example.com/pods --ca-key ca.key --ca-cert ca.crt --next-ca-key ca2.key --next-ca-cert ca2.crt --next-ca-signs-at 2026-12-01T09:00:00Z`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.signerName, "signer-name", "", "signer name the requests name, e.g. example.com/pods (required)")
	fl.StringVar(&f.caKey, "ca-key", "", "PEM private key file, or key-store URI, of the issuing CA (RSA or ECDSA; required)")
	fl.StringVar(&f.caCert, "ca-cert", "", "PEM certificate of the issuing CA, then its issuers (required)")
	fl.StringVar(&f.trustDomain, "trust-domain", podcert.DefaultTrustDomain, "SPIFFE trust domain of the URI SAN")
	fl.DurationVar(&f.maxLifetime, "max-lifetime", podcert.DefaultMaxLifetime, "longest certificate lifetime: a certificate authenticates as its service account until it expires, after its pod is gone too")
	fl.StringArrayVar(&f.hosts, "allow-host", nil, "admit a serving DNS name equal to this pattern, or below it when it starts with \".\"; {namespace}, {serviceaccount} and {pod} stand for the request's, each a whole DNS label of the pattern (repeatable)")
	fl.StringArrayVar(&f.ipRanges, "allow-ip-hosts", nil, "admit a serving IP address inside this CIDR, e.g. 10.0.0.0/8 (repeatable); a pod's own addresses are not known to the signer, so any pod of the signer name may get any address of the ranges")
	fl.BoolVar(&f.allowExtensions, "allow-extensions", false, "admit subject extensions")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config or in-cluster)")
	fl.StringVar(&f.apiVersion, "api-version", "", "certificates.k8s.io version: v1 or v1beta1 (default: discovered)")
	fl.StringVar(&f.bundle, "trust-bundle", "", "ClusterTrustBundle to publish the CA in (default <signer name with : for />:primary-bundle)")
	fl.BoolVar(&f.noBundle, "no-trust-bundle", false, "do not publish the CA")
	fl.Float32Var(&f.qps, "kube-api-qps", 50, "requests per second to kube-apiserver (client-side limit)")
	fl.IntVar(&f.burst, "kube-api-burst", 100, "burst of requests to kube-apiserver above --kube-api-qps")
	fl.IntVar(&f.workers, "workers", podcertctl.DefaultWorkers, "requests decided at once")
	fl.StringVar(&f.opsAddr, "ops-addr", "", "serve /healthz, /readyz and /metrics over HTTP on this address, e.g. 127.0.0.1:9090 (default off)")
	f.rotationFlags.add(cmd)
	f.lease.add(cmd)
	base.Required(cmd, "signer-name", "ca-key", "ca-cert")
	return cmd
}

func (f *podcertServeFlags) run(a *base.App, cmd *cobra.Command) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(a.Stderr, nil))
	cfg, rc, err := f.config(a, cmd, log)
	if err != nil {
		return err
	}
	var ctl *podcertctl.Controller
	var reg *prometheus.Registry
	if f.opsAddr != "" {
		reg = prometheus.NewRegistry()
		// Gathered once ctl is made: the server starts after.
		cfg.Observe, err = newPodcertMetrics(reg, cfg.Now, func() time.Time { return ctl.OldestUndecided() },
			func() []podcertctl.CAState { return ctl.CAs() }, func() bool { return ctl.Leading() })
		if err != nil {
			return base.Fail(err, base.BugFix, "registering the metrics")
		}
	}
	if ctl, err = podcertctl.New(cfg); err != nil {
		return f.configError(err)
	}
	ctx, stop := base.SignalContext(cmd)
	defer stop()
	if f.opsAddr != "" {
		stopOps, err := serveOps(ctx, f.opsAddr, ctl.Ready, reg, log)
		if err != nil {
			return err
		}
		defer stopOps()
	}
	if err := ctl.Run(ctx); err != nil {
		if e, ok := rotationError(err, f.propagation); ok {
			return e
		}
		return connectError(err, rc.Host)
	}
	st := ctl.Stats()
	fmt.Fprintf(a.Stderr, "stopped: %d issued, %d denied, %d failed\n", st.Issued, st.Denied, st.Failed)
	return nil
}

// check refuses flags out of range before anything is read.
func (f *podcertServeFlags) check(cmd *cobra.Command) error {
	if err := base.OnlyWithout(cmd, "trust-bundle", "no-trust-bundle"); err != nil {
		return err
	}
	switch {
	case f.apiVersion != "" && f.apiVersion != podcertctl.V1 && f.apiVersion != podcertctl.V1beta1:
		return base.Usage("give --api-version v1 or v1beta1, or leave it out to discover it", "--api-version %q is not a certificates.k8s.io version", f.apiVersion)
	case f.workers < 0:
		return base.Usage(fmt.Sprintf("give --workers a positive number (default %d)", podcertctl.DefaultWorkers), "--workers %d is negative", f.workers)
	case f.qps <= 0 || f.burst < 0:
		return base.Usage("give --kube-api-qps a positive number and --kube-api-burst a whole number", "--kube-api-qps %g or --kube-api-burst %d is out of range", f.qps, f.burst)
	case f.opsAddr != "" && !isHostPort(f.opsAddr):
		return base.Usage("give --ops-addr a host and a port, e.g. 127.0.0.1:9090", "--ops-addr %s is not host:port", base.Quoted(f.opsAddr))
	}
	return nil
}

// config reads the CAs and the cluster's configuration of the flags into
// the controller's config (Observe left to the metrics), and returns the
// rest.Config its client was made of.
func (f *podcertServeFlags) config(a *base.App, cmd *cobra.Command, log *slog.Logger) (podcertctl.Config, *rest.Config, error) {
	s, caKey, err := f.podcertFlags.signer(a)
	if err != nil {
		return podcertctl.Config{}, nil, err
	}
	next, err := f.rotation(a, cmd, caKey)
	if err != nil {
		return podcertctl.Config{}, nil, err
	}
	rc, err := clusterConfig(f.kubeconfig)
	if err != nil {
		return podcertctl.Config{}, nil, err
	}
	rc.UserAgent = "ksa-podcert"
	rc.WarningHandler = slogWarnings{log}
	rc.QPS, rc.Burst = f.qps, f.burst
	newClient := f.newClient
	if newClient == nil {
		newClient = func(rc *rest.Config) (podcertctl.Client, error) { return podcertctl.NewRESTClient(rc) }
	}
	cs, err := newClient(rc)
	if err != nil {
		return podcertctl.Config{}, nil, base.Fail(err, "check the cluster's address and credentials in the kubeconfig (--kubeconfig)", "configuring the client")
	}
	now := time.Now
	if a.NowFlag != "" {
		now = a.Now
	}
	le, err := f.lease.config(cmd, f.noBundle, log)
	if err != nil {
		return podcertctl.Config{}, nil, err
	}
	return podcertctl.Config{Client: cs, Signer: s, CAKey: caKey, APIVersion: f.apiVersion, TrustBundleName: f.bundle,
		NoTrustBundle: f.noBundle, Workers: f.workers, Next: next, LeaderElection: le, Now: now, Log: log}, rc, nil
}

// configError says, in the flags' words, why the controller refused its
// config.
func (f *podcertServeFlags) configError(err error) error {
	if errors.Is(err, podcertctl.ErrReservedSignerName) {
		return reservedSignerName(f.signerName)
	}
	flags := base.FlagFor{"APIVersion": "--api-version", "Workers": "--workers",
		"TrustBundleName": "--trust-bundle", "Next": "--next-ca-key", "Next.Signer": "--next-ca-cert",
		"Next.SignsAt": "--next-ca-signs-at", "Next.Propagation": "--ca-propagation"}
	maps.Copy(flags, leaseFlagFor())
	return base.ConfigError(err, flags, "ksa podcert serve")
}

// serveOps serves /healthz, /readyz and /metrics on addr until ctx ends
// or the function returned is called, which waits for the server.
func serveOps(ctx context.Context, addr string, ready func(context.Context) error, reg *prometheus.Registry, log *slog.Logger) (stop func(), err error) {
	srv, err := ops.Listen(ops.Config{Addr: addr, Ready: ready, Gatherer: reg, Log: log})
	if err != nil {
		return nil, base.Fail(err, "give --ops-addr a free host:port, e.g. 127.0.0.1:9090", "listening on --ops-addr %s", addr)
	}
	opsCtx, stopOps := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(opsCtx) }()
	log.Info("serving /healthz, /readyz and /metrics", "addr", srv.Addr())
	return func() {
		stopOps()
		if err := <-served; err != nil {
			log.Error("serving --ops-addr", "err", err)
		}
	}, nil
}

// isHostPort reports whether addr is a host (possibly empty) and a port
// number.
func isHostPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && strconv.FormatUint(n, 10) == port
}

// newPodcertMetrics registers the command's metrics with reg: the Go
// runtime's, the process's, ksaprom's pod-certificate metrics and the CA
// rotation's, fed by the controller's events (the function returned), its
// oldest undecided request and its CAs.
func newPodcertMetrics(reg *prometheus.Registry, now, oldest func() time.Time, cas func() []podcertctl.CAState, leading func() bool) (func(podcertctl.Event), error) {
	if err := errors.Join(reg.Register(collectors.NewGoCollector()), reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
		return nil, err
	}
	m, err := ksaprom.NewPodCertMetrics(ksaprom.PodCertConfig{Registerer: reg, Now: now, OldestUndecided: oldest, Leading: leading})
	if err != nil {
		return nil, err
	}
	rot, err := newRotationMetrics(reg, cas)
	if err != nil {
		return nil, err
	}
	return func(e podcertctl.Event) {
		switch e.Kind {
		case podcertctl.Decided:
			m.ObserveDecision(e.Decision, e.Duration)
		case podcertctl.CAKeyFailed:
			m.ObserveCAKeyError()
		case podcertctl.Conflict:
			m.ObserveConflict()
		case podcertctl.Errored:
			m.ObserveStatusError()
		case podcertctl.TrustBundleWritten:
			m.ObserveTrustBundleUpdate()
		default:
			rot(e)
		}
	}, nil
}

// rbacFlags are the settings of "ksa podcert rbac".
type rbacFlags struct {
	cfg    podcertctl.RBACConfig
	format base.Format
}

func newPodcertRBACCmd(a *base.App) *cobra.Command {
	f := &rbacFlags{}
	cmd := &cobra.Command{
		Use:   "rbac --signer-name NAME --namespace NS --service-account NAME",
		Short: "Print the RBAC the signer needs, as YAML for kubectl apply",
		Long: `Print what "ksa podcert serve" needs and no more: the Namespace it runs
in (unless --no-namespace), its ServiceAccount, and a ClusterRole and
ClusterRoleBinding to read and watch PodCertificateRequests, update their
status, hold the sign and attest verbs on --signer-name, and create and
update its ClusterTrustBundle, and a Role and RoleBinding in --namespace
to create Leases and read and update its Lease (--leader-elect-lease). The names are checked as kube-apiserver
checks them. YAML documents by default; -o json prints one v1 List.`,
		Example: `  ksa podcert rbac --signer-name example.com/pods --namespace ksa-system --service-account podcert-signer | kubectl apply -f -
  # the namespace exists already:
  ksa podcert rbac --signer-name example.com/pods --namespace kube-system --service-account podcert-signer --no-namespace -o json`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cfg.SignerName, "signer-name", "", "signer name, DOMAIN/PATH (required)")
	fl.StringVar(&f.cfg.Namespace, "namespace", "", "namespace the signer runs in, a DNS-1123 label (required)")
	fl.StringVar(&f.cfg.ServiceAccount, "service-account", "", "service account the signer runs as (required)")
	fl.StringVar(&f.cfg.TrustBundleName, "trust-bundle", "", "ClusterTrustBundle it publishes (default <signer name with : for />:primary-bundle)")
	fl.StringVar(&f.cfg.LeaseName, "leader-elect-lease", "", "Lease of leader election, in --namespace (default ksa-podcert.<signer name with . for />)")
	fl.BoolVar(&f.cfg.OmitNamespace, "no-namespace", false, "leave the Namespace object out (it exists, or is managed elsewhere)")
	base.AddManifestFlag(cmd, &f.format)
	base.Required(cmd, "signer-name", "namespace", "service-account")
	return cmd
}

func (f *rbacFlags) run(a *base.App) error {
	render := podcertctl.Manifests
	if f.format == base.FormatJSON {
		render = podcertctl.ManifestsJSON
	}
	out, err := render(f.cfg)
	if errors.Is(err, podcertctl.ErrReservedSignerName) {
		return reservedSignerName(f.cfg.SignerName)
	}
	if err != nil {
		return base.ConfigError(err, base.FlagFor{"SignerName": "--signer-name", "Namespace": "--namespace",
			"ServiceAccount": "--service-account", "TrustBundleName": "--trust-bundle", "LeaseName": "--leader-elect-lease"}, "ksa podcert rbac")
	}
	_, err = a.Stdout.Write(out)
	return err
}

// reservedSignerName refuses a signer name of the Kubernetes project.
func reservedSignerName(name string) error {
	return base.Usage("give --signer-name a name under a domain of yours, e.g. example.com/pods",
		"--signer-name %s is under kubernetes.io, whose signer names Kubernetes reserves for its own signers", base.Quoted(name))
}

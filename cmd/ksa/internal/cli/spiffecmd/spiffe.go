package spiffecmd

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/ops"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

func New(a *base.App) *cobra.Command {
	return base.Group("spiffe", "Serve a pod's certificate to SPIFFE software (the Workload API)", newSpiffeServeCmd(a))
}

// spiffeFlags are the settings of "ksa spiffe serve".
type spiffeFlags struct {
	bundle, socket, folder, opsAddr string
	socketMode, folderMode          string
	trust                           []string
	maxClients                      int
}

func newSpiffeServeCmd(a *base.App) *cobra.Command {
	f := &spiffeFlags{}
	cmd := &cobra.Command{
		Use:   "serve --credential-bundle FILE --trust-bundle DOMAIN=FILE... [--socket unix:///PATH]",
		Short: "Serve the SPIFFE Workload API from the pod's mounted pod certificate",
		Long: `Serve the SPIFFE Workload API (FetchX509SVID, FetchX509Bundles) on a Unix
socket from the pod certificate the kubelet mounts (--credential-bundle, a
podCertificate projection's credentialBundlePath) and the trust bundles of
clusterTrustBundle projections (--trust-bundle, one per SPIFFE trust
domain), for software that speaks SPIFFE: Envoy, go-spiffe's clients,
ghostunnel, meshes. Run it as a native sidecar (an init container with
restartPolicy: Always) sharing an emptyDir with the workload's containers,
which set SPIFFE_ENDPOINT_SOCKET to the same unix:///PATH.

Every client's stream gets a new answer as soon as the kubelet replaces
the certificate or a trust bundle (file events, not a polling interval).
A file that does not load (torn, a key that is not the chain's, over the
size limits) or a certificate that its own trust bundle does not verify is
never served: the last good one stays, and the error is logged and
counted. JWT-SVIDs are not served (Unimplemented): a pod certificate is an
X.509 identity.

With --credential-folder (default $SPIFFE_CREDENTIAL_FOLDER), the same
identity is written there as SPIFFE's filesystem delivery lays it out
(credential-bundle.private-key.pem: the key and its chain;
<domain>.spiffe-trust-bundle.pem per trust domain), replaced atomically,
for software that reads files. The folder is created (0755) when missing;
its parent must exist. Every write goes through directory descriptors and
a private directory, so another container sharing the volume cannot
redirect the key with a symbolic link.

With --ops-addr, /healthz, /readyz (ready once an identity valid now is
served) and /metrics (ksa_spiffe_clients, ksa_spiffe_updates_total,
ksa_spiffe_updates_pushed_total, ksa_spiffe_bundle_load_errors_total,
ksa_spiffe_certificate_expiry_timestamp_seconds) are served there.
Stops on SIGINT or SIGTERM.`,
		Example: `  ksa spiffe serve --credential-bundle /var/run/podcert/credentialbundle.pem \
      --trust-bundle cluster.local=/var/run/podcert/ca.pem --socket unix:///run/spiffe/api.sock
  # Files too, probes and metrics, containers of the pod's fsGroup allowed in:
  ksa spiffe serve --credential-bundle /var/run/podcert/credentialbundle.pem \
      --trust-bundle cluster.local=/var/run/podcert/ca.pem --trust-bundle partner.example=/var/run/partner/ca.pem \
      --socket unix:///run/spiffe/api.sock --socket-mode 0660 \
      --credential-folder /run/spiffe/creds --credential-folder-mode 0640 --ops-addr :9090`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.bundle, "credential-bundle", "", "the pod certificate's credential bundle: PKCS#8 key, then the chain (a podCertificate projection's credentialBundlePath; required)")
	fl.StringArrayVar(&f.trust, "trust-bundle", nil, "DOMAIN=FILE: the trust bundle of a SPIFFE trust domain, PEM (a clusterTrustBundle projection; repeatable; the certificate's own domain required)")
	fl.StringVar(&f.socket, "socket", "", "the Workload API's Unix socket, unix:///PATH or PATH (default $"+workloadapi.EndpointSocketEnv+")")
	fl.StringVar(&f.socketMode, "socket-mode", fmt.Sprintf("%04o", workloadapi.DefaultSocketMode), "permission of the socket file (octal): who may connect")
	fl.StringVar(&f.folder, "credential-folder", "", "directory to write the identity into as files too, created when missing (default $"+workloadapi.CredentialFolderEnv+"; none when unset)")
	fl.StringVar(&f.folderMode, "credential-folder-mode", fmt.Sprintf("%04o", workloadapi.DefaultCredentialFileMode), "permission of the folder's key file (octal)")
	fl.StringVar(&f.opsAddr, "ops-addr", "", "address for /healthz, /readyz and /metrics, e.g. 127.0.0.1:9090 (default: none)")
	fl.IntVar(&f.maxClients, "max-clients", workloadapi.DefaultMaxClients, "streams served at once")
	base.Required(cmd, "credential-bundle", "trust-bundle")
	return cmd
}

// fileMode parses an octal permission flag.
func fileMode(flag, v string) (fs.FileMode, error) {
	n, err := strconv.ParseUint(v, 8, 32)
	if err != nil || n == 0 || n > 0o777 {
		return 0, base.Usage("give --"+flag+" octal permission bits, e.g. 0600", "--%s %s is not a permission", flag, base.Quoted(v))
	}
	return fs.FileMode(n), nil
}

// config builds the server's configuration from the flags and the
// environment.
func (f *spiffeFlags) config(log *slog.Logger) (workloadapi.Config, fs.FileMode, error) {
	cfg := workloadapi.Config{
		Credential:       podcert.SourceConfig{BundlePath: f.bundle},
		CredentialFolder: f.folder,
		MaxClients:       f.maxClients,
		OnError:          func(err error) { log.Error("not served", "error", ksa.ErrorText(err)) },
		OnUpdate: func(s workloadapi.Status) {
			if s.SPIFFEID.IsZero() {
				// Trust bundles alone: a workload asking for its SVID waits.
				log.Warn("no X509-SVID to serve yet: waiting for a credential bundle that loads and that the trust bundle of its own trust domain verifies (the error logged says what is wrong)",
					"trust_domains", strings.Join(s.TrustDomains, ","), "clients", s.Clients)
				return
			}
			log.Info("serving", "spiffe_id", s.SPIFFEID.String(), "not_after", s.NotAfter.UTC().Format(time.RFC3339),
				"trust_domains", strings.Join(s.TrustDomains, ","), "clients", s.Clients)
		},
	}
	if cfg.CredentialFolder == "" {
		cfg.CredentialFolder = os.Getenv(workloadapi.CredentialFolderEnv)
	}
	for _, v := range f.trust {
		td, path, ok := strings.Cut(v, "=")
		if !ok || td == "" || path == "" {
			return cfg, 0, base.Usage("give --trust-bundle DOMAIN=FILE, e.g. cluster.local=/var/run/podcert/ca.pem", "--trust-bundle %s is not DOMAIN=FILE", base.Quoted(v))
		}
		cfg.TrustBundles = append(cfg.TrustBundles, workloadapi.TrustBundle{TrustDomain: td, Path: path})
	}
	if f.maxClients <= 0 {
		return cfg, 0, base.Usage(fmt.Sprintf("give --max-clients a positive number (default %d)", workloadapi.DefaultMaxClients), "--max-clients %d is not positive", f.maxClients)
	}
	var err error
	if cfg.CredentialFileMode, err = fileMode("credential-folder-mode", f.folderMode); err != nil {
		return cfg, 0, err
	}
	socketMode, err := fileMode("socket-mode", f.socketMode)
	return cfg, socketMode, err
}

// spiffeFlagFor names the flag behind each field of workloadapi's
// configuration.
var spiffeFlagFor = base.FlagFor{
	"Config.Credential": "--credential-bundle", "SourceConfig.BundlePath": "--credential-bundle",
	"Config.TrustBundles": "--trust-bundle", "Config.CredentialFolder": "--credential-folder",
	"Config.CredentialFileMode": "--credential-folder-mode", "Config.MaxClients": "--max-clients",
	"ListenConfig.Address": "--socket", "ListenConfig.Mode": "--socket-mode",
}

func (f *spiffeFlags) run(a *base.App, cmd *cobra.Command) error {
	log := slog.New(slog.NewTextHandler(a.Stderr, nil))
	cfg, socketMode, err := f.config(log)
	if err != nil {
		return err
	}
	srv, l, socket, err := f.listen(cfg, socketMode)
	if err != nil {
		return err
	}
	ctx, stop := base.SignalContext(cmd)
	defer stop()
	var opsSrv *ops.Server
	if f.opsAddr != "" {
		if opsSrv, err = ops.Listen(ops.Config{Addr: f.opsAddr, Ready: func(context.Context) error { return srv.Ready() },
			Gatherer: spiffeMetrics(srv), Log: log}); err != nil {
			l.Close()
			return base.Fail(err, "choose a free --ops-addr, e.g. 127.0.0.1:9090", "listening on --ops-addr %s", f.opsAddr)
		}
		go func() {
			if err := opsSrv.Serve(ctx); err != nil {
				log.Error("ops listener", "error", err)
			}
		}()
	}
	watchErr := make(chan error, 1)
	go func() {
		err := srv.Watch(ctx)
		watchErr <- err
		if err != nil {
			srv.GracefulStop()
		}
	}()
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	if opsSrv != nil {
		log.Info("ops", "addr", opsSrv.Addr())
	}
	log.Info("listening", "socket", socket, "ready", srv.Ready() == nil)
	if err := srv.Serve(l); err != nil && ctx.Err() == nil {
		return base.Fail(err, "start the server again; if it fails the same way, choose another --socket", "serving")
	}
	stop()
	if err := <-watchErr; err != nil {
		return base.Fail(nil, "check that the directories of --credential-bundle and --trust-bundle exist", "%s", ksa.ErrorText(err))
	}
	st := srv.Status()
	fmt.Fprintf(a.Stderr, "stopped: %d update(s) published, %d answer(s) pushed, %d error(s)\n", st.Updates, st.Pushed, st.Errors)
	return nil
}

// listen makes the server of cfg and listens on its socket: --socket, or
// the address the workload finds in $SPIFFE_ENDPOINT_SOCKET.
func (f *spiffeFlags) listen(cfg workloadapi.Config, socketMode fs.FileMode) (*workloadapi.Server, net.Listener, string, error) {
	socket := f.socket
	if socket == "" {
		socket = os.Getenv(workloadapi.EndpointSocketEnv)
	}
	if socket == "" {
		return nil, nil, "", base.Usage("give --socket unix:///PATH (the address the workload's containers find in $"+workloadapi.EndpointSocketEnv+")",
			"no socket: --socket is not given and $%s is not set", workloadapi.EndpointSocketEnv)
	}
	if _, err := workloadapi.SocketPath(socket); err != nil {
		return nil, nil, "", base.ConfigError(err, spiffeFlagFor, "ksa spiffe serve")
	}
	srv, err := workloadapi.NewServer(cfg)
	if err != nil {
		return nil, nil, "", base.ConfigError(err, spiffeFlagFor, "ksa spiffe serve")
	}
	l, err := workloadapi.Listen(workloadapi.ListenConfig{Address: socket, Mode: socketMode})
	if err != nil {
		if _, ok := base.AsConfigProblem(err); ok {
			return nil, nil, "", base.ConfigError(err, spiffeFlagFor, "ksa spiffe serve")
		}
		return nil, nil, "", base.Fail(nil, "choose a --socket path in a writable directory (the emptyDir shared with the workload)", "%s", ksa.ErrorText(err))
	}
	return srv, l, socket, nil
}

// spiffeMetrics are the server's metrics for /metrics.
func spiffeMetrics(srv *workloadapi.Server) prometheus.Gatherer {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ksa_spiffe_clients", Help: "Workload API streams open."},
			func() float64 { return float64(srv.Status().Clients) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ksa_spiffe_updates_total", Help: "Identities and trust bundles published (each a new answer for every stream)."},
			func() float64 { return float64(srv.Status().Updates) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ksa_spiffe_updates_pushed_total", Help: "Answers sent on Workload API streams."},
			func() float64 { return float64(srv.Status().Pushed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ksa_spiffe_bundle_load_errors_total", Help: "Credential and trust bundles that did not load or were refused (the last good one stayed), and credential folder writes that failed."},
			func() float64 { return float64(srv.Status().Errors) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ksa_spiffe_certificate_expiry_timestamp_seconds", Help: "Expiry of the certificate served, in seconds since the epoch; 0 before one is served."},
			func() float64 {
				if t := srv.Status().NotAfter; !t.IsZero() {
					return float64(t.Unix())
				}
				return 0
			}),
	)
	return reg
}

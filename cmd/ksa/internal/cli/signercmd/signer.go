package signercmd

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/ops"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/ksaprom"
)

func New(a *base.App) *cobra.Command {
	return base.Group("signer", "The external JWT signer for kube-apiserver", newSignerServeCmd(a))
}

// signerFlags are the settings of "ksa signer serve".
type signerFlags struct {
	socket, primary, ringFile, opsAddr  string
	previous, previousPublic            []string
	lifetime                            time.Duration
	ringInterval, probeInterval         time.Duration
	allowedUIDs                         []string
	logFormat, logLevel                 string
	insecureAbstract, insecureSharedDir bool
}

// Defaults of "ksa signer serve".
const (
	// defaultRingInterval is how often the ring file is read for changes.
	defaultRingInterval = extsigner.DefaultRingCheckInterval
)

// defaultAllowedUIDs are the users served when --allowed-uid is not
// given: the signer's own and root, which kube-apiserver usually runs as.
func defaultAllowedUIDs() []string {
	self := strconv.Itoa(os.Getuid())
	if self == "0" {
		return []string{"0"}
	}
	return []string{self, "0"}
}

// uids parses --allowed-uid.
func (f *signerFlags) uids() ([]uint32, error) {
	var out []uint32
	for _, v := range f.allowedUIDs {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, base.Usage("give --allowed-uid a numeric user ID, e.g. --allowed-uid 0 for root (id -u NAME prints one)", "--allowed-uid %q is not a user ID", v)
		}
		if !slices.Contains(out, uint32(n)) {
			out = append(out, uint32(n))
		}
	}
	return out, nil
}

// signerServeHelp is the long help of its command.
const signerServeHelp = `Serve kube-apiserver's ExternalJWTSigner API (v1 and v1alpha1) on a Unix
socket. kube-apiserver runs with --service-account-signing-endpoint=PATH in
place of its key flags, and caps token lifetimes at the signer's longest
token lifetime. Stops on SIGINT or SIGTERM, letting requests under way
finish.

Keys, either way:

  --ring FILE    a ring file (YAML or JSON): the keys, and the times at
                 which each is published, starts signing and is retired.
                 The signer follows it at the written times, so replicas
                 reading the same file switch at the same instant and
                 answer kube-apiserver alike; it reads the file again when
                 it changes (every --ring-check-interval), and a file it
                 refuses leaves the last good ring in place (logged, and
                 ksa_extsigner_ring_reload_failing is 1). ksa issuer
                 rotate --ring writes the next one.
  --key FILE     the key that signs; every --previous-key is published too,
                 for the tokens it signed before a rotation; every
                 --previous-public-key (the --service-account-key-file of a
                 kube-apiserver that signed with key files before) is
                 published for kube-apiserver alone (excluded from
                 discovery), so that no token issued before the move to
                 the signer fails.

A ring file:

  maxTokenLifetime: 24h          # also refreshHint (1m), minStaging (2m)
  keys:
  - key: /etc/ksa/sa-1.key       # signs from its primary time
    primary: "2027-01-01T00:00:00Z"
    retired: "2027-03-02T09:04:01Z"
  - key: /etc/ksa/sa-2.key       # published at 09:00, signs from 09:02
    published: "2027-03-01T09:00:00Z"
    primary: "2027-03-01T09:02:00Z"
  - publicKeys: /etc/kubernetes/pki/sa.pub   # verify-only
    publishInDiscovery: false    # the default: for kube-apiserver alone

A schedule that could make a live token fail is refused: two keys
starting to sign at once, a key signing less than minStaging after it is
published, a key retired before every token it signed has expired
(maxTokenLifetime and two minutes after the next key took over), no key
signing now. Write absolute paths (relative ones are taken from the
directory the signer runs in).

Every signature of a key that is not a standard-library key read from a
file (an HSM, a KMS) is verified before it is returned. FetchKeys and
Metadata never call the key store. The standard gRPC health service
answers on the socket: SERVING while the key store answered a signature
within three --probe-interval (a probe signature is made when no Sign
succeeded in an interval). --ops-addr serves /healthz, /readyz (the same
readiness and, with --ring, a ring file checked recently) and /metrics (ksa_extsigner_*, see ksa's ksaprom package) over
HTTP. Logs are structured (--log-format), one line per Sign at debug
level (per failure at warn or error), each with a request ID that the
status message kube-apiserver logs for a failed Sign quotes.

The socket: a socket file in a directory of its own that only root can
write, e.g. /run/ksa-signer/signer.sock after
install -d -o root -g root -m 0700 /run/ksa-signer. kube-apiserver does
not authenticate the signer it dials: whoever holds the socket's name
while the signer is not listening (before it starts, while it restarts or
is upgraded, after a crash) becomes its signer, publishing its own key and
signing tokens for any service account. So the signer refuses a socket
whose directory another user can write, or whose directories above it
another user owns or can write without the sticky bit
(--insecure-shared-socket-directory allows it where only trusted
processes reach the directory, such as an emptyDir volume, mode 0777,
that only the signer's and kube-apiserver's containers mount). It refuses
a Linux abstract socket (@name), which kube-apiserver also accepts: its
name has no owner and no permissions, any local user can bind it first,
and the signer then only fails with "address already in use"
(--insecure-abstract-socket allows one anyway).

Only the users of --allowed-uid are served: the user ID of every
connection is read from the kernel (SO_PEERCRED) and any other is closed at
once (the first logged, then at most one line a minute with the number
refused since; ksa_extsigner_refused_connections_total counts them all).
Without --allowed-uid, the signer's own UID and 0 (root, which
kube-apiserver usually runs as) are allowed; give kube-apiserver's UID when
it runs as another user. This check says who may connect, not who may
listen: it cannot stop a user who takes the socket's name. On an abstract
socket it is the only check: any process of the network namespace can
connect, and with the default --allowed-uid a root process in any other
container of a hostNetwork pod is let in, since SO_PEERCRED reports host
user IDs; a socket file in a root-owned 0700 directory is out of those
containers' reach. Peer credentials are read on Linux only.

A ring file must be a regular file (a FIFO or a device is refused, never
waited for). One the signer refused is read again at every check, and
tried again when it, or a PIN file it names, changed; unchanged, a
refusal that may pass later (a key store that failed, a schedule too
early) is tried again after --ring-check-interval, then after twice as
long each time up to five minutes (a schedule too early: when it becomes
safe), and a key store that refused the PIN is not tried again at all,
since HSMs lock a PIN after a few failed logins.
ksa_extsigner_ring_last_check_timestamp_seconds is when the file was last
checked, and /readyz fails when that is more than three
--ring-check-interval (and at least a minute) ago: a check that hangs (a
hung network file system) stops the reloads. /readyz answers the reason
in a few words (the key store, the ring file); the detail is logged.`

func newSignerServeCmd(a *base.App) *cobra.Command {
	f := &signerFlags{}
	cmd := &cobra.Command{
		Use:   "serve --socket PATH (--ring FILE | --key FILE [--previous-key FILE...] [--previous-public-key FILE...])",
		Short: "Run the external JWT signer kube-apiserver signs tokens through",
		Long:  signerServeHelp,
		Example: `  # the socket's directory, root's alone: install -d -o root -g root -m 0700 /run/ksa-signer
  ksa signer serve --socket /run/ksa-signer/signer.sock --key sa.key
  ksa signer serve --socket /run/ksa-signer/signer.sock --ring /etc/ksa/ring.yaml --ops-addr 127.0.0.1:9464
  # moving from key files: the old public key keeps earlier tokens valid
  ksa signer serve --socket /run/ksa-signer/signer.sock --key sa-2.key --previous-public-key /etc/kubernetes/pki/sa.pub
  # kube-apiserver and the signer run as user 1001 (install -d -o 1001 -m 0700 /run/ksa-signer); root may not connect:
  ksa signer serve --socket /run/ksa-signer/signer.sock --key sa.key --allowed-uid 1001`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "Unix socket path, in a directory only root (or the signer's user) can write, e.g. /run/ksa-signer/signer.sock (kube-apiserver's --service-account-signing-endpoint; required)")
	fl.BoolVar(&f.insecureAbstract, "insecure-abstract-socket", false, "allow --socket @name, a Linux abstract socket: dangerous, any local user can bind the name while the signer is not listening and sign tokens in its place")
	fl.BoolVar(&f.insecureSharedDir, "insecure-shared-socket-directory", false, "allow a --socket directory other users can write: only where no untrusted process can reach it (an emptyDir only the signer's and kube-apiserver's containers mount)")
	fl.StringVar(&f.ringFile, "ring", "", "ring file (YAML or JSON): the keys and their times, read again when it changes")
	fl.StringVar(&f.primary, "key", "", "PEM private key file, or key-store URI (pkcs11:, awskms:, cloudkms:, azurekms:), that signs (without --ring)")
	fl.StringArrayVar(&f.previous, "previous-key", nil, "PEM key file, or key-store URI, still published for verification (repeatable; without --ring)")
	fl.StringArrayVar(&f.previousPublic, "previous-public-key", nil, "PEM public keys kube-apiserver verified tokens with before (its --service-account-key-file), published for it alone (repeatable; without --ring)")
	fl.DurationVar(&f.lifetime, "max-token-lifetime", extsigner.DefaultMaxTokenLifetime, "longest token lifetime kube-apiserver may ask for (it caps every token at it; without --ring, which says it)")
	fl.DurationVar(&f.ringInterval, "ring-check-interval", defaultRingInterval, "how often the ring file is read for changes")
	fl.DurationVar(&f.probeInterval, "probe-interval", grpcserver.DefaultProbeInterval, "how often the key store is checked when no Sign proved it (a probe signature)")
	fl.StringVar(&f.opsAddr, "ops-addr", "", "serve /healthz, /readyz and /metrics over HTTP on this address (e.g. 127.0.0.1:9464); off by default")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "least level logged: debug (a line per Sign), info, warn or error")
	fl.StringArrayVar(&f.allowedUIDs, "allowed-uid", defaultAllowedUIDs(), "user ID whose connections are served; every other user is refused (repeatable; default: the signer's own UID and 0, root)")
	base.Required(cmd, "socket")
	return cmd
}

// check refuses contradictory flags.
func (f *signerFlags) check(cmd *cobra.Command) error {
	switch {
	case f.ringFile == "" && f.primary == "":
		return base.Usage("give --ring FILE (a ring file) or --key FILE (the key that signs)", "no keys to sign with")
	case f.ringFile != "" && f.primary != "":
		return base.Usage("give the keys in the ring file, or drop --ring", "--ring and --key both name the keys")
	case f.ringFile != "" && (len(f.previous) > 0 || len(f.previousPublic) > 0):
		return base.Usage("list previous keys in the ring file (publicKeys: FILE for public keys)", "--previous-key and --previous-public-key go with --key, not --ring")
	case f.ringFile != "" && cmd.Flags().Changed("max-token-lifetime"):
		return base.Usage("set maxTokenLifetime in the ring file", "--max-token-lifetime goes with --key, not --ring")
	case f.ringInterval <= 0:
		return base.Usage("give a positive duration, e.g. --ring-check-interval 10s", "--ring-check-interval %v is not positive", f.ringInterval)
	}
	abstract := strings.HasPrefix(f.socket, "@")
	switch {
	case abstract && !f.insecureAbstract:
		return base.Usage("give --socket a file in a directory only root can write, e.g. --socket /run/ksa-signer/signer.sock after install -d -m 0700 /run/ksa-signer (--insecure-abstract-socket keeps the abstract name, at that risk)",
			"--socket %s is an abstract socket: any local user can bind the name while the signer is not listening and sign tokens in its place", base.Quoted(f.socket))
	case !abstract && f.insecureAbstract:
		return base.Usage("drop --insecure-abstract-socket", "--insecure-abstract-socket goes with an abstract --socket @name, and %s is a file", base.Quoted(f.socket))
	case abstract && f.insecureSharedDir:
		return base.Usage("drop --insecure-shared-socket-directory", "--insecure-shared-socket-directory goes with a socket file, and %s is an abstract socket", base.Quoted(f.socket))
	}
	return nil
}

// logger makes the command's structured log from --log-format and
// --log-level.
func (f *signerFlags) logger(a *base.App) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, base.Usage("give --log-level debug, info, warn or error", "--log-level %q is not a level", f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(a.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(a.Stderr, opts)), nil
	}
	return nil, base.Usage("give --log-format text or json", "--log-format %q is not a format", f.logFormat)
}

func (f *signerFlags) run(a *base.App, cmd *cobra.Command) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	uids, err := f.uids()
	if err != nil {
		return err
	}
	log, err := f.logger(a)
	if err != nil {
		return err
	}
	ctx, stop := base.SignalContext(cmd)
	defer stop()
	obs := &signerObserver{log: log}
	refusals := &refusalLog{log: log, now: a.Now}
	src, err := f.keys(ctx, a, obs)
	if err != nil {
		return err
	}
	ring := src.ring
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if obs.metrics, err = ksaprom.NewSignerMetrics(ksaprom.SignerConfig{Registerer: reg, Ring: ring}); err != nil {
		return base.Fail(err, base.BugFix, "registering the signer's metrics")
	}
	if src.file != nil {
		obs.metrics.ObserveRingCheck(src.file.LastCheck()) // the read at the start
	}
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring, OnRequest: obs.request, ProbeInterval: f.probeInterval, Now: a.Now})
	if err != nil {
		return base.Fail(err, base.BugFix, "configuring the signer")
	}
	refusals.metrics = obs.metrics
	defer refusals.flush()
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: f.socket, AllowedUIDs: uids, OnRefused: refusals.refused,
		InsecureAbstractSocket: f.insecureAbstract, InsecureSharedDirectory: f.insecureSharedDir})
	if err != nil {
		return f.listenError(err)
	}
	opsAddr, err := f.serveOps(ctx, log, reg, src, srv.Ready)
	if err != nil {
		l.Close()
		return err
	}
	if src.file != nil {
		go src.file.Watch(ctx)
	}
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	primary := ring.Primary()
	log.Info("serving", "socket", f.socket, "kid", primary.KeyID, "alg", primary.Algorithm, "keys", describeKeys(ring.Keys()),
		"data_timestamp", ring.KeySet().DataTimestamp, "from", src.from, "uids", strings.Join(f.allowedUIDs, ","), "ops", opsAddr)
	if err := srv.Serve(l); err != nil && ctx.Err() == nil {
		return base.Fail(err, "start the signer again; if it fails the same way, choose another --socket", "serving")
	}
	return nil
}

// serveOps starts the ops listener at --ops-addr, if given, until ctx
// ends, and returns its address.
func (f *signerFlags) serveOps(ctx context.Context, log *slog.Logger, reg *prometheus.Registry, src *signerKeys, keyStore func() error) (string, error) {
	if f.opsAddr == "" {
		return "", nil
	}
	ready := &signerReadiness{log: log, keyStore: keyStore}
	if src.file != nil {
		ready.ringFile = src.file.Stalled
	}
	opsSrv, err := ops.Listen(ops.Config{Addr: f.opsAddr, Gatherer: reg, Log: log, Ready: ready.check})
	if err != nil {
		return "", base.Fail(err, "choose a free --ops-addr, e.g. 127.0.0.1:9464", "listening on --ops-addr %s", f.opsAddr)
	}
	go func() {
		if err := opsSrv.Serve(ctx); err != nil {
			log.Error("the ops listener stopped", "error", err)
		}
	}()
	return opsSrv.Addr(), nil
}

// listenError explains a socket the signer cannot listen on.
func (f *signerFlags) listenError(err error) error {
	var ce *ksa.ConfigError
	if errors.Is(err, extsigner.ErrSharedSocketDirectory) && errors.As(err, &ce) {
		return base.Fail(nil, "put the socket in a directory only root can write, e.g. --socket /run/ksa-signer/signer.sock after install -d -o root -g root -m 0700 /run/ksa-signer (--insecure-shared-socket-directory where only trusted processes reach this one)",
			"--socket %s: %s: another user could bind the socket's name while the signer is not listening and sign tokens in its place", base.Quoted(f.socket), ksa.ErrorText(ce.Err))
	}
	if _, ok := base.AsConfigProblem(err); ok {
		return base.ConfigError(err, base.FlagFor{"ListenConfig.Address": "--socket", "ListenConfig.AllowedUIDs": "--allowed-uid"}, "ksa signer serve")
	}
	return base.Fail(nil, "choose a --socket path in a directory of the signer's that no live signer uses", "listening on %s: %s", f.socket, ksa.ErrorText(err))
}

// describeKeys names a ring's keys and roles for a log line:
// "kid (role), ...".
func describeKeys(keys []extsigner.RingKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.Key.KeyID + " (" + k.Role.String() + ")"
	}
	return strings.Join(parts, ", ")
}

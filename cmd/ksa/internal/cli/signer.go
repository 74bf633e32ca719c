package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/jwks"
)

// signalContext is canceled on SIGINT or SIGTERM.
func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func newSignerCmd(a *app) *cobra.Command {
	return group("signer", "The external JWT signer for kube-apiserver", newSignerServeCmd(a))
}

// signerFlags are the settings of "ksa signer serve".
type signerFlags struct {
	socket, primary string
	previous        []string
	lifetime        time.Duration
	allowedUIDs     []string
}

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
			return nil, usage("give --allowed-uid a numeric user ID, e.g. --allowed-uid 0 for root (id -u NAME prints one)", "--allowed-uid %q is not a user ID", v)
		}
		if !slices.Contains(out, uint32(n)) {
			out = append(out, uint32(n))
		}
	}
	return out, nil
}

func newSignerServeCmd(a *app) *cobra.Command {
	f := &signerFlags{}
	cmd := &cobra.Command{
		Use:   "serve --socket PATH --key FILE [--previous-key FILE...] [--allowed-uid UID...]",
		Short: "Run the external JWT signer kube-apiserver signs tokens through",
		Long: `Serve kube-apiserver's ExternalJWTSigner API (v1 and v1alpha1) on a Unix
socket, signing with the private key of --key (RSA or ECDSA); every
--previous-key is published for verification only, for the tokens it signed
before a rotation. kube-apiserver runs with
--service-account-signing-endpoint=PATH in place of its key flags, and
caps token lifetimes at --max-token-lifetime. Every signature is verified
before it is returned. Stops on SIGINT or SIGTERM.

Only the users of --allowed-uid are served: the user ID of every
connection is read from the kernel (SO_PEERCRED) and any other is closed at
once and logged. Without --allowed-uid, the signer's own UID and 0 (root,
which kube-apiserver usually runs as) are allowed; give kube-apiserver's UID
when it runs as another user. This holds on both kinds of socket: a path
(its file is also mode 0600) and a Linux abstract socket ("@name"), which
has no file permissions at all, so that without this check any process in
the node's network namespace, a hostNetwork pod included, could have tokens
signed by the cluster's key. Peer credentials are read on Linux only.`,
		Example: `  ksa signer serve --socket /run/ksa/signer.sock --key sa.key
  ksa signer serve --socket /run/ksa/signer.sock --key sa-2.key --previous-key sa.key --max-token-lifetime 24h
  # kube-apiserver runs as user 1001:
  ksa signer serve --socket @kube-signer --key sa.key --allowed-uid 1001`,
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "Unix socket path, or @name for a Linux abstract socket (kube-apiserver's --service-account-signing-endpoint; required)")
	fl.StringVar(&f.primary, "key", "", "PEM private key file, or key-store URI (pkcs11:, awskms:, cloudkms:, azurekms:), that signs (required)")
	fl.StringArrayVar(&f.previous, "previous-key", nil, "PEM key file, or key-store URI, still published for verification (repeatable)")
	fl.DurationVar(&f.lifetime, "max-token-lifetime", extsigner.DefaultMaxTokenLifetime, "longest token lifetime kube-apiserver may ask for (it caps every token at it)")
	fl.StringArrayVar(&f.allowedUIDs, "allowed-uid", defaultAllowedUIDs(), "user ID whose connections are served, on a path or an abstract socket; every other user is refused (repeatable; default: the signer's own UID and 0, root)")
	required(cmd, "socket", "key")
	return cmd
}

// ring builds the key ring of --key and --previous-key.
func (f *signerFlags) ring(a *app) (*extsigner.Ring, jwks.Key, error) {
	signer, err := a.loadSigningKey(context.Background(), f.primary, "--key")
	if err != nil {
		return nil, jwks.Key{}, err
	}
	if err := forAPIServer(f.primary, signer.Public()); err != nil {
		return nil, jwks.Key{}, err
	}
	k, err := jwks.NewKey(signer)
	if err != nil {
		return nil, jwks.Key{}, keyFileError(f.primary, err)
	}
	keys := []extsigner.RingKey{{Key: k, Signer: signer, Role: extsigner.RolePrimary}}
	for _, p := range f.previous {
		kf, err := a.loadKeyFile(context.Background(), p, "--previous-key")
		if err != nil {
			return nil, jwks.Key{}, err
		}
		for _, pk := range kf.Keys {
			if err := forAPIServer(p, pk.Public); err != nil {
				return nil, jwks.Key{}, err
			}
			keys = append(keys, extsigner.RingKey{Key: pk, Signer: kf.Signer, Role: extsigner.RolePrevious, Since: a.now()})
		}
	}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: keys, MaxTokenLifetime: f.lifetime})
	if err != nil {
		return nil, jwks.Key{}, configError(err, flagFor{"RingConfig.MaxTokenLifetime": "--max-token-lifetime",
			"RingConfig.Keys": "--key or --previous-key"}, "ksa signer serve")
	}
	return ring, k, nil
}

func (f *signerFlags) run(a *app, cmd *cobra.Command) error {
	uids, err := f.uids()
	if err != nil {
		return err
	}
	ring, k, err := f.ring(a)
	if err != nil {
		return err
	}
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring})
	if err != nil {
		return fail(err, bugFix, "configuring the signer")
	}
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: f.socket, AllowedUIDs: uids,
		OnRefused: func(uid uint32, err error) {
			if err != nil {
				fmt.Fprintf(a.stderr, "refused a connection: %s\n", oneLine(libText(err)))
				return
			}
			fmt.Fprintf(a.stderr, "refused a connection from uid %d (not an --allowed-uid)\n", uid)
		}})
	if err != nil {
		if _, ok := asConfigProblem(err); ok {
			return configError(err, flagFor{"ListenConfig.Address": "--socket", "ListenConfig.AllowedUIDs": "--allowed-uid"}, "ksa signer serve")
		}
		return fail(nil, "choose a --socket path in a writable directory that no live signer uses", "listening on %s: %s", f.socket, libText(err))
	}
	ctx, stop := signalContext(cmd)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	fmt.Fprintf(a.stderr, "signing with %s (kid %s) on %s for uid %s\n", f.primary, k.KeyID, f.socket, strings.Join(f.allowedUIDs, ", "))
	if err := srv.Serve(l); err != nil && ctx.Err() == nil {
		return fail(err, "start the signer again; if it fails the same way, choose another --socket", "serving")
	}
	return nil
}

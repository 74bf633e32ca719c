package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/extsigner"
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
}

func newSignerServeCmd(a *app) *cobra.Command {
	f := &signerFlags{}
	cmd := &cobra.Command{
		Use:   "serve --socket PATH --key FILE [--verify-key FILE...]",
		Short: "Run the external JWT signer kube-apiserver signs tokens through",
		Long: `Serve kube-apiserver's ExternalJWTSigner API (v1 and v1alpha1) on a Unix
socket, signing with the private key of --key (RSA or ECDSA); every
--previous-key is published for verification only, for the tokens it signed
before a rotation. kube-apiserver runs with
--service-account-signing-endpoint=PATH in place of its key flags, and
caps token lifetimes at --max-token-lifetime. Every signature is verified
before it is returned. Stops on SIGINT or SIGTERM.`,
		Example: `  ksa signer serve --socket /run/ksa/signer.sock --key sa.key
  ksa signer serve --socket /run/ksa/signer.sock --key sa-2.key --previous-key sa.key --max-token-lifetime 24h`,
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "Unix socket path (kube-apiserver's --service-account-signing-endpoint; required)")
	fl.StringVar(&f.primary, "key", "", "PEM private key that signs (required)")
	fl.StringArrayVar(&f.previous, "previous-key", nil, "PEM key file still published for verification (repeatable)")
	fl.DurationVar(&f.lifetime, "max-token-lifetime", 0, "longest token lifetime kube-apiserver may ask for (default: the signer's default)")
	required(cmd, "socket", "key")
	return cmd
}

// ring builds the key ring of --key and --previous-key.
func (f *signerFlags) ring(a *app) (*extsigner.Ring, jwks.Key, error) {
	signer, err := loadSigningKey(f.primary)
	if err != nil {
		return nil, jwks.Key{}, err
	}
	k, err := jwks.NewKey(signer)
	if err != nil {
		return nil, jwks.Key{}, keyFileError(f.primary, err)
	}
	keys := []extsigner.RingKey{{Key: k, Signer: signer, Role: extsigner.RolePrimary}}
	for _, p := range f.previous {
		kf, err := loadKeyFile(p)
		if err != nil {
			return nil, jwks.Key{}, err
		}
		for _, pk := range kf.Keys {
			keys = append(keys, extsigner.RingKey{Key: pk, Signer: kf.Signer, Role: extsigner.RolePrevious, Since: a.now()})
		}
	}
	ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: keys, MaxTokenLifetime: f.lifetime})
	if err != nil {
		return nil, jwks.Key{}, fail(nil, "fix the keys or --max-token-lifetime", "%s", libText(err))
	}
	return ring, k, nil
}

func (f *signerFlags) run(a *app, cmd *cobra.Command) error {
	ring, k, err := f.ring(a)
	if err != nil {
		return err
	}
	srv, err := extsigner.NewServer(extsigner.ServerConfig{Ring: ring})
	if err != nil {
		return fail(err, "", "configuring the signer")
	}
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: f.socket})
	if err != nil {
		return fail(nil, "choose a --socket path in a writable directory that no live signer uses", "listening on %s: %s", f.socket, libText(err))
	}
	ctx, stop := signalContext(cmd)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.GracefulStop()
	}()
	fmt.Fprintf(a.stderr, "signing with %s (kid %s) on %s\n", f.primary, k.KeyID, f.socket)
	if err := srv.Serve(l); err != nil && ctx.Err() == nil {
		return fail(err, "", "serving")
	}
	return nil
}

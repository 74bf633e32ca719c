// Command capi is what a Cluster API controller running a self-managed
// issuer does for one cluster, with ksa's library only (package
// examples/capi/capiflow holds the work; this program parses flags into
// it and prints what it did). Each run is one reconcile of the cluster:
//
//   - the first makes the issuer's first key, publishes the issuer
//     (discovery document and key set) to Azure Blob Storage or a
//     directory, checks it as Entra ID, AWS and Google fetch it, and hands
//     the key to the cluster;
//   - later runs move the key's scheduled rotation one step, or read the
//     Secret back;
//   - every run ends with a token minted with the key it is about (the
//     next key, once a step published it) verified through the published
//     documents, as a relying party verifies it.
//
// Where the keys live decides how they reach the cluster. Without
// -pkcs11-token the key is made in memory and written to the management
// cluster as Cluster API's <cluster>-sa Secret (read back and checked
// with clusterapi.ReadSecret); Cluster API copies it to every
// control-plane machine. With -pkcs11-token (-pkcs11-module,
// -pkcs11-pin-file) the keys are made on that PKCS #11 token (an HSM;
// SoftHSM2 to try it): the Secret is refused (clusterapi.ErrKeyNotExportable:
// Cluster API copies the private key to the nodes, which a key in an HSM
// never yields), and the ring file that external signers (ksa signer
// serve) follow is written to the ConfigMap <cluster>-sa-ring instead;
// later runs rotate it (publish.Rotation), each new key made on the token.
// Package capiflow's documentation says what such a cluster needs beyond
// this program (kubeadm does not configure an external signer).
//
//	$ export AZURE_STORAGE_CONNECTION_STRING='...'   # or az login: the store's credentials
//	$ capi -kubeconfig mgmt.kubeconfig -namespace fleet -cluster cluster-1 \
//	    -to https://oidcissuer.blob.core.windows.net/oidc/cluster-1 \
//	    -pkcs11-module /usr/lib/softhsm/libsofthsm2.so -pkcs11-token ksa -pkcs11-pin-file pin
//
// The store's credentials come from the environment, never from a flag
// (process listings show flags): AZURE_STORAGE_CONNECTION_STRING (an
// account key or SAS, and the endpoint: Azurite's to try it), else
// Azure's default credential chain. -issuer names where relying parties
// read the documents when that is not the location's own https URL (a
// CDN, a custom domain; an https front over Azurite), -ca-file the CAs
// its certificate is checked with.
//
// A rotation step does what is due at the run's time: publish the next
// key once the current one has signed for -every, make it sign once it
// has been published for -propagation, retire the old one once its
// tokens have expired, or wait, saying until when. -insecure-now sets the
// run's clock, to try a rotation without waiting; a clock ahead of the
// real one switches keys before relying parties have them, hence the
// name.
//
// -h lists the flags. It exits with status 0 when the run did its work
// (a step that waits included), 2 for a usage error, 1 for any other
// failure.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/examples/capi/capiflow"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/pkcs11"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/azblob"
	"github.com/ksa-go/ksa/rotation"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitStatus(err, os.Stderr))
}

// usageError is a mistake in the command line. said is set when the flag
// package has printed it already, with the usage.
type usageError struct {
	err  error
	said bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usage(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitStatus says err on stderr, once, and returns the program's exit
// status: 0 when the run did its work or printed its usage (-h, --help),
// 2 for a usage error, 1 for any other failure.
func exitStatus(err error, stderr io.Writer) int {
	var u *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &u):
		if !u.said {
			fmt.Fprintf(stderr, "capi: %v (see capi -h)\n", err)
		}
		return 2
	}
	fmt.Fprintln(stderr, "capi:", err)
	return 1
}

// flags are the command line.
type flags struct {
	kubeconfig, namespace, cluster, to, issuer, caFile string
	module, token, pinFile                             string
	every, propagation, delay                          time.Duration
	now                                                string
}

// parse reads args into flags, checked.
func parse(args []string, stderr io.Writer) (*flags, error) {
	var f flags
	fs := flag.NewFlagSet("capi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "the management cluster's kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.namespace, "namespace", "default", "the Cluster's namespace")
	fs.StringVar(&f.cluster, "cluster", "", "the Cluster's name (required)")
	fs.StringVar(&f.to, "to", "", "where the issuer is published: https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, or a directory (required)")
	fs.StringVar(&f.issuer, "issuer", "", "the https URL relying parties read the issuer at (default: the location's own)")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM CA certificates to check the issuer's https with (default: the system's)")
	fs.StringVar(&f.module, "pkcs11-module", "", "the PKCS #11 module (such as /usr/lib/softhsm/libsofthsm2.so)")
	fs.StringVar(&f.token, "pkcs11-token", "", "the label of the PKCS #11 token to make the keys on (default: keys made in memory, handed over in the <cluster>-sa Secret)")
	fs.StringVar(&f.pinFile, "pkcs11-pin-file", "", "the file holding the token's user PIN")
	fs.DurationVar(&f.every, "every", capiflow.DefaultCadence().Every, "the rotation period: a key signs this long before the next one is published")
	fs.DurationVar(&f.propagation, "propagation", capiflow.DefaultCadence().Propagation, "how long the next key is published before it signs")
	fs.DurationVar(&f.delay, "publish-delay", capiflow.DefaultCadence().Delay, "how long signers take to read a changed ring file")
	fs.StringVar(&f.now, "insecure-now", "", "the run's clock (RFC 3339), to try a rotation without waiting; ahead of the real clock, keys switch before relying parties have them")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err: err, said: true}
	}
	switch {
	case fs.NArg() > 0:
		return nil, usage("it takes no arguments, got %q", fs.Arg(0))
	case f.cluster == "":
		return nil, usage("give -cluster, the Cluster's name")
	case badName("-cluster", clusterapi.CheckClusterName(f.cluster)) != nil:
		return nil, badName("-cluster", clusterapi.CheckClusterName(f.cluster))
	case badName("-namespace", ksa.CheckNamespace("namespace", f.namespace)) != nil:
		return nil, badName("-namespace", ksa.CheckNamespace("namespace", f.namespace))
	case f.to == "":
		return nil, usage("give -to, where the issuer is published")
	case f.token == "" && (f.module != "" || f.pinFile != ""):
		return nil, usage("-pkcs11-module and -pkcs11-pin-file go with -pkcs11-token")
	case f.token != "" && f.pinFile == "":
		return nil, usage("-pkcs11-token needs -pkcs11-pin-file, the file holding its user PIN")
	}
	return &f, nil
}

// badName is the usage error of a flag whose value Kubernetes refuses as
// a name (err, a *ksa.NameError), nil when err is nil.
func badName(flag string, err error) error {
	var ne *ksa.NameError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ne):
		return usage("%s %q %s", flag, ne.Value, ne.Reason)
	}
	return usage("%s: %v", flag, err)
}

// run is one reconcile of the cluster the flags name.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parse(args, stderr)
	if err != nil {
		return err
	}
	cfg := capiflow.Config{Cluster: f.cluster, Namespace: f.namespace, Issuer: f.issuer,
		Cadence: rotation.Cadence{Every: f.every, Delay: f.delay, Propagation: f.propagation}}
	if f.now != "" {
		now, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return usage("-insecure-now %q is not an RFC 3339 time such as 2026-01-31T00:00:00Z", f.now)
		}
		cfg.Now = func() time.Time { return now }
	}
	loc, err := publish.ParseLocation(f.to)
	var pe *publish.Error
	switch {
	case errors.As(err, &pe):
		return usage("-to: %s", pe.What)
	case err != nil:
		return usage("-to: %v", err)
	}
	if loc.Kind == publish.Dir && f.issuer == "" {
		return usage("give -issuer, the https URL the directory -to is served at")
	}
	if cfg.HTTPClient, err = httpClient(f.caFile); err != nil {
		return err
	}
	if f.token != "" {
		if cfg.NewKeyRef, err = capiflow.PKCS11KeyRef(f.module, f.token, f.pinFile); err != nil {
			return usage("the -pkcs11 flags make no key reference: %v", err)
		}
		hsm, err := pkcs11.NewStore(pkcs11.Config{})
		if err != nil {
			return err
		}
		defer hsm.Close()
		cfg.Keys = keystore.Openers{PKCS11: hsm}
	}
	if cfg.Store, err = publish.Open(ctx, loc, publish.Config{Openers: map[publish.Kind]publish.Opener{publish.Azure: azblob.Open}}); err != nil {
		return err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	rest, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("the management cluster's kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return fmt.Errorf("the management cluster's kubeconfig: %w", err)
	}
	cfg.Kube = client.CoreV1()
	flow, err := capiflow.New(cfg)
	if err != nil {
		return err
	}
	res, err := flow.Reconcile(ctx)
	if res != nil {
		report(stdout, f, flow, res)
	}
	return err
}

// httpClient is the client relying parties' reads are made with: the
// system's roots, or the CAs of caFile.
func httpClient(caFile string) (*http.Client, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	if caFile == "" {
		return c, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, usage("-ca-file %s holds no PEM certificate", caFile)
	}
	c.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return c, nil
}

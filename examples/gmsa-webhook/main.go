// Command gmsa-webhook runs the GMSA credential-spec admission webhook of
// package credspec: /mutate inlines the contents of the GMSACredentialSpec a
// pod names, /validate checks that the pod's service account may `use` it
// and that inlined contents match, /health answers probes.
//
// With no flags it serves on 127.0.0.1:8443 with a fresh self-signed
// certificate (written next to a demo credential spec in a temporary
// directory, so curl --cacert can trust it), knows one GMSACredentialSpec,
// webapp01, and lets system:serviceaccount:default:default use it:
//
//	$ go run ./examples/gmsa-webhook
//
// In front of a cluster, give it the certificate files (a mounted
// kubernetes.io/tls Secret's, served through podcert.Source, which loads
// them again when they are replaced), the objects, and who may use them:
//
//	$ gmsa-webhook -addr :8443 -tls-cert-file /tls/tls.crt -tls-key-file /tls/tls.key \
//	    -credspecs credspecs.yaml -allow system:serviceaccount:web:frontend=webapp01
//
// -h lists the flags. It exits with status 0 when stopped (SIGINT,
// SIGTERM) or after -h, 2 for a usage error, 1 for any other failure.
//
// This example keeps lookups and access rules static to stay free of
// client-go; a deployment reads the objects from the API server and asks it
// with SubjectAccessReviews (see interop/credspec).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/podcert"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr, nil)
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

// exitStatus says err on stderr, once, and returns the program's exit
// status: 0 when it served until stopped or printed its usage (-h,
// --help), 2 for a usage error, 1 for any other failure.
func exitStatus(err error, stderr io.Writer) int {
	var usage *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		if !usage.said {
			fmt.Fprintf(stderr, "gmsa-webhook: %v (see gmsa-webhook -h)\n", err)
		}
		return 2
	}
	fmt.Fprintln(stderr, "gmsa-webhook:", err)
	return 1
}

// demoCredSpec is the object served when -credspecs is not given.
const demoCredSpec = `apiVersion: windows.k8s.io/v1
kind: GMSACredentialSpec
metadata:
  name: webapp01
credspec:
  ActiveDirectoryConfig:
    GroupManagedServiceAccounts:
    - Name: WebApp01
      Scope: CONTOSO
    - Name: WebApp01
      Scope: contoso.com
  CmsPlugins:
  - ActiveDirectory
  DomainJoinConfig:
    DnsName: contoso.com
    DnsTreeName: contoso.com
    Guid: 244818ae-87ca-4fcd-92ec-e79e5252348a
    MachineAccountName: WebApp01
    NetBiosName: CONTOSO
    Sid: S-1-5-21-2126729477-2524075714-3094792973
`

// allowList maps a username to the GMSACredentialSpec names it may use.
type allowList map[string][]string

func (a allowList) String() string { return fmt.Sprint(map[string][]string(a)) }

// Set parses user=name1,name2.
func (a allowList) Set(v string) error {
	user, names, ok := strings.Cut(v, "=")
	if !ok || user == "" || names == "" {
		return errors.New("want user=name[,name...]")
	}
	a[user] = append(a[user], strings.Split(names, ",")...)
	return nil
}

// run serves until ctx is done. ready, if set, is called with the listening
// address and the PEM of the certificate served.
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string, certPEM []byte)) error {
	fs := flag.NewFlagSet("gmsa-webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8443", "listen address")
	certFile := fs.String("tls-cert-file", "", "PEM certificate file (reloaded when it changes); empty: a self-signed one")
	keyFile := fs.String("tls-key-file", "", "PEM private key file")
	specsFile := fs.String("credspecs", "", "YAML or JSON file of GMSACredentialSpec objects; empty: the demo object webapp01")
	randomHostname := fs.Bool("random-hostname", false, "give GMSA pods without a hostname a random one")
	checkUser := fs.Bool("check-requesting-user", false, "also require the requesting user to be allowed to use the object")
	allow := allowList{}
	fs.Var(allow, "allow", "user=name[,name...]: let user use these GMSACredentialSpecs (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err: err, said: true}
	}
	if fs.NArg() > 0 {
		return &usageError{err: fmt.Errorf("it takes no arguments, got %q", fs.Arg(0))}
	}
	if (*certFile == "") != (*keyFile == "") {
		return &usageError{err: errors.New("-tls-cert-file and -tls-key-file go together")}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	specs := []byte(demoCredSpec)
	if *specsFile != "" {
		b, err := os.ReadFile(*specsFile)
		if err != nil {
			return err
		}
		specs = b
	} else if len(allow) == 0 {
		allow["system:serviceaccount:default:default"] = []string{"webapp01"}
	}
	objs, err := credspec.DecodeAll(strings.NewReader(string(specs)))
	if err != nil {
		return err
	}
	src, err := credspec.NewStaticSource(objs...)
	if err != nil {
		return err
	}
	authz := credspec.AuthorizerFunc(func(_ context.Context, r credspec.UseRequest) (credspec.Decision, error) {
		if slices.Contains(allow[r.User.Username], r.Name) {
			return credspec.Decision{Allowed: true}, nil
		}
		return credspec.Decision{Reason: "not in the -allow list"}, nil
	})
	exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src, RandomHostname: *randomHostname})
	if err != nil {
		return err
	}
	val, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz, CheckRequestingUser: *checkUser})
	if err != nil {
		return err
	}
	h, err := credspec.NewHandler(credspec.HandlerConfig{
		Expander:  exp,
		Validator: val,
		OnReview: func(o credspec.ReviewOutcome) {
			log.Info("review", "path", o.Path, "uid", o.UID, "operation", o.Operation, "namespace", o.Namespace,
				"allowed", o.Allowed, "patch", o.Patch, "error", o.Err)
		},
	})
	if err != nil {
		return err
	}

	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	var certPEM []byte
	if *certFile != "" {
		certs, err := podcert.NewSource(podcert.SourceConfig{
			KeyPath:        *keyFile,
			ChainPath:      *certFile,
			AnyCertificate: true,
			OnReload:       func(err error) { log.Info("certificate reload", "error", err) },
		})
		if err != nil {
			return err
		}
		tlsConfig.GetCertificate = certs.GetCertificate
		certPEM, err = os.ReadFile(*certFile)
		if err != nil {
			return err
		}
	} else {
		cert, pemBytes, err := podcert.SelfSigned(podcert.SelfSignedConfig{CommonName: "gmsa-webhook"})
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "gmsa-webhook-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := os.WriteFile(filepath.Join(dir, "ca.crt"), pemBytes, 0o600); err != nil {
			return err
		}
		log.Info("self-signed certificate", "file", filepath.Join(dir, "ca.crt"))
		tlsConfig.Certificates = []tls.Certificate{cert}
		certPEM = pemBytes
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tls.NewListener(ln, tlsConfig)) }()
	log.Info("serving", "addr", ln.Addr().String(), "credspecs", src.Names())
	if ready != nil {
		ready(ln.Addr().String(), certPEM)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

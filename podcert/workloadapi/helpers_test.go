package workloadapi_test

import (
	"context"
	"crypto/x509"
	"path/filepath"
	"sync"
	"testing"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// pod is the pod of the tests.
var pod = podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"}

// env is a pod's mounted volume, its signer, and a server on a socket.
type env struct {
	t      testing.TB
	ca     *podcerttest.Signer
	mount  *podcerttest.Mount
	srv    *workloadapi.Server
	sock   string
	mu     sync.Mutex
	errors []error
}

// newEnv mounts a certificate and the trust bundle (unless empty), and
// starts a server on them; mod changes its configuration.
func newEnv(t testing.TB, mountFirst bool, mod func(*workloadapi.Config)) *env {
	t.Helper()
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	e := &env{t: t, ca: ca, mount: mount}
	if mountFirst {
		e.publish()
	}
	cfg := workloadapi.Config{
		Credential:   podcert.SourceConfig{BundlePath: mount.Path("credentialbundle.pem")},
		TrustBundles: []workloadapi.TrustBundle{{TrustDomain: podcert.DefaultTrustDomain, Path: mount.Path("ca.pem")}},
		OnError: func(err error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.errors = append(e.errors, err)
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	e.srv, err = workloadapi.NewServer(cfg)
	require.NoError(t, err)
	e.sock = filepath.Join(t.TempDir(), "api.sock")
	l, err := workloadapi.Listen(workloadapi.ListenConfig{Address: "unix://" + e.sock})
	require.NoError(t, err)
	go func() { _ = e.srv.Serve(l) }()
	t.Cleanup(e.srv.Stop)
	return e
}

// publish issues a new certificate and mounts it with the trust bundle,
// as the kubelet refreshes them; it returns the bundle.
func (e *env) publish() []byte {
	e.t.Helper()
	bundle, err := e.ca.Issue(pod)
	require.NoError(e.t, err)
	require.NoError(e.t, e.mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": e.ca.TrustBundle()}))
	return bundle
}

// write mounts files as they are.
func (e *env) write(files map[string][]byte) {
	e.t.Helper()
	require.NoError(e.t, e.mount.Write(files))
}

// reported returns the errors reported to OnError so far.
func (e *env) reported() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errors...)
}

// client dials the server's socket with the generated gRPC client.
func (e *env) client() workload.SpiffeWorkloadAPIClient {
	e.t.Helper()
	conn, err := grpc.NewClient("unix://"+e.sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(e.t, err)
	e.t.Cleanup(func() { conn.Close() })
	return workload.NewSpiffeWorkloadAPIClient(conn)
}

// withHeader adds the security header, as every Workload API client
// does.
func withHeader(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, workloadapi.SecurityHeader, "true")
}

// svids opens a FetchX509SVID stream.
func (e *env) svids() grpc.ServerStreamingClient[workload.X509SVIDResponse] {
	e.t.Helper()
	s, err := e.client().FetchX509SVID(withHeader(e.t.Context()), &workload.X509SVIDRequest{})
	require.NoError(e.t, err)
	return s
}

// leafOf returns the leaf of a credential bundle.
func leafOf(t testing.TB, bundle []byte) *x509.Certificate {
	t.Helper()
	c, err := podcert.ParseBundle(bundle)
	require.NoError(t, err)
	return c.Certificate.Leaf
}

// recvLeaf receives an answer and returns its SVID's leaf.
func recvLeaf(t testing.TB, s grpc.ServerStreamingClient[workload.X509SVIDResponse]) *x509.Certificate {
	t.Helper()
	resp, err := s.Recv()
	require.NoError(t, err)
	require.Len(t, resp.Svids, 1)
	certs, err := x509.ParseCertificates(resp.Svids[0].X509Svid)
	require.NoError(t, err)
	return certs[0]
}

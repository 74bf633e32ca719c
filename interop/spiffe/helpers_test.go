package spiffe

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	gospiffe "github.com/spiffe/go-spiffe/v2/workloadapi"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// trustDomain is the trust domain of the tests' certificates.
var trustDomain = spiffeid.RequireTrustDomainFromString(podcert.DefaultTrustDomain)

// pod is a pod with its kubelet-written volume and its sidecar: a
// Workload API server on a socket, watching the volume.
type pod struct {
	t     testing.TB
	ca    *podcerttest.Signer
	who   podcerttest.Pod
	mount *podcerttest.Mount
	srv   *workloadapi.Server
	addr  string
}

// newPod mounts a certificate of who from ca and starts the pod's
// sidecar, until the test ends.
func newPod(t testing.TB, ca *podcerttest.Signer, who podcerttest.Pod) *pod {
	t.Helper()
	mount, err := podcerttest.NewMount(t.TempDir())
	require.NoError(t, err)
	p := &pod{t: t, ca: ca, who: who, mount: mount}
	p.refresh()
	p.srv, err = workloadapi.NewServer(workloadapi.Config{
		Credential:   podcert.SourceConfig{BundlePath: mount.Path("credentialbundle.pem")},
		TrustBundles: []workloadapi.TrustBundle{{TrustDomain: podcert.DefaultTrustDomain, Path: mount.Path("ca.pem")}},
		OnError:      func(err error) { t.Errorf("sidecar of %s: %v", who.Name, err) },
	})
	require.NoError(t, err)
	p.addr = "unix://" + filepath.Join(t.TempDir(), "api.sock")
	l, err := workloadapi.Listen(workloadapi.ListenConfig{Address: p.addr})
	require.NoError(t, err)
	go func() { _ = p.srv.Serve(l) }()
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan error, 1)
	go func() { watched <- p.srv.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-watched)
		p.srv.Stop()
	})
	return p
}

// refresh has the signer issue a new certificate and the kubelet mount
// it, with the signer's trust bundle, in one atomic swap.
func (p *pod) refresh() {
	p.t.Helper()
	bundle, err := p.ca.Issue(p.who)
	require.NoError(p.t, err)
	require.NoError(p.t, p.mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": p.ca.TrustBundle()}))
}

// source returns a go-spiffe X509Source on the pod's socket.
func (p *pod) source(ctx context.Context) *gospiffe.X509Source {
	p.t.Helper()
	src, err := gospiffe.NewX509Source(ctx, gospiffe.WithClientOptions(gospiffe.WithAddr(p.addr)))
	require.NoError(p.t, err)
	p.t.Cleanup(func() { src.Close() })
	return src
}

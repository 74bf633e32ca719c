package spiffe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/x509bundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/spiffetls/tlsconfig"
	"github.com/spiffe/go-spiffe/v2/svid/jwtsvid"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
	gospiffe "github.com/spiffe/go-spiffe/v2/workloadapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// waitFor waits until the source serves an SVID whose leaf cond accepts,
// one update at a time (a minute at most: a guard, not a measure).
func waitFor(t *testing.T, src *gospiffe.X509Source, cond func(*x509svid.SVID) bool) *x509svid.SVID {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		svid, err := src.GetX509SVID()
		require.NoError(t, err)
		if cond(svid) {
			return svid
		}
		require.NoError(t, src.WaitUntilUpdated(ctx), "the source was not updated")
	}
}

// TestX509SourceFollowsRotations: go-spiffe's X509Source receives the pod
// certificate as an X509-SVID with the service account's SPIFFE ID and
// the signer's bundle, then the certificate of the kubelet's next swap,
// then a CA rotation's bundles.
func TestX509SourceFollowsRotations(t *testing.T) {
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	p := newPod(t, ca, podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
	src := p.source(t.Context())

	svid, err := src.GetX509SVID()
	require.NoError(t, err)
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", svid.ID.String())
	mounted, err := podcert.ParseBundle(readFile(t, p.mount.Path("credentialbundle.pem")))
	require.NoError(t, err)
	assert.Equal(t, mounted.Certificate.Leaf.Raw, svid.Certificates[0].Raw)
	bundle, err := src.GetX509BundleForTrustDomain(trustDomain)
	require.NoError(t, err)
	roots, err := podcert.ParseTrustBundle(ca.TrustBundle())
	require.NoError(t, err)
	assert.True(t, bundle.HasX509Authority(roots.Certificates[0]))

	// The kubelet's swap: a new certificate, pushed on the file event.
	first := svid.Certificates[0]
	p.refresh()
	next := waitFor(t, src, func(s *x509svid.SVID) bool { return !s.Certificates[0].Equal(first) })
	mounted, err = podcert.ParseBundle(readFile(t, p.mount.Path("credentialbundle.pem")))
	require.NoError(t, err)
	assert.Equal(t, mounted.Certificate.Leaf.Raw, next.Certificates[0].Raw)
	assert.Equal(t, svid.ID, next.ID)

	// A CA rotation: the next CA joins the bundle, then issues.
	require.NoError(t, ca.StageCA())
	p.refresh()
	waitFor(t, src, func(*x509svid.SVID) bool {
		b, err := src.GetX509BundleForTrustDomain(trustDomain)
		return err == nil && len(b.X509Authorities()) == 2
	})
	ca.PromoteCA()
	p.refresh()
	staged, err := podcert.ParseTrustBundle(ca.TrustBundle())
	require.NoError(t, err)
	newRoot := staged.Certificates[1]
	waitFor(t, src, func(s *x509svid.SVID) bool { return s.Certificates[0].CheckSignatureFrom(newRoot) == nil })
}

// TestJWTSVIDsAreUnimplemented: go-spiffe's client gets a clear
// Unimplemented for JWT-SVIDs.
func TestJWTSVIDsAreUnimplemented(t *testing.T) {
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	p := newPod(t, ca, podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
	client, err := gospiffe.New(t.Context(), gospiffe.WithAddr(p.addr))
	require.NoError(t, err)
	defer client.Close()
	_, err = client.FetchJWTSVID(t.Context(), jwtsvid.Params{Audience: "api"})
	assert.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	assert.ErrorContains(t, err, "X.509-SVIDs only")
	bundles, err := client.FetchX509Bundles(t.Context())
	require.NoError(t, err)
	_, err = bundles.GetX509BundleForTrustDomain(trustDomain)
	require.NoError(t, err)
}

// TestCredentialFolderReadsWithGoSpiffe: the files of SPIFFE's
// filesystem delivery load with go-spiffe's own parsers.
func TestCredentialFolderReadsWithGoSpiffe(t *testing.T) {
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	bundle, err := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: "cart-0", ServiceAccount: "cart"})
	require.NoError(t, err)
	cred, err := podcert.ParseBundle(bundle)
	require.NoError(t, err)
	roots, err := podcert.ParseTrustBundle(ca.TrustBundle())
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, workloadapi.WriteFolder(dir, 0o600, cred, map[string]*podcert.TrustBundle{podcert.DefaultTrustDomain: roots}))
	file := filepath.Join(dir, workloadapi.CredentialFileName)
	svid, err := x509svid.Load(file, file)
	require.NoError(t, err)
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", svid.ID.String())
	b, err := x509bundle.Load(trustDomain, filepath.Join(dir, podcert.DefaultTrustDomain+workloadapi.TrustBundleFileSuffix))
	require.NoError(t, err)
	_, _, err = x509svid.Verify(svid.Certificates, b)
	require.NoError(t, err, "the bundle verifies the SVID")
}

// TestMutualTLSAcrossRotations: two pods, ping and pong, each with its
// sidecar, do mutual TLS with go-spiffe's tlsconfig, each authorizing
// the other's SPIFFE ID, while both certificates are refreshed and the
// CA is rotated (next CA published, then issuing, then the old one
// retired): every handshake, made without pause from start to end,
// succeeds.
func TestMutualTLSAcrossRotations(t *testing.T) {
	ca, err := podcerttest.NewSigner(podcerttest.Config{})
	require.NoError(t, err)
	ping := newPod(t, ca, podcerttest.Pod{Namespace: "shop", Name: "ping-0", ServiceAccount: "ping"})
	pong := newPod(t, ca, podcerttest.Pod{Namespace: "shop", Name: "pong-0", ServiceAccount: "pong"})
	pingSrc, pongSrc := ping.source(t.Context()), pong.source(t.Context())
	pingID := spiffeid.RequireFromString("spiffe://cluster.local/ns/shop/sa/ping")
	pongID := spiffeid.RequireFromString("spiffe://cluster.local/ns/shop/sa/pong")

	// httptest's server would present its own certificate: a server of
	// the test's, on go-spiffe's configuration alone.
	l, err := tls.Listen("tcp", "127.0.0.1:0", tlsconfig.MTLSServerConfig(pongSrc, pongSrc, tlsconfig.AuthorizeID(pingID)))
	require.NoError(t, err)
	srv := &http.Server{ReadHeaderTimeout: time.Minute, ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, err := x509svid.IDFromCert(r.TLS.PeerCertificates[0])
			if err != nil {
				http.Error(w, err.Error(), http.StatusForbidden)
				return
			}
			_, _ = io.WriteString(w, id.String())
		})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	url := "https://" + l.Addr().String()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsconfig.MTLSClientConfig(pingSrc, pingSrc, tlsconfig.AuthorizeID(pongID)),
		DisableKeepAlives: true}} // a handshake per request
	call := func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && string(body) != pingID.String() {
			err = errors.New("the server saw " + string(body))
		}
		return err
	}
	require.NoError(t, call())

	// A stranger's client is refused: pong authorizes ping only.
	stranger := newPod(t, ca, podcerttest.Pod{Namespace: "shop", Name: "eve-0", ServiceAccount: "eve"})
	eveSrc := stranger.source(t.Context())
	eve := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsconfig.MTLSClientConfig(eveSrc, eveSrc, tlsconfig.AuthorizeID(pongID))}}
	_, err = eve.Get(url)
	require.Error(t, err)

	// Handshakes without pause while everything rotates.
	var calls, failures atomic.Int64
	var firstFailure atomic.Value
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				calls.Add(1)
				if err := call(); err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
			}
		})
	}
	leaves := func(src *gospiffe.X509Source) *x509.Certificate {
		s, err := src.GetX509SVID()
		require.NoError(t, err)
		return s.Certificates[0]
	}
	// refreshBoth refreshes both pods' certificates and waits until each
	// pod's source serves its new one and holds n roots.
	refreshBoth := func(n int) {
		for _, p := range []struct {
			pod *pod
			src *gospiffe.X509Source
		}{{ping, pingSrc}, {pong, pongSrc}} {
			old := leaves(p.src)
			p.pod.refresh()
			waitFor(t, p.src, func(s *x509svid.SVID) bool {
				b, err := p.src.GetX509BundleForTrustDomain(trustDomain)
				return !s.Certificates[0].Equal(old) && err == nil && len(b.X509Authorities()) == n
			})
			// Handshakes in this state, before the next step.
			for last := calls.Load(); calls.Load() < last+5; {
				runtime.Gosched()
			}
		}
	}
	for range 3 {
		refreshBoth(1)
	}
	require.NoError(t, ca.StageCA())
	refreshBoth(2) // both trust the next CA...
	ca.PromoteCA()
	refreshBoth(2) // ...before either presents a certificate of it
	ca.RetireCA()
	refreshBoth(1)
	refreshBoth(1)
	close(done)
	wg.Wait()
	t.Logf("%d handshakes through 7 refreshes of both certificates and a CA rotation, %d failed", calls.Load(), failures.Load())
	assert.Zero(t, failures.Load(), "first failure: %v", firstFailure.Load())
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

package workloadapi_test

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

// TestFetchX509SVID: the answer is the mounted certificate as an
// X509-SVID (its SPIFFE ID, chain, PKCS#8 key and trust bundle), sent
// when the stream opens and again after the kubelet's refresh.
func TestFetchX509SVID(t *testing.T) {
	e := newEnv(t, true, nil)
	first, err := podcert.ParseBundle(e.publish())
	require.NoError(t, err)
	require.NoError(t, e.srv.Update())
	s := e.svids()
	resp, err := s.Recv()
	require.NoError(t, err)
	require.Len(t, resp.Svids, 1)
	svid := resp.Svids[0]
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", svid.SpiffeId)
	certs, err := x509.ParseCertificates(svid.X509Svid)
	require.NoError(t, err)
	assert.Equal(t, first.Certificate.Leaf.Raw, certs[0].Raw)
	key, err := x509.ParsePKCS8PrivateKey(svid.X509SvidKey)
	require.NoError(t, err)
	assert.True(t, key.(crypto.Signer).Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(certs[0].PublicKey))
	roots, err := x509.ParseCertificates(svid.Bundle)
	require.NoError(t, err)
	trust, err := podcert.ParseTrustBundle(e.ca.TrustBundle())
	require.NoError(t, err)
	assert.Equal(t, trust.Certificates[0].Raw, roots[0].Raw)
	assert.Empty(t, resp.FederatedBundles)

	// The kubelet refreshes the certificate: the stream sends it.
	next := e.publish()
	require.NoError(t, e.srv.Update())
	assert.Equal(t, leafOf(t, next).Raw, recvLeaf(t, s).Raw)
	st := e.srv.Status()
	assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", st.SPIFFEID.String())
	assert.Equal(t, 1, st.Clients)
	assert.Equal(t, uint64(2), st.Pushed)
	assert.Equal(t, []string{"cluster.local"}, st.TrustDomains)
	assert.Empty(t, e.reported())
}

// TestWatchFollowsFileEvents: with Watch running, the kubelet's swap of
// the volume is what makes the stream send the new certificate (no
// Update call, no polling interval).
func TestWatchFollowsFileEvents(t *testing.T) {
	e := newEnv(t, true, nil)
	ctx, cancel := context.WithCancel(t.Context())
	watched := make(chan error, 1)
	go func() { watched <- e.srv.Watch(ctx) }()
	s := e.svids()
	recvLeaf(t, s)
	for range 3 {
		next := e.publish()
		assert.Equal(t, leafOf(t, next).Raw, recvLeaf(t, s).Raw)
	}
	cancel()
	require.NoError(t, <-watched)
}

// TestBrokenFilesAreNeverServed: a torn bundle, a key that is not the
// chain's and a file over the limit each leave the last good identity in
// service, reported and counted; the next good one is what the stream
// sends next.
func TestBrokenFilesAreNeverServed(t *testing.T) {
	e := newEnv(t, true, nil)
	s := e.svids()
	first := recvLeaf(t, s)
	good, err := e.ca.Issue(pod)
	require.NoError(t, err)
	other, err := e.ca.Issue(pod)
	require.NoError(t, err)
	keyOf := func(b []byte) []byte { blk, _ := pem.Decode(b); return pem.EncodeToMemory(blk) }
	chainOf := func(b []byte) []byte { _, rest := pem.Decode(b); return rest }
	trust := e.ca.TrustBundle()
	for i, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{name: "torn", data: good[:len(good)/2], want: podcert.ErrInvalidBundle},
		{name: "key of another chain", data: append(keyOf(other), chainOf(good)...), want: podcert.ErrInvalidBundle},
		{name: "over the limit", data: make([]byte, podcert.MaxBundleSize+1), want: podcert.ErrLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.write(map[string][]byte{"credentialbundle.pem": tc.data, "ca.pem": trust})
			err := e.srv.Update()
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, first.NotAfter, e.srv.Status().NotAfter, "the first certificate is still the one served")
			require.Len(t, e.reported(), i+1)
			assert.ErrorIs(t, e.reported()[i], tc.want)
			assert.Equal(t, uint64(i+1), e.srv.Status().Errors)
			require.NoError(t, e.srv.Ready(), "the last good identity is still served")
		})
	}
	e.write(map[string][]byte{"credentialbundle.pem": good, "ca.pem": trust})
	require.NoError(t, e.srv.Update())
	assert.Equal(t, leafOf(t, good).Raw, recvLeaf(t, s).Raw, "the next answer is the next good certificate")
}

// TestSecurityHeaderRequired: every call without the security header is
// refused with InvalidArgument; the JWT and WIT calls, with it, are
// Unimplemented.
func TestSecurityHeaderRequired(t *testing.T) {
	e := newEnv(t, true, nil)
	c := e.client()
	ctx := t.Context()
	calls := map[string]func(ctx context.Context) error{
		"FetchX509SVID": func(ctx context.Context) error {
			s, err := c.FetchX509SVID(ctx, &workload.X509SVIDRequest{})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
		"FetchX509Bundles": func(ctx context.Context) error {
			s, err := c.FetchX509Bundles(ctx, &workload.X509BundlesRequest{})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
		"FetchJWTSVID": func(ctx context.Context) error {
			_, err := c.FetchJWTSVID(ctx, &workload.JWTSVIDRequest{Audience: []string{"x"}})
			return err
		},
		"FetchJWTBundles": func(ctx context.Context) error {
			s, err := c.FetchJWTBundles(ctx, &workload.JWTBundlesRequest{})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
		"ValidateJWTSVID": func(ctx context.Context) error {
			_, err := c.ValidateJWTSVID(ctx, &workload.ValidateJWTSVIDRequest{Audience: "x", Svid: "y"})
			return err
		},
		"FetchWITSVID": func(ctx context.Context) error {
			s, err := c.FetchWITSVID(ctx, &workload.WITSVIDRequest{})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
		"FetchWITBundles": func(ctx context.Context) error {
			s, err := c.FetchWITBundles(ctx, &workload.WITBundlesRequest{})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call(ctx)
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			assert.Contains(t, status.Convert(err).Message(), "security header")
			switch name {
			case "FetchX509SVID", "FetchX509Bundles":
				require.NoError(t, call(withHeader(ctx)))
			default:
				err := call(withHeader(ctx))
				assert.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
			}
		})
	}
}

// TestMaxClients: streams over Config.MaxClients are refused; one that
// ends frees its place.
func TestMaxClients(t *testing.T) {
	e := newEnv(t, true, func(c *workloadapi.Config) { c.MaxClients = 1 })
	ctx, cancel := context.WithCancel(withHeader(t.Context()))
	first, err := e.client().FetchX509SVID(ctx, &workload.X509SVIDRequest{})
	require.NoError(t, err)
	_, err = first.Recv()
	require.NoError(t, err)
	second := e.svids()
	_, err = second.Recv()
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	cancel()
	_, err = first.Recv()
	require.Equal(t, codes.Canceled, status.Code(err))
	for e.srv.Status().Clients != 0 { // until the server sees the first stream end
		runtime.Gosched()
	}
	_, err = e.svids().Recv()
	require.NoError(t, err)
}

// TestNoIdentityYet: a server started before the kubelet mounted the
// certificate is not ready, answers bundles, holds FetchX509SVID streams
// open, and serves the certificate as soon as it is there.
func TestNoIdentityYet(t *testing.T) {
	e := newEnv(t, false, nil)
	require.ErrorIs(t, e.srv.Ready(), workloadapi.ErrNoIdentity)
	assert.Len(t, e.reported(), 2, "the missing files are reported")
	require.ErrorIs(t, e.srv.Update(), os.ErrNotExist)
	require.ErrorIs(t, e.srv.Update(), os.ErrNotExist)
	assert.Len(t, e.reported(), 2, "and once: the same failure is not reported on every event")
	s := e.svids()
	bundle := e.publish()
	require.NoError(t, e.srv.Update())
	assert.Equal(t, leafOf(t, bundle).Raw, recvLeaf(t, s).Raw)
	require.NoError(t, e.srv.Ready())
	b, err := e.client().FetchX509Bundles(withHeader(t.Context()), &workload.X509BundlesRequest{})
	require.NoError(t, err)
	resp, err := b.Recv()
	require.NoError(t, err)
	assert.Contains(t, resp.Bundles, "spiffe://cluster.local")
}

// TestCARotation: a certificate of a CA the trust bundle does not hold yet
// is refused (peers would refuse it); published in the bundle first, the
// next CA's certificates are served, and the bundle streams follow each
// step.
func TestCARotation(t *testing.T) {
	e := newEnv(t, true, nil)
	s := e.svids()
	recvLeaf(t, s)
	bundles, err := e.client().FetchX509Bundles(withHeader(t.Context()), &workload.X509BundlesRequest{})
	require.NoError(t, err)
	countRoots := func() int {
		resp, err := bundles.Recv()
		require.NoError(t, err)
		certs, err := x509.ParseCertificates(resp.Bundles["spiffe://cluster.local"])
		require.NoError(t, err)
		return len(certs)
	}
	assert.Equal(t, 1, countRoots())

	// Misordered: the next CA issues before the bundle holds it.
	oldTrust := e.ca.TrustBundle()
	require.NoError(t, e.ca.StageCA())
	e.ca.PromoteCA()
	early, err := e.ca.Issue(pod)
	require.NoError(t, err)
	e.write(map[string][]byte{"credentialbundle.pem": early, "ca.pem": oldTrust})
	require.ErrorIs(t, e.srv.Update(), workloadapi.ErrRefused)

	// The bundle catches up: the same certificate is served now.
	e.write(map[string][]byte{"credentialbundle.pem": early, "ca.pem": e.ca.TrustBundle()})
	require.NoError(t, e.srv.Update())
	assert.Equal(t, leafOf(t, early).Raw, recvLeaf(t, s).Raw)
	assert.Equal(t, 2, countRoots())

	e.ca.RetireCA()
	e.publish()
	require.NoError(t, e.srv.Update())
	recvLeaf(t, s)
	assert.Equal(t, 1, countRoots())
}

// TestFederatedBundles: the bundles of other trust domains go with the
// SVID as federated bundles, never merged into its own.
func TestFederatedBundles(t *testing.T) {
	other, err := podcerttest.NewSigner(podcerttest.Config{TrustDomain: "partner.example"})
	require.NoError(t, err)
	var partner string
	e := newEnv(t, true, func(c *workloadapi.Config) {
		partner = filepath.Join(t.TempDir(), "partner.pem")
		require.NoError(t, os.WriteFile(partner, other.TrustBundle(), 0o600))
		c.TrustBundles = append(c.TrustBundles, workloadapi.TrustBundle{TrustDomain: "partner.example", Path: partner})
	})
	resp, err := e.svids().Recv()
	require.NoError(t, err)
	own, err := x509.ParseCertificates(resp.Svids[0].Bundle)
	require.NoError(t, err)
	assert.Len(t, own, 1)
	require.Contains(t, resp.FederatedBundles, "spiffe://partner.example")
	fed, err := x509.ParseCertificates(resp.FederatedBundles["spiffe://partner.example"])
	require.NoError(t, err)
	partnerRoots, err := podcert.ParseTrustBundle(other.TrustBundle())
	require.NoError(t, err)
	assert.Equal(t, partnerRoots.Certificates[0].Raw, fed[0].Raw)
	assert.Equal(t, []string{"cluster.local", "partner.example"}, e.srv.Status().TrustDomains)
}

// TestGracefulStop: stopping ends the streams with Unavailable, which
// clients retry, and returns.
func TestGracefulStop(t *testing.T) {
	e := newEnv(t, true, nil)
	s := e.svids()
	recvLeaf(t, s)
	e.srv.GracefulStop()
	_, err := s.Recv()
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
}

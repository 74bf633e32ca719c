package grpcserver_test

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
	"k8s.io/externaljwt/apis/v1alpha1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
)

// serve starts a server for ring on a socket in a temporary directory and
// returns a connection to it. Probes are off unless cfg sets them.
func serve(t testing.TB, cfg grpcserver.Config) *grpc.ClientConn {
	t.Helper()
	_, conn := start(t, cfg)
	return conn
}

// start is serve that returns the server too.
func start(t testing.TB, cfg grpcserver.Config) (*grpcserver.Server, *grpc.ClientConn) {
	t.Helper()
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = -1 // no probe signature beside the test's own requests
	}
	srv, err := grpcserver.NewServer(cfg)
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "signer.sock")
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Stop()
		assert.NoError(t, <-done)
	})
	return srv, dial(t, sock)
}

// dial connects to a socket as kube-apiserver does.
func dial(t testing.TB, address string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///signer",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", address)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<20)),
	)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestServerV1(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	legacy, err := ring.AddVerifyOnly(excluded(t, key("rsa2048").Public()))
	require.NoError(t, err)
	var mu sync.Mutex
	var events []grpcserver.Event
	client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: ring, OnRequest: func(e grpcserver.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}}))
	ctx := t.Context()

	md, err := client.Metadata(ctx, &externaljwtv1.MetadataRequest{})
	require.NoError(t, err)
	assert.Equal(t, int64(24*3600), md.MaxTokenExpirationSeconds)

	keys, err := client.FetchKeys(ctx, &externaljwtv1.FetchKeysRequest{})
	require.NoError(t, err)
	assert.Equal(t, int64(60), keys.RefreshHintSeconds)
	assert.Equal(t, ring.KeySet().DataTimestamp, keys.DataTimestamp.AsTime())
	require.Len(t, keys.Keys, 2)
	assert.Equal(t, ring.Primary().KeyID, keys.Keys[0].KeyId)
	assert.Equal(t, der(t, key("p256").Public()), keys.Keys[0].Key)
	assert.False(t, keys.Keys[0].ExcludeFromOidcDiscovery)
	assert.Equal(t, legacy.KeyID, keys.Keys[1].KeyId)
	assert.True(t, keys.Keys[1].ExcludeFromOidcDiscovery)
	_, err = x509.ParsePKIXPublicKey(keys.Keys[1].Key)
	require.NoError(t, err)

	claims := encodeClaims(testClaims(clk.Now(), time.Hour))
	resp, err := client.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: claims})
	require.NoError(t, err)
	_, err = validate(t, ring.KeySet(), resp.Header+"."+claims+"."+resp.Signature, clk.Now())
	require.NoError(t, err)

	// A rotation shows in the next answer.
	staged, err := ring.Stage(key("p384"), "")
	require.NoError(t, err)
	keys, err = client.FetchKeys(ctx, &externaljwtv1.FetchKeysRequest{})
	require.NoError(t, err)
	require.Len(t, keys.Keys, 3)
	assert.Equal(t, staged.KeyID, keys.Keys[2].KeyId)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, events, 4)
	assert.Equal(t, "Metadata", events[0].Method)
	assert.Equal(t, "v1", events[0].APIVersion)
	assert.Equal(t, codes.OK, events[0].Code)
	assert.Equal(t, "FetchKeys", events[1].Method)
	assert.Equal(t, "Sign", events[2].Method)
	assert.Equal(t, ring.Primary().KeyID, events[2].KeyID)
	assert.Equal(t, codes.OK, events[2].Code)
	assert.NoError(t, events[2].Err)
}

// TestServerV1Alpha1: kube-apiserver 1.32 and 1.33 get the same answers.
func TestServerV1Alpha1(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("rsa2048"))
	client := v1alpha1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: ring}))
	ctx := t.Context()

	md, err := client.Metadata(ctx, &v1alpha1.MetadataRequest{})
	require.NoError(t, err)
	assert.Equal(t, int64(24*3600), md.MaxTokenExpirationSeconds)
	keys, err := client.FetchKeys(ctx, &v1alpha1.FetchKeysRequest{})
	require.NoError(t, err)
	require.Len(t, keys.Keys, 1)
	assert.Equal(t, ring.Primary().KeyID, keys.Keys[0].KeyId)
	claims := encodeClaims(testClaims(clk.Now(), time.Hour))
	resp, err := client.Sign(ctx, &v1alpha1.SignJWTRequest{Claims: claims})
	require.NoError(t, err)
	_, err = validate(t, ring.KeySet(), resp.Header+"."+claims+"."+resp.Signature, clk.Now())
	require.NoError(t, err)

	_, err = client.Sign(ctx, &v1alpha1.SignJWTRequest{Claims: "e30"})
	assert.Equal(t, codes.InvalidArgument, status.Code(err))
}

// TestServerErrors: bad claims are InvalidArgument, a failing key
// Unavailable, a signature that does not verify Internal; each message
// says why.
func TestServerErrors(t *testing.T) {
	clk := newClock()
	p256 := key("p256")
	kmsDown := errors.New("kms: key version disabled")
	tests := []struct {
		name     string
		ring     *extsigner.Ring
		claims   string
		wantCode codes.Code
		wantMsg  string
	}{
		{name: "empty claims", ring: newRing(t, clk, p256), claims: "", wantCode: codes.InvalidArgument, wantMsg: "claims empty"},
		{name: "not base64url", ring: newRing(t, clk, p256), claims: "e30=", wantCode: codes.InvalidArgument, wantMsg: "base64url"},
		{name: "not an object", ring: newRing(t, clk, p256), claims: b64("[]"), wantCode: codes.InvalidArgument, wantMsg: "not a JSON object"},
		{name: "no exp", ring: newRing(t, clk, p256), claims: b64("{}"), wantCode: codes.InvalidArgument, wantMsg: "exp"},
		{name: "KMS fails", ring: newRing(t, clk, failingSigner(p256.Public(), kmsDown)), claims: encodeClaims(testClaims(clk.Now(), time.Hour)), wantCode: codes.Unavailable, wantMsg: "kms: key version disabled"},
		{name: "another key signs", ring: newRing(t, clk, extsigner.SignerFunc(p256.Public(), func(_ context.Context, d []byte, o crypto.SignerOpts) ([]byte, error) {
			return key("p256-other").Sign(nil, d, o)
		})), claims: encodeClaims(testClaims(clk.Now(), time.Hour)), wantCode: codes.Internal, wantMsg: "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: tt.ring}))
			resp, err := client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: tt.claims})
			assert.Nil(t, resp)
			st, ok := status.FromError(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tt.wantCode, st.Code())
			assert.Contains(t, st.Message(), tt.wantMsg)
			assert.True(t, strings.HasPrefix(st.Message(), "extsigner: "), st.Message())
		})
	}
}

// TestServerContextEnds: a KMS call waiting when kube-apiserver gives up
// is abandoned with the request.
func TestServerContextEnds(t *testing.T) {
	clk := newClock()
	started := make(chan struct{})
	ended := make(chan error, 1)
	signer := extsigner.SignerFunc(key("p256").Public(), func(ctx context.Context, _ []byte, _ crypto.SignerOpts) ([]byte, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: newRing(t, clk, signer)}))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := client.Sign(ctx, &externaljwtv1.SignJWTRequest{Claims: encodeClaims(testClaims(clk.Now(), time.Hour))})
	assert.Equal(t, codes.Canceled, status.Code(err))
	assert.ErrorIs(t, <-ended, context.Canceled, "the KMS call saw the request end")
}

// TestServerRequestLimit: a request of MaxRequestBytes is read (and its
// claims, too long for a token, refused as InvalidArgument); a larger one
// is refused by gRPC before it is decoded.
func TestServerRequestLimit(t *testing.T) {
	clk := newClock()
	client := externaljwtv1.NewExternalJWTSignerClient(serve(t, grpcserver.Config{Ring: newRing(t, clk, key("p256"))}))
	// A SignJWTRequest is a tag byte, a varint length (three bytes here)
	// and the claims.
	const overhead = 1 + 3
	at := strings.Repeat("A", grpcserver.MaxRequestBytes-overhead)
	_, err := client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: at})
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)

	_, err = client.Sign(t.Context(), &externaljwtv1.SignJWTRequest{Claims: at + "A"})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Equal(t, extsigner.MaxTokenBytes+64, grpcserver.MaxRequestBytes)
}

func TestNewServerConfig(t *testing.T) {
	_, err := grpcserver.NewServer(grpcserver.Config{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.EqualError(t, err, "grpcserver: Config.Ring is required")
}

// TestServerOptions: the documented limits of the server, as a gRPC
// server of the caller's gets them.
func TestServerOptions(t *testing.T) {
	assert.Equal(t, 16, grpcserver.StreamWorkersPerCPU)
	assert.Len(t, grpcserver.ServerOptions(), 2, "the request limit and the workers")
	assert.Equal(t, "v1", grpcserver.APIVersionV1)
	assert.Equal(t, "v1alpha1", grpcserver.APIVersionV1Alpha1)
}

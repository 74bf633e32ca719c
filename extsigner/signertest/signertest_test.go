package signertest_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/jwks"
)

// ours starts ksa's signer on a socket and returns its address.
func ours(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: []extsigner.RingKey{{Signer: k, Role: extsigner.RolePrimary}}})
	require.NoError(t, err)
	legacy, err := otherPublic(t)
	require.NoError(t, err)
	_, err = ring.AddVerifyOnly(jwks.Key{KeyID: "legacy", Public: legacy, ExcludeFromDiscovery: true})
	require.NoError(t, err)
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: ring})
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "signer.sock")
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	require.NoError(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return sock
}

func TestOurs(t *testing.T) {
	for _, version := range []string{"", grpcserver.APIVersionV1, grpcserver.APIVersionV1Alpha1} {
		t.Run("version "+version, func(t *testing.T) {
			report, err := signertest.Run(t.Context(), signertest.Config{Address: ours(t), APIVersion: version})
			require.NoError(t, err)
			require.NoError(t, report.Err(), report.String())
			for _, res := range report.Results {
				assert.Empty(t, res.Skipped, res.Check)
			}
			assert.Len(t, report.Results, 16)
			assert.Equal(t, 24*time.Hour, report.MaxTokenLifetime)
			assert.Len(t, report.KeySet.Keys, 2)
			assert.Equal(t, 3, strings.Count(report.Token, ".")+1)
			assert.Empty(t, report.Failed(signertest.LevelKubernetes))
			assert.Empty(t, report.Failed(signertest.LevelStrict))
		})
	}
}

// toy is a signer with switchable faults, built on a fixed key.
type toy struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	key         *ecdsa.PrivateKey
	kid         string
	stdBase64   bool   // encode header and signature with the standard alphabet
	signKID     string // kid written in headers, if not kid
	typ         string
	otherKey    bool // sign with a key that is not published
	checkClaims bool
	exclude     bool // publish the key as excluded from discovery
	maxSeconds  int64
	movingStamp atomic.Int64
	unavailable bool
	notPKIX     bool // publish bytes that are not a PKIX public key
}

func (s *toy) Sign(_ context.Context, req *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	if s.unavailable {
		return nil, errors.New("down")
	}
	if s.checkClaims {
		if _, err := extsigner.CheckClaims(req.Claims); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
	}
	enc := base64.RawURLEncoding
	if s.stdBase64 {
		enc = base64.RawStdEncoding
	}
	kid := s.kid
	if s.signKID != "" {
		kid = s.signKID
	}
	typ := "JWT"
	if s.typ != "" {
		typ = s.typ
	}
	header := enc.EncodeToString([]byte(`{"alg":"ES256","kid":"` + kid + `","typ":"` + typ + `"}`))
	digest := sha256.Sum256([]byte(header + "." + req.Claims))
	signer := s.key
	if s.otherKey {
		signer, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	for {
		r, ss, err := ecdsa.Sign(rand.Reader, signer, digest[:])
		if err != nil {
			return nil, err
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
		// The standard alphabet shows only when '+' or '/' comes up.
		if out := enc.EncodeToString(sig); !s.stdBase64 || strings.ContainsAny(out, "+/") {
			return &externaljwtv1.SignJWTResponse{Header: header, Signature: out}, nil
		}
	}
}

func (s *toy) FetchKeys(context.Context, *externaljwtv1.FetchKeysRequest) (*externaljwtv1.FetchKeysResponse, error) {
	der, err := x509.MarshalPKIXPublicKey(s.key.Public())
	if err != nil {
		return nil, err
	}
	if s.notPKIX {
		der = []byte("not DER")
	}
	return &externaljwtv1.FetchKeysResponse{
		Keys:               []*externaljwtv1.Key{{KeyId: s.kid, Key: der, ExcludeFromOidcDiscovery: s.exclude}},
		DataTimestamp:      timestamppb.New(time.Unix(1_800_000_000+s.movingStamp.Add(1), 0)),
		RefreshHintSeconds: 60,
	}, nil
}

func (s *toy) Metadata(context.Context, *externaljwtv1.MetadataRequest) (*externaljwtv1.MetadataResponse, error) {
	return &externaljwtv1.MetadataResponse{MaxTokenExpirationSeconds: s.maxSeconds}, nil
}

func serveToy(t *testing.T, s *toy) string {
	t.Helper()
	g := grpc.NewServer()
	externaljwtv1.RegisterExternalJWTSignerServer(g, s)
	sock := filepath.Join(t.TempDir(), "toy.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return sock
}

// TestToys: the harness tells faults kube-apiserver catches from the ones
// it lets through.
func TestToys(t *testing.T) {
	// Every toy signs whatever it is given and moves its data timestamp.
	lenient := []string{signertest.CheckStableTimestamp, signertest.CheckClaimsEmpty, signertest.CheckClaimsPadded,
		signertest.CheckClaimsAlphabet, signertest.CheckClaimsNotObject, signertest.CheckClaimsOversized, signertest.CheckClaimsLateExp}
	tests := []struct {
		name       string
		toy        *toy
		wantKube   []string
		wantStrict []string
	}{
		{name: "only lenient", toy: &toy{}, wantStrict: lenient},
		{name: "checks claims", toy: &toy{checkClaims: true}, wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckClaimsLateExp}},
		// kube-apiserver decodes the header (here the same in both alphabets)
		// but not the signature: its tokens fail validation later.
		{name: "standard base64", toy: &toy{stdBase64: true, checkClaims: true}, wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckSignature, signertest.CheckToken, signertest.CheckClaimsLateExp}},
		{name: "standard base64 in the header", toy: &toy{stdBase64: true, signKID: "toy>>>1", checkClaims: true}, wantKube: []string{signertest.CheckSign}, wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckClaimsLateExp}},
		{name: "typ jwt", toy: &toy{typ: "jwt", checkClaims: true}, wantKube: []string{signertest.CheckSign}, wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckClaimsLateExp}},
		{name: "kid not published", toy: &toy{signKID: "elsewhere", checkClaims: true}, wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckKeyPublished, signertest.CheckClaimsLateExp}},
		{name: "signs with another key", toy: &toy{otherKey: true, checkClaims: true}, wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckSignature, signertest.CheckToken, signertest.CheckClaimsLateExp}},
		{name: "key excluded from discovery", toy: &toy{exclude: true, checkClaims: true}, wantKube: []string{signertest.CheckSign}, wantStrict: []string{signertest.CheckFetchKeysStrict, signertest.CheckStableTimestamp, signertest.CheckClaimsLateExp}},
		{name: "lifetime below ten minutes", toy: &toy{maxSeconds: 599, checkClaims: true}, wantKube: []string{signertest.CheckMetadata}, wantStrict: []string{signertest.CheckStableTimestamp}},
		{name: "cannot sign", toy: &toy{unavailable: true}, wantKube: []string{signertest.CheckSign}, wantStrict: lenient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			tt.toy.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			require.NoError(t, err)
			tt.toy.kid = "toy-1"
			if tt.toy.maxSeconds == 0 {
				tt.toy.maxSeconds = 3600
			}
			report, err := signertest.Run(t.Context(), signertest.Config{Address: serveToy(t, tt.toy)})
			require.NoError(t, err)
			assert.Equal(t, tt.wantKube, report.Failed(signertest.LevelKubernetes), report.String())
			assert.Equal(t, tt.wantStrict, report.Failed(signertest.LevelStrict), report.String())
			err = report.Err()
			require.Error(t, err)
			assert.Equal(t, len(tt.wantKube) > 0, errors.Is(err, signertest.ErrKubernetes))
			assert.Equal(t, len(tt.wantStrict) > 0, errors.Is(err, signertest.ErrStrict))
			var f *signertest.Failure
			require.ErrorAs(t, err, &f)
		})
	}
}

// TestFailureReasons: each failure says what was wrong, and a refusal
// kube-apiserver makes is not counted again among the stricter checks.
func TestFailureReasons(t *testing.T) {
	tests := []struct {
		name       string
		toy        *toy
		want       string
		wantStrict []string
	}{
		{
			name: "lifetime below ten minutes", toy: &toy{maxSeconds: 599, checkClaims: true},
			want:       "FAIL kubernetes metadata: metadata: max_token_expiration_seconds 599 is below 600\n",
			wantStrict: []string{signertest.CheckStableTimestamp},
		},
		{
			name: "key not PKIX", toy: &toy{notPKIX: true, checkClaims: true},
			want:       "FAIL kubernetes fetchkeys: key #0: not a PKIX public key: ",
			wantStrict: []string{signertest.CheckStableTimestamp, signertest.CheckClaimsLateExp},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			tt.toy.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			require.NoError(t, err)
			tt.toy.kid = "toy-1"
			if tt.toy.maxSeconds == 0 {
				tt.toy.maxSeconds = 3600
			}
			report, err := signertest.Run(t.Context(), signertest.Config{Address: serveToy(t, tt.toy)})
			require.NoError(t, err)
			assert.Contains(t, report.String(), tt.want)
			assert.Equal(t, tt.wantStrict, report.Failed(signertest.LevelStrict), report.String())
		})
	}
}

func TestUnreachable(t *testing.T) {
	report, err := signertest.Run(t.Context(), signertest.Config{Address: filepath.Join(t.TempDir(), "nobody.sock"), Timeout: 5 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, []string{signertest.CheckMetadata, signertest.CheckFetchKeys, signertest.CheckSign}, report.Failed(signertest.LevelKubernetes))
	assert.ErrorIs(t, report.Err(), signertest.ErrKubernetes)
}

// TestDefaults: the documented defaults of Config and of the claims Run
// sends.
func TestDefaults(t *testing.T) {
	assert.Equal(t, "https://kubernetes.default.svc.cluster.local", signertest.DefaultIssuer)
	assert.Equal(t, 10*time.Second, signertest.DefaultTimeout)
	assert.Equal(t, 10*time.Minute, signertest.Lifetime, "the least maximum kube-apiserver accepts")
	assert.Equal(t, extsigner.MinMaxTokenLifetime, signertest.Lifetime)
	assert.Equal(t, 4*extsigner.MaxTokenBytes, signertest.OversizedClaimsBytes)
}

func TestRunConfig(t *testing.T) {
	_, err := signertest.Run(t.Context(), signertest.Config{})
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
	_, err = signertest.Run(t.Context(), signertest.Config{Address: "/x", APIVersion: "v2"})
	assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
}

func otherPublic(t *testing.T) (crypto.PublicKey, error) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return k.Public(), nil
}

func TestReportString(t *testing.T) {
	assert.Equal(t, "kubernetes", signertest.LevelKubernetes.String())
	assert.Equal(t, "strict", signertest.LevelStrict.String())
	assert.Equal(t, "Level(7)", signertest.Level(7).String())
	r := &signertest.Report{Results: []signertest.Result{
		{Check: "metadata", Level: signertest.LevelKubernetes, Err: &signertest.Failure{Check: "metadata", Level: signertest.LevelKubernetes, Err: errors.New("down")}},
		{Check: "metadata/range", Level: signertest.LevelStrict, Skipped: "no Metadata answer"},
		{Check: "fetchkeys", Level: signertest.LevelKubernetes},
	}}
	assert.Equal(t, "FAIL kubernetes metadata: down\nSKIP strict     metadata/range: no Metadata answer\nPASS kubernetes fetchkeys\n", r.String())
	assert.EqualError(t, r.Err(), "signertest: metadata (kubernetes): down")
}

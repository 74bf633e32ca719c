package ksa_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/extsigner/signertest"
)

// fixedSigner is an external signer whose answers are set: signertest's
// refusals of a signer's answers are made by running it on one.
type fixedSigner struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	maxSeconds        int64
	keys              []*externaljwtv1.Key
	header, signature string
}

func (s *fixedSigner) Sign(context.Context, *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	return &externaljwtv1.SignJWTResponse{Header: s.header, Signature: s.signature}, nil
}

func (s *fixedSigner) FetchKeys(context.Context, *externaljwtv1.FetchKeysRequest) (*externaljwtv1.FetchKeysResponse, error) {
	return &externaljwtv1.FetchKeysResponse{Keys: s.keys, DataTimestamp: timestamppb.New(time.Unix(1700000000, 0)), RefreshHintSeconds: 60}, nil
}

func (s *fixedSigner) Metadata(context.Context, *externaljwtv1.MetadataRequest) (*externaljwtv1.MetadataResponse, error) {
	return &externaljwtv1.MetadataResponse{MaxTokenExpirationSeconds: s.maxSeconds}, nil
}

// signerReports runs signertest on two signers: one whose answers
// kube-apiserver refuses (Metadata below ten minutes, keys that are not
// PKIX or have no ID, a header with alg none and no signature), one whose
// answers only the stricter checks refuse (Metadata above 2^32 seconds, an
// Ed25519 key, a signature by no key).
func signerReports(t *testing.T, pub crypto.PublicKey) (kube, strict *signertest.Report) {
	t.Helper()
	p256, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	ed, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)))
	require.NoError(t, err)
	kube = runSigner(t, &fixedSigner{
		maxSeconds: 10,
		keys:       []*externaljwtv1.Key{{KeyId: "a", Key: []byte{1}}, {KeyId: "", Key: []byte{1}}},
		header:     "eyJhbGciOiJub25lIn0",
	})
	strict = runSigner(t, &fixedSigner{
		maxSeconds: 1 << 33,
		keys:       []*externaljwtv1.Key{{KeyId: "k", Key: p256}, {KeyId: "e", Key: ed}},
		header:     base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"k","typ":"JWT"}`)),
		signature:  "AAAA",
	})
	return kube, strict
}

func runSigner(t *testing.T, s *fixedSigner) *signertest.Report {
	t.Helper()
	g := grpc.NewServer()
	externaljwtv1.RegisterExternalJWTSignerServer(g, s)
	sock := filepath.Join(t.TempDir(), "signer.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	report, err := signertest.Run(t.Context(), signertest.Config{Address: sock})
	require.NoError(t, err)
	return report
}

package cmdksa

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// tokenClients is how many clients ask for tokens at once.
const tokenClients = 8

// BenchmarkTokenRequest measures TokenRequest throughput on a real
// kube-apiserver (the newest release), tokenClients clients at once, for
// four ways of signing, interleaved round by round in one run so that the
// machine's state weighs on all alike:
//
//   - in-process: kube-apiserver signs with its key file;
//   - signer-file: through "ksa signer serve" with a key file;
//   - signer-softhsm: through "ksa signer serve" with the key on a SoftHSM2
//     token;
//   - noop-signer: through a gRPC signer that signs nothing (it answers a
//     constant signature), the floor of any external signer.
//
// All keys are ECDSA P-256 (ES256). Run it with
//
//	go test -run '^$' -bench TokenRequest -benchtime 2000x ./cmdksa/
func BenchmarkTokenRequest(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "ksa")
	if _, _, err := controlplane.Binaries(""); err != nil {
		controlplane.StartForTest(b, controlplane.Config{}) // skips, or fails in CI, saying how to install
	}
	buildKSA(b, bin)
	work := b.TempDir()

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(b, err)
	fileKey := filepath.Join(work, "sa.key")
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(b, err)
	require.NoError(b, os.WriteFile(fileKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	hsm := keystoretest.StartSoftHSM(b)
	hsmRef, _ := storeKey(b, bin, work, hsm.Ref("0b01", "bench"), "--type", "ecdsa")

	fileSock := filepath.Join(b.TempDir(), "file.sock")
	startKeySigner(b, bin, work, fileSock, fileKey)
	hsmSock := filepath.Join(b.TempDir(), "hsm.sock")
	startKeySigner(b, bin, work, hsmSock, hsmRef)
	noopSock := filepath.Join(b.TempDir(), "noop.sock")
	startNoopSigner(b, noopSock)

	planes := []struct {
		name string
		cfg  controlplane.Config
	}{
		{name: "in-process", cfg: controlplane.Config{SigningKey: key}},
		{name: "signer-file", cfg: controlplane.Config{SigningEndpoint: fileSock}},
		{name: "signer-softhsm", cfg: controlplane.Config{SigningEndpoint: hsmSock}},
		{name: "noop-signer", cfg: controlplane.Config{SigningEndpoint: noopSock}},
	}
	requesters := make([]func(context.Context) error, len(planes))
	for i, p := range planes {
		requesters[i] = tokenRequester(b, controlplane.StartForTest(b, p.cfg))
	}
	parallelism := (tokenClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	for range 3 {
		for i, p := range planes {
			b.Run(p.name, func(b *testing.B) {
				b.SetParallelism(parallelism)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := requesters[i](context.Background()); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// tokenRequester makes a service account and a pod on cp and returns a
// function asking for one pod-bound token.
func tokenRequester(b *testing.B, cp *controlplane.ControlPlane) func(context.Context) error {
	b.Helper()
	cs := cp.Clientset()
	ns := cp.Namespace(b)
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(b.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{})
	require.NoError(b, err)
	automount := false
	pod, err := cs.CoreV1().Pods(ns).Create(b.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-0"},
		Spec: corev1.PodSpec{ServiceAccountName: sa.Name, AutomountServiceAccountToken: &automount,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	require.NoError(b, err)
	return func(ctx context.Context) error { return requestToken(ctx, cs, ns, sa.Name, pod) }
}

func requestToken(ctx context.Context, cs kubernetes.Interface, ns, sa string, pod *corev1.Pod) error {
	exp := int64(3600)
	_, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: []string{"vault"}, ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}, metav1.CreateOptions{})
	return err
}

// noopSigner is an external signer that publishes one key and answers
// every Sign with a constant signature: the gRPC round trip and
// kube-apiserver's own work, no signing.
type noopSigner struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	keys   *externaljwtv1.FetchKeysResponse
	header string
}

func (s *noopSigner) Sign(context.Context, *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	return &externaljwtv1.SignJWTResponse{Header: s.header, Signature: base64.RawURLEncoding.EncodeToString(make([]byte, 64))}, nil
}

func (s *noopSigner) FetchKeys(context.Context, *externaljwtv1.FetchKeysRequest) (*externaljwtv1.FetchKeysResponse, error) {
	return s.keys, nil
}

func (s *noopSigner) Metadata(context.Context, *externaljwtv1.MetadataRequest) (*externaljwtv1.MetadataResponse, error) {
	return &externaljwtv1.MetadataResponse{MaxTokenExpirationSeconds: 24 * 3600}, nil
}

// startNoopSigner serves a noopSigner on sock until the benchmark ends.
func startNoopSigner(b *testing.B, sock string) {
	b.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(b, err)
	pub, err := jwks.NewKey(key.Public())
	require.NoError(b, err)
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	require.NoError(b, err)
	s := &noopSigner{
		keys: &externaljwtv1.FetchKeysResponse{
			Keys:               []*externaljwtv1.Key{{KeyId: pub.KeyID, Key: der}},
			DataTimestamp:      timestamppb.Now(),
			RefreshHintSeconds: 60,
		},
		header: base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"` + pub.KeyID + `","typ":"JWT"}`)),
	}
	lis, err := net.Listen("unix", sock)
	require.NoError(b, err)
	srv := grpc.NewServer()
	externaljwtv1.RegisterExternalJWTSignerServer(srv, s)
	go func() { _ = srv.Serve(lis) }()
	b.Cleanup(srv.Stop)
}

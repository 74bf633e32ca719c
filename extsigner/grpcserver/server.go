package grpcserver

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
	"k8s.io/externaljwt/apis/v1alpha1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
)

// MaxRequestBytes is the largest request message the server reads; gRPC
// refuses a larger one with ResourceExhausted before decoding it. It is
// extsigner.MaxTokenBytes and room for the message's framing: claims that
// fit are then refused, if too long, by the ring's Sign with
// InvalidArgument.
const MaxRequestBytes = extsigner.MaxTokenBytes + 64

// The API versions the server answers.
const (
	// APIVersionV1 is k8s.io/externaljwt/apis/v1, which kube-apiserver 1.34
	// and later use.
	APIVersionV1 = "v1"
	// APIVersionV1Alpha1 is k8s.io/externaljwt/apis/v1alpha1, for
	// kube-apiserver 1.32 and 1.33.
	APIVersionV1Alpha1 = "v1alpha1"
)

// Config configures a [Server].
type Config struct {
	// Ring holds the keys. Required.
	Ring *extsigner.Ring
	// OnRequest, when set, is called after every request with what
	// happened. It runs on the request's goroutine before the answer is
	// sent: it must be quick and safe for concurrent use.
	OnRequest func(Event)
}

// Event describes one request the server answered.
type Event struct {
	// Method is "Sign", "FetchKeys" or "Metadata".
	Method string
	// APIVersion is APIVersionV1 or APIVersionV1Alpha1.
	APIVersion string
	// KeyID is the key that signed, for a successful Sign.
	KeyID string
	// Code is the gRPC status code answered.
	Code codes.Code
	// Err is the error answered, nil on success: claims refused
	// (extsigner.ErrInvalidClaims) or an *extsigner.SignError.
	Err error
	// Duration is how long the server took to answer.
	Duration time.Duration
}

// Server answers kube-apiserver's ExternalJWTSigner requests (API v1 and
// v1alpha1) from an [extsigner.Ring]: Sign with [extsigner.Ring.Sign],
// FetchKeys with [extsigner.Ring.KeySet], Metadata with the ring's
// MaxTokenLifetime. Errors are answered with a status and a message:
// InvalidArgument for claims Sign refuses, Unavailable for a signing key
// that failed (DeadlineExceeded or Canceled when the request's context
// ended), Internal for a signature that does not verify. It is safe for
// concurrent use.
type Server struct {
	ring      *extsigner.Ring
	onRequest func(Event)
	grpc      *grpc.Server
	fetch     atomic.Pointer[fetchAnswers]
}

// fetchAnswers are the FetchKeys answers of one published key set.
type fetchAnswers struct {
	// stamp is the set's data timestamp, which changes exactly when the
	// set does.
	stamp    time.Time
	v1       *externaljwtv1.FetchKeysResponse
	v1alpha1 *v1alpha1.FetchKeysResponse
}

// NewServer checks the config and returns a server, ready for
// [Server.Serve] or, on a gRPC server of the caller's, [Server.Register].
// Errors are a *ksa.ConfigError.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Ring == nil {
		return nil, &ksa.ConfigError{Field: "grpcserver.Config.Ring", Reason: "is required"}
	}
	s := &Server{ring: cfg.Ring, onRequest: cfg.OnRequest}
	s.grpc = grpc.NewServer(ServerOptions()...)
	s.Register(s.grpc)
	return s, nil
}

// ServerOptions are the gRPC options [Server.Serve] uses: the
// MaxRequestBytes limit on requests, and [StreamWorkersPerCPU] worker
// goroutines per CPU that take requests in turn (a goroutine per request,
// gRPC's default, grows a fresh stack to the depth of a signature every
// time: 5 % of the CPU of ES256 signing over the socket). A caller with a
// gRPC server of its own gives them to grpc.NewServer.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxRequestBytes),
		grpc.NumStreamWorkers(uint32(StreamWorkersPerCPU * runtime.GOMAXPROCS(0))),
	}
}

// StreamWorkersPerCPU is how many goroutines per CPU (GOMAXPROCS) serve
// requests: enough for kube-apiserver's concurrent TokenRequests; a
// request finding all of them busy gets a goroutine of its own.
const StreamWorkersPerCPU = 16

// Register registers the ExternalJWTSigner service, v1 and v1alpha1, on a
// gRPC server (made with [ServerOptions]).
func (s *Server) Register(g grpc.ServiceRegistrar) {
	externaljwtv1.RegisterExternalJWTSignerServer(g, v1Service{s: s})
	v1alpha1.RegisterExternalJWTSignerServer(g, v1alpha1Service{s: s})
}

// Serve answers requests on l (see [extsigner.Listen]) until [Server.Stop] or
// [Server.GracefulStop]; it returns nil then, or the listener's error. It
// may serve several listeners at once.
func (s *Server) Serve(l net.Listener) error {
	err := s.grpc.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// GracefulStop stops accepting connections and returns once the requests
// under way are answered.
func (s *Server) GracefulStop() { s.grpc.GracefulStop() }

// Stop closes every connection and listener at once.
func (s *Server) Stop() { s.grpc.Stop() }

// sign answers a Sign request.
func (s *Server) sign(ctx context.Context, version, claims string) (extsigner.Signed, error) {
	start := s.started()
	signed, err := s.ring.Sign(ctx, claims)
	st := statusOf(err)
	if s.onRequest != nil {
		s.onRequest(Event{Method: "Sign", APIVersion: version, KeyID: signed.KeyID, Code: status.Code(st), Err: err, Duration: time.Since(start)})
	}
	return signed, st
}

// statusOf turns a Sign error into the status answered.
func statusOf(err error) error {
	var code codes.Code
	switch {
	case err == nil:
		return nil
	case errors.Is(err, extsigner.ErrInvalidClaims):
		code = codes.InvalidArgument
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, extsigner.ErrSignerFailed):
		code = codes.Unavailable
	default: // ErrSelfCheck
		code = codes.Internal
	}
	return status.Error(code, err.Error())
}

// answers returns the FetchKeys answers of the ring's current key set,
// building them once per set.
func (s *Server) answers() *fetchAnswers {
	set := s.ring.KeySet()
	if a := s.fetch.Load(); a != nil && a.stamp.Equal(set.DataTimestamp) {
		return a
	}
	a := &fetchAnswers{
		stamp:    set.DataTimestamp,
		v1:       &externaljwtv1.FetchKeysResponse{DataTimestamp: timestamppb.New(set.DataTimestamp), RefreshHintSeconds: int64(set.RefreshHint / time.Second)},
		v1alpha1: &v1alpha1.FetchKeysResponse{DataTimestamp: timestamppb.New(set.DataTimestamp), RefreshHintSeconds: int64(set.RefreshHint / time.Second)},
	}
	for _, k := range set.Keys {
		der, err := x509.MarshalPKIXPublicKey(k.Public)
		if err != nil {
			continue // unreachable: every ring key was checked
		}
		a.v1.Keys = append(a.v1.Keys, &externaljwtv1.Key{KeyId: k.KeyID, Key: der, ExcludeFromOidcDiscovery: k.ExcludeFromDiscovery})
		a.v1alpha1.Keys = append(a.v1alpha1.Keys, &v1alpha1.Key{KeyId: k.KeyID, Key: der, ExcludeFromOidcDiscovery: k.ExcludeFromDiscovery})
	}
	s.fetch.Store(a)
	return a
}

// started returns the time a request started, when requests are reported.
func (s *Server) started() time.Time {
	if s.onRequest == nil {
		return time.Time{}
	}
	return time.Now()
}

// report reports a FetchKeys or Metadata request, which always succeeds.
func (s *Server) report(method, version string, start time.Time) {
	if s.onRequest != nil {
		s.onRequest(Event{Method: method, APIVersion: version, Code: codes.OK, Duration: time.Since(start)})
	}
}

// maxExpirationSeconds is Metadata's answer.
func (s *Server) maxExpirationSeconds() int64 {
	return int64(s.ring.MaxTokenLifetime() / time.Second)
}

// v1Service is the v1 API.
type v1Service struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	s *Server
}

func (v v1Service) Sign(ctx context.Context, req *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	signed, err := v.s.sign(ctx, APIVersionV1, req.GetClaims())
	if err != nil {
		return nil, err
	}
	return &externaljwtv1.SignJWTResponse{Header: signed.Header, Signature: signed.Signature}, nil
}

func (v v1Service) FetchKeys(context.Context, *externaljwtv1.FetchKeysRequest) (*externaljwtv1.FetchKeysResponse, error) {
	defer v.s.report("FetchKeys", APIVersionV1, v.s.started())
	return v.s.answers().v1, nil
}

func (v v1Service) Metadata(context.Context, *externaljwtv1.MetadataRequest) (*externaljwtv1.MetadataResponse, error) {
	defer v.s.report("Metadata", APIVersionV1, v.s.started())
	return &externaljwtv1.MetadataResponse{MaxTokenExpirationSeconds: v.s.maxExpirationSeconds()}, nil
}

// v1alpha1Service is the v1alpha1 API: the same messages in another
// package.
type v1alpha1Service struct {
	v1alpha1.UnimplementedExternalJWTSignerServer
	s *Server
}

func (v v1alpha1Service) Sign(ctx context.Context, req *v1alpha1.SignJWTRequest) (*v1alpha1.SignJWTResponse, error) {
	signed, err := v.s.sign(ctx, APIVersionV1Alpha1, req.GetClaims())
	if err != nil {
		return nil, err
	}
	return &v1alpha1.SignJWTResponse{Header: signed.Header, Signature: signed.Signature}, nil
}

func (v v1alpha1Service) FetchKeys(context.Context, *v1alpha1.FetchKeysRequest) (*v1alpha1.FetchKeysResponse, error) {
	defer v.s.report("FetchKeys", APIVersionV1Alpha1, v.s.started())
	return v.s.answers().v1alpha1, nil
}

func (v v1alpha1Service) Metadata(context.Context, *v1alpha1.MetadataRequest) (*v1alpha1.MetadataResponse, error) {
	defer v.s.report("Metadata", APIVersionV1Alpha1, v.s.started())
	return &v1alpha1.MetadataResponse{MaxTokenExpirationSeconds: v.s.maxExpirationSeconds()}, nil
}

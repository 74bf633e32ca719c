package grpcserver

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
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
	// happened, and after every probe of the key store. It runs on the
	// request's goroutine before the answer is sent: it must be quick and
	// safe for concurrent use.
	OnRequest func(Event)
	// ProbeInterval is how often, while the server serves, it checks that
	// the ring's key store answers: when no Sign succeeded for that long,
	// it signs a probe (extsigner.Ring.Probe). Zero means
	// DefaultProbeInterval; a negative value turns probes off (health then
	// follows the Sign requests alone). See [Server.Ready].
	ProbeInterval time.Duration
	// Now is the clock of the health checks; nil means time.Now.
	Now func() time.Time
}

// The methods an [Event] reports.
const (
	MethodSign      = "Sign"
	MethodFetchKeys = "FetchKeys"
	MethodMetadata  = "Metadata"
	// MethodProbe is the server's own signature of a fixed input, when no
	// Sign proved recently that the key store answers.
	MethodProbe = "Probe"
)

// Event describes one request the server answered, or one probe.
type Event struct {
	// Method is MethodSign, MethodFetchKeys, MethodMetadata or
	// MethodProbe.
	Method string
	// APIVersion is APIVersionV1 or APIVersionV1Alpha1; empty for a probe.
	APIVersion string
	// RequestID identifies a Sign or a probe: unique in the process, and
	// quoted in the status message of a Sign that fails, which
	// kube-apiserver logs.
	RequestID string
	// KeyID is the key that signed, or that failed, for a Sign or probe.
	KeyID string
	// Subject and TokenID are the sub and jti claims of a Sign that
	// succeeded.
	Subject, TokenID string
	// Code is the gRPC status code answered (for a probe, the code a Sign
	// failing the same way would answer).
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
	ids       requestIDs
	health    *healthState
}

// fetchAnswers are the FetchKeys answers of one published key set.
type fetchAnswers struct {
	set      extsigner.KeySet
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
	s := &Server{ring: cfg.Ring, onRequest: cfg.OnRequest, ids: newRequestIDs()}
	s.health = newHealthState(cfg.ProbeInterval, cfg.Now)
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

// Register registers the ExternalJWTSigner service, v1 and v1alpha1, and
// the standard gRPC health service (grpc.health.v1.Health, see
// [Server.Ready]) on a gRPC server (made with [ServerOptions]). Probes run
// only while [Server.Serve] serves: a caller serving its own gRPC server
// calls [Server.CheckHealth] on a ticker of its own.
func (s *Server) Register(g grpc.ServiceRegistrar) {
	externaljwtv1.RegisterExternalJWTSignerServer(g, v1Service{s: s})
	v1alpha1.RegisterExternalJWTSignerServer(g, v1alpha1Service{s: s})
	healthpb.RegisterHealthServer(g, s.health.grpc)
}

// Serve answers requests on l (see [extsigner.Listen]) until [Server.Stop] or
// [Server.GracefulStop]; it returns nil then, or the listener's error. It
// may serve several listeners at once. While it serves, the key store is
// probed (Config.ProbeInterval): at once, then at each interval.
func (s *Server) Serve(l net.Listener) error {
	s.health.startProbes(s)
	err := s.grpc.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// GracefulStop stops accepting connections and probing, and returns once
// the requests under way are answered.
func (s *Server) GracefulStop() {
	s.health.stopProbes()
	s.grpc.GracefulStop()
}

// Stop stops probing and closes every connection and listener at once.
func (s *Server) Stop() {
	s.health.stopProbes()
	s.grpc.Stop()
}

// sign answers a Sign request.
func (s *Server) sign(ctx context.Context, version, claims string) (extsigner.Signed, error) {
	start := s.started()
	id := s.ids.next()
	signed, err := s.ring.Sign(ctx, claims)
	s.health.record(err)
	st := statusOf(err, id)
	if s.onRequest != nil {
		keyID := signed.KeyID
		var serr *extsigner.SignError
		if errors.As(err, &serr) {
			keyID = serr.KeyID
		}
		s.onRequest(Event{Method: MethodSign, APIVersion: version, RequestID: id.String(), KeyID: keyID, Subject: signed.Subject, TokenID: signed.TokenID,
			Code: status.Code(st), Err: err, Duration: time.Since(start)})
	}
	return signed, st
}

// statusOf turns a Sign error into the status answered; its message names
// the request.
func statusOf(err error, id requestID) error {
	if err == nil {
		return nil
	}
	return status.Error(codeOf(err), err.Error()+" (request "+id.String()+")")
}

// codeOf is the status code of a Sign error.
func codeOf(err error) codes.Code {
	var code codes.Code
	switch {
	case err == nil:
		code = codes.OK
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
	return code
}

// answers returns the FetchKeys answers of the ring's current key set,
// building them once per set.
func (s *Server) answers() *fetchAnswers {
	set := s.ring.KeySet()
	if a := s.fetch.Load(); a != nil && sameSet(a.set, set) {
		return a
	}
	a := &fetchAnswers{
		set:      set,
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

// sameSet reports whether two key sets of the ring answer alike: the same
// data timestamp and refresh hint, and the same keys (key IDs, exclusion
// from discovery, public key values) in the same order.
func sameSet(a, b extsigner.KeySet) bool {
	if !a.DataTimestamp.Equal(b.DataTimestamp) || a.RefreshHint != b.RefreshHint || len(a.Keys) != len(b.Keys) {
		return false
	}
	for i, k := range a.Keys {
		o := b.Keys[i]
		if k.KeyID != o.KeyID || k.ExcludeFromDiscovery != o.ExcludeFromDiscovery {
			return false
		}
		if eq, ok := k.Public.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(o.Public) {
			return false
		}
	}
	return true
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
	defer v.s.report(MethodFetchKeys, APIVersionV1, v.s.started())
	return v.s.answers().v1, nil
}

func (v v1Service) Metadata(context.Context, *externaljwtv1.MetadataRequest) (*externaljwtv1.MetadataResponse, error) {
	defer v.s.report(MethodMetadata, APIVersionV1, v.s.started())
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
	defer v.s.report(MethodFetchKeys, APIVersionV1Alpha1, v.s.started())
	return v.s.answers().v1alpha1, nil
}

func (v v1alpha1Service) Metadata(context.Context, *v1alpha1.MetadataRequest) (*v1alpha1.MetadataResponse, error) {
	defer v.s.report(MethodMetadata, APIVersionV1Alpha1, v.s.started())
	return &v1alpha1.MetadataResponse{MaxTokenExpirationSeconds: v.s.maxExpirationSeconds()}, nil
}

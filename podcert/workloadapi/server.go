package workloadapi

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/spiffe/go-spiffe/v2/proto/spiffe/workload"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
)

// SecurityHeader is the metadata every Workload API request carries, with
// the value "true": a request without it (one a browser or a proxy could
// have been tricked into sending) is refused with InvalidArgument.
const SecurityHeader = "workload.spiffe.io"

// Server serves the SPIFFE Workload API's X.509 calls from a mounted pod
// certificate and trust bundles, streaming a new answer to every client
// on each change ([Server.Update], which [Server.Watch] calls on file
// events). It is safe for concurrent use.
type Server struct {
	cfg  Config
	grpc *grpc.Server
	mu   sync.Mutex // serializes Update
	// problems are the failures of the update under way.
	problems []error
	// firstLoad is the last failure to load each file not loaded yet, by
	// trust domain ("" for the credential).
	firstLoad map[string]string
	src       *podcert.Source
	trust     map[string]*podcert.TrustFile
	state     atomic.Pointer[state]
	// stopped is closed by Stop and GracefulStop: streams end.
	stopped  chan struct{}
	stopOnce sync.Once

	clients, updates, pushed, errors atomic.Uint64
}

// NewServer checks the configuration, loads the files and returns a
// server ready for [Server.Serve] (or, on a gRPC server of the caller's,
// [Server.Register]) and [Server.Watch]. Files that are not there yet or
// do not load are not an error: they are reported to Config.OnError, the
// server serves what it has ([Server.Ready] says whether that includes an
// identity) and loads them when they change. Errors are a
// *ksa.ConfigError.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, trust: map[string]*podcert.TrustFile{}, firstLoad: map[string]string{}, stopped: make(chan struct{})}
	s.cfg.Credential.OnReload = func(err error) {
		if cfg.Credential.OnReload != nil {
			cfg.Credential.OnReload(err)
		}
		s.reportReload(err)
	}
	s.state.Store(&state{next: make(chan struct{})})
	if err := s.Update(); err != nil {
		var ce *ksa.ConfigError
		if errors.As(err, &ce) {
			return nil, ce
		}
	}
	s.grpc = grpc.NewServer(ServerOptions()...)
	s.Register(s.grpc)
	return s, nil
}

// ServerOptions are the gRPC options [Server.Serve] uses: the
// MaxRequestBytes limit on requests and the MaxResponseBytes one on
// answers. A caller with a gRPC server of its own gives them to
// grpc.NewServer.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxRequestBytes), grpc.MaxSendMsgSize(MaxResponseBytes)}
}

// Register registers the SpiffeWorkloadAPI service on a gRPC server
// (made with [ServerOptions]).
func (s *Server) Register(g grpc.ServiceRegistrar) {
	workload.RegisterSpiffeWorkloadAPIServer(g, service{s: s})
}

// Serve answers requests on l (see [Listen]) until [Server.Stop] or
// [Server.GracefulStop]; it returns nil then, or the listener's error.
func (s *Server) Serve(l net.Listener) error {
	err := s.grpc.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// GracefulStop ends the streams (their clients see Unavailable and
// reconnect, to the next server on the socket) and stops the server once
// the requests under way are answered.
func (s *Server) GracefulStop() {
	s.stopOnce.Do(func() { close(s.stopped) })
	s.grpc.GracefulStop()
}

// Stop closes every connection and listener at once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { close(s.stopped) })
	s.grpc.Stop()
}

// checkHeader refuses a request without the security header.
func checkHeader(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(SecurityHeader); len(v) != 1 || v[0] != "true" {
		return status.Error(codes.InvalidArgument, "security header missing from request")
	}
	return nil
}

// admit counts a stream in, or refuses it over Config.MaxClients.
func (s *Server) admit() (release func(), err error) {
	if n := s.clients.Add(1); n > uint64(s.cfg.MaxClients) {
		s.clients.Add(^uint64(0))
		return nil, status.Errorf(codes.ResourceExhausted, "%d clients are connected, the most this server serves", s.cfg.MaxClients)
	}
	return func() { s.clients.Add(^uint64(0)) }, nil
}

// stream sends the answer pick chooses from each state, once per new
// answer, until the client leaves or the server stops.
func stream[T any](ctx context.Context, s *Server, pick func(*state) *T, send func(*T) error) error {
	if err := checkHeader(ctx); err != nil {
		return err
	}
	release, err := s.admit()
	if err != nil {
		return err
	}
	defer release()
	var sent *T
	for st := s.state.Load(); ; st = s.state.Load() {
		if a := pick(st); a != nil && a != sent {
			if err := send(a); err != nil {
				return err
			}
			sent = a
			s.pushed.Add(1)
		}
		select {
		case <-st.next:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.stopped:
			return status.Error(codes.Unavailable, "the server is stopping")
		}
	}
}

// jwtUnimplemented is the answer to the JWT and WIT calls.
var jwtUnimplemented = status.Error(codes.Unimplemented,
	"this Workload API serves X.509-SVIDs only: it is fed by a pod certificate, which is no JWT-SVID (use the pod's projected service-account token for JWTs)")

// service implements SpiffeWorkloadAPI.
type service struct {
	workload.UnimplementedSpiffeWorkloadAPIServer
	s *Server
}

func (v service) FetchX509SVID(_ *workload.X509SVIDRequest, ss grpc.ServerStreamingServer[workload.X509SVIDResponse]) error {
	return stream(ss.Context(), v.s, func(st *state) *workload.X509SVIDResponse { return st.svid }, ss.Send)
}

func (v service) FetchX509Bundles(_ *workload.X509BundlesRequest, ss grpc.ServerStreamingServer[workload.X509BundlesResponse]) error {
	return stream(ss.Context(), v.s, func(st *state) *workload.X509BundlesResponse { return st.x509Bundles }, ss.Send)
}

func (v service) FetchJWTSVID(ctx context.Context, _ *workload.JWTSVIDRequest) (*workload.JWTSVIDResponse, error) {
	if err := checkHeader(ctx); err != nil {
		return nil, err
	}
	return nil, jwtUnimplemented
}

func (v service) FetchJWTBundles(_ *workload.JWTBundlesRequest, ss grpc.ServerStreamingServer[workload.JWTBundlesResponse]) error {
	if err := checkHeader(ss.Context()); err != nil {
		return err
	}
	return jwtUnimplemented
}

func (v service) ValidateJWTSVID(ctx context.Context, _ *workload.ValidateJWTSVIDRequest) (*workload.ValidateJWTSVIDResponse, error) {
	if err := checkHeader(ctx); err != nil {
		return nil, err
	}
	return nil, jwtUnimplemented
}

func (v service) FetchWITSVID(_ *workload.WITSVIDRequest, ss grpc.ServerStreamingServer[workload.WITSVIDResponse]) error {
	if err := checkHeader(ss.Context()); err != nil {
		return err
	}
	return jwtUnimplemented
}

func (v service) FetchWITBundles(_ *workload.WITBundlesRequest, ss grpc.ServerStreamingServer[workload.WITBundlesResponse]) error {
	if err := checkHeader(ss.Context()); err != nil {
		return err
	}
	return jwtUnimplemented
}

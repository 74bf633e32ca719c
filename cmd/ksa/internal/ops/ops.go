// Package ops serves what an operator's tooling asks of a long-running ksa
// command (the external signer, the pod-certificate signer) over HTTP:
//
//	# path       answer
//	/healthz     200 while the process serves: a liveness probe
//	/readyz      200 when the command's readiness check passes, else 503
//	             with its reason: a readiness probe
//	/metrics     the Prometheus text format of the command's metrics
//
// The listener is separate from the command's own socket, off unless an
// address is given, and meant for the node's or the pod's network: bind
// it to loopback or a pod IP, not to every interface of a control-plane
// host.
package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures a [Server]. Addr is required.
type Config struct {
	// Addr is the TCP address to listen on, e.g. "127.0.0.1:9090"; a port
	// of 0 picks a free one (see Server.Addr).
	Addr string
	// Ready reports whether the command can do its work now (nil), or why
	// not. Nil means always ready.
	Ready func(ctx context.Context) error
	// Gatherer holds the metrics /metrics serves. Nil serves none.
	Gatherer prometheus.Gatherer
	// Log receives the server's own failures. Nil discards them.
	Log *slog.Logger
}

// ReadyTimeout bounds one readiness check.
const ReadyTimeout = 5 * time.Second

// Server is a started ops listener.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen binds cfg.Addr; Serve then answers on it.
func Listen(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		return nil, errors.New("no address to listen on")
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if cfg.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
			defer cancel()
			if err := cfg.Ready(ctx); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	gatherer := cfg.Gatherer
	if gatherer == nil {
		gatherer = prometheus.NewRegistry()
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError)}))
	return &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers until ctx ends, then lets requests under way finish (at
// most five seconds). It returns nil after ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(shutdown)
}

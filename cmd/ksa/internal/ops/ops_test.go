package ops_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/ops"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "ksa_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)
	var notReady error = errors.New("the key store has not answered yet")
	s, err := ops.Listen(ops.Config{Addr: "127.0.0.1:0", Gatherer: reg, Ready: func(context.Context) error { return notReady }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	base := "http://" + s.Addr()

	for _, tc := range []struct {
		name     string
		path     string
		ready    error
		wantCode int
		wantBody string
	}{
		{name: "alive", path: "/healthz", ready: notReady, wantCode: http.StatusOK, wantBody: "ok"},
		{name: "not ready", path: "/readyz", ready: notReady, wantCode: http.StatusServiceUnavailable, wantBody: "not ready: the key store has not answered yet"},
		{name: "ready", path: "/readyz", wantCode: http.StatusOK, wantBody: "ok"},
		{name: "metrics", path: "/metrics", wantCode: http.StatusOK, wantBody: "ksa_test_total 3"},
		{name: "nothing else", path: "/", wantCode: http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notReady = tc.ready
			code, body := get(t, base+tc.path)
			assert.Equal(t, tc.wantCode, code)
			assert.Contains(t, body, tc.wantBody)
		})
	}
	cancel()
	require.NoError(t, <-done)
}

func TestListenRefuses(t *testing.T) {
	_, err := ops.Listen(ops.Config{})
	require.Error(t, err)
	_, err = ops.Listen(ops.Config{Addr: "127.0.0.1:-1"})
	require.Error(t, err)
}

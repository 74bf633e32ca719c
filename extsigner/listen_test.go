//go:build linux

package extsigner_test

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/grpcserver"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/internal/errs"
)

// serveOn serves a new server for a new ring on l until the test ends.
func serveOn(t *testing.T, l net.Listener) {
	t.Helper()
	srv, err := grpcserver.NewServer(grpcserver.Config{Ring: newRing(t, newClock(), key("p256"))})
	require.NoError(t, err)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
}

// dial connects to a socket as kube-apiserver does.
func dial(t testing.TB, address string) *grpc.ClientConn {
	t.Helper()
	conn, err := signertest.Dial(address)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func metadata(t *testing.T, address string) error {
	t.Helper()
	client := externaljwtv1.NewExternalJWTSignerClient(dial(t, address))
	_, err := client.Metadata(t.Context(), &externaljwtv1.MetadataRequest{})
	return err
}

func TestListenSocketFile(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "signer.sock")

	// A socket left behind by a signer that is gone is replaced.
	stale, err := net.Listen("unix", sock)
	require.NoError(t, err)
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, stale.Close())
	_, err = os.Lstat(sock)
	require.NoError(t, err, "the stale socket file is there")

	l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	require.NoError(t, err)
	fi, err := os.Lstat(sock)
	require.NoError(t, err)
	assert.Equal(t, extsigner.DefaultSocketMode, fi.Mode().Perm())
	assert.Equal(t, fs.FileMode(0o600), extsigner.DefaultSocketMode)
	serveOn(t, l)
	require.NoError(t, metadata(t, sock))

	// A live one is not taken over.
	_, err = extsigner.Listen(extsigner.ListenConfig{Address: sock})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.ErrorIs(t, err, syscall.EADDRINUSE)

	// Nor is a file that is not a socket.
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("keep me"), 0o600))
	_, err = extsigner.Listen(extsigner.ListenConfig{Address: plain})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	data, err := os.ReadFile(plain)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(data))

	// Another mode.
	other := filepath.Join(dir, "group.sock")
	l2, err := extsigner.Listen(extsigner.ListenConfig{Address: other, Mode: 0o660})
	require.NoError(t, err)
	fi, err = os.Lstat(other)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o660), fi.Mode().Perm())
	require.NoError(t, l2.Close())
	_, err = os.Lstat(other)
	assert.ErrorIs(t, err, fs.ErrNotExist, "closing removes the socket file")

	for _, addr := range []string{"", "@"} {
		_, err = extsigner.Listen(extsigner.ListenConfig{Address: addr})
		assert.ErrorIs(t, err, ksa.ErrInvalidConfig, "%q", addr)
	}
}

// TestListenSystemError: a socket the system cannot make is reported with
// the system's error, the package's prefix once, which a caller nesting
// the error drops (errs.Text, as the ksa command does).
func TestListenSystemError(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "missing", "signer.sock")
	_, err := extsigner.Listen(extsigner.ListenConfig{Address: sock})
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "extsigner: "+opErr.Error(), err.Error())
	assert.Equal(t, opErr.Error(), errs.Text(err), "nested, the message has no prefix inside")
}

func abstractName(t *testing.T) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "@ksa-extsigner-test-" + hex.EncodeToString(b)
}

func TestListenAbstract(t *testing.T) {
	addr := abstractName(t)
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, InsecureAllowAnyPeer: true})
	require.NoError(t, err)
	serveOn(t, l)
	require.NoError(t, metadata(t, addr))
}

// TestListenAbstractNeedsPeerCheck: an abstract socket has no file
// permissions, so one that any process of the network namespace could
// reach is refused unless the caller says so.
func TestListenAbstractNeedsPeerCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   extsigner.ListenConfig
		field string
	}{
		{name: "no AllowedUIDs", cfg: extsigner.ListenConfig{}, field: "extsigner.ListenConfig.AllowedUIDs"},
		{name: "empty AllowedUIDs", cfg: extsigner.ListenConfig{AllowedUIDs: []uint32{}}, field: "extsigner.ListenConfig.AllowedUIDs"},
		{name: "both AllowedUIDs and InsecureAllowAnyPeer", cfg: extsigner.ListenConfig{AllowedUIDs: []uint32{0}, InsecureAllowAnyPeer: true}, field: "extsigner.ListenConfig.InsecureAllowAnyPeer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Address = abstractName(t)
			l, err := extsigner.Listen(cfg)
			if l != nil {
				l.Close()
			}
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
			// Nothing listens: the name is free.
			_, err = net.Dial("unix", cfg.Address)
			assert.Error(t, err)
		})
	}
	// A socket file is guarded by its mode: no peer check needed.
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: filepath.Join(t.TempDir(), "s.sock")})
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// TestListenPeerUID: with AllowedUIDs, only peers running as one of those
// users are served; the others are cut off at once and reported.
func TestListenPeerUID(t *testing.T) {
	me := uint32(os.Getuid())
	t.Run("allowed", func(t *testing.T) {
		addr := abstractName(t)
		l, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, AllowedUIDs: []uint32{me}})
		require.NoError(t, err)
		serveOn(t, l)
		require.NoError(t, metadata(t, addr))
	})
	t.Run("refused", func(t *testing.T) {
		addr := abstractName(t)
		refused := make(chan uint32, 8)
		l, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, AllowedUIDs: []uint32{me + 1}, OnRefused: func(uid uint32, err error) {
			assert.NoError(t, err)
			refused <- uid
		}})
		require.NoError(t, err)
		serveOn(t, l)
		err = metadata(t, addr)
		assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
		select {
		case uid := <-refused:
			assert.Equal(t, me, uid)
		case <-time.After(10 * time.Second):
			t.Fatal("no refusal reported")
		}
	})
}

//go:build linux

package extsigner_test

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	l, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, InsecureAbstractSocket: true, InsecureAllowAnyPeer: true})
	require.NoError(t, err)
	serveOn(t, l)
	require.NoError(t, metadata(t, addr))
}

// TestListenAbstractRefused: an abstract name has no owner, so any local
// process could bind it first and serve kube-apiserver in the signer's
// place: it is refused unless InsecureAbstractSocket says so, and then
// still needs the peer check (AllowedUIDs) unless InsecureAllowAnyPeer.
func TestListenAbstractRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   extsigner.ListenConfig
		field string // "": listens
	}{
		{name: "no opt-in", cfg: extsigner.ListenConfig{AllowedUIDs: []uint32{0}}, field: "extsigner.ListenConfig.Address"},
		{name: "no opt-in, any peer", cfg: extsigner.ListenConfig{InsecureAllowAnyPeer: true}, field: "extsigner.ListenConfig.Address"},
		{name: "no opt-in, shared directory allowed", cfg: extsigner.ListenConfig{AllowedUIDs: []uint32{0}, InsecureSharedDirectory: true}, field: "extsigner.ListenConfig.Address"},
		{name: "opt-in, no AllowedUIDs", cfg: extsigner.ListenConfig{InsecureAbstractSocket: true}, field: "extsigner.ListenConfig.AllowedUIDs"},
		{name: "opt-in, empty AllowedUIDs", cfg: extsigner.ListenConfig{InsecureAbstractSocket: true, AllowedUIDs: []uint32{}}, field: "extsigner.ListenConfig.AllowedUIDs"},
		{name: "opt-in, both AllowedUIDs and InsecureAllowAnyPeer", cfg: extsigner.ListenConfig{InsecureAbstractSocket: true, AllowedUIDs: []uint32{0}, InsecureAllowAnyPeer: true}, field: "extsigner.ListenConfig.InsecureAllowAnyPeer"},
		{name: "opt-in and AllowedUIDs", cfg: extsigner.ListenConfig{InsecureAbstractSocket: true, AllowedUIDs: []uint32{0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Address = abstractName(t)
			l, err := extsigner.Listen(cfg)
			if tc.field == "" {
				require.NoError(t, err)
				require.NoError(t, l.Close())
				return
			}
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
	// A socket file is guarded by its mode and directory: no peer check
	// needed, and the abstract opt-in changes nothing.
	for _, cfg := range []extsigner.ListenConfig{{}, {InsecureAbstractSocket: true}} {
		cfg.Address = filepath.Join(t.TempDir(), "s.sock")
		l, err := extsigner.Listen(cfg)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	}
}

// TestListenPeerUID: with AllowedUIDs, only peers running as one of those
// users are served; the others are cut off at once and reported.
func TestListenPeerUID(t *testing.T) {
	me := uint32(os.Getuid())
	t.Run("allowed", func(t *testing.T) {
		addr := filepath.Join(t.TempDir(), "s.sock")
		l, err := extsigner.Listen(extsigner.ListenConfig{Address: addr, AllowedUIDs: []uint32{me}})
		require.NoError(t, err)
		serveOn(t, l)
		require.NoError(t, metadata(t, addr))
	})
	t.Run("refused", func(t *testing.T) {
		addr := filepath.Join(t.TempDir(), "s.sock")
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

// TestListenSharedDirectory: a socket file whose directory another user
// can write (or whose directories above another user can rename) is
// refused, naming the directory, unless InsecureSharedDirectory says so;
// nothing is bound then.
func TestListenSharedDirectory(t *testing.T) {
	for _, tc := range []struct {
		name string
		// modes are the permissions of the directories, the socket's last.
		modes    []fs.FileMode
		owner    int // of the socket's directory, when not -1
		link     bool
		insecure bool
		refused  string // the refused directory's index in modes, and its problem
	}{
		{name: "0700", modes: []fs.FileMode{0o700}, owner: -1},
		{name: "0755", modes: []fs.FileMode{0o755}, owner: -1},
		{name: "0750 under 0755", modes: []fs.FileMode{0o755, 0o750}, owner: -1},
		{name: "writable by others", modes: []fs.FileMode{0o777}, owner: -1, refused: "0 is writable by other users (mode 0777)"},
		{name: "writable by others, sticky", modes: []fs.FileMode{0o777 | fs.ModeSticky}, owner: -1, refused: "0 is writable by other users (mode 1777)"},
		{name: "writable by the group", modes: []fs.FileMode{0o770}, owner: -1, refused: "0 is writable by other users (mode 0770)"},
		{name: "writable by others, allowed", modes: []fs.FileMode{0o777}, owner: -1, insecure: true},
		{name: "under a directory others can write", modes: []fs.FileMode{0o777, 0o700}, owner: -1, refused: "0 is writable by other users without the sticky bit (mode 0777)"},
		{name: "under a sticky directory others can write", modes: []fs.FileMode{0o777 | fs.ModeSticky, 0o700}, owner: -1},
		{name: "through a link to a directory others can write", modes: []fs.FileMode{0o777}, owner: -1, link: true, refused: "0 is writable by other users (mode 0777)"},
		{name: "owned by another user", modes: []fs.FileMode{0o700}, owner: nobody, refused: "0 is owned by uid 65534, neither root nor this process's user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.owner >= 0 && os.Geteuid() != 0 {
				t.Skip("giving a directory to another user needs root")
			}
			// A short root: the socket is bound beside its path first, and
			// t.TempDir's long names come near the 108-byte limit.
			root, err := os.MkdirTemp("", "ksa-lsd")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(root) })
			dirs := []string{}
			d := root
			for i, m := range tc.modes {
				d = filepath.Join(d, strconv.Itoa(i))
				require.NoError(t, os.Mkdir(d, 0o700))
				require.NoError(t, os.Chmod(d, m))
				dirs = append(dirs, d)
			}
			if tc.owner >= 0 {
				require.NoError(t, os.Chown(d, tc.owner, tc.owner))
			}
			sockDir := d
			if tc.link {
				sockDir = filepath.Join(root, "link")
				require.NoError(t, os.Symlink(d, sockDir))
			}
			sock := filepath.Join(sockDir, "s.sock")
			l, err := extsigner.Listen(extsigner.ListenConfig{Address: sock, InsecureSharedDirectory: tc.insecure})
			if tc.refused == "" {
				require.NoError(t, err)
				require.NoError(t, l.Close())
				return
			}
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			require.ErrorIs(t, err, extsigner.ErrSharedSocketDirectory)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "extsigner.ListenConfig.Address", ce.Field)
			i, problem, _ := strings.Cut(tc.refused, " ")
			n, _ := strconv.Atoi(i)
			assert.Contains(t, err.Error(), "directory "+dirs[n]+" "+problem)
			assert.Contains(t, err.Error(), "InsecureSharedDirectory")
			_, err = os.Lstat(sock)
			assert.ErrorIs(t, err, fs.ErrNotExist, "nothing bound")
		})
	}
}

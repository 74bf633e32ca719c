package extsigner

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/unixsock"
)

// DefaultSocketMode is the permission of a socket file when
// ListenConfig.Mode is zero: only its owner (and root, as kube-apiserver
// usually runs) may connect.
const DefaultSocketMode fs.FileMode = 0o600

// ListenConfig configures [Listen].
type ListenConfig struct {
	// Address is the path of a Unix socket file, as kube-apiserver's
	// --service-account-signing-endpoint names it. Required. Its directory
	// must be one that no other user can write (see [Listen]); a
	// directory of its own, owned by root, mode 0700, such as
	// /run/ksa-signer, is best. "@name", a Linux abstract socket, is
	// refused unless InsecureAbstractSocket is set.
	Address string
	// Mode is the permission of the socket file; zero means
	// DefaultSocketMode. Unused for an abstract socket.
	Mode fs.FileMode
	// AllowedUIDs, when not empty, are the only user IDs whose connections
	// are kept: each peer's credentials are read (SO_PEERCRED) and other
	// connections closed at once, as KEP-740 advises for a signer in a pod.
	// Linux only. Empty: every peer that can reach the socket, which for
	// a socket file is who its Mode and directories let in; an abstract
	// socket needs AllowedUIDs (or InsecureAllowAnyPeer).
	AllowedUIDs []uint32
	// InsecureAbstractSocket lets Address name a Linux abstract socket
	// ("@name"). Dangerous: an abstract name has no owner and no
	// permissions, and the first process of the network namespace to bind
	// it serves it. Any local user that binds the name while the signer is
	// not listening (before it starts, while it restarts or after it
	// crashed) becomes kube-apiserver's signer: kube-apiserver does not
	// authenticate the signer it dials, so it publishes that user's key
	// and has it sign tokens for any service account. AllowedUIDs checks
	// the clients, not the server, and cannot prevent it. The peer check
	// (AllowedUIDs, or InsecureAllowAnyPeer) is still required. It has no
	// effect on a socket file.
	InsecureAbstractSocket bool
	// InsecureSharedDirectory lets Listen use a socket file whose
	// directory, or a directory above it, another user can write (see
	// [ErrSharedSocketDirectory]): for a directory only trusted processes
	// can reach, such as an emptyDir volume (mode 0777) that only the
	// signer's and kube-apiserver's containers mount. Dangerous anywhere
	// else: that user can take the socket's name while the signer is not
	// listening. It has no effect on an abstract socket.
	InsecureSharedDirectory bool
	// InsecureAllowAnyPeer lets Listen serve an abstract socket with no
	// AllowedUIDs. Dangerous: every process of the network namespace (any
	// container of the pod, any process of a host-network pod or of the
	// host) can then connect and have tokens signed with the cluster's
	// service-account key, that is, impersonate any service account. Use
	// it only where nothing else shares the network namespace. It has no
	// effect on a socket file (its Mode and directories decide who
	// connects), and Listen refuses it together with AllowedUIDs.
	InsecureAllowAnyPeer bool
	// OnRefused, when set, is called for each connection AllowedUIDs
	// refused, with the peer's UID or the error reading it.
	OnRefused func(uid uint32, err error)
}

// Listen listens on a Unix socket for a signer's server (Serve of the
// grpcserver package's Server).
//
// A socket file's directory, and every directory above it, must be owned
// by root or by the process's effective user, and the socket's directory
// must not be writable by its group or by others (a directory above it
// may be, with the sticky bit, as /tmp is): otherwise Listen refuses it
// with a *ksa.ConfigError matching [ErrSharedSocketDirectory], unless
// ListenConfig.InsecureSharedDirectory is set. A socket file left at the
// path by a signer that is gone is replaced; a path in use by a live
// listener, or holding anything but a socket, is refused. The socket file
// is removed when the listener is closed.
//
// An abstract address ("@name") is refused unless
// ListenConfig.InsecureAbstractSocket is set, and then without
// ListenConfig.AllowedUIDs unless ListenConfig.InsecureAllowAnyPeer is
// set. Errors are a *ksa.ConfigError (matching errors.ErrUnsupported too
// for what this system lacks), or the system's, with the package's prefix.
func Listen(cfg ListenConfig) (net.Listener, error) {
	addr := cfg.Address
	if addr == "" || addr == "@" {
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.Address", Reason: "is required"}
	}
	if len(cfg.AllowedUIDs) > 0 && runtime.GOOS != "linux" {
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.AllowedUIDs", Reason: "needs peer credentials", Err: errUnsupported}
	}
	abstract := strings.HasPrefix(addr, "@")
	if abstract && runtime.GOOS != "linux" {
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.Address", Reason: "names an abstract socket", Err: errUnsupported}
	}
	if abstract && !cfg.InsecureAbstractSocket {
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.Address", Reason: "names an abstract socket, which any local process can bind first and serve in the signer's place: use a socket file in a directory only root can write (/run/ksa-signer/signer.sock), or set InsecureAbstractSocket"}
	}
	if abstract && len(cfg.AllowedUIDs) == 0 && !cfg.InsecureAllowAnyPeer {
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.AllowedUIDs", Reason: "is required for an abstract socket (it has no file permissions: any process of the network namespace could connect), or set InsecureAllowAnyPeer"}
	}
	if cfg.InsecureAllowAnyPeer && len(cfg.AllowedUIDs) > 0 {
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.InsecureAllowAnyPeer", Reason: "contradicts AllowedUIDs"}
	}
	mode := cfg.Mode
	if mode == 0 {
		mode = DefaultSocketMode
	}
	var l net.Listener
	var err error
	if abstract {
		l, err = net.Listen("unix", addr)
	} else {
		if !cfg.InsecureSharedDirectory {
			if err := checkSocketDir(addr); err != nil {
				return nil, err
			}
		}
		l, err = unixsock.Listen(addr, mode)
	}
	switch {
	case errors.Is(err, unixsock.ErrNotSocket):
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.Address", Reason: fmt.Sprintf("%s exists and is not a socket", addr)}
	case errors.Is(err, unixsock.ErrInUse):
		return nil, &ksa.ConfigError{Field: "extsigner.ListenConfig.Address", Reason: fmt.Sprintf("%s is in use by a live listener", addr), Err: syscall.EADDRINUSE}
	case err != nil:
		return nil, errs.Wrap(prefix, nil, "", err)
	}
	if len(cfg.AllowedUIDs) > 0 {
		l = &peerListener{Listener: l, allowed: slices.Clone(cfg.AllowedUIDs), onRefused: cfg.OnRefused}
	}
	return l, nil
}

// peerListener keeps only connections from allowed UIDs.
type peerListener struct {
	net.Listener
	allowed   []uint32
	onRefused func(uint32, error)
}

// Accept returns the next connection from an allowed peer, closing the
// others.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && slices.Contains(l.allowed, uid) {
			return c, nil
		}
		c.Close()
		if l.onRefused != nil {
			l.onRefused(uid, err)
		}
	}
}

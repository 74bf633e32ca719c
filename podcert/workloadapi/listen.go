package workloadapi

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/unixsock"
)

// Environment variables of SPIFFE's specifications.
const (
	// EndpointSocketEnv names the Workload API's socket, as
	// unix:///path/to/socket, for its clients.
	EndpointSocketEnv = "SPIFFE_ENDPOINT_SOCKET"
	// CredentialFolderEnv names the folder of SPIFFE's filesystem
	// delivery, for software that reads files.
	CredentialFolderEnv = "SPIFFE_CREDENTIAL_FOLDER"
)

// DefaultSocketMode is the permission of the socket when
// ListenConfig.Mode is zero: only the sidecar's user (and root) may
// connect. Containers of the pod that run as another user need a group
// (the pod's fsGroup owns the volume) and 0660.
const DefaultSocketMode fs.FileMode = 0o600

// ListenConfig configures [Listen]. Address is required.
type ListenConfig struct {
	// Address is the socket as SPIFFE_ENDPOINT_SOCKET names it,
	// unix:///path/to/socket, or a path. TCP is refused: the socket's
	// file permission is what keeps other processes from the pod's key.
	Address string
	// Mode is the socket file's permission. Zero means
	// [DefaultSocketMode].
	Mode fs.FileMode
}

// SocketPath returns the path of a Workload API address: unix:///path, or
// a path. Errors are a *ksa.ConfigError.
func SocketPath(addr string) (string, error) {
	bad := func(reason string) (string, error) {
		return "", &ksa.ConfigError{Field: "workloadapi.ListenConfig.Address", Reason: reason}
	}
	if addr == "" {
		return bad("is required")
	}
	if !strings.Contains(addr, ":") {
		return addr, nil
	}
	u, err := url.Parse(addr)
	switch {
	case err != nil:
		return bad("is not a unix:///path URI or a path")
	case u.Scheme != "unix":
		return bad("must be a unix:///path URI (or a path); the Workload API is served on a Unix socket only")
	case u.Opaque != "" || u.Host != "" || u.User != nil:
		return bad("must be unix:///path, with an absolute path and no host")
	case u.Path == "" || u.RawQuery != "" || u.Fragment != "":
		return bad("must be unix:///path, with a path and no query or fragment")
	}
	return u.Path, nil
}

// Listen listens on the Workload API's Unix socket: a socket file left by
// a server that is gone is replaced; a path in use by a live server, or
// holding anything but a socket, is refused. Errors are a
// *ksa.ConfigError, or the system's with the package's prefix.
func Listen(cfg ListenConfig) (net.Listener, error) {
	path, err := SocketPath(cfg.Address)
	if err != nil {
		return nil, err
	}
	mode := cfg.Mode
	if mode == 0 {
		mode = DefaultSocketMode
	}
	if mode&^fs.ModePerm != 0 {
		return nil, &ksa.ConfigError{Field: "workloadapi.ListenConfig.Mode", Reason: "holds more than permission bits"}
	}
	l, err := unixsock.Listen(path, mode)
	switch {
	case errors.Is(err, unixsock.ErrNotSocket):
		return nil, &ksa.ConfigError{Field: "workloadapi.ListenConfig.Address", Reason: path + " exists and is not a socket"}
	case errors.Is(err, unixsock.ErrInUse):
		return nil, &ksa.ConfigError{Field: "workloadapi.ListenConfig.Address", Reason: path + " is in use by a live server", Err: syscall.EADDRINUSE}
	case err != nil:
		var opErr *net.OpError
		if errors.As(err, &opErr) {
			err = opErr.Err // without the path again
		}
		return nil, wrap(nil, "listening on "+path, err)
	}
	return l, nil
}

package extsigner

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/ksa-go/ksa/internal/errs"
)

// peerUID reads the user ID of the process at the other end of a Unix
// socket connection (SO_PEERCRED: its credentials when it connected).
func peerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errs.Wrap(prefix, errors.ErrUnsupported, fmt.Sprintf("%T is not a Unix socket connection", c), nil)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, errs.Wrap(prefix, nil, "", err)
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, errs.Wrap(prefix, nil, "", err)
	}
	if credErr != nil {
		return 0, errs.Wrap(prefix, nil, "reading the peer's credentials", credErr)
	}
	return cred.Uid, nil
}

package extsigner

import (
	"fmt"
	"net"
	"syscall"
)

// peerUID reads the user ID of the process at the other end of a Unix
// socket connection (SO_PEERCRED: its credentials when it connected).
func peerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("extsigner: %T is not a Unix socket connection", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("extsigner: %w", err)
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("extsigner: %w", err)
	}
	if credErr != nil {
		return 0, fmt.Errorf("extsigner: reading the peer's credentials: %w", credErr)
	}
	return cred.Uid, nil
}

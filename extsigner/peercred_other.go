//go:build !linux

package extsigner

import "net"

// peerUID is unsupported off Linux; Listen refuses AllowedUIDs there.
func peerUID(net.Conn) (uint32, error) { return 0, errUnsupported }

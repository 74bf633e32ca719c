//go:build !linux

package main

// errUnsupported: network namespaces are Linux's.
var errUnsupported = &cniError{Code: codeIOFailure, Msg: "network namespaces need Linux"}

func setUp(netns, ifname string) error { return errUnsupported }

func checkNamespace(netns, ifname string) error { return errUnsupported }

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// enter moves the calling goroutine's thread into the network namespace
// at path, for good: the thread is locked and never unlocked, so it ends
// with the goroutine (the process, here) instead of serving another.
func enter(path string) error {
	runtime.LockOSThread()
	f, err := os.Open(path)
	if err != nil {
		return &cniError{Code: codeInvalidEnv, Msg: "opening CNI_NETNS", Details: err.Error()}
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return &cniError{Code: codeIOFailure, Msg: "entering CNI_NETNS", Details: err.Error()}
	}
	return nil
}

// setUp brings lo up in the namespace at netns and, unless ifname is lo,
// gives lo the alternative name ifname.
func setUp(netns, ifname string) error {
	if err := enter(netns); err != nil {
		return err
	}
	if err := loUp(); err != nil {
		return err
	}
	if ifname == "lo" {
		return nil
	}
	lo, _, err := device("lo")
	if err != nil {
		return &cniError{Code: codeIOFailure, Msg: "finding lo", Details: err.Error()}
	}
	err = addAltName(lo, ifname)
	if errors.Is(err, unix.EEXIST) {
		// An ADD tried again: lo has the name already, or another device
		// has it, which the lookup tells apart.
		if index, _, lerr := device(ifname); lerr == nil && index == lo {
			return nil
		}
	}
	if err != nil {
		return &cniError{Code: codeIOFailure, Msg: "naming lo " + ifname, Details: err.Error()}
	}
	return nil
}

// checkNamespace reports whether the namespace at netns is as ADD left
// it: ifname names lo, and lo is up.
func checkNamespace(netns, ifname string) error {
	if err := enter(netns); err != nil {
		return err
	}
	index, flags, err := device(ifname)
	if err != nil {
		return &cniError{Code: codeIOFailure, Msg: "finding " + ifname, Details: err.Error()}
	}
	lo, _, err := device("lo")
	if err != nil {
		return &cniError{Code: codeIOFailure, Msg: "finding lo", Details: err.Error()}
	}
	if index != lo || flags&unix.IFF_UP == 0 {
		return &cniError{Code: codeIOFailure, Msg: ifname + " is not lo, up", Details: fmt.Sprintf("index %d, lo's %d, flags %#x", index, lo, flags)}
	}
	return nil
}

// device returns the index and flags of the device name (a name or an
// alternative name: the kernel resolves both, the net package only the
// first).
func device(name string) (index int, flags uint16, err error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, 0, err
	}
	index = int(ifr.Uint32())
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return 0, 0, err
	}
	return index, ifr.Uint16(), nil
}

// loUp sets the IFF_UP flag of lo.
func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return &cniError{Code: codeIOFailure, Msg: "socket", Details: err.Error()}
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return &cniError{Code: codeIOFailure, Msg: "lo", Details: err.Error()}
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return &cniError{Code: codeIOFailure, Msg: "reading lo's flags", Details: err.Error()}
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return &cniError{Code: codeIOFailure, Msg: "bringing lo up", Details: err.Error()}
	}
	return nil
}

// addAltName gives the device of index the alternative name name, with
// an RTM_NEWLINKPROP request over rtnetlink, and returns the kernel's
// answer (a unix.Errno).
func addAltName(index int, name string) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}

	alt := attr(unix.IFLA_ALT_IFNAME, append([]byte(name), 0))
	props := attr(unix.IFLA_PROP_LIST|unix.NLA_F_NESTED, alt)
	info := make([]byte, unix.SizeofIfInfomsg)
	info[0] = unix.AF_UNSPEC
	binary.NativeEndian.PutUint32(info[4:8], uint32(index))
	body := slices.Concat(info, props)

	const seq = 1
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:4], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:6], unix.RTM_NEWLINKPROP)
	binary.NativeEndian.PutUint16(msg[6:8], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:12], seq)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}

	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Seq != seq || m.Header.Type != unix.NLMSG_ERROR {
				continue
			}
			if len(m.Data) < 4 {
				return fmt.Errorf("short netlink error message")
			}
			if code := int32(binary.NativeEndian.Uint32(m.Data[:4])); code != 0 {
				return unix.Errno(-code)
			}
			return nil
		}
	}
}

// attr encodes a netlink attribute, padded to four bytes.
func attr(typ uint16, value []byte) []byte {
	n := unix.SizeofNlAttr + len(value)
	b := make([]byte, (n+3)&^3)
	binary.NativeEndian.PutUint16(b[0:2], uint16(n))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	copy(b[unix.SizeofNlAttr:], value)
	return b
}

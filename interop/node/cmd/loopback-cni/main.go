// Command loopback-cni is the node harness's network plugin: a CNI plugin
// (the container network interface, spec 1.0 and the 0.3 and 0.4 results)
// that gives a pod a network namespace of loopback only. On ADD it brings
// the namespace's lo up, and for any interface name but "lo" (containerd
// asks for "eth0") it gives lo that name as an alternative name, so that
// the pod's eth0 is its loopback device: address 127.0.0.1/8, no route
// off it, no device on the host. DEL undoes nothing (the namespace goes
// with the pod); CHECK looks again; VERSION says which versions it speaks.
//
// The harness installs it twice in the CNI directory it owns: as
// "loopback", the plugin containerd runs itself for every pod's lo, and as
// "ksa-loopback", the type of the harness's network configuration.
//
// It needs a kernel with alternative interface names (Linux 5.5) and the
// right to enter network namespaces (root).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// supportedVersions are the CNI versions this plugin reads and answers in.
var supportedVersions = []string{"0.3.0", "0.3.1", "0.4.0", "1.0.0"}

// maxConfig bounds the network configuration read from stdin.
const maxConfig = 1 << 20

// CNI error codes (the spec's "Error" section).
const (
	codeIncompatibleVersion = 1
	codeInvalidEnv          = 4
	codeIOFailure           = 5
	codeDecodeFailure       = 6
	codeInvalidConfig       = 7
)

// netConf is what the plugin reads of its configuration.
type netConf struct {
	CNIVersion string          `json:"cniVersion"`
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	PrevResult json.RawMessage `json:"prevResult,omitempty"`
}

// cniError is the error result a plugin prints on stdout as it fails.
type cniError struct {
	CNIVersion string `json:"cniVersion"`
	Code       int    `json:"code"`
	Msg        string `json:"msg"`
	Details    string `json:"details,omitempty"`
}

func (e *cniError) Error() string { return e.Msg + ": " + e.Details }

// result is the result of ADD.
type result struct {
	CNIVersion string     `json:"cniVersion"`
	Interfaces []iface    `json:"interfaces"`
	IPs        []ipConfig `json:"ips"`
}

type iface struct {
	Name    string `json:"name"`
	Mac     string `json:"mac,omitempty"`
	Sandbox string `json:"sandbox"`
}

type ipConfig struct {
	Version   string `json:"version,omitempty"` // 0.3.x and 0.4.0 only
	Address   string `json:"address"`
	Interface int    `json:"interface"`
}

func main() {
	version, err := run(os.Getenv, os.Stdin, os.Stdout)
	if err == nil {
		return
	}
	var ce *cniError
	if !errors.As(err, &ce) {
		ce = &cniError{Code: codeIOFailure, Msg: "loopback-cni failed", Details: err.Error()}
	}
	ce.CNIVersion = version
	if ce.CNIVersion == "" {
		ce.CNIVersion = supportedVersions[len(supportedVersions)-1]
	}
	_ = json.NewEncoder(os.Stdout).Encode(ce)
	fmt.Fprintln(os.Stderr, "loopback-cni:", ce.Error())
	os.Exit(1)
}

// run carries out the command of the environment, reading the
// configuration from stdin and writing the result to stdout. It returns
// the configuration's version, for an error result.
func run(getenv func(string) string, stdin io.Reader, stdout io.Writer) (string, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, maxConfig+1))
	if err != nil {
		return "", &cniError{Code: codeIOFailure, Msg: "reading the network configuration", Details: err.Error()}
	}
	if len(data) > maxConfig {
		return "", &cniError{Code: codeInvalidConfig, Msg: "network configuration too large", Details: fmt.Sprintf("over %d bytes", maxConfig)}
	}
	var conf netConf
	if err := json.Unmarshal(data, &conf); err != nil {
		return "", &cniError{Code: codeDecodeFailure, Msg: "decoding the network configuration", Details: err.Error()}
	}
	if conf.CNIVersion == "" {
		conf.CNIVersion = "0.1.0" // the spec's default, which this plugin does not speak
	}
	cmd := getenv("CNI_COMMAND")
	if cmd == "VERSION" {
		return conf.CNIVersion, json.NewEncoder(stdout).Encode(map[string]any{
			"cniVersion":        supportedVersions[len(supportedVersions)-1],
			"supportedVersions": supportedVersions,
		})
	}
	if !slices.Contains(supportedVersions, conf.CNIVersion) {
		return "", &cniError{Code: codeIncompatibleVersion, Msg: "incompatible CNI version", Details: fmt.Sprintf("%q; this plugin speaks %v", conf.CNIVersion, supportedVersions)}
	}
	netns, ifname := getenv("CNI_NETNS"), getenv("CNI_IFNAME")
	switch cmd {
	case "ADD", "CHECK":
		if netns == "" || ifname == "" {
			return conf.CNIVersion, &cniError{Code: codeInvalidEnv, Msg: "CNI_NETNS and CNI_IFNAME must be set", Details: cmd}
		}
		if err := checkIfname(ifname); err != nil {
			return conf.CNIVersion, err
		}
		if cmd == "CHECK" {
			return conf.CNIVersion, checkNamespace(netns, ifname)
		}
		if err := setUp(netns, ifname); err != nil {
			return conf.CNIVersion, err
		}
		return conf.CNIVersion, json.NewEncoder(stdout).Encode(addResult(conf.CNIVersion, netns, ifname))
	case "DEL":
		// Nothing to undo: lo and its name go with the namespace.
		return conf.CNIVersion, nil
	case "":
		return conf.CNIVersion, &cniError{Code: codeInvalidEnv, Msg: "CNI_COMMAND is not set"}
	}
	return conf.CNIVersion, &cniError{Code: codeInvalidEnv, Msg: "unsupported CNI_COMMAND", Details: cmd}
}

// checkIfname refuses an interface name Linux would refuse.
func checkIfname(name string) error {
	if len(name) > 15 || name == "." || name == ".." {
		return &cniError{Code: codeInvalidEnv, Msg: "invalid CNI_IFNAME", Details: name}
	}
	for _, c := range name {
		if c <= ' ' || c == '/' || c == ':' || c > '~' {
			return &cniError{Code: codeInvalidEnv, Msg: "invalid CNI_IFNAME", Details: name}
		}
	}
	return nil
}

// addResult is ADD's result in version: one interface (lo, under the
// name asked for) holding 127.0.0.1/8.
func addResult(version, netns, ifname string) result {
	r := result{
		CNIVersion: version,
		Interfaces: []iface{{Name: ifname, Mac: "00:00:00:00:00:00", Sandbox: netns}},
		IPs:        []ipConfig{{Address: "127.0.0.1/8", Interface: 0}},
	}
	if version != "1.0.0" {
		r.IPs[0].Version = "4"
	}
	return r
}

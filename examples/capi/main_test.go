package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExitStatus: 0 for -h, 2 for a usage error (the mistake named once,
// before anything is contacted), 1 for a failure. The runs against a
// kube-apiserver, SoftHSM2 and Azurite are interop/capiexample's.
func TestExitStatus(t *testing.T) {
	dir := t.TempDir()
	noPEM := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(noPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"-cluster", "cluster-1", "-to", filepath.Join(dir, "site"), "-issuer", "https://oidc.example.com/cluster-1"}
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{name: "help", args: []string{"-h"}, status: 0, stderr: "Usage of capi:"},
		{name: "unknown flag", args: []string{"-nope"}, status: 2, stderr: "flag provided but not defined: -nope"},
		{name: "argument", args: append(base, "run"), status: 2, stderr: `capi: it takes no arguments, got "run" (see capi -h)`},
		{name: "no cluster", args: []string{"-to", "site"}, status: 2, stderr: "capi: give -cluster, the Cluster's name"},
		{name: "bad cluster", args: []string{"-cluster", "Cluster_1", "-to", "site"}, status: 2, stderr: `capi: -cluster "Cluster_1" must be dot-separated parts of lower-case letters`},
		{name: "bad namespace", args: append(base, "-namespace", "Fleet"), status: 2, stderr: `capi: -namespace "Fleet" must be lower-case letters`},
		{name: "no location", args: []string{"-cluster", "cluster-1"}, status: 2, stderr: "capi: give -to, where the issuer is published"},
		{name: "directory without issuer", args: []string{"-cluster", "cluster-1", "-to", "site"}, status: 2, stderr: "capi: give -issuer, the https URL the directory -to is served at (see capi -h)"},
		{name: "bad location", args: []string{"-cluster", "cluster-1", "-to", "ftp://host/x"}, status: 2, stderr: `capi: -to: location "ftp://host/x" has an unknown scheme "ftp" (see capi -h)`},
		{name: "module alone", args: append(base, "-pkcs11-module", "/lib.so"), status: 2, stderr: "-pkcs11-module and -pkcs11-pin-file go with -pkcs11-token"},
		{name: "token without PIN", args: append(base, "-pkcs11-token", "ksa"), status: 2, stderr: "-pkcs11-token needs -pkcs11-pin-file"},
		{name: "bad now", args: append(base, "-insecure-now", "tomorrow"), status: 2, stderr: `-insecure-now "tomorrow" is not an RFC 3339 time`},
		{name: "CA file without PEM", args: append(base, "-ca-file", noPEM), status: 2, stderr: "holds no PEM certificate"},
		{name: "CA file missing", args: append(base, "-ca-file", filepath.Join(dir, "nope.pem")), status: 1, stderr: "capi: -ca-file: open "},
		{name: "kubeconfig missing", args: append(base, "-kubeconfig", filepath.Join(dir, "nope")), status: 1, stderr: "capi: the management cluster's kubeconfig: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, &stderr)
			assert.Equal(t, tt.status, exitStatus(err, &stderr), "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), tt.stderr)
			assert.Empty(t, stdout.String())
		})
	}
}

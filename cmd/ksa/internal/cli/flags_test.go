package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

// TestIgnoredFlagsAreUsageErrors: a flag that only applies with another
// flag (or value) is a usage error without it, naming both, instead of
// being silently ignored.
func TestIgnoredFlagsAreUsageErrors(t *testing.T) {
	mint := []string{"token", "mint", "--issuer", "https://oidc.example.com", "--signing-key", "k.key", "--namespace", "prod",
		"--service-account", "billing", "--uid", "7a3c1a8e-1c5e-4d55-9d0e-2f3b4c5d6e7f"}
	csr := []string{"x509", "csr", "--namespace", "shop", "--service-account", "cart", "--new-key", "cart.key"}
	generate := []string{"credspec", "generate", "--from-file", "spec.json"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "mint --node without --pod", args: append(mint, "--node", "node-1"), want: "--node applies only with --pod"},
		{name: "mint --node-uid without --node", args: append(mint, "--pod", "p", "--pod-uid", "u", "--node-uid", "n"), want: "--node-uid applies only with --node"},
		{name: "mint --pod-uid without --pod", args: append(mint, "--pod-uid", "u"), want: "--pod-uid applies only with --pod"},
		{name: "mint --force without --out", args: append(mint, "--force"), want: "--force applies only with --out"},
		{name: "csr --lifetime without --object", args: append(csr, "--lifetime", "24h"), want: "--lifetime applies only with --object"},
		{name: "csr --name without --object", args: append(csr, "--name", "cart"), want: "--name applies only with --object"},
		{name: "csr --signer-name without --object", args: append(csr, "--signer-name", "example.com/x"), want: "--signer-name applies only with --object"},
		{name: "csr -o without --object", args: append(csr, "-o", "json"), want: "--output applies only with --object"},
		{name: "csr --force without --out", args: append(csr, "--force"), want: "--force applies only with --out"},
		{name: "csr --host with client usage", args: append(csr, "--host", "cart.shop.svc"), want: "--host applies only with --usage server or both"},
		{name: "csr --trust-domain with client usage", args: append(csr, "--trust-domain", "example.org"), want: "--trust-domain applies only with --usage both"},
		{name: "keygen --curve with an RSA key", args: []string{"issuer", "keygen", "--out", "k.key", "--curve", "P-384"}, want: "--curve applies only with --type ecdsa"},
		{name: "keygen --bits with an ECDSA key", args: []string{"issuer", "keygen", "--out", "k.key", "--type", "ecdsa", "--bits", "4096"}, want: "--bits applies only with --type rsa"},
		{name: "rotate --curve with an RSA key", args: []string{"issuer", "rotate", "--issuer", "https://x.example", "--signing-key", "k.key", "--next-key", "n.key", "--out", "site", "--type", "rsa", "--curve", "P-384"}, want: "--curve applies only with --type ecdsa"},
		{name: "check --subject without --token", args: []string{"issuer", "check", "https://x.example", "--subject", "system:serviceaccount:a:b"}, want: "--subject applies only with --token"},
		{name: "check --audience without --token", args: []string{"issuer", "check", "https://x.example", "--audience", "vault"}, want: "--audience applies only with --token"},
		{name: "generate --from-file with --account", args: append(generate, "--account", "WebApp01"), want: "--account applies only without --from-file"},
		{name: "generate --from-file with --akv-object-id", args: append(generate, "--akv-object-id", "x"), want: "--akv-object-id applies only without --from-file"},
		{name: "podcert serve --trust-bundle with --no-trust-bundle", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", "k", "--ca-cert", "c", "--no-trust-bundle", "--trust-bundle", "example.com:pods:b"}, want: "--trust-bundle applies only without --no-trust-bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runKSA(t, t.TempDir(), tc.args...)
			assert.Equal(t, base.ExitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "; fix: "), stderr)
		})
	}
}

// TestPodcertRBACValidation: the names go into objects kube-apiserver
// validates; they are checked as it checks them, as usage errors.
func TestPodcertRBACValidation(t *testing.T) {
	podcertArgs := func(signer, ns, sa string) []string {
		return []string{"podcert", "rbac", "--signer-name", signer, "--namespace", ns, "--service-account", sa}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "signer name without a path", args: podcertArgs("example.com", "ksa-system", "signer"), want: "--signer-name"},
		{name: "signer name with one label", args: podcertArgs("example/pods", "ksa-system", "signer"), want: "--signer-name"},
		{name: "signer name in capitals", args: podcertArgs("Example.com/Pods", "ksa-system", "signer"), want: "--signer-name"},
		{name: "signer name with two slashes", args: podcertArgs("example.com/a/b", "ksa-system", "signer"), want: "--signer-name"},
		{name: "namespace with a dot", args: podcertArgs("example.com/pods", "ksa.system", "signer"), want: "--namespace"},
		{name: "namespace in capitals", args: podcertArgs("example.com/pods", "KSA", "signer"), want: "--namespace"},
		{name: "namespace too long", args: podcertArgs("example.com/pods", strings.Repeat("a", 64), "signer"), want: "--namespace"},
		{name: "service account with a slash", args: podcertArgs("example.com/pods", "ksa-system", "a/b"), want: "--service-account"},
		{name: "trust bundle of another signer", args: append(podcertArgs("example.com/pods", "ksa-system", "signer"), "--trust-bundle", "other.com:pods:b"), want: "--trust-bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runKSA(t, t.TempDir(), tc.args...)
			assert.Equal(t, base.ExitUsage, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "ksa: "+tc.want)
		})
	}
}

// Command ksa is the operator's command for Kubernetes workload identity:
// it sets up a self-managed service-account issuer (signing keys, the
// discovery document and key set, key rotation), checks an issuer as
// Microsoft Entra ID, AWS and Google fetch it, inspects, verifies and mints
// service-account tokens, generates GMSA credential specs, reads and
// requests service-account certificates, and runs the GMSA admission
// webhook and the external JWT signer.
//
//	go install github.com/ksa-go/ksa/cmd/ksa@latest
//	ksa issuer keygen --out sa.key
//	ksa issuer render --issuer https://oidc.example.com/cluster-1 --key sa.key --out site
//	ksa issuer check https://oidc.example.com/cluster-1
//
// Exit status: 0 on success, 1 when the command failed (or found problems),
// 2 for a usage error. Errors are one line that names the fix.
package main

import (
	"os"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command ksa is the operator's command for Kubernetes workload identity:
// it sets up a self-managed service-account issuer (signing keys, the
// discovery document and key set, publishing to Azure Blob, S3, GCS or a
// directory, key rotation, the clouds' registrations), checks an issuer as
// Microsoft Entra ID, AWS and Google fetch it, inspects, verifies and mints
// service-account tokens, generates GMSA credential specs, reads and
// requests service-account certificates, and runs the GMSA admission
// webhook, the external JWT signer, the pod-certificate signer (and prints
// its RBAC) and the SPIFFE Workload API for a pod's certificate. ksa --help
// lists every command.
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

package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/credprovcmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/credspeccmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/issuercmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/podcertcmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/signercmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/spiffecmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/tokencmd"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/x509cmd"
)

// Main runs the ksa command with args (without the program name) and
// returns its exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &base.App{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	return run(a, args)
}

// run runs the command tree on a, printing a failure on a.stderr, and
// returns the exit status.
func run(a *base.App, args []string) int { return a.Execute(newRoot(a), args) }

func newRoot(a *base.App) *cobra.Command {
	return base.NewRoot(a, rootHelp, rootExample,
		issuercmd.New(a, nil),
		tokencmd.New(a),
		credspeccmd.New(a),
		x509cmd.New(a),
		credspeccmd.NewWebhook(a),
		signercmd.New(a),
		podcertcmd.New(a, nil),
		spiffecmd.New(a),
		credprovcmd.New(a),
		newVersionCmd(a),
	)
}

// rootHelp is the help of ksa itself: what each command does.
const rootHelp = `ksa sets up and checks the identity of Kubernetes workloads.

Commands:
  issuer keygen          make a signing key: a PEM file, or in an HSM or KMS
  issuer render          write the OIDC discovery document and key set,
                         byte-identical to kube-apiserver's, and its flags
  issuer publish         upload them to Azure Blob, S3, GCS or a directory,
                         then check them as the clouds fetch them
  issuer check           fetch an issuer as Entra ID, AWS and Google do
  issuer rotate          add the next signing key and print the overlap plan
  issuer register azure  print the Entra ID federated identity credentials
  issuer register aws    print the AWS IAM OIDC provider and role trust policy
  issuer register gcp    print the Google workload identity pool and provider
  issuer capi-secret     print the Cluster API <cluster>-sa Secret of a key pair
  token inspect          decode a token without verifying it
  token verify           verify a token through its issuer's documents
  token mint             mint a token from a signing key (test clusters)
  credspec generate      write a GMSACredentialSpec manifest
  credspec crd           print the GMSACredentialSpec CustomResourceDefinition
  x509 inspect           show the identity of a certificate or a CSR
  x509 csr               make a certificate request for a service account
  webhook serve          run the GMSA credential-spec admission webhook
  signer serve           run the external JWT signer for kube-apiserver
  podcert serve          sign the PodCertificateRequests of a signer name
  podcert rbac           print the RBAC "ksa podcert serve" needs
  spiffe serve           serve a pod's certificate over the SPIFFE Workload API
  credential-provider run     answer the kubelet's image credential request
                         with the pod's token (pass-through or exchange)
  credential-provider config  print the kubelet's config and node RBAC, or lint one
  version                print the command's version and VCS revision

Exit status: 0 on success, 1 on failure (or when a check finds problems),
2 for a usage error.`

// rootExample is the example of ksa's help.
const rootExample = `  # A self-managed issuer for Azure workload identity, end to end:
  ksa issuer keygen --out sa.key
  ksa issuer render --issuer https://oidcissuer.blob.core.windows.net/cluster-1/ --key sa.key --out site
  # upload site/ to the issuer URL, start kube-apiserver with the flags printed, then:
  ksa issuer check https://oidcissuer.blob.core.windows.net/cluster-1/`

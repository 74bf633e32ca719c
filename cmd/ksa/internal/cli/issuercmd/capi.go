package issuercmd

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/keystore"
)

// capiSecretFlags are the settings of "ksa issuer capi-secret".
type capiSecretFlags struct {
	cluster, namespace, signing, out string
	keys                             []string
	format                           base.Format
}

func newCAPISecretCmd(a *base.App) *cobra.Command {
	f := &capiSecretFlags{}
	cmd := &cobra.Command{
		Use:   "capi-secret --cluster NAME --key FILE...",
		Short: "Write the NAME-sa Secret that gives a Cluster API cluster's control plane the signing key",
		Long: `Write the Secret through which Cluster API's kubeadm providers give every
control-plane machine of a cluster its service-account keys, exactly as
Cluster API generates it when there is none: named NAME-sa, labelled
cluster.x-k8s.io/cluster-name=NAME, of type cluster.x-k8s.io/secret, with
tls.key (written to /etc/kubernetes/pki/sa.key, kube-apiserver's
--service-account-signing-key-file) and tls.crt (sa.pub, its
--service-account-key-file; a public key, not a certificate).

Create it in the Cluster's namespace before the cluster's first
control-plane machine: Cluster API then uses this key instead of making one,
and never changes it. Publish the same keys with ksa issuer render, and set
--service-account-issuer in the KubeadmControlPlane's apiServer extraArgs.

Every key of every --key file goes into tls.crt, the signing key's first
(private key files give their public half); the first private key signs
unless --signing-key names another. During a rotation, give the other key
too: first the next key's public file beside the current key, then the next
key beside the previous one's public file. A change of the Secret reaches
the cluster only with new control-plane machines: roll the control plane
out after each.

The manifest is YAML on standard output (-o json for JSON), or a new file
with --out (mode 0600: it holds the private key), never overwritten.

A key in an HSM or KMS (a pkcs11:, awskms:, cloudkms: or azurekms: URI) is
refused: Cluster API copies the private key to the nodes, and such a key
never leaves its store.`,
		Example: `  ksa issuer capi-secret --cluster cluster-1 --namespace fleet --key sa.key | kubectl create -f -
  # mid-rotation: the next key signs, the previous one still verifies
  ksa issuer capi-secret --cluster cluster-1 --namespace fleet --key sa-2.key --key sa.pub --out cluster-1-sa.yaml`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cluster, "cluster", "", "the Cluster's name (required)")
	fl.StringVar(&f.namespace, "namespace", "", "the Cluster's namespace (default: none in the manifest, kubectl's namespace)")
	fl.StringArrayVar(&f.keys, "key", nil, "PEM key file whose keys go into tls.crt (repeatable; required)")
	fl.StringVar(&f.signing, "signing-key", "", "private key file that signs, tls.key (default: the first --key holding a private key)")
	fl.StringVar(&f.out, "out", "", "file to write the manifest to, mode 0600 (default: standard output)")
	base.AddManifestFlag(cmd, &f.format)
	base.Required(cmd, "cluster", "key")
	return cmd
}

func (f *capiSecretFlags) run(a *base.App) error {
	if err := f.checkNames(); err != nil {
		return err
	}
	for _, k := range append([]string{f.signing}, f.keys...) {
		if err := refuseStoreKey(k, k == f.signing); err != nil {
			return err
		}
	}
	s, err := loadSetup(a, "", "", f.keys, f.signing)
	if err != nil {
		return err
	}
	if s.Signing == nil {
		return base.Fail(nil, "add the private key file (the one ksa issuer keygen wrote at --out, mode 0600)", "no --key file holds a private key, which Cluster API's Secret must carry")
	}
	kid := mustKeyID(s.Signing)
	seen := map[string]bool{kid: true}
	var verify []crypto.PublicKey
	for _, kf := range s.Files {
		for _, k := range kf.Keys {
			if !seen[k.KeyID] { // the signing key's own public file, or a file given twice
				seen[k.KeyID] = true
				verify = append(verify, k.Public)
			}
		}
	}
	secret, err := clusterapi.NewSecret(f.cluster, s.Signing.Signer, clusterapi.SecretOptions{Namespace: f.namespace, VerifyKeys: verify})
	if err != nil {
		return base.Fail(err, keyflags.Fix, "the Secret cannot hold these keys")
	}
	var manifest bytes.Buffer
	if err := base.PrintData(&manifest, f.format, secret, nil); err != nil {
		return err
	}
	if f.out == "" {
		_, err := a.Stdout.Write(manifest.Bytes())
		return err
	}
	if err := a.WriteOutputs(base.Output{Path: f.out, Data: manifest.Bytes(), Perm: 0o600, Flag: "--out",
		ExistsFix: "choose another --out (a file holding a private key is never overwritten)"}); err != nil {
		return err
	}
	pair, err := clusterapi.ReadSecret(secret)
	if err != nil {
		return base.Fail(err, base.BugFix, "reading the Secret back")
	}
	return printCAPISecret(a.Stdout, f.out, secret.Namespace, secret.Name, pair)
}

// checkNames refuses a cluster name or namespace the Secret cannot have.
func (f *capiSecretFlags) checkNames() error {
	var ne *ksa.NameError
	if err := clusterapi.CheckClusterName(f.cluster); errors.As(err, &ne) {
		return base.Usage("give the name of the Cluster object the Secret is for", "--cluster %q %s", ne.Value, ne.Reason)
	} else if err != nil {
		return base.Fail(err, base.BugFix, "checking --cluster")
	}
	if f.namespace == "" {
		return nil
	}
	if err := ksa.CheckNamespace("namespace", f.namespace); errors.As(err, &ne) {
		return base.Usage("give the namespace of the Cluster object, where the Secret must be created", "--namespace %q %s", ne.Value, ne.Reason)
	}
	return nil
}

// refuseStoreKey refuses a key-store reference: its private key cannot
// be written into the Secret.
func refuseStoreKey(ref string, signing bool) error {
	flag := "--key"
	if signing {
		flag = "--signing-key"
	}
	if ref == "" {
		return nil
	}
	r, err := keyflags.ParseRef(ref, flag, false)
	if err != nil || r.Scheme() == keystore.SchemeFile {
		return err
	}
	return base.Fail(nil, "give a PEM key file (\""+base.CommandLine("ksa", "issuer", "keygen", "--out", "sa.key")+"\" makes one); a key that must stay in its store signs through ksa signer serve instead, for which kubeadm's kube-apiserver manifest must be patched",
		"%s %s is in a key store, and Cluster API copies the private key to every control-plane node", flag, r)
}

// printCAPISecret reports a Secret written to a file, as text.
func printCAPISecret(w io.Writer, path, namespace, name string, pair *clusterapi.KeyPair) error {
	where := name
	if namespace != "" {
		where = namespace + "/" + name
	}
	fmt.Fprintf(w, "wrote %s (mode 0600: it holds the private key): Secret %s\n\nkeys (tls.crt, sa.pub on the nodes):\n", path, where)
	for i, k := range pair.Keys {
		role := "verifies"
		if i == 0 {
			role = "signs (tls.key, sa.key on the nodes)"
		}
		fmt.Fprintf(w, "  %s  %s  %-11s %s\n", k.KeyID, k.Algorithm, keyflags.KeyType(k.Public), role)
	}
	return nil
}

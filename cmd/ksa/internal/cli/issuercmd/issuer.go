package issuercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/oidc"
)

// New returns the issuer commands; rotateRead, when set (tests),
// is called once a scheduled rotation that writes has read the ring file
// and the store, holding its lock.
func New(a *base.App, rotateRead func()) *cobra.Command {
	return base.Group("issuer", "Set up, rotate and check a service-account issuer",
		newKeygenCmd(a), newRenderCmd(a), newRotateCmd(a, rotateRead), newCheckCmd(a), newPublishCmd(a), newRegisterCmd(a),
		newCAPISecretCmd(a))
}

// keyInfo describes a key in output.
type keyInfo struct {
	KeyID     string `json:"kid"`
	Algorithm string `json:"alg"`
	Type      string `json:"type"`
	File      string `json:"file,omitempty"`
	Signing   bool   `json:"signing,omitempty"`
}

type KeygenResult struct {
	PrivateKeyFile string `json:"private_key_file,omitempty"`
	// KeyRef is the complete reference of a key made in a key store.
	KeyRef        string  `json:"key_ref,omitempty"`
	PublicKeyFile string  `json:"public_key_file,omitempty"`
	Key           keyInfo `json:"key"`
}

// keygenFlags are the settings of "ksa issuer keygen".
type keygenFlags struct {
	spec           keyflags.Spec
	out, publicOut string
	format         base.Format
}

func newKeygenCmd(a *base.App) *cobra.Command {
	f := &keygenFlags{}
	cmd := &cobra.Command{
		Use:   "keygen --out FILE|URI",
		Short: "Generate a service-account signing key pair: a PEM file (mode 0600) or a key in an HSM or KMS",
		Long: `Generate a signing key pair for kube-apiserver's
--service-account-signing-key-file: the private key (PKCS #8 PEM, mode 0600)
at --out and its public key (PKIX PEM) beside it (sa.key gives sa.pub).
Existing files are never overwritten.

--out may instead name a key to create in a key store, which kube-apiserver
signs through with "ksa signer serve": a PKCS #11 token (pkcs11:, with id
and object; the PIN from pin-source, a file or env:NAME), AWS KMS (awskms:,
with name, its description and alias prefix), Google Cloud KMS (cloudkms:,
the cryptoKey; its next version is made) or Azure Key Vault (azurekms:,
name and vault). The key never leaves the store: the command prints the
key's complete reference, to give every other command, and writes the
public key to --public-out. A key with the same id or object is never
replaced.

Microsoft Entra ID accepts RS256 tokens only: keep the default RSA key for
Azure workload identity. ECDSA keys suit AWS, Google and Kubernetes itself.`,
		Example: `  ksa issuer keygen --out sa.key
  ksa issuer keygen --out sa-2026.key --bits 3072
  ksa issuer keygen --type ecdsa --curve P-384 --out ec.key -o json
  ksa issuer keygen --public-out sa.pub \
      --out 'pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a01;object=sa-2026?pin-source=/run/secrets/hsm-pin'
  ksa issuer keygen --out 'awskms:name=cluster-1-sa;region=eu-west-1' --public-out sa.pub`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.spec.Type, "type", "rsa", "key type: rsa or ecdsa")
	fl.IntVar(&f.spec.Bits, "bits", 2048, "RSA modulus size, 2048 to 8192")
	fl.StringVar(&f.spec.Curve, "curve", "P-256", "ECDSA curve: P-256, P-384 or P-521")
	fl.StringVar(&f.out, "out", "", "private key file to create, or the URI of a key to create in a key store (required)")
	fl.StringVar(&f.publicOut, "public-out", "", "public key file to create (default: --out with .key replaced by .pub; required for a key store)")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "out")
	return cmd
}

func (f *keygenFlags) run(a *base.App, cmd *cobra.Command) error {
	if err := f.spec.CheckFlags(cmd); err != nil {
		return err
	}
	r, err := keyflags.ParseRef(f.out, "--out", true)
	if err != nil {
		return err
	}
	if r.Scheme() != keystore.SchemeFile {
		return f.runStore(a, cmd, r)
	}
	s, err := f.spec.Generate()
	if err != nil {
		return err
	}
	pubOut, pubFlag := f.publicOut, "--public-out"
	if pubOut == "" {
		pubOut, pubFlag = keyflags.PublicPath(f.out), "--out"
	}
	if err := keyflags.WritePair(a, s, f.out, pubOut, "--out", pubFlag); err != nil {
		return err
	}
	k, err := jwks.NewKey(s)
	if err != nil {
		return base.Fail(err, base.BugFix, "the generated key")
	}
	res := KeygenResult{PrivateKeyFile: f.out, PublicKeyFile: pubOut,
		Key: keyInfo{KeyID: k.KeyID, Algorithm: k.Algorithm, Type: keyflags.KeyType(k.Public)}}
	return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %s (private, mode 0600) and %s (public)\n", f.out, pubOut)
		fmt.Fprintf(w, "key: %s, %s, kid %s\n", res.Key.Type, res.Key.Algorithm, res.Key.KeyID)
	})
}

// runStore makes the key in a key store and writes its public key.
func (f *keygenFlags) runStore(a *base.App, cmd *cobra.Command, r keystore.Ref) error {
	if f.publicOut == "" {
		return base.Usage("add --public-out FILE, where the public key goes", "--out %s names a key in a key store, and --public-out is missing", r)
	}
	created, err := keyflags.CreateInStore(a, cmd.Context(), r, f.spec, "--out", f.publicOut)
	if err != nil {
		return err
	}
	k, err := jwks.NewKey(created.Public)
	if err != nil {
		return base.Fail(err, base.BugFix, "the generated key")
	}
	res := KeygenResult{KeyRef: created.Ref, PublicKeyFile: f.publicOut,
		Key: keyInfo{KeyID: k.KeyID, Algorithm: k.Algorithm, Type: keyflags.KeyType(k.Public)}}
	return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) {
		fmt.Fprintf(w, "created the key in the key store, and wrote %s (public)\n", f.publicOut)
		fmt.Fprintf(w, "key: %s, %s, kid %s\n", res.Key.Type, res.Key.Algorithm, res.Key.KeyID)
		fmt.Fprintf(w, "reference: %s\n", created.Ref)
	})
}

// renderResult is what render and rotate report about the documents.
type renderResult struct {
	Issuer             string    `json:"issuer"`
	DiscoveryURL       string    `json:"discovery_url"`
	JWKSURI            string    `json:"jwks_uri"`
	Keys               []keyInfo `json:"keys"`
	Files              []string  `json:"files"`
	KubeAPIServerFlags []string  `json:"kube_apiserver_flags"`
	// SignerCommand runs the external signer kube-apiserver signs through
	// when a key is in a key store, which kube-apiserver cannot read.
	SignerCommand string   `json:"signer_command,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// signerSocket is the socket the printed signer command and
// kube-apiserver flags use.
const signerSocket = "/run/ksa/signer.sock"

// signerCommand is the ksa signer serve command that signs with signing
// and publishes the other keys for verification.
func signerCommand(signing string, others ...string) string {
	args := []string{"ksa", "signer", "serve", "--socket", signerSocket, "--key", signing}
	for _, o := range others {
		if o != signing {
			args = append(args, "--previous-key", o)
		}
	}
	return base.CommandLine(args...)
}

// issuerSetup is the input of a rendering: the issuer, where its key set
// lives, the key files and which one signs.
type issuerSetup struct {
	Issuer  string
	JWKSURI string
	Files   []*keyflags.File
	// Signing is the file of the signing key; nil when none holds a private key.
	Signing *keyflags.File
}

// inStore reports whether a key of the setup is in a key store.
func (s issuerSetup) inStore() bool {
	for _, kf := range s.Files {
		if kf.Store {
			return true
		}
	}
	return false
}

// render renders the documents of an issuer setup and writes them under dir.
func (s issuerSetup) render(a *base.App, dir string) (*renderResult, error) {
	if err := base.CheckIssuerURL(s.Issuer); err != nil {
		return nil, err
	}
	jwksURI := s.JWKSURI
	if jwksURI == "" {
		jwksURI = oidc.JWKSURL(s.Issuer)
	}
	res := &renderResult{Issuer: s.Issuer, DiscoveryURL: oidc.DiscoveryURL(s.Issuer), JWKSURI: jwksURI}
	var keys []jwks.Key
	seen := map[string]bool{}
	rs256 := false
	for _, kf := range s.Files {
		for _, k := range kf.Keys {
			if seen[k.KeyID] {
				continue // the same key from a private and a public file
			}
			seen[k.KeyID] = true
			keys = append(keys, k)
			rs256 = rs256 || k.Algorithm == jwks.RS256
			res.Keys = append(res.Keys, keyInfo{KeyID: k.KeyID, Algorithm: k.Algorithm, Type: keyflags.KeyType(k.Public), File: kf.Path,
				Signing: kf == s.Signing && kf.Signer != nil && mustKeyID(kf) == k.KeyID})
		}
	}
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: s.Issuer, JWKSURI: jwksURI}, keys)
	if err != nil {
		if ce := (*ksa.ConfigError)(nil); errors.As(err, &ce) && strings.HasPrefix(ce.Field, "oidc.IssuerConfig.") {
			return nil, issuerError(err)
		}
		return nil, base.Fail(err, keyflags.Fix, "rendering the documents")
	}
	outs := renderOutputs(dir, docs.Discovery, docs.JWKS)
	for _, o := range outs {
		res.Files = append(res.Files, o.Path)
	}
	if err := a.WriteOutputs(outs...); err != nil {
		return nil, err
	}
	res.KubeAPIServerFlags, res.SignerCommand = s.apiServerFlags(jwksURI)
	res.Warnings = s.warnings(rs256)
	return res, nil
}

// apiServerFlags are the flags kube-apiserver needs for the setup, and
// the signer it signs through when a key is in a key store.
func (s issuerSetup) apiServerFlags(jwksURI string) (flags []string, signer string) {
	flags = []string{"--service-account-issuer=" + s.Issuer, "--service-account-jwks-uri=" + jwksURI}
	if s.inStore() && s.Signing != nil {
		// kube-apiserver reads key files only: the signer serves them all.
		var others []string
		for _, kf := range s.Files {
			others = append(others, kf.Path)
		}
		return append(flags, "--service-account-signing-endpoint="+signerSocket), signerCommand(s.Signing.Path, others...)
	}
	if s.Signing != nil {
		flags = append(flags, "--service-account-signing-key-file="+s.Signing.Path)
	}
	for _, kf := range s.Files {
		flags = append(flags, "--service-account-key-file="+kf.Path)
	}
	return flags, ""
}

// warnings are what a rendering of the setup warns of.
func (s issuerSetup) warnings(rs256 bool) []string {
	var w []string
	if !rs256 {
		w = append(w, "no RS256 key: Microsoft Entra ID accepts RS256 tokens only; add an RSA key (ksa issuer keygen) for Azure workload identity")
	}
	if s.Signing == nil {
		w = append(w, "no --key file holds a private key: give kube-apiserver --service-account-signing-key-file yourself")
	}
	if strings.HasSuffix(s.Issuer, "/") {
		w = append(w, "the issuer ends with a slash: --service-account-issuer and every federated credential must end with it too, byte for byte")
	}
	return w
}

// renderOutputs are the files of a rendering under dir: they replace the
// documents an earlier rendering wrote, and nothing else.
func renderOutputs(dir string, discovery, keySet []byte) []base.Output {
	return []base.Output{
		{Path: filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(oidc.DiscoveryPath, "/"))), Data: discovery, Perm: 0o644, Flag: "--out", Replace: base.ReplaceDiscovery},
		{Path: filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(oidc.JWKSPath, "/"))), Data: keySet, Perm: 0o644, Flag: "--out", Replace: base.ReplaceKeySet},
		{Path: filepath.Join(dir, "jwks.json"), Data: keySet, Perm: 0o644, Flag: "--out", Replace: base.ReplaceKeySet},
	}
}

// checkRenderDir reports why a rendering could not write its documents
// under dir, before anything is written.
func checkRenderDir(a *base.App, dir string) error {
	for _, o := range renderOutputs(dir, nil, nil) {
		if _, err := a.CheckWritable(o); err != nil {
			return err
		}
	}
	return nil
}

// issuerError explains an issuer or jwks_uri that cannot be published, in
// the flags' words.
func issuerError(err error) error {
	flag := "--issuer"
	if p, ok := base.AsConfigProblem(err); ok && strings.HasSuffix(p.Field, "JWKSURI") {
		flag = "--jwks-uri"
	}
	words := base.FlagFor{"IssuerConfig.Issuer": "--issuer", "IssuerConfig.JWKSURI": "--jwks-uri"}
	return base.Fail(nil, "use an https:// URL without query or fragment for "+flag, "the issuer cannot be published: %s", words.Words(ksa.ErrorText(err)))
}

// mustKeyID returns the key ID of a file's private key.
func mustKeyID(kf *keyflags.File) string {
	kid, _ := jwks.KeyID(kf.Signer)
	return kid
}

// printRender writes a render result as text.
func printRender(w io.Writer, res *renderResult) {
	for _, f := range res.Files {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	fmt.Fprintln(w, "\nkeys published:")
	for _, k := range res.Keys {
		role := "verifies"
		if k.Signing {
			role = "signs"
		}
		fmt.Fprintf(w, "  %s  %s  %-11s %s (%s)\n", k.KeyID, k.Algorithm, k.Type, role, k.File)
	}
	fmt.Fprintf(w, "\nhost the files so that anyone can read, over https:\n  %s  (Content-Type: %s)\n  %s  (Content-Type: %s)\n",
		res.DiscoveryURL, oidc.DiscoveryContentType, res.JWKSURI, oidc.JWKSContentType)
	if res.SignerCommand != "" {
		fmt.Fprintf(w, "\nkube-apiserver cannot read a key store: run the external signer\n  %s\n", res.SignerCommand)
	}
	fmt.Fprintln(w, "\nkube-apiserver flags:")
	for _, fl := range res.KubeAPIServerFlags {
		fmt.Fprintf(w, "  %s\n", fl)
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "\nwarning: %s\n", warn)
	}
}

// loadSetup reads the key files of a rendering; signing names the file
// whose private key signs ("" means the first file holding one).
func loadSetup(a *base.App, issuer, jwksURI string, keyPaths []string, signing string) (issuerSetup, error) {
	s := issuerSetup{Issuer: issuer, JWKSURI: jwksURI}
	if signing != "" && !containsPath(keyPaths, signing) {
		keyPaths = append([]string{signing}, keyPaths...)
	}
	for _, p := range keyPaths {
		flag := "--key"
		if p == signing {
			flag = "--signing-key"
		}
		kf, err := keyflags.Load(a, context.Background(), p, flag)
		if err != nil {
			return s, err
		}
		for _, k := range kf.Keys {
			if err := keyflags.ForAPIServer(p, k.Public); err != nil {
				return s, err
			}
		}
		s.Files = append(s.Files, kf)
		if s.Signing == nil && kf.Signer != nil && (signing == "" || p == signing) {
			s.Signing = kf
		}
	}
	if signing != "" && s.Signing == nil {
		return s, base.Fail(nil, "pass the private key file as --signing-key", "--signing-key %s holds no private key", signing)
	}
	return s, nil
}

func containsPath(paths []string, p string) bool {
	for _, q := range paths {
		if q == p {
			return true
		}
	}
	return false
}

// renderFlags are the settings of "ksa issuer render".
type renderFlags struct {
	issuer, jwksURI, out, signing string
	keys                          []string
	format                        base.Format
}

func newRenderCmd(a *base.App) *cobra.Command {
	f := &renderFlags{}
	cmd := &cobra.Command{
		Use:   "render --issuer URL --key FILE... --out DIR",
		Short: "Write the discovery document and JWKS for blob hosting, and the kube-apiserver flags",
		Long: `Render the issuer's OpenID discovery document and key set, byte-identical
to what kube-apiserver serves for the same flags, into DIR laid out for blob
or CDN hosting:

  DIR/.well-known/openid-configuration   the discovery document
  DIR/openid/v1/jwks                     the key set (jwks_uri)
  DIR/jwks.json                          the same key set, where azwi users expect it

The jwks_uri is the issuer (one trailing slash removed) + /openid/v1/jwks
unless --jwks-uri says otherwise. Every key of every --key file is published
(private key files publish their public half only); the first private key
signs unless --signing-key names another. The matching kube-apiserver flags
are printed. Files are written atomically; re-rendering replaces the
documents an earlier rendering wrote, and nothing else: a file at one of
those paths that is not such a document, or that holds a private key, is
left as it is and the command fails.

A --key or --signing-key may also name a key in a key store (a pkcs11:,
awskms:, cloudkms: or azurekms: URI; see ksa issuer keygen): its public key
is published, and since kube-apiserver cannot read a key store, the command
prints the "ksa signer serve" command it signs through and the
--service-account-signing-endpoint flag instead of its key-file flags.`,
		Example: `  ksa issuer render --issuer https://oidc.example.com/cluster-1 --key sa.key --out site
  # Azure blob hosting; a trailing slash stays part of the issuer:
  ksa issuer render --issuer https://oidcissuer.blob.core.windows.net/cluster-1/ --key sa.key --out site
  # publish the previous key during a rotation:
  ksa issuer render --issuer https://oidc.example.com/cluster-1 --key new.key --key old.pub --out site -o json`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.issuer, "issuer", "", "issuer URL, exactly as --service-account-issuer and the federated credentials say it (required)")
	fl.StringArrayVar(&f.keys, "key", nil, "PEM key file to publish, or the URI of a key in a key store (repeatable; required)")
	fl.StringVar(&f.signing, "signing-key", "", "private key file, or key-store URI, that signs (default: the first --key holding a private key)")
	fl.StringVar(&f.jwksURI, "jwks-uri", "", "where the key set is hosted (default: issuer + /openid/v1/jwks)")
	fl.StringVar(&f.out, "out", "", "directory to write the documents into (required)")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "issuer", "key", "out")
	return cmd
}

func (f *renderFlags) run(a *base.App) error {
	s, err := loadSetup(a, f.issuer, f.jwksURI, f.keys, f.signing)
	if err != nil {
		return err
	}
	res, err := s.render(a, f.out)
	if err != nil {
		return err
	}
	return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) { printRender(w, res) })
}

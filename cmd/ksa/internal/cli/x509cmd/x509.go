package x509cmd

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"time"

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	"sigs.k8s.io/yaml"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/x509sa"
)

func New(a *base.App) *cobra.Command {
	return base.Group("x509", "Read and request service-account certificates",
		newX509InspectCmd(a), newX509CSRCmd(a))
}

// identityReport is the identity a certificate proves, or a request asks
// for.
type identityReport struct {
	Username    string            `json:"username"`
	UID         string            `json:"uid,omitempty"`
	Groups      []string          `json:"groups"`
	Namespace   string            `json:"namespace"`
	Name        string            `json:"service_account"`
	Pod         string            `json:"pod,omitempty"`
	Extensions  map[string]string `json:"extensions,omitempty"`
	SPIFFEID    string            `json:"spiffe_id,omitempty"`
	DNSNames    []string          `json:"dns_names,omitempty"`
	IPAddresses []string          `json:"ip_addresses,omitempty"`
	Usage       string            `json:"usage"`
}

func newIdentityReport(s x509sa.Subject, spiffe x509sa.SPIFFEID, dns []string, ips []netip.Addr, u x509sa.Usage) identityReport {
	user := s.UserInfo()
	r := identityReport{Username: user.Username, UID: user.UID, Groups: user.Groups,
		Namespace: s.ServiceAccount.Namespace, Name: s.ServiceAccount.Name, Pod: s.PodName,
		Extensions: s.Extensions, DNSNames: dns, Usage: u.String()}
	if !spiffe.IsZero() {
		r.SPIFFEID = spiffe.String()
	}
	for _, ip := range ips {
		r.IPAddresses = append(r.IPAddresses, ip.String())
	}
	return r
}

// print writes the identity as text, every value through termSafe.
func (r identityReport) print(w io.Writer) {
	fmt.Fprintf(w, "username:      %s\n", base.TermSafe(r.Username))
	if r.UID != "" {
		fmt.Fprintf(w, "uid:           %s\n", base.TermSafe(r.UID))
	}
	fmt.Fprintf(w, "groups:        %s\n", base.TermSafeAll(r.Groups, ", "))
	if r.Pod != "" {
		fmt.Fprintf(w, "pod:           %s/%s\n", base.TermSafe(r.Namespace), base.TermSafe(r.Pod))
	}
	if r.SPIFFEID != "" {
		fmt.Fprintf(w, "spiffe id:     %s\n", base.TermSafe(r.SPIFFEID))
	}
	if hosts := append(append([]string{}, r.DNSNames...), r.IPAddresses...); len(hosts) > 0 {
		fmt.Fprintf(w, "hosts:         %s\n", base.TermSafeAll(hosts, ", "))
	}
	fmt.Fprintf(w, "usage:         %s\n", r.Usage)
}

// certReport is what x509 inspect shows of a certificate.
type certReport struct {
	identityReport
	CredentialID string        `json:"credential_id"`
	Issuer       string        `json:"issuer"`
	NotBefore    base.TimeInfo `json:"not_before"`
	NotAfter     base.TimeInfo `json:"not_after"`
	Expired      bool          `json:"expired"`
	Verified     bool          `json:"verified"`
}

// csrReport is what x509 inspect shows of a certificate request: the
// identity it asks for, and with a CertificateSigningRequest object its
// signer and lifetime.
type csrReport struct {
	Request bool `json:"request"`
	identityReport
	SignerName        string `json:"signer_name,omitempty"`
	ExpirationSeconds int32  `json:"expiration_seconds,omitempty"`
}

// x509InspectFlags are the settings of "ksa x509 inspect".
type x509InspectFlags struct {
	format base.Format
}

func newX509InspectCmd(a *base.App) *cobra.Command {
	f := &x509InspectFlags{}
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Show the service-account identity a certificate proves, or a request asks for",
		Long: `Decode a PEM certificate (the first of the file; "-" for standard input)
and show the identity kube-apiserver's x509 authenticator derives from it:
username, UID, groups, pod, SPIFFE ID, usages, the credential ID and the
validity. The chain is not verified. A certificate whose subject would give
kube-apiserver another identity than a service account's, or more groups,
is refused.

What "ksa x509 csr" writes is read too: a PEM certificate request, or a
CertificateSigningRequest manifest (--object). The output then says it is a
request, and shows the identity it asks for (and the manifest's signer and
lifetime); nothing has been issued.`,
		Example: `  ksa x509 inspect tls.crt
  ksa x509 inspect /var/run/secrets/podcert/credentialbundle.pem -o json
  ksa x509 inspect cart.csr`,
		Args: base.Args(1, 1),
		RunE: base.Run(func(cmd *cobra.Command, args []string) error { return f.run(a, args[0]) }),
	}
	base.AddOutputFlag(cmd, &f.format)
	return cmd
}

func (f *x509InspectFlags) run(a *base.App, name string) error {
	data, err := base.ReadInput(name, a.Stdin, base.MaxCertFile)
	switch {
	case errors.Is(err, base.ErrTooLarge):
		return base.Fail(nil, "pass a PEM certificate or request file", "%s is over the %d-byte limit", base.InputName(name), base.MaxCertFile)
	case errors.Is(err, fs.ErrNotExist):
		return base.Fail(nil, "check the path", "certificate file %s does not exist", name)
	case err != nil:
		return base.Fail(err, "pass a readable PEM certificate file", "reading %s", base.InputName(name))
	}
	switch kind, block := firstPEM(data); {
	case kind == "CERTIFICATE":
		return f.certificate(a, name, block)
	case kind == x509sa.CSRPEMType:
		return f.request(a, name, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: block}), nil)
	case kind == "" && bytes.Contains(data, []byte("CertificateSigningRequest")):
		var obj certificatesv1.CertificateSigningRequest
		if err := yaml.Unmarshal(data, &obj); err != nil || obj.Kind != "CertificateSigningRequest" {
			return base.Fail(nil, "pass the manifest ksa x509 csr --object wrote, unchanged", "%s is not a CertificateSigningRequest manifest", base.InputName(name))
		}
		return f.request(a, name, obj.Spec.Request, &obj)
	}
	return base.Fail(nil, "pass a PEM file with a CERTIFICATE block, or what ksa x509 csr wrote", "%s holds no certificate", base.InputName(name))
}

// firstPEM returns the type and bytes of the first CERTIFICATE or
// CERTIFICATE REQUEST block.
func firstPEM(data []byte) (string, []byte) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return "", nil
		}
		if b.Type == "CERTIFICATE" || b.Type == x509sa.CSRPEMType {
			return b.Type, b.Bytes
		}
	}
}

// certificate shows the identity a certificate proves.
func (f *x509InspectFlags) certificate(a *base.App, name string, der []byte) error {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return base.Fail(err, "pass a PEM file with a CERTIFICATE block", "%s holds no certificate", base.InputName(name))
	}
	dec, err := x509sa.DecodeCertificate(cert)
	if err != nil {
		return base.Fail(nil, "issue the certificate from a request ksa x509 csr made", "%s is not a service-account certificate: %s", base.InputName(name), ksa.ErrorText(err))
	}
	now := a.Now()
	r := certReport{identityReport: newIdentityReport(dec.Subject, dec.SPIFFEID, dec.DNSNames, dec.IPAddresses, dec.Usage),
		CredentialID: dec.CredentialID, Issuer: cert.Issuer.String(),
		NotBefore: *base.NewTimeInfo(cert.NotBefore, now), NotAfter: *base.NewTimeInfo(cert.NotAfter, now), Expired: now.After(cert.NotAfter)}
	return base.PrintData(a.Stdout, f.format, r, func(w io.Writer) {
		fmt.Fprintln(w, "UNVERIFIED: the chain was not checked")
		r.identityReport.print(w)
		fmt.Fprintf(w, "credential id: %s\nissuer:        %s\n", base.TermSafe(r.CredentialID), base.TermSafe(r.Issuer))
		fmt.Fprintf(w, "not before:    %s (%s)\nnot after:     %s (%s)\n", r.NotBefore.Time.Format(time.RFC3339), r.NotBefore.Relative,
			r.NotAfter.Time.Format(time.RFC3339), r.NotAfter.Relative)
		if r.Expired {
			fmt.Fprintln(w, "state:         EXPIRED")
		}
	})
}

// request shows the identity a certificate request asks for; obj is the
// CertificateSigningRequest that held it, if any.
func (f *x509InspectFlags) request(a *base.App, name string, pemData []byte, obj *certificatesv1.CertificateSigningRequest) error {
	csr, err := x509sa.ParseCSRPEM(pemData)
	if err != nil {
		return base.Fail(nil, "pass a request ksa x509 csr made, unchanged", "%s is not a service-account certificate request: %s", base.InputName(name), ksa.ErrorText(err))
	}
	r := csrReport{Request: true, identityReport: newIdentityReport(csr.Subject, csr.SPIFFEID, csr.DNSNames, csr.IPAddresses, csr.Usage)}
	if obj != nil {
		r.SignerName = obj.Spec.SignerName
		if obj.Spec.ExpirationSeconds != nil {
			r.ExpirationSeconds = *obj.Spec.ExpirationSeconds
		}
	}
	return base.PrintData(a.Stdout, f.format, r, func(w io.Writer) {
		fmt.Fprintln(w, "REQUEST: a certificate request, not a certificate: the identity it asks for, nothing issued")
		r.identityReport.print(w)
		if r.SignerName != "" {
			fmt.Fprintf(w, "signer:        %s\n", base.TermSafe(r.SignerName))
		}
		if r.ExpirationSeconds != 0 {
			fmt.Fprintf(w, "lifetime:      %s\n", base.Secs(int64(r.ExpirationSeconds)))
		}
	})
}

// csrFlags are the settings of "ksa x509 csr".
type csrFlags struct {
	sa                                                                  ksa.ServiceAccount
	pod, File, newKey, usageName, trustDomain, objName, signerName, out string
	hosts                                                               []string
	lifetime                                                            time.Duration
	object, force                                                       bool
	format                                                              base.Format
}

func newX509CSRCmd(a *base.App) *cobra.Command {
	f := &csrFlags{}
	cmd := &cobra.Command{
		Use:   "csr --namespace NS --service-account NAME (--key FILE | --new-key FILE)",
		Short: "Make a certificate request for a service account (and pod)",
		Long: `Make a PKCS #10 certificate request whose subject kube-apiserver's x509
authenticator maps to the service account (CN system:serviceaccount:NS:NAME,
its two groups, the UID attribute, and the pod when given). The key is an
existing PEM private key (--key) or a new one (--new-key, written mode 0600,
never overwriting). The request is printed as PEM; with --object, as a
certificates.k8s.io/v1 CertificateSigningRequest manifest to create.`,
		Example: `  ksa x509 csr --namespace shop --service-account cart --uid 8f1c2a9e-0d4b-4c1e-9a7f-1b2c3d4e5f60 \
      --new-key cart.key > cart.csr
  ksa x509 csr --namespace shop --service-account cart --key cart.key --pod cart-7d9f \
      --object --lifetime 24h | kubectl create -f -`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.sa.Namespace, "namespace", "", "service account namespace (required)")
	fl.StringVar(&f.sa.Name, "service-account", "", "service account name (required)")
	fl.StringVar(&f.sa.UID, "uid", "", "service account UID (recommended: kube-apiserver reads it from the certificate)")
	fl.StringVar(&f.pod, "pod", "", "pod name, in the same namespace")
	fl.StringVar(&f.File, "key", "", "existing PEM private key")
	fl.StringVar(&f.newKey, "new-key", "", "create an ECDSA P-256 key in this file (mode 0600)")
	fl.StringVar(&f.usageName, "usage", "client", "client, server or both")
	fl.StringArrayVar(&f.hosts, "host", nil, "DNS name or IP the certificate serves (repeatable; needs --usage server or both)")
	fl.StringVar(&f.trustDomain, "trust-domain", "", "add the SPIFFE ID spiffe://TRUST-DOMAIN/ns/NS/sa/NAME (needs --usage both)")
	fl.BoolVar(&f.object, "object", false, "print a CertificateSigningRequest manifest instead of PEM")
	fl.StringVar(&f.objName, "name", "", "with --object: the object's name (default: generated)")
	fl.StringVar(&f.signerName, "signer-name", x509sa.KubeAPIServerClientSigner, "with --object: spec.signerName")
	fl.DurationVar(&f.lifetime, "lifetime", 0, "with --object: spec.expirationSeconds, at least 10m (not set by default: the signer chooses)")
	fl.StringVar(&f.out, "out", "", "write the request to this file instead of standard output; an existing file is not replaced without --force")
	fl.BoolVar(&f.force, "force", false, "let --out replace an existing file (never one holding a private key, nor the --key file)")
	fl.VarP((*base.ManifestFormat)(&f.format), "output", "o", "with --object: the manifest's format, yaml or json")
	f.format = base.FormatYAML
	base.Required(cmd, "namespace", "service-account")
	return cmd
}

func (f *csrFlags) run(a *base.App, cmd *cobra.Command) error {
	u, err := f.check(cmd)
	if err != nil {
		return err
	}
	var key crypto.Signer
	if f.File != "" {
		if key, err = keyflags.LoadSigner(a, context.Background(), f.File, "--key"); err != nil {
			return err
		}
	} else {
		if key, err = (keyflags.Spec{Type: "ecdsa", Curve: "P-256"}).Generate(); err != nil {
			return err
		}
	}
	der, err := x509sa.CreateCSR(rand.Reader, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: f.sa, PodName: f.pod},
		Usage: u, Hosts: f.hosts, TrustDomain: f.trustDomain})
	if err != nil {
		return csrError(err)
	}
	doc, err := f.document(der, u)
	if err != nil {
		return err
	}
	var outs []base.Output
	if f.newKey != "" {
		priv, _, err := keyflags.EncodePair(key)
		if err != nil {
			return base.Fail(err, base.BugFix, "encoding the key")
		}
		outs = append(outs, base.Output{Path: f.newKey, Data: priv, Perm: 0o600, Flag: "--new-key",
			ExistsFix: "choose another --new-key, or pass the existing key as --key"})
	}
	if f.out != "" {
		outs = append(outs, base.Output{Path: f.out, Data: doc, Perm: 0o644, Flag: "--out", Replace: base.Forced(f.force)})
	}
	if err := a.WriteOutputs(outs...); err != nil || f.out != "" {
		return err
	}
	_, err = a.Stdout.Write(doc)
	return err
}

// check refuses flags that do not go together and returns the usage.
func (f *csrFlags) check(cmd *cobra.Command) (x509sa.Usage, error) {
	serving := f.usageName == "server" || f.usageName == "both" || f.usageName == "client+server"
	both := f.usageName == "both" || f.usageName == "client+server"
	if err := base.FirstError(
		base.OnlyWith(cmd, "name", f.object, "--object"),
		base.OnlyWith(cmd, "signer-name", f.object, "--object"),
		base.OnlyWith(cmd, "lifetime", f.object, "--object"),
		base.OnlyWith(cmd, "output", f.object, "--object"),
		base.OnlyWith(cmd, "force", f.out != "", "--out"),
		base.OnlyWith(cmd, "host", serving, "--usage server or both"),
		base.OnlyWith(cmd, "trust-domain", both, "--usage both"),
	); err != nil {
		return 0, err
	}
	if err := base.CheckNames(f.sa.Namespace, f.sa.Name, f.pod); err != nil {
		return 0, err
	}
	if (f.File == "") == (f.newKey == "") {
		return 0, base.Usage("give --key FILE for an existing key, or --new-key FILE to create one", "exactly one of --key and --new-key is needed")
	}
	switch f.usageName {
	case "client":
		return x509sa.ClientAuth, nil
	case "server":
		return x509sa.ServerAuth, nil
	case "both", "client+server":
		return x509sa.ClientAndServerAuth, nil
	}
	return 0, base.Usage("use --usage client, server or both", "--usage %q is not known", f.usageName)
}

// document is the request to write: PEM, or with --object the
// CertificateSigningRequest object in --output's format.
func (f *csrFlags) document(der []byte, u x509sa.Usage) ([]byte, error) {
	if !f.object {
		return x509sa.EncodeCSRPEM(der), nil
	}
	obj, err := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{Name: f.objName, SignerName: f.signerName, Usage: u, Lifetime: f.lifetime})
	if err != nil {
		return nil, csrError(err)
	}
	doc, err := yaml.Marshal(obj)
	if err == nil && f.format == base.FormatJSON {
		if doc, err = yaml.YAMLToJSON(doc); err == nil {
			doc = append(doc, '\n')
		}
	}
	if err != nil {
		return nil, base.Fail(err, base.BugFix, "encoding the request")
	}
	return doc, nil
}

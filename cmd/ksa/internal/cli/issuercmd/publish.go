package issuercmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/stores"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/publish"
)

// azwiKeySetName is the copy of the key set azwi users expect.
const azwiKeySetName = "jwks.json"

// publishFlags are the settings of "ksa issuer publish".
type publishFlags struct {
	to, from, publicURL, caFile string
	dryRun, noCheck             bool
	format                      base.Format
}

// publishedObject is one document of a publication.
type publishedObject struct {
	Name         string `json:"name"`
	URL          string `json:"url"`
	ContentType  string `json:"content_type"`
	CacheControl string `json:"cache_control"`
	Bytes        int    `json:"bytes"`
	Written      bool   `json:"written"`
}

type publishResult struct {
	To        string            `json:"to"`
	Issuer    string            `json:"issuer"`
	PublicURL string            `json:"public_url,omitempty"`
	DryRun    bool              `json:"dry_run,omitempty"`
	Objects   []publishedObject `json:"objects"`
	// Withdrawn are the key IDs the store published that the new key
	// set drops: tokens they signed stop verifying once caches expire.
	Withdrawn []string     `json:"withdrawn_keys,omitempty"`
	Check     *checkResult `json:"check,omitempty"`
	elapsed   time.Duration
}

// publishHelp is the long help of its command.
const publishHelp = `Upload the documents "ksa issuer render" wrote into DIR to where relying
parties read them, then check the result as Microsoft Entra ID, AWS and
Google fetch it ("ksa issuer check" against the issuer), unless --no-check.

--to names the store:

  https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX   Azure Blob
  s3://BUCKET/PREFIX                                       Amazon S3
  gs://BUCKET/PREFIX                                       Google Cloud Storage
  DIR (or file:///DIR)                                     a directory a web server serves

Credentials come from each cloud's default chain: for Azure
AZURE_STORAGE_CONNECTION_STRING when set, else azidentity's default chain
(environment, workload identity, managed identity, az login); for S3 the AWS
SDK's (environment, profile, IRSA, instance roles), AWS_REGION naming the
bucket's region; for GCS application default credentials. An S3-compatible
server is reached through AWS_ENDPOINT_URL_S3, a GCS emulator through
STORAGE_EMULATOR_HOST, Azurite through its connection string.

Each document is one request, with Content-Type application/json (the
discovery document) or application/jwk-set+json (the key set) and
Cache-Control: public, max-age=3600. The key set is written first and the
discovery document that points to it last, so that a reader never finds a
document whose keys are missing; a publication stopped in between leaves
the previous discovery document, pointing at the new key set: run the
command again.

Before anything is written, the command refuses: documents rendered for
another issuer than the one the store serves (--public-url when a CDN or
custom domain serves the bucket), a key set with private material, a key
set outside the issuer, missing credentials, a missing bucket or
container, credentials without access, a container the cloud does not
serve to anonymous readers (Azure; S3 and GCS when their policy can be
read) unless --public-url is given and serves anonymous readers there (a
CDN may read a private bucket: the discovery document is read at
--public-url, anonymously, and a 401 or 403 is refused; --no-check skips
it), and a published discovery document of another issuer (a trailing
slash counts: every federated credential names the issuer byte for byte).

--ca-file is trusted by every client of the command: the store's (a
store behind a TLS-inspecting proxy, a test endpoint) and the check's.

--dry-run prints what would be written where, without contacting the store.`

func newPublishCmd(a *base.App) *cobra.Command {
	f := &publishFlags{}
	cmd := &cobra.Command{
		Use:   "publish --from DIR --to URL",
		Short: "Upload the rendered documents to Azure Blob, S3, GCS or a directory, key set first, then check them as the clouds fetch them",
		Long:  publishHelp,
		Example: `  # site/ from: ksa issuer render --issuer https://oidcissuer.blob.core.windows.net/cluster-1/ --key sa.key --out site
  ksa issuer publish --from site --to https://oidcissuer.blob.core.windows.net/cluster-1/
  ksa issuer publish --from site --to https://oidcissuer.blob.core.windows.net/cluster-1/ --dry-run -o json
  # a bucket served through CloudFront at the issuer's own domain:
  ksa issuer publish --from site --to s3://oidc-example/cluster-1 --public-url https://oidc.example.com/cluster-1`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.from, "from", "", "directory ksa issuer render wrote (required)")
	fl.StringVar(&f.to, "to", "", "where to publish: https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or a directory (required)")
	fl.StringVar(&f.publicURL, "public-url", "", "https URL at which relying parties read --to (default: the store's own public URL)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be written where; contact nothing")
	fl.BoolVar(&f.noCheck, "no-check", false, "do not check the published issuer afterwards")
	fl.StringVar(&f.caFile, "ca-file", "", "also trust these CA certificates: the store's endpoint and the check (a TLS-inspecting proxy, test setups; clouds trust public CAs only)")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "from", "to")
	return cmd
}

// siteDocs are the documents of a rendering, read back and checked.
type siteDocs struct {
	issuer    string
	jwksURI   string
	discovery []byte
	keySet    []byte
	// azwi is DIR/jwks.json when present (the same bytes as keySet).
	azwi []byte
}

func (f *publishFlags) run(a *base.App, cmd *cobra.Command) error {
	err := f.publish(a, cmd)
	var e *base.Error
	if errors.As(err, &e) && untrustedCert(e) {
		// --ca-file is trusted by every client of the store and the check.
		e.Fix = "give --ca-file the CA certificate that signed the store's certificate (a TLS-inspecting proxy's, or a test endpoint's)"
		if f.caFile != "" {
			e.Fix = "give --ca-file a file that also holds the CA certificate that signed the store's certificate (a TLS-inspecting proxy's, or a test endpoint's)"
		}
	}
	return err
}

func (f *publishFlags) publish(a *base.App, cmd *cobra.Command) error {
	if err := base.OnlyWithout(cmd, "ca-file", "dry-run"); err != nil {
		return err
	}
	loc, err := publish.ParseLocation(f.to)
	if err != nil {
		return publishUsage(err)
	}
	if err := f.checkPublicURL(); err != nil {
		return err
	}
	docs, err := readSite(f.from)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	client, store, publicURL, err := f.open(ctx, loc)
	if err != nil {
		return err
	}
	objects, err := docs.objects(loc, publicURL)
	if err != nil {
		return err
	}
	res := &publishResult{To: f.to, Issuer: docs.issuer, PublicURL: publicURL, DryRun: f.dryRun}
	for _, o := range objects {
		res.Objects = append(res.Objects, publishedObject{Name: o.Name, URL: loc.URL(o.Name), ContentType: o.ContentType, CacheControl: o.CacheControl, Bytes: len(o.Data)})
	}
	if f.dryRun {
		return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) { printPublish(w, res) })
	}
	pf, err := f.preflight(ctx, store, docs, client)
	if err != nil {
		return err
	}
	start := time.Now()
	opts := publish.PublishOptions{PublicURL: publicURL}
	if res.Withdrawn, err = publishSite(ctx, store, docs.site(), opts, res.Objects, "run the same ksa issuer publish again: it rewrites every document, the discovery document last"); err != nil {
		return err
	}
	res.elapsed = time.Since(start)
	if !f.noCheck {
		c := &checker{a: a, client: client}
		res.Check = c.check(ctx, docs.issuer)
		addAccessProblem(res.Check, pf)
	}
	if err := base.PrintData(a.Stdout, f.format, res, func(w io.Writer) { printPublish(w, res) }); err != nil {
		return err
	}
	if res.Check != nil && !res.Check.OK {
		return base.Fail(nil, "apply the fixes above, then publish again (or run ksa issuer check "+base.Quoted(docs.issuer)+")",
			"published to %s, but relying parties cannot use %s: %d problem(s)", f.to, docs.issuer, errorCount(res.Check))
	}
	return nil
}

// checkPublicURL refuses a --public-url that is not https, or holds what
// may be a credential.
func (f *publishFlags) checkPublicURL() error {
	if f.publicURL == "" {
		return nil
	}
	if err := base.CheckIssuerURL(f.publicURL); err != nil {
		return base.Usage("give --public-url the https:// URL relying parties read the documents at", "--public-url %q is not https", publish.RedactURL(f.publicURL))
	}
	if shown := publish.RedactURL(f.publicURL); shown != f.publicURL {
		return base.Usage("give --public-url the URL anonymous readers use, without user:password@, query or fragment", "--public-url %q has user information, a query or a fragment", shown)
	}
	return nil
}

// open returns the client of --ca-file, the store of the location and the
// URL relying parties read it at; in a dry run, no client or store (the
// cloud's own public URL, when known without a request).
func (f *publishFlags) open(ctx context.Context, loc publish.Location) (*http.Client, publish.Store, string, error) {
	publicURL := f.publicURL
	if f.dryRun {
		if publicURL == "" {
			publicURL = loc.PublicURL()
		}
		return nil, nil, publicURL, nil
	}
	// Before anything is written: a CA file that cannot be read would
	// stop the upload or the check after it.
	client, err := base.HTTPClient(f.caFile)
	if err != nil {
		return nil, nil, "", err
	}
	storeCfg := publish.Config{Openers: stores.Openers()}
	if tr, ok := client.Transport.(*http.Transport); ok && f.caFile != "" {
		// The store's clients trust --ca-file too: a store behind a
		// TLS-inspecting proxy, or a test endpoint.
		storeCfg.RootCAs = tr.TLSClientConfig.RootCAs
	}
	store, err := publish.Open(ctx, loc, storeCfg)
	if err != nil {
		return nil, nil, "", publishError(err)
	}
	if publicURL == "" {
		publicURL = store.PublicURL()
	}
	return client, store, publicURL, nil
}

// preflight checks the store before anything is written (credentials,
// bucket, anonymous reads, the issuer already published there), through
// the library, in the flags' words.
func (f *publishFlags) preflight(ctx context.Context, store publish.Store, docs *siteDocs, client *http.Client) (publish.Preflight, error) {
	opts := publish.PreflightOptions{PublicURL: f.publicURL}
	if !f.noCheck {
		// --public-url: a CDN may read a private bucket, so what anonymous
		// readers get there decides.
		opts.HTTPClient = client
	}
	pf, err := publish.PreflightIssuer(ctx, store, docs.issuer, opts)
	var ae *publish.AccessError
	var ie *publish.IssuerError
	switch {
	case errors.As(err, &ae):
		return pf, f.accessError(ae)
	case errors.As(err, &ie):
		return pf, f.issuerTaken(store, docs, ie)
	case err != nil:
		return pf, publishError(err)
	}
	return pf, nil
}

// accessError words a store relying parties cannot read anonymously.
func (f *publishFlags) accessError(ae *publish.AccessError) error {
	const anon = "Entra ID, AWS and Google fetch the documents anonymously (nothing was written)"
	fix := flagWords.Replace(ae.Fix) + "; or, when a CDN serves --public-url, let it read the bucket and serve anyone"
	switch {
	case ae.URL == "":
		return base.Fail(nil, flagWords.Replace(ae.Fix), "%s is not publicly readable: "+anon, f.to)
	case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
		return base.Fail(nil, fix, "%s is not publicly readable, and %s refuses anonymous readers (status %d): "+anon, f.to, ae.URL, ae.Status)
	case ae.Status == http.StatusNotFound:
		return base.Fail(nil, fix, "%s is not publicly readable, and %s does not serve the discovery document it holds (status 404) (nothing was written)", f.to, ae.URL)
	}
	return base.Fail(nil, "check that --public-url serves "+f.to+", or publish with --no-check, which reads nothing back", "%s is not publicly readable, and %s (nothing was written)", f.to, ae.Problem)
}

// issuerTaken words a store that publishes another issuer already.
func (f *publishFlags) issuerTaken(store publish.Store, docs *siteDocs, ie *publish.IssuerError) error {
	switch {
	case ie.Err != nil:
		return base.Fail(nil, "delete it from the store if it is not yours, or publish elsewhere", "%s holds a discovery document that does not parse: %s (nothing was written)", store.Location().URL(discoveryName), ksa.ErrorText(ie.Err))
	case ie.TrailingSlash():
		return base.Fail(nil, "render again with --issuer "+base.Quoted(ie.Published)+" (the issuer kube-apiserver and every federated credential name, byte for byte), or delete the published documents first if you are moving the issuer",
			"%s already publishes issuer %q, which differs from the rendered %q by a trailing slash (nothing was written)", f.to, ie.Published, docs.issuer)
	}
	return base.Fail(nil, "publish to the location of issuer "+base.Quoted(docs.issuer)+", or delete the published documents first if you are moving the issuer",
		"%s already publishes issuer %q, not the rendered %q (nothing was written)", f.to, ie.Published, docs.issuer)
}

// publishSite publishes the site through the library, in its order (the
// key set first, the discovery document last), marking each object
// written in res (in the same order); a failure after the first write
// names what was written and what was not, with again, the command to run
// again. It returns the key IDs the store published that the site drops.
func publishSite(ctx context.Context, store publish.Store, site *publish.Site, opts publish.PublishOptions, res []publishedObject, again string) ([]string, error) {
	pr, err := publish.Publish(ctx, store, site, opts)
	if pr != nil {
		for i := range pr.Objects {
			res[i].Written = true
		}
	}
	var partial *publish.PartialError
	switch {
	case errors.As(err, &partial):
		return nil, publishPartial(partial.Err, store.Location(), partial.Written, partial.Left, again)
	case errors.Is(err, publish.ErrChanged):
		e := publishError(err).(*base.Error)
		e.What += " (the store was left as it is)"
		e.Fix = changedFix(store.Location(), again)
		return nil, e
	case err != nil:
		return nil, publishError(err)
	}
	return pr.Withdrawn, nil
}

// changedFix is the fix of a write refused because another writer changed
// the store since the run read it.
func changedFix(loc publish.Location, again string) string {
	return "find out what else writes " + loc.String() + " (another ksa issuer rotate of the same issuer, a ksa issuer publish), stop it, then " + again
}

// addAccessProblem adds the store's own fix when relying parties were
// refused the published discovery document (401 or 403): the check's
// advice is generic, the store knows its access settings.
func addAccessProblem(res *checkResult, pf publish.Preflight) {
	if res.OK || pf.AccessFix == "" || pf.Access == publish.AccessPublic {
		return
	}
	f := publish.DiscoveryFinding(res.report)
	if f == nil || (f.Status != http.StatusUnauthorized && f.Status != http.StatusForbidden) {
		return
	}
	res.add(sevError, "access", flagWords.Replace(pf.AccessFix), "the store does not serve the documents to anonymous readers (status %d at %s)", f.Status, res.DiscoveryURL)
}

// discoveryName is the discovery document's object name.
var discoveryName = publish.DiscoveryName

// readSite reads and checks the documents a rendering wrote into dir.
func readSite(dir string) (*siteDocs, error) {
	read := func(name string, limit int64) ([]byte, error) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		data, err := base.ReadInput(p, nil, limit)
		if errors.Is(err, base.ErrTooLarge) {
			return nil, base.Fail(nil, "give --from the directory ksa issuer render wrote", "%s is over %d bytes", p, limit)
		}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		if err != nil {
			return nil, base.Fail(err, "give --from the directory ksa issuer render --out wrote", "reading %s", p)
		}
		return data, nil
	}
	disc, err := read(discoveryName, oidc.MaxDiscoveryBytes)
	if err != nil {
		return nil, err
	}
	md, err := oidc.ParseMetadata(disc)
	if err != nil {
		return nil, base.Fail(nil, "render the documents again with ksa issuer render", "%s is not a discovery document: %s", filepath.Join(dir, filepath.FromSlash(discoveryName)), ksa.ErrorText(err))
	}
	if err := base.CheckIssuerURL(md.Issuer); err != nil {
		return nil, err
	}
	keySetPath := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(oidc.JWKSPath, "/")))
	set, err := read(strings.TrimPrefix(oidc.JWKSPath, "/"), jwks.DefaultMaxSetBytes)
	if err != nil {
		return nil, err
	}
	if err := jwks.Audit(set); err != nil {
		return nil, base.Fail(nil, "never publish this file: render the key set from public keys with ksa issuer render", "%s is not a public key set: %s", keySetPath, ksa.ErrorText(err))
	}
	parsed, err := jwks.ParseSet(set, jwks.ParseOptions{})
	if err != nil {
		return nil, base.Fail(nil, "render the documents again with ksa issuer render", "%s is not a usable key set: %s", keySetPath, ksa.ErrorText(err))
	}
	if len(parsed.Keys) == 0 {
		return nil, base.Fail(nil, "render with the signing key's --key", "%s holds no usable key", keySetPath)
	}
	docs := &siteDocs{issuer: md.Issuer, jwksURI: md.JWKSURI, discovery: disc, keySet: set}
	if azwi, err := read(azwiKeySetName, jwks.DefaultMaxSetBytes); err == nil {
		if string(azwi) != string(set) {
			return nil, base.Fail(nil, "render the documents again with ksa issuer render", "%s differs from %s: the two copies of the key set must be the same", filepath.Join(dir, azwiKeySetName), keySetPath)
		}
		docs.azwi = azwi
	}
	return docs, nil
}

// site is the documents as the library publishes them.
func (d *siteDocs) site() *publish.Site {
	s := &publish.Site{Discovery: d.discovery, KeySet: d.keySet}
	if d.azwi != nil {
		s.Copies = []string{azwiKeySetName}
	}
	return s
}

// objects returns the documents to write, in order: the key set (and its
// azwi copy) before the discovery document that points to it. The
// issuer must be served at publicURL ("" when unknown) and its key set
// inside it.
func (d *siteDocs) objects(loc publish.Location, publicURL string) ([]publish.Object, error) {
	objs, err := d.site().Objects(publicURL)
	var pe *publish.Error
	switch {
	case err == nil:
		return objs, nil
	case errors.Is(err, publish.ErrServedElsewhere):
		fix := "render again with --issuer " + base.Quoted(publicURL) + ", or give --public-url " + base.Quoted(d.issuer) + " when a CDN or custom domain serves " + loc.String() + " there"
		return nil, base.Fail(nil, fix, "the documents are for issuer %q, but %s is served at %s (nothing was written)", d.issuer, loc, publicURL)
	case errors.Is(err, publish.ErrKeySetOutside) && errors.As(err, &pe) && pe.Err != nil:
		return nil, base.Fail(nil, "render without --jwks-uri", "the discovery document's jwks_uri %q has an unusable path", d.jwksURI)
	case errors.Is(err, publish.ErrKeySetOutside):
		return nil, base.Fail(nil, "render without --jwks-uri, so that the key set is published beside the discovery document", "the discovery document's jwks_uri %q is outside the issuer %q: publish writes under the issuer only", d.jwksURI, d.issuer)
	}
	return nil, base.Fail(err, "render the documents again with ksa issuer render", "the rendered documents")
}

// publishError turns a store's failure into the command's, with its fix.
func publishError(err error) error {
	var pe *publish.Error
	if errors.As(err, &pe) {
		fix := flagWords.Replace(pe.Fix)
		if fix == "" {
			fix = "check --to and the store"
		}
		if untrustedCert(err) {
			fix = storeTrustFix
		}
		return base.Fail(pe.Err, fix, "%s", pe.What)
	}
	return base.Fail(err, "check --to and the store", "publishing")
}

// flagWords puts the library's words for what the command's flags give
// into the flags' words.
var flagWords = strings.NewReplacer(
	"give the location ", "give --to ",
	"in the location", "in --to",
	"(the public URL of a CDN is not a store)", "(the public URL of a CDN goes in --public-url)",
	"at a public URL of its own", "and give --public-url",
	"each store takes them from the environment", "they come from the environment (see 'ksa issuer publish --help')",
	"give a URL such as", "give --to a URL such as",
	"this process may", "ksa may",
)

// storeTrustFix is the fix of a store whose certificate is not trusted.
const storeTrustFix = "add the CA certificate that signed the store's certificate (a TLS-inspecting proxy's, or a test endpoint's) to the system's roots: SSL_CERT_FILE=FILE, or AWS_CA_BUNDLE=FILE for S3"

// untrustedCert reports whether err is a TLS certificate the client did
// not trust (an unknown CA, another host's name, an expired certificate).
func untrustedCert(err error) bool {
	var (
		ve *tls.CertificateVerificationError
		ua x509.UnknownAuthorityError
		he x509.HostnameError
		ci x509.CertificateInvalidError
	)
	return errors.As(err, &ve) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// publishUsage is a refused --to.
func publishUsage(err error) error {
	var pe *publish.Error
	if errors.As(err, &pe) {
		return base.Usage(flagWords.Replace(pe.Fix), "--to: %s", pe.What)
	}
	return base.Usage("see 'ksa issuer publish --help'", "--to: %s", err)
}

// publishPartial is a failure after some objects were written: the
// discovery document, last, was not, so readers still see the previous
// one, pointing at the key set written.
func publishPartial(err error, loc publish.Location, names, left []string, again string) error {
	e := publishError(err).(*base.Error)
	e.What = fmt.Sprintf("publication stopped after %s, before %s (readers still get the previous discovery document, which points at the new key set): %s",
		strings.Join(names, ", "), strings.Join(left, ", "), e.What)
	switch {
	case errors.Is(err, publish.ErrStore):
		e.Fix = again
	case errors.Is(err, publish.ErrChanged):
		e.Fix = changedFix(loc, again)
	default:
		e.Fix += "; then " + again
	}
	return e
}

func errorCount(res *checkResult) int {
	n := 0
	for _, p := range res.Problems {
		if p.Severity == sevError {
			n++
		}
	}
	return n
}

// printPublish writes a publication as text.
func printPublish(w io.Writer, res *publishResult) {
	verb := "published"
	if res.DryRun {
		verb = "would publish (dry run)"
	}
	fmt.Fprintf(w, "%s issuer %s to %s:\n", verb, base.TermSafe(res.Issuer), base.TermSafe(res.To))
	for _, o := range res.Objects {
		fmt.Fprintf(w, "  %s  (%s; %s; %d bytes)\n", base.TermSafe(o.URL), o.ContentType, o.CacheControl, o.Bytes)
	}
	if res.PublicURL != "" {
		fmt.Fprintf(w, "served at %s\n", base.TermSafe(res.PublicURL))
	}
	if res.DryRun {
		fmt.Fprintln(w, "the key set first, the discovery document last; then ksa issuer check "+base.CommandLine(res.Issuer))
		return
	}
	fmt.Fprintf(w, "%d objects, one request each, in %s\n", len(res.Objects), res.elapsed.Round(time.Millisecond))
	for _, kid := range res.Withdrawn {
		fmt.Fprintf(w, "warning: key %s is no longer published: tokens it signed stop verifying once relying parties refresh (max-age 3600)\n", base.TermSafe(kid))
	}
	if res.Check != nil {
		fmt.Fprintf(w, "\nchecked as Entra ID, AWS and Google fetch it:\n")
		printCheck(w, res.Check)
	}
}

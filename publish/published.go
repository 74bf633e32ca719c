package publish

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/oidc"
)

// ErrOtherIssuer: the location already publishes the discovery document
// of another issuer, or one that does not parse; publishing there would
// replace it.
var ErrOtherIssuer = errs.New(prefix, "another issuer published there")

// IssuerError is a location that publishes the discovery document of
// another issuer than the one to publish (see [CheckPublished]). It
// matches ErrOtherIssuer.
type IssuerError struct {
	// Location is where the discovery document is published.
	Location Location
	// Published is the issuer the published discovery document names;
	// empty when it does not parse (Err says why).
	Published string
	// Issuer is the issuer to publish.
	Issuer string
	// Err is why the published discovery document does not parse.
	Err error
}

// Error names the location and both issuers.
func (e *IssuerError) Error() string {
	what := e.Location.URL(DiscoveryName) + " holds a discovery document that does not parse"
	if e.Err == nil {
		what = e.Location.String() + " already publishes issuer " + quote(e.Published) + ", not " + quote(e.Issuer)
	}
	return errs.Msg(prefix, what, e.Err)
}

// Is matches ErrOtherIssuer.
func (e *IssuerError) Is(target error) bool { return target == ErrOtherIssuer }

// Unwrap returns why the published document does not parse.
func (e *IssuerError) Unwrap() error { return e.Err }

// TrailingSlash reports whether the two issuers differ by a trailing
// slash only: every federated credential names the issuer byte for byte,
// so they are two issuers, but one was most likely meant.
func (e *IssuerError) TrailingSlash() bool {
	return e.Err == nil && strings.TrimSuffix(e.Published, "/") == strings.TrimSuffix(e.Issuer, "/")
}

// CheckPublished reads the discovery document the store publishes, within
// RequestTimeout, and reports whether it is issuer's. Nothing published
// is false and no error; another issuer's document (a trailing slash
// counts), or one that does not parse, is an [*IssuerError]; a failure to
// read is an [*Error] of the store. Call it before [Publish], which
// replaces what is there.
func CheckPublished(ctx context.Context, store Store, issuer string) (bool, error) {
	var old []byte
	err := withTimeout(ctx, func(ctx context.Context) (err error) {
		old, _, err = store.Get(ctx, DiscoveryName, oidc.MaxDiscoveryBytes)
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, storeError(err, "reading "+DiscoveryName)
	}
	md, err := oidc.ParseMetadata(old)
	if err != nil {
		return false, &IssuerError{Location: store.Location(), Issuer: issuer, Err: err}
	}
	if md.Issuer != issuer {
		return false, &IssuerError{Location: store.Location(), Published: md.Issuer, Issuer: issuer}
	}
	return true, nil
}

// ErrNotPublic: relying parties, which read anonymously, would not get
// the documents published at the location.
var ErrNotPublic = errs.New(prefix, "not publicly readable")

// AccessError is a location whose cloud refuses anonymous readers, where
// no public URL serves them instead (see [PreflightIssuer]). It matches
// ErrNotPublic.
type AccessError struct {
	// Location is the location refused.
	Location Location
	// URL is where the discovery document was read anonymously, at the
	// public URL; empty when there is none, or it was not read.
	URL string
	// Status is the HTTP status of that read (0: no answer, or not read).
	Status int
	// Problem is what the read found, as [Check] words it; empty when it
	// was not read.
	Problem string
	// Fix is the store's fix ([Preflight].AccessFix).
	Fix string
}

// Error names the location and what the anonymous read found.
func (e *AccessError) Error() string {
	what := e.Location.String() + " is not publicly readable"
	if e.Problem != "" {
		what += ", and " + e.Problem
	}
	return errs.Msg(prefix, what, nil)
}

// Is matches ErrNotPublic.
func (e *AccessError) Is(target error) bool { return target == ErrNotPublic }

// PreflightOptions are the settings of one [PreflightIssuer].
type PreflightOptions struct {
	// PublicURL is where relying parties read the location when the
	// caller says so (a CDN, a custom domain); empty: the store's own.
	PublicURL string
	// HTTPClient reads the discovery document at PublicURL anonymously
	// when the cloud refuses anonymous readers; nil: it is not read.
	HTTPClient *http.Client
}

// PreflightIssuer checks, before anything is written, that publishing
// issuer at the store is safe and useful: the store's own [Store.Preflight]
// (credentials, bucket, access) within RequestTimeout; a cloud refusing
// anonymous readers without opts.PublicURL is an [*AccessError]; another
// issuer already published there is an [*IssuerError] ([CheckPublished]);
// and with opts.PublicURL and opts.HTTPClient, for a location the cloud
// keeps private, the discovery document read there anonymously must be
// served ([Check]'s fetch): refused (401, 403), or missing while the
// store holds one, or any other failure is an [*AccessError]. It returns
// what the store's preflight learned.
func PreflightIssuer(ctx context.Context, store Store, issuer string, opts PreflightOptions) (Preflight, error) {
	var pf Preflight
	err := withTimeout(ctx, func(ctx context.Context) (err error) {
		pf, err = store.Preflight(ctx)
		return err
	})
	if err != nil {
		return pf, storeError(err, "checking the location")
	}
	private := pf.Access == AccessPrivate
	if private && opts.PublicURL == "" {
		return pf, &AccessError{Location: store.Location(), Fix: pf.AccessFix}
	}
	published, err := CheckPublished(ctx, store, issuer)
	if err != nil || !private || opts.HTTPClient == nil {
		return pf, err
	}
	found := DiscoveryFinding(Check(ctx, issuer, CheckOptions{HTTPClient: opts.HTTPClient}))
	if found == nil || (found.Status == http.StatusNotFound && !published) {
		return pf, nil // served, or nothing published yet
	}
	return pf, &AccessError{Location: store.Location(), URL: oidc.DiscoveryURL(issuer), Status: found.Status, Problem: found.Problem, Fix: pf.AccessFix}
}

// DiscoveryFinding returns the report's finding that the discovery
// document could not be fetched ([CodeDiscoveryUnreachable]), with the
// status of the answer; nil when it was fetched.
func DiscoveryFinding(r *Report) *Finding {
	for i, f := range r.Findings {
		if f.Code == CodeDiscoveryUnreachable {
			return &r.Findings[i]
		}
	}
	return nil
}

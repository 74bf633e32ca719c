package publish

import (
	"context"
	"errors"
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

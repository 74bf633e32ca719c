package publish

import (
	"context"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// Names and headers of a published issuer.
const (
	// CacheControl is the Cache-Control every document is written with:
	// kube-apiserver's own, which [Check] expects.
	CacheControl = "public, max-age=3600"
	// AzwiKeySet is the copy of the key set azwi (Azure workload
	// identity's tool) reads, at the root of the location.
	AzwiKeySet = "jwks.json"
)

// DiscoveryName is the discovery document's object name.
var DiscoveryName = strings.TrimPrefix(oidc.DiscoveryPath, "/")

// The kinds of a site that cannot be published where it is asked to be.
var (
	// ErrServedElsewhere: the documents are for another issuer than the
	// URL the store serves them at.
	ErrServedElsewhere = errs.New(prefix, "issuer served elsewhere")
	// ErrKeySetOutside: the discovery document's jwks_uri is not a path
	// under the issuer, where publishing writes.
	ErrKeySetOutside = errs.New(prefix, "key set outside the issuer")
	// ErrSite: the discovery document or the key set is not one to
	// publish.
	ErrSite = errs.New(prefix, "not an issuer's documents")
)

// Site is an issuer's documents, as oidc.Render writes them.
type Site struct {
	// Discovery is the discovery document.
	Discovery []byte
	// KeySet is the key set its jwks_uri names.
	KeySet []byte
	// Copies are more names the key set is written at, before the
	// discovery document: AzwiKeySet when azwi reads the issuer.
	Copies []string
}

// Metadata returns the discovery document's issuer and jwks_uri; an error
// of kind ErrSite when it does not parse.
func (s *Site) Metadata() (*oidc.ProviderMetadata, error) {
	md, err := oidc.ParseMetadata(s.Discovery)
	if err != nil {
		return nil, &Error{Kind: ErrSite, What: "the discovery document does not parse", Err: err}
	}
	return md, nil
}

// Objects returns the documents to write, in order: the key set (and its
// copies) before the discovery document that points to it, each with
// CacheControl. The issuer must be served at publicURL ("" when unknown)
// and its key set under it; the key set must be public keys (jwks.Audit).
func (s *Site) Objects(publicURL string) ([]Object, error) {
	md, err := s.Metadata()
	if err != nil {
		return nil, err
	}
	if err := jwks.Audit(s.KeySet); err != nil {
		return nil, &Error{Kind: ErrSite, What: "the key set is not a public key set", Fix: "render the key set from public keys", Err: err}
	}
	name, err := keySetObject(md, publicURL)
	if err != nil {
		return nil, err
	}
	objs := []Object{{Name: name, Data: s.KeySet, ContentType: oidc.JWKSContentType, CacheControl: CacheControl}}
	for _, c := range s.Copies {
		if c != name {
			objs = append(objs, Object{Name: c, Data: s.KeySet, ContentType: oidc.JWKSContentType, CacheControl: CacheControl})
		}
	}
	return append(objs, Object{Name: DiscoveryName, Data: s.Discovery, ContentType: oidc.DiscoveryContentType, CacheControl: CacheControl}), nil
}

// keySetObject returns the object name of the key set md names: a path
// under the issuer, which is served at publicURL ("" when unknown).
func keySetObject(md *oidc.ProviderMetadata, publicURL string) (string, error) {
	base := strings.TrimSuffix(md.Issuer, "/")
	if publicURL != "" && strings.TrimSuffix(publicURL, "/") != base {
		return "", &Error{Kind: ErrServedElsewhere, What: "the documents are for issuer " + quote(md.Issuer) + ", but the location is served at " + publicURL,
			Fix: "render the documents for issuer " + quote(publicURL) + ", or serve the location at the issuer's URL"}
	}
	name, ok := strings.CutPrefix(md.JWKSURI, base+"/")
	if !ok || name == "" || strings.ContainsAny(name, "?#") {
		return "", &Error{Kind: ErrKeySetOutside, What: "the discovery document's jwks_uri " + quote(md.JWKSURI) + " is outside the issuer " + quote(md.Issuer) + ": publishing writes under the issuer only",
			Fix: "render with the key set beside the discovery document"}
	}
	if _, err := cleanPrefix(name); err != nil {
		return "", &Error{Kind: ErrKeySetOutside, What: "the discovery document's jwks_uri " + quote(md.JWKSURI) + " has an unusable path", Fix: "render with the key set beside the discovery document", Err: err}
	}
	return name, nil
}

// PublishOptions are the settings of one [Publish].
type PublishOptions struct {
	// PublicURL, when set, is where relying parties read the location:
	// the documents must be for the issuer served there (ErrServedElsewhere).
	PublicURL string
	// Versions, when not nil, makes every write conditional (PutIf) on the
	// version of the object read before (absent, when Versions lacks it):
	// a change another writer made since is never overwritten.
	Versions map[string]Version
}

// PublishResult is what a publication wrote.
type PublishResult struct {
	// Objects are the objects written, in order.
	Objects []Object
	// Withdrawn are the key IDs the store published that the new key set
	// drops: tokens they signed stop verifying once caches expire.
	Withdrawn []string
}

// Publish writes the site to the store in the safe order ([Site.Objects]):
// the key set first and the discovery document last, so that a reader
// never finds a discovery document whose keys are missing. Each request
// runs within RequestTimeout. A failure after the first write is a
// [*PartialError]: run the publication again. Publish does not check the
// store beforehand (see [Store.Preflight]) nor the issuer afterwards (see
// [Check]).
func Publish(ctx context.Context, store Store, site *Site, opts PublishOptions) (*PublishResult, error) {
	objs, err := site.Objects(opts.PublicURL)
	if err != nil {
		return nil, err
	}
	res := &PublishResult{Withdrawn: Withdrawn(ctx, store, objs[0].Name, site.KeySet)}
	for i, o := range objs {
		err := withTimeout(ctx, func(ctx context.Context) error {
			if opts.Versions != nil {
				return store.PutIf(ctx, o, opts.Versions[o.Name])
			}
			return store.Put(ctx, o)
		})
		if err != nil && i > 0 {
			p := &PartialError{Err: storeError(err, "writing "+o.Name)}
			for _, w := range objs[:i] {
				p.Written = append(p.Written, w.Name)
			}
			for _, l := range objs[i:] {
				p.Left = append(p.Left, l.Name)
			}
			return res, p
		}
		if err != nil {
			return res, storeError(err, "writing "+o.Name)
		}
		res.Objects = append(res.Objects, o)
	}
	return res, nil
}

// Withdrawn returns the key IDs of the key set the store publishes at
// name that keySet lacks; none when none is published, or either does not
// parse.
func Withdrawn(ctx context.Context, store Store, name string, keySet []byte) []string {
	var old []byte
	err := withTimeout(ctx, func(ctx context.Context) (err error) {
		old, _, err = store.Get(ctx, name, jwks.DefaultMaxSetBytes)
		return err
	})
	if err != nil {
		return nil
	}
	was, err := jwks.ParseSet(old, jwks.ParseOptions{})
	if err != nil {
		return nil
	}
	now, err := jwks.ParseSet(keySet, jwks.ParseOptions{})
	if err != nil {
		return nil
	}
	kept := map[string]bool{}
	for _, k := range now.Keys {
		kept[k.KeyID] = true
	}
	var gone []string
	for _, k := range was.Keys {
		if !kept[k.KeyID] {
			gone = append(gone, k.KeyID)
		}
	}
	return gone
}

// withTimeout runs one store operation within RequestTimeout.
func withTimeout(ctx context.Context, op func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	return op(ctx)
}

// Package stores maps the kinds of store ksa publishes to onto the
// library's leaf packages (publish/azblob, publish/s3, publish/gcs), each
// behind a build tag (ksa_noazblob, ksa_nos3, ksa_nogcs): a ksa built
// with a tag links no SDK of that store, and its locations fail with
// publish.ErrNoOpener, naming the tag.
package stores

import (
	"context"

	"github.com/ksa-go/ksa/publish"
)

// Openers returns the opener of every kind of store, those left out of
// the build included (they fail, naming the tag).
func Openers() map[publish.Kind]publish.Opener {
	return map[publish.Kind]publish.Opener{publish.Azure: azblobOpen, publish.S3: s3Open, publish.GCS: gcsOpen}
}

// notBuilt is the opener of a store this build left out with tag.
func notBuilt(tag string) publish.Opener {
	return func(_ context.Context, loc publish.Location, _ publish.Config) (publish.Store, error) {
		return nil, &publish.Error{Kind: publish.ErrNoOpener, What: "this ksa was built without " + string(loc.Kind) + " support (-tags " + tag + ")",
			Fix: "use a ksa built without -tags " + tag}
	}
}

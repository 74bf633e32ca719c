//go:build ksa_nos3

package publish

import "context"

// openS3 refuses: this ksa was built without the SDK.
func openS3(_ context.Context, loc Location, _ Config) (Store, error) {
	return nil, notBuilt(loc, "ksa_nos3")
}

//go:build ksa_nogcs

package publish

import "context"

// openGCS refuses: this ksa was built without the SDK.
func openGCS(_ context.Context, loc Location, _ Config) (Store, error) {
	return nil, notBuilt(loc, "ksa_nogcs")
}

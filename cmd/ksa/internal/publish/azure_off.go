//go:build ksa_noazblob

package publish

import "context"

// openAzure refuses: this ksa was built without the SDK.
func openAzure(_ context.Context, loc Location, _ Config) (Store, error) {
	return nil, notBuilt(loc, "ksa_noazblob")
}

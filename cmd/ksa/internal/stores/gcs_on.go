//go:build !ksa_nogcs

package stores

import "github.com/ksa-go/ksa/publish/gcs"

// gcsOpen opens the store with the library's leaf package.
var gcsOpen = gcs.Open

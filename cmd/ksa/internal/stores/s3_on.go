//go:build !ksa_nos3

package stores

import "github.com/ksa-go/ksa/publish/s3"

// s3Open opens the store with the library's leaf package.
var s3Open = s3.Open
